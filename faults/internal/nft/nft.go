// Package nft manages the fault injector's own nftables table,
// `inet nvcf_faults`, through the nft command. Every rule carries a comment
// naming the fault that added it, so one fault's rules can be removed
// without touching another's, also by a later process after a crash.
package nft

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/nvcf/conformance/faults/internal/flock"
)

// Table is the name of the fault injector's table (family inet).
const Table = "nvcf_faults"

// Chains of the table and their hooks. Priorities run before the
// provider's own table so a fault sees packets first.
const (
	// Prerouting rewrites destinations of packets arriving from pods (DNAT).
	Prerouting = "prerouting"
	// OutputNAT rewrites destinations of packets the host itself sends.
	OutputNAT = "output_nat"
	// Input filters packets delivered to the host (pod → LB address).
	Input = "input"
	// Forward filters packets routed between bridges (pod → pod).
	Forward = "forward"
	// Output filters packets the host sends (LB forwarder → pod).
	Output = "output"
)

var chainDefs = []string{
	"add chain inet " + Table + " " + Prerouting + " { type nat hook prerouting priority dstnat - 10; policy accept; }",
	"add chain inet " + Table + " " + OutputNAT + " { type nat hook output priority -110; policy accept; }",
	"add chain inet " + Table + " " + Input + " { type filter hook input priority filter - 10; policy accept; }",
	"add chain inet " + Table + " " + Forward + " { type filter hook forward priority filter - 10; policy accept; }",
	"add chain inet " + Table + " " + Output + " { type filter hook output priority filter - 10; policy accept; }",
}

// Rule is one rule: the chain it goes in and its expression, e.g.
// `ip saddr 198.18.10.0/24 ip daddr 198.19.101.0/24 drop`.
type Rule struct {
	Chain string
	Expr  string
}

// Available reports why nftables rules cannot be used here, or nil.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("nftables rules need root (run as root, or skip network faults)")
	}
	if _, err := exec.LookPath("nft"); err != nil {
		return fmt.Errorf("nft not found on PATH (install the nftables package: make deps): %w", err)
	}
	return nil
}

// run runs nft with args (and stdin) inside netns ("" = the caller's).
func run(ctx context.Context, netns string, stdin string, args ...string) ([]byte, error) {
	var cmd *exec.Cmd
	if netns == "" {
		cmd = exec.CommandContext(ctx, "nft", args...)
	} else {
		cmd = exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", netns, "nft"}, args...)...)
	}
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("nft %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

// Add creates the table and chains when missing and adds rules, each
// commented with comment, in one transaction.
func Add(ctx context.Context, netns, comment string, rules []Rule) error {
	if strings.ContainsAny(comment, "\"\n") {
		return fmt.Errorf("nft comment %q: must not contain quotes or newlines", comment)
	}
	var b strings.Builder
	b.WriteString("add table inet " + Table + "\n")
	for _, c := range chainDefs {
		b.WriteString(c + "\n")
	}
	for _, r := range rules {
		fmt.Fprintf(&b, "add rule inet %s %s %s comment \"%s\"\n", Table, r.Chain, r.Expr, comment)
	}
	return flock.Do(lockPath, "nftables", func() error {
		if _, err := run(ctx, netns, b.String(), "-f", "-"); err != nil {
			return fmt.Errorf("add rules for %s: %w", comment, err)
		}
		return nil
	})
}

// lockPath orders the changes to the table of every process on the host:
// runs on environments side by side inject faults at the same time, and
// Delete's "no rule left, delete the table" must not drop rules another
// process adds between its listing and its deletion.
var lockPath = filepath.Join(os.TempDir(), "nvcf-faults-nft.lock")

// listing is the part of `nft -j list table` that Delete reads.
type listing struct {
	Nftables []struct {
		Rule *struct {
			Chain   string `json:"chain"`
			Handle  int    `json:"handle"`
			Comment string `json:"comment"`
			Expr    []struct {
				Counter *struct {
					Packets uint64 `json:"packets"`
				} `json:"counter"`
			} `json:"expr"`
		} `json:"rule"`
	} `json:"nftables"`
}

// Comments returns the comment of every rule in the table (nil when the
// table does not exist).
func Comments(ctx context.Context, netns string) ([]string, error) {
	l, err := list(ctx, netns)
	if err != nil || l == nil {
		return nil, err
	}
	var out []string
	for _, o := range l.Nftables {
		if o.Rule != nil {
			out = append(out, o.Rule.Comment)
		}
	}
	return out, nil
}

func list(ctx context.Context, netns string) (*listing, error) {
	out, err := run(ctx, netns, "", "-j", "list", "table", "inet", Table)
	if err != nil {
		if strings.Contains(err.Error(), "No such file or directory") {
			return nil, nil
		}
		return nil, err
	}
	var l listing
	if err := json.Unmarshal(out, &l); err != nil {
		return nil, fmt.Errorf("parse nft -j output: %w", err)
	}
	return &l, nil
}

// Packets sums the counters of the rules commented with comment (rules
// with a `counter` statement count the packets they matched).
func Packets(ctx context.Context, netns, comment string) (uint64, error) {
	l, err := list(ctx, netns)
	if err != nil || l == nil {
		return 0, err
	}
	var n uint64
	for _, o := range l.Nftables {
		if o.Rule == nil || o.Rule.Comment != comment {
			continue
		}
		for _, x := range o.Rule.Expr {
			if x.Counter != nil {
				n += x.Counter.Packets
			}
		}
	}
	return n, nil
}

// Delete removes every rule commented with comment. It deletes the whole
// table when no rule is left. A missing table is not an error.
func Delete(ctx context.Context, netns, comment string) error {
	return flock.Do(lockPath, "nftables", func() error { return deleteRules(ctx, netns, comment) })
}

func deleteRules(ctx context.Context, netns, comment string) error {
	l, err := list(ctx, netns)
	if err != nil || l == nil {
		return err
	}
	var b strings.Builder
	left := 0
	for _, o := range l.Nftables {
		if o.Rule == nil {
			continue
		}
		if o.Rule.Comment == comment {
			fmt.Fprintf(&b, "delete rule inet %s %s handle %d\n", Table, o.Rule.Chain, o.Rule.Handle)
		} else {
			left++
		}
	}
	if left == 0 {
		b.Reset()
		b.WriteString("delete table inet " + Table + "\n")
	}
	if b.Len() == 0 {
		return nil
	}
	if _, err := run(ctx, netns, b.String(), "-f", "-"); err != nil {
		return fmt.Errorf("delete rules of %s: %w", comment, err)
	}
	return nil
}

// DeleteTable removes the whole table; a missing table is not an error.
func DeleteTable(ctx context.Context, netns string) error {
	l, err := list(ctx, netns)
	if err != nil || l == nil {
		return err
	}
	_, err = run(ctx, netns, "delete table inet "+Table+"\n", "-f", "-")
	return err
}
