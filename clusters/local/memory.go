package local

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nvcf/conformance/clusters/local/internal/proc"
	"github.com/nvcf/conformance/clusters/local/internal/state"
)

// ProcessMemory is the resident memory of one process of an environment.
type ProcessMemory struct {
	// Cluster is the cluster the process serves ("" for the agent, which
	// serves them all: kubelets, load balancers, external DNS).
	Cluster string
	// Component is "etcd", "kube-apiserver", …, "agent", or "pod" for a
	// pod's process.
	Component string
	PID       int
	// RSS is VmRSS; Anon and File split it into heap/stack and mapped
	// files (mostly the binary's own code, shared by every cluster that
	// runs the same binary). PSS divides shared pages among their users.
	RSS, Anon, File, PSS int64
}

// Memory lists the resident memory of every live process carrying the
// marker of environment name (found in /proc, not only in state.json): the
// control-plane processes and CoreDNS by cluster, the agent, and any pod
// processes.
func Memory(o Options, name string) ([]ProcessMemory, error) {
	o = o.withDefaults()
	dir := filepath.Join(o.StateRoot, name)
	st, err := state.Load(dir)
	if err != nil {
		return nil, err
	}
	byPID := map[int]string{}
	for _, p := range st.Processes {
		byPID[p.PID] = p.Name
	}
	ms, err := proc.Scan()
	if err != nil {
		return nil, err
	}
	var out []ProcessMemory
	for _, m := range ms {
		if filepath.Clean(m.Env) != filepath.Clean(dir) {
			continue
		}
		pm := ProcessMemory{PID: m.PID, Component: "pod"}
		switch {
		case m.PID == st.AgentPID || isAgent(m):
			pm.Component = "agent"
		case byPID[m.PID] != "":
			pm.Cluster, pm.Component, _ = strings.Cut(byPID[m.PID], "/")
		}
		if err := readMemory(&pm); err != nil {
			continue // exited while we read
		}
		out = append(out, pm)
	}
	slices.SortFunc(out, func(a, b ProcessMemory) int {
		return strings.Compare(a.Cluster+"/"+a.Component, b.Cluster+"/"+b.Component)
	})
	return out, nil
}

// readMemory fills the sizes from /proc/<pid>/status and smaps_rollup.
func readMemory(pm *ProcessMemory) error {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pm.PID))
	if err != nil {
		return err
	}
	fields := map[string]*int64{"VmRSS": &pm.RSS, "RssAnon": &pm.Anon, "RssFile": &pm.File}
	scanKiB(status, fields)
	if rollup, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pm.PID)); err == nil {
		scanKiB(rollup, map[string]*int64{"Pss": &pm.PSS})
	}
	return nil
}

// scanKiB reads "Name:   123 kB" lines into bytes.
func scanKiB(data []byte, fields map[string]*int64) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if dst := fields[k]; ok && dst != nil {
			if n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64); err == nil {
				*dst = n << 10
			}
		}
	}
}
