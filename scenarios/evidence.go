package scenarios

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxLogBytes bounds each container log kept as evidence.
const maxLogBytes = 256 << 10

// writeTranscript writes the case's probe transcript.
func (e *Env) writeTranscript() error {
	if err := os.MkdirAll(e.Evidence, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(e.Evidence, "probe-transcript.txt"))
	if err != nil {
		return err
	}
	defer f.Close()
	return e.Probe.WriteTranscript(f)
}

// collect writes the evidence of a case that did not pass: for every
// cluster, the pods' status (as `kubectl get pods -o wide` would show it
// plus container states), the tail of every container's log (as `kubectl
// logs` would), and the /status document of every pod that serves one.
func (e *Env) collect(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var errs []string
	for _, c := range e.Topology.Clusters {
		if err := e.collectCluster(ctx, c.Name); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("collect evidence: %s", strings.Join(errs, "; "))
	}
	return nil
}

func (e *Env) collectCluster(ctx context.Context, cluster string) error {
	cs, err := e.Kube(cluster)
	if err != nil {
		return err
	}
	ns := e.Deployed.Namespace
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("cluster %s: list pods: %w", cluster, err)
	}
	dir := filepath.Join(e.Evidence, cluster)
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return err
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-40s %-10s %-6s %-16s %-10s %s\n", "NAME", "PHASE", "READY", "IP", "NODE", "CONTAINERS")
	for _, p := range pods.Items {
		fmt.Fprintf(&table, "%-40s %-10s %-6t %-16s %-10s %s\n", p.Name, p.Status.Phase, podReady(p), p.Status.PodIP, p.Spec.NodeName, containerStates(p))
		for _, c := range p.Spec.Containers {
			e.saveLog(ctx, cs.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name, LimitBytes: ptr(int64(maxLogBytes))}).Stream,
				filepath.Join(dir, "logs", p.Name+"_"+c.Name+".log"))
		}
		if p.Status.PodIP != "" {
			for _, port := range statusPorts(p) {
				if doc, err := e.status(ctx, Pod{Name: p.Name, IP: p.Status.PodIP}, port); err == nil {
					_ = os.WriteFile(filepath.Join(dir, p.Name+".status.json"), []byte(doc.String()+"\n"), 0o644)
				}
			}
		}
	}
	return os.WriteFile(filepath.Join(dir, "pods.txt"), []byte(table.String()), 0o644)
}

func (e *Env) saveLog(ctx context.Context, open func(context.Context) (io.ReadCloser, error), path string) {
	rc, err := open(ctx)
	if err != nil {
		_ = os.WriteFile(path, []byte("(log unavailable: "+err.Error()+")\n"), 0o644)
		return
	}
	defer rc.Close()
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = io.Copy(f, io.LimitReader(rc, maxLogBytes))
}

// statusPorts are the container ports named "status".
func statusPorts(p corev1.Pod) []int {
	var out []int
	for _, c := range p.Spec.Containers {
		for _, port := range c.Ports {
			if port.Name == "status" {
				out = append(out, int(port.ContainerPort))
			}
		}
	}
	return out
}

func containerStates(p corev1.Pod) string {
	var parts []string
	for _, s := range p.Status.ContainerStatuses {
		state := "waiting"
		switch {
		case s.State.Running != nil:
			state = "running"
		case s.State.Terminated != nil:
			state = fmt.Sprintf("terminated(%d:%s)", s.State.Terminated.ExitCode, s.State.Terminated.Reason)
		case s.State.Waiting != nil:
			state = "waiting(" + s.State.Waiting.Reason + ")"
		}
		parts = append(parts, fmt.Sprintf("%s=%s,restarts=%d", s.Name, state, s.RestartCount))
	}
	return strings.Join(parts, " ")
}

func ptr[T any](v T) *T { return &v }

// keepVariant writes the status and logs of the pods matching selector in
// cluster (a variant about to be deleted) into the case's evidence, under
// variant-<name>/, so a refusal can be read after the variant is gone.
func (e *Env) keepVariant(ctx context.Context, cluster, name, selector string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	cs, err := e.Kube(cluster)
	if err != nil {
		return
	}
	ns := e.Deployed.Namespace
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return
	}
	dir := filepath.Join(e.Evidence, "variant-"+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	var table strings.Builder
	for _, p := range pods.Items {
		fmt.Fprintf(&table, "%s %s ready=%t ip=%s %s\n", p.Name, p.Status.Phase, podReady(p), p.Status.PodIP, containerStates(p))
		for _, c := range p.Spec.Containers {
			e.saveLog(ctx, cs.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name, LimitBytes: ptr(int64(maxLogBytes))}).Stream,
				filepath.Join(dir, p.Name+"_"+c.Name+".log"))
		}
	}
	_ = os.WriteFile(filepath.Join(dir, "pods.txt"), []byte(table.String()), 0o644)
}
