package kind

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/internal/extdns"
	"github.com/nvcf/conformance/clusters/internal/lb"
	"github.com/nvcf/conformance/clusters/internal/podnet"
)

// BridgeName is the host's interface on the nodes' Docker network.
const BridgeName = "nvcfkind0"

// ExternalDNS is where the environment's external DNS listens, an address
// on the host's lo that every cluster's CoreDNS forwards the topology's
// domain to, through its node's default route. Not the host's address on
// the nodes' network: each node sends that address's port 53 to Docker's
// embedded DNS (as kind's own node image does), which would answer in our
// place from the machine's resolver. Clear of the embedded provider's
// service and load-balancer ranges and of the kind pods' and services'.
var ExternalDNS = netip.MustParseAddrPort("198.19.191.53:53")

// gatewayAddr is the host's address on the nodes' network (its first).
func gatewayAddr() netip.Addr { return NodeNetwork.Addr().Next() }

// The files of the serving process in an environment's folder.
const (
	serveLog   = "serve.log"
	serveReady = "serve.ready"
)

// Serve is what the host gives the kind clusters of the environment whose
// folder is dir, until ctx is done: the external DNS on ExternalDNS and,
// per cluster, the load-balancer controller, which gives every Service of
// type LoadBalancer an address of podnet.LBPrefix(i) on the host's lo,
// forwards it to the Service's NodePorts and publishes its hostnames. Up
// runs it as a detached process (`harness kind serve`), so that the
// clusters stay served after the command that brought them up ended; it
// writes serve.ready in dir once everything listens.
func Serve(ctx context.Context, dir string, log *slog.Logger) error {
	var st state
	if err := clusters.ReadRecord(dir, &st); err != nil {
		return fmt.Errorf("kind serve: %w", err)
	}
	if len(st.Environment.Clusters) == 0 {
		return fmt.Errorf("kind serve: environment in %s has no clusters up", dir)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := podnet.AddLoopback(ctx, ExternalDNS.Addr()); err != nil {
		return fmt.Errorf("kind serve: external DNS address on lo: %w", err)
	}
	defer func() { _ = podnet.DelLoopback(context.WithoutCancel(ctx), ExternalDNS.Addr()) }()
	dns := extdns.New(log.With("component", "extdns"), st.Spec.Domain)
	if err := dns.Start(ctx, ExternalDNS); err != nil {
		return fmt.Errorf("kind serve: external DNS on %s: %w", ExternalDNS, err)
	}
	defer dns.Close()
	errs := make([]error, len(st.Environment.Clusters))
	var wg sync.WaitGroup
	for i, c := range st.Environment.Clusters {
		wg.Go(func() {
			err := lb.Run(ctx, lb.Config{
				Kubeconfig: st.Environment.Kubeconfig, Context: c.Context,
				ClusterIndex: i, DNS: dns, NodePorts: true,
				Log: log.With("component", "lb", "cluster", c.Name),
			})
			if err != nil && ctx.Err() == nil {
				errs[i] = fmt.Errorf("cluster %s: load balancers: %w", c.Name, err)
				cancel() // one cluster unserved fails the environment
			}
		})
	}
	if err := os.WriteFile(filepath.Join(dir, serveReady), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		cancel()
		wg.Wait()
		return err
	}
	log.Info("serving", "clusters", len(st.Environment.Clusters), "dns", ExternalDNS)
	wg.Wait()
	_ = os.Remove(filepath.Join(dir, serveReady))
	return errors.Join(errs...)
}

// serveCommand is the command that runs Serve for dir: Options.ServeCommand
// plus dir, else this executable's `kind serve --state dir`.
func (p *provider) serveCommand(dir string) ([]string, error) {
	if len(p.o.ServeCommand) > 0 {
		return append(append([]string(nil), p.o.ServeCommand...), dir), nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return []string{exe, "kind", "serve", "--state", dir}, nil
}

// startServe (re)starts the serving process of the environment in dir,
// detached in its own session, and waits until it is ready; it returns its
// pid. A serving process of an earlier up stops first: a new one reads the
// environment as it is now.
func (p *provider) startServe(ctx context.Context, dir string, old int) (int, error) {
	if err := stopServe(old, dir); err != nil {
		return 0, err
	}
	argv, err := p.serveCommand(dir)
	if err != nil {
		return 0, err
	}
	_ = os.Remove(filepath.Join(dir, serveReady))
	logf, err := os.OpenFile(filepath.Join(dir, serveLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start the load balancers and external DNS (%v): %w", argv, err)
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		if b, err := os.ReadFile(filepath.Join(dir, serveReady)); err == nil && string(b) == strconv.Itoa(pid) {
			// Reaped by nobody from now on: the process outlives this one,
			// and init adopts it when this one exits.
			return pid, nil
		}
		select {
		case err := <-exited:
			return 0, fmt.Errorf("the load balancers and external DNS exited (%v) before they were ready; %s says:%s", err, filepath.Join(dir, serveLog), clusters.LogTail(filepath.Join(dir, serveLog), 5))
		case <-deadline.C:
			_ = stopServe(pid, dir)
			return 0, fmt.Errorf("the load balancers and external DNS were not ready after 30 s; see %s:%s", filepath.Join(dir, serveLog), clusters.LogTail(filepath.Join(dir, serveLog), 5))
		case <-ctx.Done():
			_ = stopServe(pid, dir)
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// isServe says whether pid is the serving process of dir (its command
// line ends in dir): a recorded pid that was reused is left alone.
func isServe(pid int, dir string) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	args := bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0})
	return len(args) > 1 && string(args[len(args)-1]) == dir
}

// stopServe stops dir's serving process pid (SIGTERM, then SIGKILL after
// 10 s); one that is gone, or a pid that is not dir's, is no error.
func stopServe(pid int, dir string) error {
	if !isServe(pid, dir) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for range 100 {
		if !isServe(pid, dir) || zombie(pid) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop the load balancers and external DNS (pid %d): %w", pid, err)
	}
	return nil
}

// zombie says whether pid has exited and waits for its parent to reap it.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// releaseAddrs takes the external DNS's and the load-balancer addresses of
// an environment's n clusters off lo: what a serving process that was
// killed left behind.
func releaseAddrs(ctx context.Context, n int) error {
	addrs, err := podnet.LoopbackAddrs(ctx)
	if err != nil {
		return err
	}
	errs := []error{podnet.DelLoopback(ctx, ExternalDNS.Addr())}
	for _, a := range addrs {
		for i := range n {
			if podnet.LBPrefix(i).Contains(a) {
				errs = append(errs, podnet.DelLoopback(ctx, a))
			}
		}
	}
	return errors.Join(errs...)
}
