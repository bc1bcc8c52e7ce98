package bench

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"sync"
	"time"
)

// clockTick is the kernel's USER_HZ, the unit of CPU times in /proc (100
// on every Linux the harness runs on).
const clockTick = 100

// cpuSample is the CPU time used so far by the processes the benchmark
// watches: the agent's tree (control planes, CoreDNS, kubelets, pods) and
// this process's tree (the runner, gotestsum, the suite).
type cpuSample struct {
	at  time.Time
	cpu time.Duration
}

// cpuSampler records cpuSamples every interval until stopped: the CPU
// time of the process trees whose roots roots names at that moment (an
// environment that comes up during the run joins them).
type cpuSampler struct {
	mu      sync.Mutex
	samples []cpuSample
	stop    context.CancelFunc
	done    chan struct{}
}

func startCPUSampler(roots func() []int, interval time.Duration) *cpuSampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &cpuSampler{stop: cancel, done: make(chan struct{})}
	take := func() {
		c := treeCPU(roots())
		s.mu.Lock()
		s.samples = append(s.samples, cpuSample{at: time.Now(), cpu: c})
		s.mu.Unlock()
	}
	take()
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				take()
				return
			case <-t.C:
				take()
			}
		}
	}()
	return s
}

// Stop ends sampling and returns the samples.
func (s *cpuSampler) Stop() []cpuSample {
	s.stop()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}

// cpuBetween interpolates the CPU time used between from and to.
func cpuBetween(samples []cpuSample, from, to time.Time) time.Duration {
	return cpuAt(samples, to) - cpuAt(samples, from)
}

func cpuAt(s []cpuSample, t time.Time) time.Duration {
	if len(s) == 0 {
		return 0
	}
	if !t.After(s[0].at) {
		return s[0].cpu
	}
	for i := 1; i < len(s); i++ {
		if !t.After(s[i].at) {
			a, b := s[i-1], s[i]
			f := float64(t.Sub(a.at)) / float64(b.at.Sub(a.at))
			return a.cpu + time.Duration(f*float64(b.cpu-a.cpu))
		}
	}
	return s[len(s)-1].cpu
}

// procTimes is one process's line of /proc/<pid>/stat.
type procTimes struct {
	ppid int
	// cpu is utime+stime plus cutime+cstime: the children it has reaped
	// are counted in it, the live ones count themselves.
	cpu int64
}

// treeCPU sums the CPU time of roots and all their descendants.
func treeCPU(roots []int) time.Duration {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	procs := map[int]procTimes{}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name may hold spaces; the fields follow its last ')'.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(data[i+1:])
		if len(f) < 15 {
			continue
		}
		num := func(k int) int64 { n, _ := strconv.ParseInt(string(f[k]), 10, 64); return n }
		// After ')': state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
		pt := procTimes{ppid: int(num(1)), cpu: num(11) + num(12) + num(13) + num(14)}
		procs[pid] = pt
		children[pt.ppid] = append(children[pt.ppid], pid)
	}
	var ticks int64
	seen := map[int]bool{}
	var walk func(int)
	walk = func(pid int) {
		if seen[pid] {
			return
		}
		seen[pid] = true
		if p, ok := procs[pid]; ok {
			ticks += p.cpu
		}
		for _, c := range children[pid] {
			walk(c)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return time.Duration(ticks) * time.Second / clockTick
}
