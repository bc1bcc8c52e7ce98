package podnet

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"

	"github.com/nvcf/conformance/clusters/dockerd"
)

// DockerUserChain is the chain of iptables' filter table that Docker's
// FORWARD chain jumps to first, and which Docker keeps across its restarts
// without flushing. Rules there decide before Docker's own and before the
// FORWARD policy, which Docker sets to DROP.
const DockerUserChain = "DOCKER-USER"

// forwardComment marks our rules in DOCKER-USER, so removal finds exactly them.
const forwardComment = "nvcf-harness: pod traffic between its bridges"

// forwardRules are the iptables rules (after "-A DOCKER-USER") that accept
// what the nftables forward chain accepts: the test range between our
// bridges. A packet dropped by any base chain is dropped, whichever table
// holds it, so the nftables table alone cannot outvote Docker's DROP policy
// in iptables' FORWARD chain; with the bridge netfilter hook on (Docker
// turns it on), even pod-to-pod traffic on one bridge crosses that chain.
var forwardRules = [][]string{
	{"-i", "nvcfbr+", "-o", "nvcfbr+", "-s", TestRange.String(), "-d", TestRange.String(), "-m", "comment", "--comment", forwardComment, "-j", "ACCEPT"},
}

// iptables is the iptables command Docker uses (the one in PATH: nft- or
// legacy-backed alike); empty when it is not installed, and then no Docker
// daemon can have set a FORWARD policy either.
func iptables() string {
	p, err := exec.LookPath("iptables")
	if err != nil {
		return ""
	}
	return p
}

// forwardMu serialises the check-then-change sequences below: the clusters
// of an environment set up their bridges at the same time, and two of them
// creating the chain, or inserting the rule, would race.
var forwardMu sync.Mutex

// allowForward puts forwardRules at the top of DOCKER-USER, creating the
// chain when Docker has not (yet): a Docker daemon started later jumps to it
// and leaves its rules alone. Idempotent.
func allowForward(ctx context.Context) error {
	ipt := iptables()
	if ipt == "" {
		return nil
	}
	forwardMu.Lock()
	defer forwardMu.Unlock()
	if _, err := run(ctx, "", ipt, "-w", "-t", "filter", "-S", DockerUserChain); err != nil {
		if _, err := run(ctx, "", ipt, "-w", "-t", "filter", "-N", DockerUserChain); err != nil {
			// A Docker daemon starting right now may have made it meanwhile.
			if _, serr := run(ctx, "", ipt, "-w", "-t", "filter", "-S", DockerUserChain); serr != nil {
				return fmt.Errorf("create iptables chain %s: %w", DockerUserChain, err)
			}
		}
	}
	for _, r := range forwardRules {
		check := append([]string{"-w", "-t", "filter", "-C", DockerUserChain}, r...)
		if _, err := run(ctx, "", ipt, check...); err == nil {
			continue
		}
		insert := append([]string{"-w", "-t", "filter", "-I", DockerUserChain, "1"}, r...)
		if _, err := run(ctx, "", ipt, insert...); err != nil {
			return fmt.Errorf("accept the harness's bridges in iptables chain %s: %w", DockerUserChain, err)
		}
	}
	return nil
}

// removeForward deletes our rules from DOCKER-USER and then the chain
// itself when it is left empty and nothing jumps to it (we made it; Docker's
// own holds its RETURN rule and is jumped to from FORWARD).
func removeForward(ctx context.Context) error {
	ipt := iptables()
	if ipt == "" {
		return nil
	}
	forwardMu.Lock()
	defer forwardMu.Unlock()
	out, err := run(ctx, "", ipt, "-w", "-t", "filter", "-S", DockerUserChain)
	if err != nil {
		return nil // no chain, nothing of ours
	}
	var errs []error
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "-A "+DockerUserChain+" ") || !strings.Contains(line, forwardComment) {
			continue
		}
		args, err := splitRule(strings.TrimPrefix(line, "-A "))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, err := run(ctx, "", ipt, append([]string{"-w", "-t", "filter", "-D"}, args...)...); err != nil {
			errs = append(errs, fmt.Errorf("remove our rule from iptables chain %s: %w", DockerUserChain, err))
		}
	}
	if out, err := run(ctx, "", ipt, "-w", "-t", "filter", "-S", DockerUserChain); err == nil && strings.TrimSpace(out) == "-N "+DockerUserChain {
		if refs, err := run(ctx, "", ipt, "-w", "-t", "filter", "-S"); err == nil && !strings.Contains(refs, "-j "+DockerUserChain) {
			if _, err := run(ctx, "", ipt, "-w", "-t", "filter", "-X", DockerUserChain); err != nil {
				errs = append(errs, err)
			}
			// iptables-nft made the table for our chain; an empty one goes too.
			if dockerd.EmptyTable(ctx, "ip filter") {
				_, err := run(ctx, "", "nft", "delete", "table", "ip", "filter")
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// splitRule splits one line of `iptables -S` into arguments, honouring the
// double quotes iptables puts around a comment with spaces.
func splitRule(line string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inQuote, have := false, false
	for i := 0; i < len(line); i++ {
		switch ch := line[i]; {
		case ch == '\\' && inQuote && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
		case ch == '"':
			inQuote, have = !inQuote, true
		case ch == ' ' && !inQuote:
			if have {
				args = append(args, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(ch)
			have = true
		}
	}
	if inQuote {
		return nil, fmt.Errorf("unbalanced quote in iptables rule %q", line)
	}
	if have {
		args = append(args, cur.String())
	}
	return args, nil
}
