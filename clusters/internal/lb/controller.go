package lb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/internal/guard"
	"github.com/nvcf/conformance/clusters/internal/podnet"
)

// Registrar is where load-balancer hostnames are published; an
// *extdns.Server satisfies it.
type Registrar interface {
	Set(host string, addrs ...netip.Addr)
	Remove(host string)
}

// Config is one cluster's load-balancer controller.
type Config struct {
	// Kubeconfig (path) and Context ("" = current) reach the cluster;
	// Client, when set, is used instead.
	Kubeconfig, Context string
	Client              kubernetes.Interface
	// ClusterIndex picks the default Pool, podnet.LBPrefix(ClusterIndex).
	ClusterIndex int
	// Pool is the load-balancer address range; default LBPrefix(ClusterIndex).
	Pool netip.Prefix
	// DNS receives each LoadBalancer's hostnames; nil = not published.
	DNS Registrar
	// UDPIdleTimeout ends idle UDP sessions; default 2 minutes (longer than
	// QUIC's idle timeouts, so a live QUIC connection never loses its session).
	UDPIdleTimeout time.Duration
	// Log receives the controller's log; nil discards.
	Log *slog.Logger
	// NodePorts forwards each LoadBalancer port to the Service's NodePort
	// on every node's InternalIP, and serves no ClusterIP: for clusters
	// whose nodes are containers with their own kube-proxy (kind), where
	// the host reaches the nodes but not the pods. Off, the forwarders go
	// to the pods' endpoints (the embedded provider).
	NodePorts bool
}

type listenerKey struct {
	proto corev1.Protocol
	addr  netip.AddrPort
}

// listener is a TCP or UDP forwarder.
type listener interface {
	setBackends([]netip.AddrPort)
	close()
}

func (f *tcpForwarder) setBackends(b []netip.AddrPort) { f.be.set(b) }
func (f *udpForwarder) setBackends(b []netip.AddrPort) { f.be.set(b) }

// svcState is what the controller runs for one Service.
type svcState struct {
	addrs     []netip.Addr // on lo: ClusterIP and/or LB address
	lbAddr    netip.Addr
	hostnames []string
	listeners map[listenerKey]listener
}

type controller struct {
	cfg    Config
	log    *slog.Logger
	client kubernetes.Interface
	svcs   corelisters.ServiceLister
	slices discoverylisters.EndpointSliceLister
	nodes  corelisters.NodeLister // NodePorts only
	queue  workqueue.TypedRateLimitingInterface[string]
	pool   *pool
	state  map[string]*svcState
	// addAddr and delAddr put an address on lo and take it off.
	addAddr, delAddr func(context.Context, netip.Addr) error
}

// Run serves the cluster's Services until ctx is done, then closes every
// listener, takes its addresses off lo and withdraws its hostnames.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if !cfg.Pool.IsValid() {
		cfg.Pool = podnet.LBPrefix(cfg.ClusterIndex)
	}
	if cfg.UDPIdleTimeout <= 0 {
		cfg.UDPIdleTimeout = 2 * time.Minute
	}
	client := cfg.Client
	if client == nil {
		rc, err := clusters.RESTConfig(cfg.Kubeconfig, cfg.Context)
		if err != nil {
			return fmt.Errorf("lb: %w", err)
		}
		rc.UserAgent = "nvcf-lb-controller"
		if client, err = kubernetes.NewForConfig(rc); err != nil {
			return fmt.Errorf("lb: %w", err)
		}
	}
	if err := podnet.RequireRoot(); err != nil {
		return fmt.Errorf("lb: addresses on lo: %w", err)
	}
	return newController(cfg, client, podnet.AddLoopback, podnet.DelLoopback).run(ctx)
}

func newController(cfg Config, client kubernetes.Interface, add, del func(context.Context, netip.Addr) error) *controller {
	return &controller{
		cfg: cfg, log: cfg.Log, client: client,
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		pool:  newPool(cfg.Pool), state: map[string]*svcState{},
		addAddr: add, delAddr: del,
	}
}

// run watches Services and EndpointSlices and reconciles until ctx ends.
func (c *controller) run(ctx context.Context) error {
	factory := informers.NewSharedInformerFactory(c.client, 10*time.Minute)
	svcInf := factory.Core().V1().Services()
	sliceInf := factory.Discovery().V1().EndpointSlices()
	c.svcs, c.slices = svcInf.Lister(), sliceInf.Lister()
	defer c.queue.ShutDown()
	enqueueSvc := func(obj any) {
		if k, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(k)
		}
	}
	enqueueSlice := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if s, ok := obj.(*discoveryv1.EndpointSlice); ok {
			if name := s.Labels[discoveryv1.LabelServiceName]; name != "" {
				c.queue.Add(s.Namespace + "/" + name)
			}
		}
	}
	if _, err := svcInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueueSvc, UpdateFunc: func(_, n any) { enqueueSvc(n) }, DeleteFunc: enqueueSvc}); err != nil {
		return err
	}
	if _, err := sliceInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueueSlice, UpdateFunc: func(_, n any) { enqueueSlice(n) }, DeleteFunc: enqueueSlice}); err != nil {
		return err
	}
	synced := []cache.InformerSynced{svcInf.Informer().HasSynced, sliceInf.Informer().HasSynced}
	if c.cfg.NodePorts {
		// A node that comes or goes changes every LoadBalancer's backends.
		nodeInf := factory.Core().V1().Nodes()
		c.nodes = nodeInf.Lister()
		resync := func(any) {
			if svcs, err := c.svcs.List(labels.Everything()); err == nil {
				for _, s := range svcs {
					enqueueSvc(s)
				}
			}
		}
		if _, err := nodeInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: resync, DeleteFunc: resync,
			UpdateFunc: func(o, n any) {
				on, ok1 := o.(*corev1.Node)
				nn, ok2 := n.(*corev1.Node)
				if !ok1 || !ok2 || !equality.Semantic.DeepEqual(on.Status.Addresses, nn.Status.Addresses) {
					resync(n)
				}
			}}); err != nil {
			return err
		}
		synced = append(synced, nodeInf.Informer().HasSynced)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return ctx.Err()
	}
	c.log.Info("load-balancer controller running", "pool", c.cfg.Pool)
	guard.Go("lb: queue shutdown", func() { <-ctx.Done(); c.queue.ShutDown() })
	for c.next(ctx) {
	}
	return c.teardownAll()
}

