package dockerd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// hostState is what Docker changes on the host and Stop puts back.
// It is saved beside a detached daemon, for the process that stops it.
type hostState struct {
	Forwarding map[string]string `json:"forwarding"` // /proc/sys/net/ipv4/conf/<if>/forwarding (and ip_forward as "ip_forward")
	BridgeNF   map[string]string `json:"bridgeNF"`   // /proc/sys/net/bridge/bridge-nf-call-*
	Policy     map[string]string `json:"policy"`     // table/chain → policy, e.g. "filter/FORWARD" → "ACCEPT"
	Tables     map[string]bool   `json:"tables"`     // "ip filter", "ip6 nat", … that existed
	TrustKey   bool              `json:"trustKey"`   // /etc/docker/key.json existed (dockerd 20.10 writes one there)
}

const trustKey = "/etc/docker/key.json"

var builtinChains = map[string][]string{
	"filter": {"INPUT", "FORWARD", "OUTPUT"},
	"nat":    {"PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"},
}

func snapshot(ctx context.Context) (hostState, error) {
	s := hostState{Forwarding: map[string]string{}, BridgeNF: map[string]string{}, Policy: map[string]string{}, Tables: map[string]bool{}}
	s.Forwarding["ip_forward"] = readSysctl("/proc/sys/net/ipv4/ip_forward")
	ifs, _ := filepath.Glob("/proc/sys/net/ipv4/conf/*/forwarding")
	for _, f := range ifs {
		s.Forwarding[f] = readSysctl(f)
	}
	nf, _ := filepath.Glob("/proc/sys/net/bridge/bridge-nf-call-*")
	for _, f := range nf {
		s.BridgeNF[f] = readSysctl(f)
	}
	for _, t := range nftTables(ctx) {
		s.Tables[t] = true
	}
	_, err := os.Stat(trustKey)
	s.TrustKey = err == nil
	for table := range builtinChains {
		out, err := ipt(ctx, "iptables", "-t", table, "-S")
		if err != nil {
			continue // no iptables: nothing of it to restore
		}
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "-P" {
				s.Policy[table+"/"+f[1]] = f[2]
			}
		}
	}
	return s, nil
}

