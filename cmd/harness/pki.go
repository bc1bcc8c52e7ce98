package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nvcf/conformance/pki"
	"github.com/nvcf/conformance/pki/pkitopo"
	"github.com/nvcf/conformance/topologies"
)

// runPKI dispatches `harness pki mint` and `harness pki inspect`.
func runPKI(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: harness pki mint --topology FILE --out DIR | harness pki inspect [--all] DIR")
		return errors.New("pki: want a subcommand: mint or inspect")
	}
	switch args[0] {
	case "mint":
		return runPKIMint(ctx, args[1:], stdout, stderr)
	case "inspect":
		return runPKIInspect(args[1:], stdout, stderr)
	}
	return fmt.Errorf("pki: unknown subcommand %q; want mint or inspect", args[0])
}

func runPKIMint(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pki mint", flag.ContinueOnError)
	fs.SetOutput(stderr)
	topo := fs.String("topology", "", "topology file (required)")
	out := fs.String("out", "", "folder to mint into (required; reused when the inputs are unchanged)")
	validity := fs.Duration("validity", pki.DefaultValidity, "validity of the good certificates")
	inter := fs.Bool("intermediate", false, "issue leaves from an intermediate CA under the root")
	sys := fs.String("system-roots", pki.DefaultSystemRoots, "system trust bundle merged into "+pki.TrustBundleKey)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *topo == "" || *out == "" {
		fs.Usage()
		return errors.New("pki mint: --topology and --out are required")
	}
	t, err := topologies.Load(*topo)
	if err != nil {
		return err
	}
	req := pkitopo.Request(t, *validity, *inter)
	req.SystemRoots = *sys
	mt := &pki.Minter{Logger: slog.New(slog.NewTextHandler(stderr, nil))}
	m, err := mt.Mint(ctx, req, *out)
	if err != nil {
		return err
	}
	verb := "minted"
	if m.Reused {
		verb = "reused"
	}
	_, err = fmt.Fprintf(stdout, "%s %d artifacts in %s (minted at %s)\n", verb, len(m.Artifacts), m.Dir, m.MintedAt.Format(time.RFC3339))
	return err
}

func runPKIInspect(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pki inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	all := fs.Bool("all", false, "list keys, Secrets and ConfigMaps too")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("pki inspect: want exactly one folder argument")
	}
	m, err := pki.Load(fs.Arg(0))
	if err != nil {
		return err
	}
	now := time.Now()
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tPURPOSE\tSUBJECT\tSANS\tNOT-BEFORE\tNOT-AFTER\tISSUER\tVERIFY-NAME\tVERIFIES\tAS-INTENDED")
	bad := 0
	hidden := 0
	for _, a := range m.Artifacts {
		verifiable := a.Kind == pki.KindCert || a.Kind == pki.KindBundle
		if !verifiable && !*all {
			hidden++
			continue
		}
		verifies, intended := "-", "-"
		if verifiable {
			got, _ := m.Verify(a, now)
			verifies = "yes"
			if got != "" {
				verifies = "no: " + string(got)
			}
			intended = "ok"
			if got != a.ExpectedFailure {
				intended = fmt.Sprintf("UNEXPECTED (want %s)", orPass(a.ExpectedFailure))
				bad++
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.File, a.Purpose, dash(commonName(a.Subject)),
			dash(strings.Join(a.SANs, ",")), stamp(a.NotBefore), stamp(a.NotAfter), dash(commonName(a.Issuer)),
			dash(a.VerifyName), verifies, intended)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if hidden > 0 {
		fmt.Fprintf(stdout, "(%d keys, Secrets and ConfigMaps not listed; --all lists them)\n", hidden)
	}
	if bad > 0 {
		return fmt.Errorf("pki inspect: %d artifacts do not behave as intended at %s; re-mint the folder", bad, now.UTC().Format(time.RFC3339))
	}
	return nil
}

func orPass[R ~string](r R) string {
	if r == "" {
		return "pass"
	}
	return string(r)
}

// commonName extracts CN=... from an RFC 2253 subject string.
func commonName(subject string) string {
	for _, part := range strings.Split(subject, ",") {
		if v, ok := strings.CutPrefix(part, "CN="); ok {
			return v
		}
	}
	return subject
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04Z")
}