func (c *controller) next(ctx context.Context) bool {
	k, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(k)
	if err := c.reconcile(ctx, k); err != nil {
		c.log.Warn("reconcile service", "service", k, "err", err)
		c.queue.AddRateLimited(k)
		return true
	}
	c.queue.Forget(k)
	return true
}

// reconcile makes the listeners of Service key match the Service and its
// EndpointSlices.
func (c *controller) reconcile(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	svc, err := c.svcs.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return c.teardown(ctx, key)
	}
	if err != nil {
		return err
	}
	st := c.state[key]
	if st == nil {
		st = &svcState{listeners: map[listenerKey]listener{}}
		c.state[key] = st
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err == nil && ip.Is4() && !c.cfg.NodePorts {
		addrs = append(addrs, ip)
	}
	isLB := svc.Spec.Type == corev1.ServiceTypeLoadBalancer
	if isLB {
		// Keep the address after an agent restart; else honour a requested one.
		var prefer netip.Addr
		if in := svc.Status.LoadBalancer.Ingress; len(in) > 0 {
			prefer, _ = netip.ParseAddr(in[0].IP)
		} else if svc.Spec.LoadBalancerIP != "" {
			prefer, _ = netip.ParseAddr(svc.Spec.LoadBalancerIP)
		}
		a, err := c.pool.allocate(key, prefer)
		if err != nil {
			return err
		}
		st.lbAddr = a
		addrs = append(addrs, a)
	} else if st.lbAddr.IsValid() {
		c.pool.release(key)
		st.lbAddr = netip.Addr{}
	}
	for _, a := range addrs {
		if !slices.Contains(st.addrs, a) {
			if err := c.addAddr(ctx, a); err != nil {
				return err
			}
		}
	}
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: name})
	eps, err := c.slices.EndpointSlices(ns).List(sel)
	if err != nil {
		return err
	}
	want := map[listenerKey]bool{}
	var errs []error
	for _, sp := range svc.Spec.Ports {
		proto := sp.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		if proto != corev1.ProtocolTCP && proto != corev1.ProtocolUDP {
			continue
		}
		be := backendsFor(sp, eps)
		if c.cfg.NodePorts {
			if be, err = c.nodePortBackends(sp); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		for _, a := range addrs {
			lk := listenerKey{proto, netip.AddrPortFrom(a, uint16(sp.Port))}
			want[lk] = true
			l, ok := st.listeners[lk]
			if !ok {
				if l, err = c.listen(lk); err != nil {
					errs = append(errs, err)
					continue
				}
				st.listeners[lk] = l
				c.log.Info("listening", "service", key, "proto", proto, "addr", lk.addr)
			}
			l.setBackends(be)
		}
	}
	for lk, l := range st.listeners {
		if !want[lk] {
			l.close()
			delete(st.listeners, lk)
		}
	}
	for _, a := range st.addrs {
		if !slices.Contains(addrs, a) {
			errs = append(errs, c.delAddr(ctx, a))
		}
	}
	st.addrs = addrs
	if isLB {
		errs = append(errs, c.publish(ctx, svc, st))
	} else {
		c.withdraw(st, nil)
	}
	return errors.Join(errs...)
}

// nodePortBackends are every node's InternalIP at the port's NodePort
// (none while the NodePort is unallocated), sorted like backendsFor's.
func (c *controller) nodePortBackends(sp corev1.ServicePort) ([]netip.AddrPort, error) {
	if sp.NodePort <= 0 {
		return nil, nil
	}
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var out []netip.AddrPort
	for _, n := range nodes {
		if ip, ok := clusters.NodeInternalIP(n); ok {
			out = append(out, netip.AddrPortFrom(ip, uint16(sp.NodePort)))
		}
	}
	slices.SortFunc(out, func(a, b netip.AddrPort) int { return a.Compare(b) })
	return out, nil
}

func (c *controller) listen(lk listenerKey) (listener, error) {
	log := c.log.With("addr", lk.addr.String(), "proto", string(lk.proto))
	if lk.proto == corev1.ProtocolUDP {
		return listenUDP(lk.addr, c.cfg.UDPIdleTimeout, log)
	}
	return listenTCP(lk.addr, log)
}