// restore undoes what the daemon left: its bridge, its chains and the rules
// that jump to them or name its bridge, the policies and sysctls it changed,
// and the iptables-nft tables it created when they are left empty. Rules
// that others put in DOCKER-USER (the embedded provider's) stay.
func (d *Daemon) restore(ctx context.Context) error {
	var errs []error
	if _, err := os.Stat("/sys/class/net/docker0"); err == nil {
		if out, err := exec.CommandContext(ctx, "ip", "link", "del", "docker0").CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("ip link del docker0: %w: %s", err, out))
		}
	}
	for _, cmd := range []string{"iptables", "ip6tables"} {
		for table := range builtinChains {
			errs = append(errs, removeDockerRules(ctx, cmd, table, d.cfg.Bridge.Masked().String()))
		}
	}
	for key, policy := range d.before.Policy {
		table, chain, _ := strings.Cut(key, "/")
		if _, err := ipt(ctx, "iptables", "-t", table, "-P", chain, policy); err != nil {
			errs = append(errs, err)
		}
	}
	// ip_forward first: writing it sets every interface's forwarding.
	errs = append(errs, writeSysctl("/proc/sys/net/ipv4/ip_forward", d.before.Forwarding["ip_forward"]))
	for f, v := range d.before.Forwarding {
		if f != "ip_forward" {
			if _, err := os.Stat(f); err == nil {
				errs = append(errs, writeSysctl(f, v))
			}
		}
	}
	// Interfaces made meanwhile by others (a provider's bridge) keep
	// forwarding on: they asked for it per interface.
	for f, v := range d.before.BridgeNF {
		errs = append(errs, writeSysctl(f, v))
	}
	for _, t := range nftTables(ctx) {
		if !d.before.Tables[t] && EmptyTable(ctx, t) {
			fam, name, _ := strings.Cut(t, " ")
			if out, err := exec.CommandContext(ctx, "nft", "delete", "table", fam, name).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("nft delete table %s: %w: %s", t, err, out))
			}
		}
	}
	if !d.before.TrustKey {
		errs = append(errs, removeIfExists(trustKey))
	}
	return errors.Join(errs...)
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// removeDockerRules deletes, in one table, the rules of built-in chains that
// jump to Docker's chains or name docker0 or its range, then Docker's chains
// (DOCKER-USER only when nothing but Docker's RETURN is left in it).
func removeDockerRules(ctx context.Context, cmd, table, bridgeRange string) error {
	out, err := ipt(ctx, cmd, "-t", table, "-S")
	if err != nil {
		return nil // no such command or table: Docker made nothing there
	}
	var errs []error
	var chains []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch {
		case f[0] == "-N" && strings.HasPrefix(f[1], "DOCKER"):
			chains = append(chains, f[1])
		case f[0] == "-A" && !strings.HasPrefix(f[1], "DOCKER") &&
			(strings.Contains(line, "-j DOCKER") || strings.Contains(line, "docker0") || strings.Contains(line, bridgeRange)):
			errs = append(errs, deleteRule(ctx, cmd, table, line))
		case f[0] == "-A" && f[1] == "DOCKER-USER" && strings.TrimSpace(line) == "-A DOCKER-USER -j RETURN":
			errs = append(errs, deleteRule(ctx, cmd, table, line))
		}
	}
	for _, c := range chains {
		if c == "DOCKER-USER" {
			continue
		}
		if _, err := ipt(ctx, cmd, "-t", table, "-F", c); err != nil {
			errs = append(errs, err)
		}
	}
	for _, c := range chains {
		if c == "DOCKER-USER" {
			if rest, err := ipt(ctx, cmd, "-t", table, "-S", c); err != nil || strings.TrimSpace(rest) != "-N DOCKER-USER" {
				continue // someone's rules remain: the chain stays
			}
		}
		if _, err := ipt(ctx, cmd, "-t", table, "-X", c); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func deleteRule(ctx context.Context, cmd, table, line string) error {
	args := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "-A "))
	_, err := ipt(ctx, cmd, append([]string{"-t", table, "-D"}, args...)...)
	return err
}

func ipt(ctx context.Context, cmd string, args ...string) (string, error) {
	c := exec.CommandContext(ctx, cmd, append([]string{"-w"}, args...)...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", cmd, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// nftTables lists "family name" of every nftables table.
func nftTables(ctx context.Context) []string {
	out, err := exec.CommandContext(ctx, "nft", "list", "tables").Output()
	if err != nil {
		return nil
	}
	var ts []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "table" {
			ts = append(ts, f[1]+" "+f[2])
		}
	}
	return ts
}

// EmptyTable reports whether the nftables table t ("ip filter") holds no
// rule, no chain of its own and only accepting base chains: what
// iptables-nft leaves after its chains are gone, which nobody relies on
// (iptables makes it again when asked).
func EmptyTable(ctx context.Context, t string) bool {
	fam, name, _ := strings.Cut(t, " ")
	if fam != "ip" && fam != "ip6" {
		return false
	}
	out, err := exec.CommandContext(ctx, "nft", "list", "table", fam, name).Output()
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(out), "\n") {
		l := strings.TrimSpace(line)
		switch {
		case l == "", l == "}", strings.HasPrefix(l, "table "), strings.HasPrefix(l, "chain "):
		case strings.HasPrefix(l, "type ") && strings.Contains(l, "policy accept;"):
		default:
			return false
		}
	}
	return true
}

func readSysctl(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func writeSysctl(path, v string) error {
	if v == "" {
		return nil
	}
	if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
		return fmt.Errorf("restore %s: %w", path, err)
	}
	return nil
}
