package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/faults"
	"github.com/nvcf/conformance/pki"
	"github.com/nvcf/conformance/pki/pkitopo"
	"github.com/nvcf/conformance/scenarios/catalog"
)

// Session is one environment of the topology, up, with the PKI minted: what
// a command that runs its own suite tests on it needs (`harness campaign`
// runs TestCampaign, once, or again and again while it shrinks a schedule).
// The Options' filters, Environments and Reruns play no part.
type Session struct {
	o  Options
	hb *heartbeat
	// Config is the run config every suite of the session starts from:
	// the environment, its state folder and the PKI filled in.
	Config catalog.RunConfig
	// Reused says the environment ran before the session (Close leaves it up).
	Reused bool
}

// OpenSession brings the topology's environment up, or reuses the running
// one, after removing the faults a killed earlier run left, and mints the
// PKI.
func OpenSession(ctx context.Context, o Options) (_ *Session, err error) {
	if err := o.fill(); err != nil {
		return nil, err
	}
	if err := checkBundle(o.BinDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Artifacts, 0o755); err != nil {
		return nil, fmt.Errorf("artifacts folder %q: %w", o.Artifacts, err)
	}
	s := &Session{o: o, hb: newHeartbeat(o.Stdout, quietLimit)}
	s.o.Stdout = s.hb
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Close(context.WithoutCancel(ctx)))
		}
	}()
	log := o.Logger
	if cleaned, cerr := faults.CleanupLeftovers(ctx, o.StateDir, log); cerr != nil {
		return nil, fmt.Errorf("remove faults left by an earlier run: %w", cerr)
	} else if len(cleaned) > 0 {
		log.Info("removed faults left by an earlier run", "count", len(cleaned))
	}
	name := o.Topology.Name
	if _, serr := o.Provider.Status(ctx, name); serr == nil {
		s.Reused = true
	}
	s.hb.Doing("bringing up environment %s (reusing a running one: %t)", name, s.Reused)
	opts := []clusters.UpOption{clusters.WithLogger(log), clusters.WithProgress(s.hb)}
	if o.sideRunning(ctx) {
		opts = append(opts, clusters.WithBeside())
	}
	env, err := o.Provider.Up(ctx, clusters.SpecOf(o.Topology), opts...)
	if err != nil {
		return nil, fmt.Errorf("bring up environment %q: %w", name, err)
	}
	s.hb.Doing("minting the PKI")
	m, err := (&pki.Minter{Logger: log}).Mint(ctx, pkitopo.Request(o.Topology, 0, false), filepath.Join(o.StateDir, "pki"))
	if err != nil {
		return nil, err
	}
	s.Config = catalog.RunConfig{
		Topology: o.Topology, Environment: env, StateDir: o.StateDir, PKIDir: m.Dir, Artifacts: o.Artifacts,
		TimeScale: o.TimeScale, Images: o.Images, Flavor: o.Flavor,
		Real: o.Real, Proof: o.Proof, NVCFBinDir: o.NVCFBinDir,
		OwnerPID: os.Getpid(), Provider: o.ProviderName,
	}
	return s, nil
}

// Doing prints a progress line, which also resets the heartbeat.
func (s *Session) Doing(format string, args ...any) { s.hb.Doing(format, args...) }

// RunTest runs the suite's test named test with cfg, written to
// cfg.Artifacts/run.json, and its JUnit to cfg.Artifacts/suite-junit.xml;
// it stops the suite, as on Ctrl-C, when the environment goes away. The
// error is the suite's exit (a failed test included).
func (s *Session) RunTest(ctx context.Context, cfg catalog.RunConfig, test string) error {
	cfgPath, err := catalog.WriteRunConfig(cfg.Artifacts, cfg)
	if err != nil {
		return err
	}
	junit := filepath.Join(cfg.Artifacts, "suite-junit.xml")
	return s.o.whileEnvironmentLives(ctx, s.o.Topology.Name, func(ctx context.Context) error {
		return runSuiteTest(ctx, s.o.BinDir, cfg.Artifacts, cfgPath, junit, test, cfg.Environment.ProcessEnv, s.o.Stdout)
	})
}

// Close brings the environment down, unless the session reused it or the
// Options keep it; it stops the heartbeat.
func (s *Session) Close(ctx context.Context) error {
	defer s.hb.Close()
	if s.o.Keep || s.Reused {
		s.o.Logger.Info("leaving the clusters up", "down", s.o.downHint())
		return nil
	}
	if err := s.o.Provider.Down(ctx, s.o.Topology.Name); err != nil && !errors.Is(err, clusters.ErrNotFound) {
		return fmt.Errorf("bring down environment %q: %w", s.o.Topology.Name, err)
	}
	return nil
}
