package faults

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nvcf/conformance/clusters"
)

// ParamEnv is what FromParams needs to know about a running environment.
type ParamEnv struct {
	// Environment is the running environment, as its provider described
	// it: its clusters' names and address plans, and its external DNS.
	Environment *clusters.Environment
	// Kubeconfig overrides the Environment's kubeconfig (one context per
	// cluster, named after it).
	Kubeconfig string
	// Netns puts network faults into a named network namespace ("" = this
	// process's), for environments that run inside one.
	Netns string
	// LookupLB returns the load-balancer address of a Service (port 0:
	// its first port). Nil: targets must name addresses.
	LookupLB func(ctx context.Context, cluster, namespace, service string, port uint16) (netip.AddrPort, error)
}

// info is the named cluster of the environment.
func (e ParamEnv) info(name string) (clusters.ClusterInfo, error) {
	if e.Environment == nil {
		return clusters.ClusterInfo{}, fmt.Errorf("cluster %q: no environment to look it up in", name)
	}
	c, ok := e.Environment.Cluster(name)
	if !ok {
		var names []string
		for _, c := range e.Environment.Clusters {
			names = append(names, c.Name)
		}
		return clusters.ClusterInfo{}, fmt.Errorf("cluster %q is not in the environment (clusters: %s)", name, strings.Join(names, ", "))
	}
	return c, nil
}

func (e ParamEnv) cluster(name string) (Cluster, error) {
	c, err := e.info(name)
	if err != nil {
		return Cluster{}, err
	}
	kubeconfig := e.Kubeconfig
	if kubeconfig == "" {
		kubeconfig = e.Environment.Kubeconfig
	}
	return Cluster{Kubeconfig: kubeconfig, Context: c.Context}, nil
}

// params reads typed values and reports unknown keys.
type params struct {
	m    map[string]string
	used map[string]bool
	err  error
}

func (p *params) str(k, def string) string {
	p.used[k] = true
	if v, ok := p.m[k]; ok {
		return v
	}
	return def
}

func (p *params) float(k string) float64 {
	v := p.str(k, "")
	if v == "" {
		return 0
	}
	v = strings.TrimSuffix(v, "%")
	f, err := strconv.ParseFloat(v, 64)
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("param %s=%q: want a number (0.2 or 20%%)", k, p.m[k])
	}
	if strings.HasSuffix(p.m[k], "%") {
		f /= 100
	}
	return f
}

func (p *params) dur(k string) time.Duration {
	v := p.str(k, "")
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("param %s=%q: want a duration such as 100ms or 5s", k, v)
	}
	return d
}

func (p *params) int(k string) int64 {
	v := p.str(k, "")
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("param %s=%q: want an integer", k, v)
	}
	return n
}

func (p *params) has(k string) bool { _, ok := p.m[k]; p.used[k] = true; return ok }

