// Package preflight checks, before anything long starts, what the embedded
// provider needs from the machine: root, the ip and nft tools, free ports
// (naming the program that holds a busy one), address ranges no other
// interface routes, and free disk; and it explains a full disk met later
// (DiskFull). Every problem is reported at once, each with what to do
// about it.
package preflight

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrFailed is wrapped by the error of a failed check.
var ErrFailed = errors.New("preflight checks failed")

// Problem is one failed check and its remedy.
type Problem struct {
	What string // what is wrong
	Fix  string // what to do
}

// Error lists every failed check.
type Error struct{ Problems []Problem }

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:", ErrFailed)
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "\n  - %s\n    fix: %s", p.What, p.Fix)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return ErrFailed }

// Port is an address some process of the provider will bind.
type Port struct {
	Network string // "tcp" or "udp"
	Addr    string // host:port
	Owner   string // who binds it, for the message
}

// Disk asks for free space in the filesystem holding Dir.
type Disk struct {
	Dir  string
	Min  uint64 // bytes
	Why  string // what needs it, for the message
	Hint string // how to make room, beside freeing space
}

// busyPort describes port p that cannot be bound (err), naming the
// programs that hold it when /proc says.
func (c *Checks) busyPort(p Port, err error) Problem {
	_, port, _ := net.SplitHostPort(p.Addr)
	what := fmt.Sprintf("%s %s (%s) cannot be bound: %v", p.Network, p.Addr, p.Owner, unwrapSyscall(err))
	var hs []Holder
	if ap, perr := netip.ParseAddrPort(p.Addr); perr == nil {
		hs = c.holders(p.Network, ap)
	}
	if len(hs) == 0 {
		ss := "-ltnp"
		if p.Network == "udp" {
			ss = "-lunp"
		}
		return Problem{What: what, Fix: fmt.Sprintf("find the program with `ss %s 'sport = :%s'` and stop it; the harness needs this port", ss, port)}
	}
	names := make([]string, len(hs))
	pids := make([]string, len(hs))
	env := hs[0].Env
	for i, h := range hs {
		names[i], pids[i] = h.String(), strconv.Itoa(h.PID)
		if h.Env != env {
			env = ""
		}
	}
	what += "; held by " + strings.Join(names, ", ")
	if env != "" {
		// Another environment of the harness (of another state folder, or
		// of another user): it is brought down, not killed.
		return Problem{What: what + fmt.Sprintf(", of the harness environment %q (state %s)", filepath.Base(env), env),
			Fix: fmt.Sprintf("bring that environment down: XDG_STATE_HOME=%s harness down --name %s (or harness down --purge)",
				filepath.Dir(filepath.Dir(env)), filepath.Base(env))}
	}
	return Problem{What: what, Fix: fmt.Sprintf("stop that program (e.g. `kill %s`, or stop the service that runs it); the harness needs port %s", strings.Join(pids, " "), port)}
}

// Tool is a command that must be on PATH.
type Tool struct {
	Name    string // e.g. "nft"
	Package string // the Debian package that has it
}

// Checks are what to verify.
type Checks struct {
	// Root requires uid 0; Argv is the command line to repeat under sudo in
	// the advice (default os.Args).
	Root bool
	Argv []string
	// Tools must be on PATH.
	Tools []Tool
	// Ports must be free.
	Ports []Port
	// Disks must have room.
	Disks []Disk
	// Ranges must not be routed elsewhere; RouteTable is the kernel's IPv4
	// routing table to read (default /proc/net/route, this network
	// namespace's main table).
	Ranges     []Range
	RouteTable string

	// hooks for tests
	geteuid  func() int
	lookPath func(string) (string, error)
	listen   func(network, addr string) (io.Closer, error)
	free     func(dir string) (uint64, error)
	holders  func(network string, addr netip.AddrPort) []Holder
}

