package faults

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// pathTarget reads FROM->ADDR:PORT or FROM->CLUSTER/NAMESPACE/SERVICE[:PORT].
func pathTarget(ctx context.Context, target string, p *params, env ParamEnv) (Path, Target, error) {
	from, to, ok := strings.Cut(target, "->")
	if !ok {
		return Path{}, Target{}, fmt.Errorf("path target %q: want FROM->ADDR:PORT or FROM->CLUSTER/NAMESPACE/SERVICE[:PORT]", target)
	}
	src, err := env.info(from)
	if err != nil {
		return Path{}, Target{}, err
	}
	t := Target{From: from}
	lb, err := netip.ParseAddrPort(to)
	if err != nil {
		parts := strings.Split(to, "/")
		if len(parts) != 3 {
			return Path{}, Target{}, fmt.Errorf("path target %q: %q is neither ADDR:PORT nor CLUSTER/NAMESPACE/SERVICE[:PORT]", target, to)
		}
		svc, portStr, _ := strings.Cut(parts[2], ":")
		var port uint64
		if portStr != "" {
			if port, err = strconv.ParseUint(portStr, 10, 16); err != nil {
				return Path{}, Target{}, fmt.Errorf("path target %q: port %q: %w", target, portStr, err)
			}
		}
		if _, err := env.info(parts[0]); err != nil {
			return Path{}, Target{}, err
		}
		if env.LookupLB == nil {
			return Path{}, Target{}, fmt.Errorf("path target %q: cannot look Services up here; give ADDR:PORT", target)
		}
		if lb, err = env.LookupLB(ctx, parts[0], parts[1], svc, uint16(port)); err != nil {
			return Path{}, Target{}, err
		}
		t.To, t.Service = parts[0], parts[1]+"/"+parts[2]
	} else {
		t.To = lb.String()
	}
	path := PathBetween(src, lb)
	path.KeepFlows = p.str("keepflows", "false") == "true"
	return path, t, nil
}

func dirs(p *params) (up, down bool) {
	switch p.str("dir", "both") {
	case "up":
		return true, false
	case "down":
		return false, true
	}
	return true, true
}

func tcpParams(path Path, p *params) tcpFault {
	var ts []toxic
	if p.has("latency") || p.has("jitter") {
		ts = append(ts, latency{Latency: p.dur("latency"), Jitter: p.dur("jitter")})
	}
	if p.has("bandwidth") {
		ts = append(ts, bandwidth{KBps: p.int("bandwidth")})
	}
	if p.has("slowclose") {
		ts = append(ts, slowClose{Delay: p.dur("slowclose")})
	}
	if p.has("timeout") {
		ts = append(ts, timeout{After: p.dur("timeout")})
	}
	if p.has("reset") {
		ts = append(ts, resetPeer{After: p.dur("reset")})
	}
	if p.has("slice") {
		ts = append(ts, slicer{AverageSize: int(p.int("slice")), SizeVariation: int(p.int("slicevar")), Delay: p.dur("slicedelay")})
	}
	if p.has("limit") {
		ts = append(ts, limitData{Bytes: p.int("limit")})
	}
	f := tcpFault{Path: path}
	up, down := dirs(p)
	if up {
		f.Upstream = ts
	}
	if down {
		f.Downstream = ts
	}
	return f
}

func udpParams(path Path, p *params) UDPFault {
	imp := Impairment{
		Loss: p.float("loss"), Delay: p.dur("delay"), Jitter: p.dur("jitter"),
		Duplicate: p.float("dup"), Reorder: p.float("reorder"), Corrupt: p.float("corrupt"),
		Blackhole: schedule{On: p.dur("blackhole"), Off: p.dur("blackhole-off")},
	}
	if p.has("burst") {
		imp.Burst = burstLoss(imp.Loss, p.float("burst"))
	}
	f := UDPFault{Path: path, Seed: uint64(p.int("seed")), rebindEvery: p.dur("rebind")}
	up, down := dirs(p)
	if up {
		f.Upstream = imp
	}
	if down {
		f.Downstream = imp
	}
	return f
}
