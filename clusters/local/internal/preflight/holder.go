package preflight

import (
	"bufio"
	"encoding/hex"
	"net/netip"

	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nvcf/conformance/clusters/local/internal/proc"
)

// Holder is a process that has a socket bound to a port.
type Holder struct {
	PID     int
	Command string // its command line, space-joined
	// Env is the harness environment the process belongs to (the value of
	// its proc.MarkerEnv, a state folder), or "".
	Env string
}

func (h Holder) String() string { return fmt.Sprintf("pid %d (%s)", h.PID, h.Command) }

// Holders lists the processes holding network ("tcp" or "udp") address
// addr: a socket bound to its port on its address, or on a wildcard
// address, or on any address when addr's is the wildcard. The socket
// inodes come from /proc/net/{tcp,udp}[6] (for TCP only listening
// sockets), their owners from the socket:[inode] links in /proc/<pid>/fd.
// A process of another user is found only as root; an empty result then
// says nothing.
func Holders(network string, addr netip.AddrPort) []Holder {
	inodes := boundInodes(network, addr)
	if len(inodes) == 0 {
		return nil
	}
	var out []Holder
	pids, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range pids {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(dir + "/fd")
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(dir + "/fd/" + fd.Name())
			if err != nil {
				continue
			}
			ino, ok := strings.CutPrefix(link, "socket:[")
			if !ok || !inodes[strings.TrimSuffix(ino, "]")] {
				continue
			}
			env, _ := proc.EnvOf(pid)
			out = append(out, Holder{PID: pid, Command: commandOf(pid), Env: env})
			break
		}
	}
	return out
}

// boundInodes are the inodes of network's sockets that hold addr.
func boundInodes(network string, addr netip.AddrPort) map[string]bool {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/" + network, "/proc/net/" + network + "6"} {
		file, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(file)
		sc.Scan() // header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 {
				continue
			}
			local, ok := procAddr(fs[1])
			if !ok || !conflicts(local, addr) {
				continue
			}
			if network == "tcp" && fs[3] != "0A" { // only LISTEN holds a port against bind
				continue
			}
			if fs[9] != "0" {
				inodes[fs[9]] = true
			}
		}
		file.Close()
	}
	return inodes
}

// procAddr parses a local address of /proc/net/*: hex address words in
// host (little-endian) order, a colon, the port in hex.
func procAddr(s string) (netip.AddrPort, bool) {
	h, p, ok := strings.Cut(s, ":")
	b, err := hex.DecodeString(h)
	port, perr := strconv.ParseUint(p, 16, 16)
	if !ok || err != nil || perr != nil || (len(b) != 4 && len(b) != 16) {
		return netip.AddrPort{}, false
	}
	for i := 0; i < len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	a, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(a.Unmap(), uint16(port)), true
}

// conflicts reports whether a socket bound to local keeps addr from being
// bound: same port, and the same address or a wildcard on either side.
func conflicts(local, addr netip.AddrPort) bool {
	return local.Port() == addr.Port() &&
		(local.Addr() == addr.Addr() || local.Addr().IsUnspecified() || addr.Addr().IsUnspecified())
}

func commandOf(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(data) == 0 {
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		return "[" + strings.TrimSpace(string(comm)) + "]"
	}
	cmd := strings.ReplaceAll(strings.TrimRight(string(data), "\x00"), "\x00", " ")
	if len(cmd) > 120 {
		cmd = cmd[:117] + "..."
	}
	return cmd
}