// Run performs the checks and returns an *Error (wrapping ErrFailed)
// listing every problem, or nil.
func Run(c Checks) error {
	c.defaults()
	var ps []Problem
	root := c.geteuid() == 0
	if c.Root && !root {
		ps = append(ps, Problem{
			What: fmt.Sprintf("not running as root (uid %d): the pod network needs network namespaces, bridges and an nftables table", c.geteuid()),
			Fix:  "run as root: sudo " + shellJoin(c.Argv),
		})
	}
	for _, t := range c.Tools {
		if _, err := c.lookPath(t.Name); err != nil {
			ps = append(ps, Problem{
				What: fmt.Sprintf("%s is not on PATH", t.Name),
				Fix:  fmt.Sprintf("apt-get install %s (or: make deps)", t.Package),
			})
		}
	}
	for _, p := range c.Ports {
		l, err := c.listen(p.Network, p.Addr)
		if err == nil {
			l.Close()
			continue
		}
		if errors.Is(err, syscall.EACCES) {
			continue // a privileged port without root: the root check says so
		}
		ps = append(ps, c.busyPort(p, err))
	}
	ps = append(ps, c.routeProblems()...)
	for _, d := range c.Disks {
		free, err := c.free(d.Dir)
		if err != nil {
			ps = append(ps, Problem{What: fmt.Sprintf("cannot read the free space of %s: %v", d.Dir, err), Fix: "check that the folder is reachable and writable"})
			continue
		}
		if free < d.Min {
			fix := "free some space"
			if d.Hint != "" {
				fix += ", or " + d.Hint
			}
			ps = append(ps, Problem{
				What: fmt.Sprintf("only %s free in %s; %s needs at least %s", size(free), d.Dir, d.Why, size(d.Min)),
				Fix:  fix,
			})
		}
	}
	if len(ps) > 0 {
		return &Error{Problems: ps}
	}
	return nil
}

func (c *Checks) defaults() {
	if c.Argv == nil {
		c.Argv = os.Args
	}
	if c.geteuid == nil {
		c.geteuid = os.Geteuid
	}
	if c.lookPath == nil {
		c.lookPath = exec.LookPath
	}
	if c.listen == nil {
		c.listen = listen
	}
	if c.free == nil {
		c.free = FreeBytes
	}
	if c.holders == nil {
		c.holders = Holders
	}
	if c.RouteTable == "" {
		c.RouteTable = "/proc/net/route"
	}
}

func listen(network, addr string) (io.Closer, error) {
	if network == "udp" {
		return net.ListenPacket(network, addr)
	}
	return net.Listen(network, addr)
}

// FreeBytes is the space available to this user in the filesystem holding
// dir, or in its nearest existing parent.
func FreeBytes(dir string) (uint64, error) {
	for {
		var st syscall.Statfs_t
		err := syscall.Statfs(dir, &st)
		if err == nil {
			return st.Bavail * uint64(st.Bsize), nil
		}
		parent := parentDir(dir)
		if !errors.Is(err, syscall.ENOENT) || parent == dir {
			return 0, err
		}
		dir = parent
	}
}

func parentDir(dir string) string {
	i := strings.LastIndexByte(strings.TrimRight(dir, "/"), '/')
	if i <= 0 {
		return "/"
	}
	return dir[:i]
}

func unwrapSyscall(err error) error {
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err
	}
	return err
}

func gib(b uint64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

// shellJoin renders argv for a shell, quoting what needs it; a binary of
// `go run` (in a temporary build folder) becomes ./bin/harness.
func shellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if i == 0 && strings.Contains(a, "/go-build") {
			a = "./bin/harness"
		}
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// DeviceOf is the device number of the filesystem holding path, or its
// nearest existing parent.
func DeviceOf(path string) (uint64, error) {
	for {
		var st syscall.Stat_t
		err := syscall.Stat(path, &st)
		if err == nil {
			return st.Dev, nil
		}
		parent := parentDir(path)
		if !errors.Is(err, syscall.ENOENT) || parent == path {
			return 0, err
		}
		path = parent
	}
}
