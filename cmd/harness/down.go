package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/nvcf/conformance/clusters/local"
	"github.com/nvcf/conformance/faults"
)

// runDown is `harness down`: stop an environment and remove everything it
// owns (processes, network namespaces, bridges, nftables tables, state but
// logs).
// faultOwnerGrace is how long a fault's owner gets to undo it on SIGTERM.
const faultOwnerGrace = 10 * time.Second

func runDown(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("down", flag.ContinueOnError)
	fs.SetOutput(stderr)
	topo := fs.String("topology", "", "topology file whose environment to stop")
	name := fs.String("name", "", "environment name (default: every environment with state)")
	var pf providerFlags
	pf.register(fs)
	purge := fs.Bool("purge", false, "also remove every nvcf-* network namespace, nvcfbr*/nvcfv* link and harness nftables table on the machine, whoever made it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p, err := pf.provider(nil)
	if err != nil {
		return fmt.Errorf("down: %w", err)
	}
	if *purge && pf.name != providerEmbedded {
		return fmt.Errorf("down: --purge removes the embedded provider's leftovers on this machine; it has no meaning for --provider %s", pf.name)
	}
	names, err := pf.names(*topo, *name)
	if err != nil {
		return fmt.Errorf("down: %w", err)
	}
	var errs []error
	if *purge {
		defer func() {
			if err := local.Purge(ctx, nil); err != nil {
				fmt.Fprintf(stderr, "harness: down --purge: %v\n", err)
			}
		}()
	}
	if len(names) == 0 {
		fmt.Fprintln(stdout, "nothing is up")
		return nil
	}
	for _, n := range names {
		// A `harness fault inject` (or a run's suite) still injecting into
		// the environment would outlive it, holding its proxies' ports: it
		// is told to undo and exit first.
		if stopped, err := faults.StopOwners(ctx, pf.stateDir(n), faultOwnerGrace, nil); err != nil {
			errs = append(errs, fmt.Errorf("stop the faults of %q: %w", n, err))
		} else if stopped > 0 {
			fmt.Fprintf(stdout, "stopped %d process(es) injecting faults into %q\n", stopped, n)
		}
		if err := p.Down(ctx, n); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(stdout, "environment %q is down\n", n)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("down: %w", err)
	}
	return nil
}
