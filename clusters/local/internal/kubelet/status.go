package kubelet

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// setCond sets a pod condition, keeping its transition time when the
// status does not change. Call with mu held.
func (r *podRuntime) setCond(t corev1.PodConditionType, ok bool, reason string) {
	st := corev1.ConditionFalse
	if ok {
		st = corev1.ConditionTrue
	}
	old, had := r.conds[t]
	if had && old.Status == st && old.Reason == reason {
		return
	}
	r.conds[t] = corev1.PodCondition{Type: t, Status: st, Reason: reason, LastTransitionTime: metav1.Now()}
}

// status renders the pod's status; call with mu held.
func (r *podRuntime) status() corev1.PodStatus {
	st := *r.pod.Status.DeepCopy()
	st.StartTime = &r.startTime
	hostIP := r.k.cfg.Network.Gateway().String()
	st.HostIP, st.HostIPs = hostIP, []corev1.HostIP{{IP: hostIP}}
	if r.net.IP.IsValid() {
		st.PodIP, st.PodIPs = r.net.IP.String(), []corev1.PodIP{{IP: r.net.IP.String()}}
	}
	st.InitContainerStatuses = r.ctrStatuses(r.init)
	st.ContainerStatuses = r.ctrStatuses(r.ctrs)

	allReady := r.initDone
	running, restarting, succeeded, failed := 0, 0, 0, 0
	for _, c := range r.ctrs {
		allReady = allReady && c.ready
		switch {
		case c.state.Running != nil:
			running++
		case c.state.Waiting != nil && c.restarts > 0:
			restarting++
		case c.state.Terminated != nil && c.state.Terminated.ExitCode == 0:
			succeeded++
		case c.state.Terminated != nil:
			failed++
		}
	}
	n := len(r.ctrs)
	switch {
	case r.failed != "":
		st.Phase, st.Reason, st.Message = corev1.PodFailed, "InitContainerFailed", r.failed
	case !r.initDone:
		st.Phase = corev1.PodPending
	case running > 0 || restarting > 0:
		st.Phase = corev1.PodRunning
	case n > 0 && succeeded == n:
		st.Phase = corev1.PodSucceeded
	case n > 0 && succeeded+failed == n:
		st.Phase = corev1.PodFailed
	default:
		st.Phase = corev1.PodPending
	}
	if r.waitMsg != "" && st.Phase == corev1.PodPending && !r.net.IP.IsValid() {
		st.Message = r.waitMsg
	}
	r.setCond(corev1.PodInitialized, r.initDone, "")
	r.setCond(corev1.ContainersReady, allReady && st.Phase == corev1.PodRunning, "")
	r.setCond(corev1.PodReady, allReady && st.Phase == corev1.PodRunning, "")
	// Keep conditions we do not own (PodScheduled, readiness gates).
	var conds []corev1.PodCondition
	for _, c := range st.Conditions {
		if _, ours := r.conds[c.Type]; !ours {
			conds = append(conds, c)
		}
	}
	for _, t := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		if c, ok := r.conds[t]; ok {
			conds = append(conds, c)
		}
	}
	st.Conditions = conds
	return st
}

func (r *podRuntime) ctrStatuses(cs []*ctrState) []corev1.ContainerStatus {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, 0, len(cs))
	for _, c := range cs {
		started := c.started && c.state.Running != nil
		s := corev1.ContainerStatus{
			Name: c.spec.Name, Image: c.spec.Image, ImageID: "nvcf-local://" + c.spec.Image,
			State: *c.state.DeepCopy(), LastTerminationState: *c.last.DeepCopy(),
			Ready: c.ready, RestartCount: c.restarts, Started: &started,
		}
		if c.state.Waiting == nil || c.restarts > 0 {
			s.ContainerID = containerID(r.uid, c)
		}
		out = append(out, s)
	}
	return out
}

// podHostname is the pod's hostname: spec.hostname, else its name
// (truncated to 63 characters as the kubelet does).
func podHostname(pod *corev1.Pod) string {
	h := pod.Spec.Hostname
	if h == "" {
		h = pod.Name
	}
	if len(h) > 63 {
		h = strings.TrimRight(h[:63], "-.")
	}
	return h
}

// resolvConf renders the pod's resolv.conf for its dnsPolicy.
func resolvConf(pod *corev1.Pod, dns netip.Addr, domain string) string {
	var servers, search, options []string
	switch pod.Spec.DNSPolicy {
	case corev1.DNSNone:
	default: // ClusterFirst, ClusterFirstWithHostNet, Default: all point at the cluster DNS here
		servers = []string{dns.String()}
		search = []string{pod.Namespace + ".svc." + domain, "svc." + domain, domain}
		options = []string{"ndots:5"}
	}
	if c := pod.Spec.DNSConfig; c != nil {
		servers = append(servers, c.Nameservers...)
		search = append(search, c.Searches...)
		for _, o := range c.Options {
			if o.Value != nil {
				options = append(options, o.Name+":"+*o.Value)
			} else {
				options = append(options, o.Name)
			}
		}
	}
	var b strings.Builder
	for _, s := range servers {
		fmt.Fprintf(&b, "nameserver %s\n", s)
	}
	if len(search) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(search, " "))
	}
	if len(options) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(options, " "))
	}
	return b.String()
}

// hostsFile renders the pod's /etc/hosts as the kubelet does.
func hostsFile(pod *corev1.Pod, ip netip.Addr, domain string) string {
	var b strings.Builder
	b.WriteString("# Kubernetes-managed hosts file (nvcf process kubelet).\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	h := podHostname(pod)
	if pod.Spec.Subdomain != "" {
		fmt.Fprintf(&b, "%s\t%s.%s.%s.svc.%s\t%s\n", ip, h, pod.Spec.Subdomain, pod.Namespace, domain, h)
	} else {
		fmt.Fprintf(&b, "%s\t%s\n", ip, h)
	}
	for _, ha := range pod.Spec.HostAliases {
		fmt.Fprintf(&b, "%s\t%s\n", ha.IP, strings.Join(ha.Hostnames, "\t"))
	}
	return b.String()
}
