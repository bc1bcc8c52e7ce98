// Package controlplane runs one embedded cluster's control plane: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and CoreDNS, as
// processes owned by the agent, with certificates it mints itself.
package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/nvcf/conformance/clusters/internal/binaries"
	"github.com/nvcf/conformance/clusters/local/internal/plan"
	"github.com/nvcf/conformance/clusters/local/internal/proc"
)

// Config describes one cluster to run.
type Config struct {
	Plan plan.Cluster
	// Nodes is the number of nodes (certificates are minted for each).
	Nodes int
	// Dir holds the cluster's PKI, etcd data and kubeconfig.
	Dir string
	// LogDir receives one log file per component.
	LogDir string
	// Bin are the control-plane binaries.
	Bin binaries.Set
	// Domain is forwarded by CoreDNS to the external DNS.
	Domain string
	// Log receives structured logs (nil: discarded).
	Log *slog.Logger
}

// Cluster is a running control plane.
type Cluster struct {
	cfg Config
	// PKI are the cluster's certificate files.
	PKI *PKI
	// Kubeconfig is a single-context admin kubeconfig for this cluster.
	Kubeconfig string
	// NodeKubeconfigs[n] is node n's kubeconfig (system:node:<name>);
	// LBKubeconfig the load-balancer controller's. The controller manager,
	// the scheduler and CoreDNS have theirs beside them in Dir.
	NodeKubeconfigs []string
	LBKubeconfig    string
	// Access reaches the API server.
	Access Access

	coreDNSKubeconfig string

	mu    sync.Mutex
	procs []*proc.Process // in start order
}

// Start mints the PKI, writes a kubeconfig per identity and starts etcd,
// the API server (waiting until it is ready), the controller manager and
// the scheduler, after granting CoreDNS and the load-balancer controller
// their roles. On error, whatever was started is stopped.
func Start(ctx context.Context, cfg Config) (c *Cluster, err error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	for _, d := range []string{cfg.Dir, cfg.LogDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("cluster %s: %w", cfg.Plan.Name, err)
		}
	}
	// The clean-up holds its own reference: every `return nil, err` below
	// sets the named result c to nil before deferred calls run.
	started := &Cluster{cfg: cfg, Kubeconfig: filepath.Join(cfg.Dir, "kubeconfig")}
	c = started
	defer func() {
		if err != nil {
			if serr := started.Stop(); serr != nil {
				err = errors.Join(err, fmt.Errorf("cluster %s: clean-up: %w", cfg.Plan.Name, serr))
			}
		}
	}()
	if c.PKI, err = MintPKI(filepath.Join(cfg.Dir, "pki"), cfg.Plan, cfg.Nodes); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cfg.Plan.Name, err)
	}
	server := fmt.Sprintf("https://%s:%d", cfg.Plan.BridgeIP(), cfg.Plan.APIServerPort())
	c.Access = Access{Name: cfg.Plan.Name, Server: server,
		CACert: c.PKI.CACert, ClientCert: c.PKI.AdminCert, ClientKey: c.PKI.AdminKey}
	if err := WriteKubeconfig(c.Kubeconfig, c.Access); err != nil {
		return nil, err
	}
	identity := func(file, crt, key string) (string, error) {
		path := filepath.Join(cfg.Dir, file+".kubeconfig")
		return path, WriteKubeconfig(path, Access{Name: cfg.Plan.Name, Server: server, CACert: c.PKI.CACert, ClientCert: crt, ClientKey: key})
	}
	cmKubeconfig, err := identity("kube-controller-manager", c.PKI.ControllerManagerCert, c.PKI.ControllerManagerKey)
	if err != nil {
		return nil, err
	}
	schedKubeconfig, err := identity("kube-scheduler", c.PKI.SchedulerCert, c.PKI.SchedulerKey)
	if err != nil {
		return nil, err
	}
	if c.coreDNSKubeconfig, err = identity("coredns", c.PKI.CoreDNSCert, c.PKI.CoreDNSKey); err != nil {
		return nil, err
	}
	if c.LBKubeconfig, err = identity("load-balancer-controller", c.PKI.LBCert, c.PKI.LBKey); err != nil {
		return nil, err
	}
	for n := range cfg.Nodes {
		path, err := identity(cfg.Plan.NodeName(n), c.PKI.NodeCerts[n], c.PKI.NodeKeys[n])
		if err != nil {
			return nil, err
		}
		c.NodeKubeconfigs = append(c.NodeKubeconfigs, path)
	}
	if err := c.start("etcd", cfg.Bin.Etcd, etcdArgs(cfg.Plan, c.PKI, filepath.Join(cfg.Dir, "etcd"))); err != nil {
		return nil, err
	}
	if err := c.start("kube-apiserver", cfg.Bin.APIServer, apiserverArgs(cfg.Plan, c.PKI)); err != nil {
		return nil, err
	}
	if err := c.waitReady(ctx, time.Minute); err != nil {
		return nil, err
	}
	if err := ensureRBAC(ctx, c.Kubeconfig); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cfg.Plan.Name, err)
	}
	if err := c.start("kube-controller-manager", cfg.Bin.ControllerManager, controllerManagerArgs(c.PKI, cmKubeconfig)); err != nil {
		return nil, err
	}
	if err := c.start("kube-scheduler", cfg.Bin.Scheduler, schedulerArgs(schedKubeconfig)); err != nil {
		return nil, err
	}
	return c, nil
}

