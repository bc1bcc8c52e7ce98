package preflight

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Holder is a process that has a socket bound to a port.
type Holder struct {
	PID     int
	Command string // its command line, space-joined
}

func (h Holder) String() string { return fmt.Sprintf("pid %d (%s)", h.PID, h.Command) }

// Holders lists the processes holding network ("tcp" or "udp") port on any
// address, IPv4 or IPv6: the socket inodes bound to it come from
// /proc/net/{tcp,udp}[6] (for TCP only listening sockets), their owners
// from the socket:[inode] links in /proc/<pid>/fd. A process of another
// user is found only as root; an empty result then says nothing.
func Holders(network string, port int) []Holder {
	inodes := boundInodes(network, port)
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
			out = append(out, Holder{PID: pid, Command: commandOf(pid)})
			break
		}
	}
	return out
}

// boundInodes are the inodes of network's sockets bound to port.
func boundInodes(network string, port int) map[string]bool {
	want := fmt.Sprintf(":%04X", port)
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
			if len(fs) < 10 || !strings.HasSuffix(fs[1], want) {
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
