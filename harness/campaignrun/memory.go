package campaignrun

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nvcf/conformance/clusters/local"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/model/campaign"
)

// memoryEvery is how often the pods' memory is sampled.
const memoryEvery = 5 * time.Second

// peakMemory samples the resident memory of the environment's pod
// processes, by role, every memoryEvery until ctx ends, and returns each
// role's peak. list is local.Memory of the environment.
func peakMemory(ctx context.Context, list func() ([]local.ProcessMemory, error)) func() []campaign.RoleMemory {
	var mu sync.Mutex
	peaks := map[string]*campaign.RoleMemory{}
	sample := func() {
		ps, err := list()
		if err != nil {
			return
		}
		now := map[string]*campaign.RoleMemory{}
		for _, p := range ps {
			if p.Component != "pod" {
				continue
			}
			role := roleOf(p.PID)
			if role == "" {
				continue
			}
			m := now[role]
			if m == nil {
				m = &campaign.RoleMemory{Role: role}
				now[role] = m
			}
			m.Processes++
			m.PeakTotal += p.RSS
			m.PeakProcess = max(m.PeakProcess, p.RSS)
		}
		mu.Lock()
		defer mu.Unlock()
		for role, m := range now {
			pk := peaks[role]
			if pk == nil {
				peaks[role] = m
				continue
			}
			if m.PeakTotal > pk.PeakTotal {
				pk.PeakTotal, pk.Processes = m.PeakTotal, m.Processes
			}
			pk.PeakProcess = max(pk.PeakProcess, m.PeakProcess)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(memoryEvery)
		defer t.Stop()
		for {
			sample()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() []campaign.RoleMemory {
		<-done
		mu.Lock()
		defer mu.Unlock()
		var out []campaign.RoleMemory
		for _, m := range peaks {
			out = append(out, *m)
		}
		slices.SortFunc(out, func(a, b campaign.RoleMemory) int { return strings.Compare(a.Role, b.Role) })
		return out
	}
}

// roles are the reference binary's roles, its first argument in the
// reference flavor.
var roles = []string{"stargate", "router", "ingress", "pylon", "echo", "worker-auth-gateway"}

// roleOf reads a process's role: the nvcf flavor's role variable, else the
// reference flavor's first argument ("" when neither names one, or the
// process is gone).
func roleOf(pid int) string {
	env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	for _, kv := range bytes.Split(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte(manifests.RoleEnv+"=")); ok {
			return string(v)
		}
	}
	cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if args := bytes.Split(cmd, []byte{0}); len(args) > 1 && slices.Contains(roles, string(args[1])) {
		return string(args[1])
	}
	return ""
}