// StartCoreDNS starts CoreDNS on the cluster's bridge address, which must
// exist by then.
func (c *Cluster) StartCoreDNS() error {
	path := filepath.Join(c.cfg.Dir, "Corefile")
	if err := os.WriteFile(path, []byte(Corefile(c.cfg.Plan, c.coreDNSKubeconfig, c.cfg.Domain)), 0o644); err != nil {
		return fmt.Errorf("cluster %s: write Corefile: %w", c.cfg.Plan.Name, err)
	}
	return c.start("coredns", c.cfg.Bin.CoreDNS, []string{"-conf", path})
}

func (c *Cluster) start(component, bin string, args []string) error {
	p, err := proc.Start(proc.Spec{
		Name: c.cfg.Plan.Name + "/" + component, Argv: append([]string{bin}, args...),
		Env: goEnv[component], Log: logPath(c.cfg.LogDir, c.cfg.Plan.Name, component),
		Marker: c.cfg.Dir,
	}, c.cfg.Log)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", c.cfg.Plan.Name, err)
	}
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	return nil
}

// Processes are the running processes in start order.
func (c *Cluster) Processes() []*proc.Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.procs)
}

// Restart starts the spec of old, which has exited, in its place, so that
// Stop stops the new process. Once Stop has run it starts nothing.
func (c *Cluster) Restart(old *proc.Process) (*proc.Process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.procs, old)
	if i < 0 {
		return nil, fmt.Errorf("cluster %s: %s is not one of its running processes (stopping?)", c.cfg.Plan.Name, old.Name)
	}
	p, err := proc.Start(old.Spec, c.cfg.Log)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.cfg.Plan.Name, err)
	}
	c.procs[i] = p
	return p, nil
}

// Marker is the string every process of this cluster has in its arguments.
func (c *Cluster) Marker() string { return c.cfg.Dir }

// Stop stops the processes in reverse start order (so the API server goes
// before etcd) and reports every failure.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	procs := c.procs
	c.procs = nil
	c.mu.Unlock()
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		errs = append(errs, procs[i].Stop(10*time.Second))
	}
	return errors.Join(errs...)
}

// waitReady polls the API server's /readyz until it answers 200, a process
// exits, or timeout passes.
func (c *Cluster) waitReady(ctx context.Context, timeout time.Duration) error {
	client, err := c.httpClient()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		for _, p := range c.Processes() {
			select {
			case <-p.Done():
				return fmt.Errorf("cluster %s: %s exited (%v) before the API server was ready; see %s", c.cfg.Plan.Name, p.Name, p.Err(), p.Log)
			default:
			}
		}
		last = probe(ctx, client, c.Access.Server+"/readyz")
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster %s: API server not ready after %s: %w; see %s", c.cfg.Plan.Name, timeout, last, logPath(c.cfg.LogDir, c.cfg.Plan.Name, "kube-apiserver"))
		case <-tick.C:
		}
	}
}

func probe(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

func (c *Cluster) httpClient() (*http.Client, error) {
	ca, err := os.ReadFile(c.PKI.CACert)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cert, err := tls.LoadX509KeyPair(c.PKI.AdminCert, c.PKI.AdminKey)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: admin certificate: %w", c.cfg.Plan.Name, err)
	}
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	}}, nil
}