func (p *params) done() error {
	if p.err != nil {
		return p.err
	}
	var unknown []string
	for k := range p.m {
		if !p.used[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		return fmt.Errorf("unknown params %s for this kind (see `harness fault kinds`)", strings.Join(unknown, ", "))
	}
	return nil
}

// FromParams builds a fault from the CLI's words: a kind, a target and
// key=value parameters (ParamHelp lists them).
func FromParams(ctx context.Context, kind Kind, target string, kv map[string]string, env ParamEnv) (Fault, error) {
	p := &params{m: kv, used: map[string]bool{}}
	name := p.str("name", string(kind))
	f, err := fromParams(ctx, kind, target, p, env)
	if err != nil {
		return Fault{}, err
	}
	if err := p.done(); err != nil {
		return Fault{}, err
	}
	f.Name = name
	f.Action = inNetns(f.Action, env.Netns)
	return f, nil
}

func fromParams(ctx context.Context, kind Kind, target string, p *params, env ParamEnv) (Fault, error) {
	switch kind {
	case kindPartition:
		a, b, ok := strings.Cut(target, "->")
		if !ok {
			return Fault{}, fmt.Errorf("partition target %q: want FROM->TO (cluster names)", target)
		}
		ia, err := env.info(a)
		if err != nil {
			return Fault{}, err
		}
		ib, err := env.info(b)
		if err != nil {
			return Fault{}, err
		}
		oneway := p.str("oneway", "false") == "true"
		return Fault{Target: Target{From: a, To: b}, Action: PartitionBetween(ia, ib, oneway)}, nil
	case kindTCP, kindUDP, kindDowngrade:
		path, t, err := pathTarget(ctx, target, p, env)
		if err != nil {
			return Fault{}, err
		}
		switch kind {
		case kindTCP:
			return Fault{Target: t, Action: tcpParams(path, p)}, nil
		case kindUDP:
			return Fault{Target: t, Action: udpParams(path, p)}, nil
		}
		d := Downgrade{Path: path, Mode: DowngradeMode(p.str("mode", string(DowngradeH2C)))}
		if v := p.str("plain", ""); v != "" {
			ap, err := netip.ParseAddrPort(v)
			if err != nil {
				return Fault{}, fmt.Errorf("param plain=%q: want ADDR:PORT of a plaintext server: %w", v, err)
			}
			d.plainUpstream = ap
		}
		return Fault{Target: t, Action: d}, nil
	case kindPodDelete, kindPodCrash:
		c, ns, name, err := objectTarget(target, env, false)
		if err != nil {
			return Fault{}, err
		}
		sel := p.str("selector", "")
		if name == "" && sel == "" {
			return Fault{}, fmt.Errorf("%s target %q: want CLUSTER/NAMESPACE/POD, or CLUSTER/NAMESPACE with --param selector=…", kind, target)
		}
		t := Target{Cluster: c.Context, Pods: name + sel}
		count := int(p.int("count"))
		if kind == kindPodDelete {
			return Fault{Target: t, Action: podDelete{Cluster: c, Namespace: ns, Name: name, Selector: sel, Count: count, Immediate: p.str("immediate", "false") == "true"}}, nil
		}
		sig := syscall.SIGKILL
		if p.str("signal", "KILL") == "TERM" {
			sig = syscall.SIGTERM
		}
		info, err := env.info(strings.SplitN(target, "/", 2)[0])
		if err != nil {
			return Fault{}, err
		}
		return Fault{Target: t, Action: podCrash{Cluster: c, Namespace: ns, Name: name, Selector: sel, Count: count, Signal: sig, OnHost: info.Network.Pods.IsValid()}}, nil
	case kindScale:
		c, ns, rest, err := objectTarget(target, env, true)
		if err != nil {
			return Fault{}, err
		}
		wk, name, ok := strings.Cut(rest, "/")
		if !ok {
			return Fault{}, fmt.Errorf("scale target %q: want CLUSTER/NAMESPACE/(deployment|statefulset)/NAME", target)
		}
		kinds := map[string]string{"deployment": "Deployment", "statefulset": "StatefulSet"}
		if !p.has("replicas") {
			return Fault{}, fmt.Errorf("scale: --param replicas=N is required")
		}
		return Fault{Target: Target{Cluster: c.Context, Service: ns + "/" + rest}, Action: scale{Cluster: c, Namespace: ns, Workload: kinds[strings.ToLower(wk)], Name: name, Replicas: int32(p.int("replicas"))}}, nil
	case kindCert:
		c, ns, secret, err := objectTarget(target, env, true)
		if err != nil {
			return Fault{}, err
		}
		a := CertRotate{Cluster: c, Namespace: ns, Secret: secret, CertFile: p.str("cert", ""), KeyFile: p.str("key", ""), Variant: p.str("variant", "custom")}
		if a.CertFile == "" || a.KeyFile == "" {
			return Fault{}, fmt.Errorf("cert-rotate: --param cert=FILE and --param key=FILE are required (PEM, e.g. from the PKI folder)")
		}
		return Fault{Target: Target{Cluster: c.Context, Service: ns + "/" + secret}, Action: a}, nil
	case kindDNS:
		if env.Environment == nil {
			return Fault{}, fmt.Errorf("dns fault: no environment to find its external DNS in")
		}
		d := DNSFault{Name: target, Mode: DNSMode(p.str("mode", string(nxDomain))), Intercepts: []DNSIntercept{externalDNSIntercept(env.Environment)}}
		if v := p.str("addr", ""); v != "" {
			a, err := netip.ParseAddr(v)
			if err != nil {
				return Fault{}, fmt.Errorf("param addr=%q: %w", v, err)
			}
			d.Addr = a
		}
		if v := p.str("pods", ""); v != "" {
			for _, name := range strings.Split(v, ",") {
				c, err := env.info(name)
				if err != nil {
					return Fault{}, err
				}
				d.Intercepts = append(d.Intercepts, ClusterDNSIntercept(c))
			}
		}
		return Fault{Target: Target{Service: target}, Action: d}, nil
	}
	return Fault{}, fmt.Errorf("unknown fault kind %q (kinds: %s)", kind, strings.Join(kindNames(), ", "))
}

func kindNames() []string {
	return []string{string(kindTCP), string(kindUDP), string(kindPartition), string(kindPodDelete), string(kindPodCrash), string(kindScale), string(kindCert), string(kindDNS), string(kindDowngrade)}
}

// objectTarget reads CLUSTER/NAMESPACE[/REST].
func objectTarget(target string, env ParamEnv, needRest bool) (Cluster, string, string, error) {
	parts := strings.SplitN(target, "/", 3)
	if len(parts) < 2 || (needRest && len(parts) < 3) {
		return Cluster{}, "", "", fmt.Errorf("target %q: want CLUSTER/NAMESPACE/NAME", target)
	}
	c, err := env.cluster(parts[0])
	if err != nil {
		return Cluster{}, "", "", err
	}
	rest := ""
	if len(parts) == 3 {
		rest = parts[2]
	}
	return c, parts[1], rest, nil
}

// ParamHelp describes each kind's target and parameters, for the CLI.
const ParamHelp = `kinds, targets and params (--param key=value, repeatable):
  partition  FROM->TO                              oneway=true
  tcp        FROM->ADDR:PORT | FROM->CLUSTER/NS/SVC[:PORT]
             latency=100ms jitter=20ms bandwidth=KBps slowclose=1s timeout=0s(blackhole) reset=0s
             slice=BYTES slicevar=BYTES slicedelay=1ms limit=BYTES dir=up|down|both keepflows=true
  udp        (as tcp)  loss=0.2|20% burst=MEANLEN delay=100ms jitter=20ms dup=0.01 reorder=0.05
             corrupt=0.01 blackhole=5s blackhole-off=5s rebind=10s seed=N dir=up|down|both
  downgrade  (as tcp)  mode=h2c|strip plain=ADDR:PORT (strip's plaintext server)
  pod-delete CLUSTER/NS/POD | CLUSTER/NS           selector=LABELS count=N immediate=true
  pod-crash  CLUSTER/NS/POD | CLUSTER/NS           selector=LABELS count=N signal=KILL|TERM
  scale      CLUSTER/NS/(deployment|statefulset)/NAME  replicas=N
  cert-rotate CLUSTER/NS/SECRET                    cert=FILE key=FILE variant=NAME
  dns        NAME                                  mode=nxdomain|servfail|spoof addr=IP pods=CLUSTER[,…]
  every kind: name=LABEL`

// inNetns places a network action in namespace ns.
func inNetns(a Action, ns string) Action {
	switch x := a.(type) {
	case tcpFault:
		x.Path.Netns = ns
		return x
	case UDPFault:
		x.Path.Netns = ns
		return x
	case Downgrade:
		x.Path.Netns = ns
		return x
	case partition:
		x.Netns = ns
		return x
	case DNSFault:
		x.netns = ns
		return x
	}
	return a
}
