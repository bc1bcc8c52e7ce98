package bench

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nvcf/conformance/clusters/local"
	"github.com/nvcf/conformance/reports"
)

// Report is what one benchmark run measured.
type Report struct {
	Topology string
	Started  time.Time
	// BringUp is how long Up took, from nothing to every node Ready.
	BringUp time.Duration
	// Idle is the memory of the fresh, idle environment.
	Idle Memory
	// Matrix is the matrix run's wall time (PKI minting and reports
	// included); Cases its counts.
	Matrix time.Duration
	Cases  reports.Counts
	// Tunnel is the invocation latency through the reverse tunnel against
	// direct calls to the echo server; TunnelErr says why it is missing.
	Tunnel    *Latency
	TunnelErr error
	// Profile is where the matrix's time went (nil when it did not run).
	Profile *Profile
}

// Memory is the resident memory of an environment, by cluster.
type Memory struct {
	Clusters []ClusterMemory
	// Agent is the agent process, shared by every cluster (process
	// kubelets, load balancers, external DNS); AgentShare is its part per
	// cluster.
	Agent      local.ProcessMemory
	AgentShare int64
}

// ClusterMemory is one cluster's processes.
type ClusterMemory struct {
	Name      string
	Processes []local.ProcessMemory
	// RSS and PSS sum the processes plus the cluster's share of the agent.
	RSS, PSS int64
}

func summarize(procs []local.ProcessMemory, clusters int) Memory {
	var m Memory
	for _, p := range procs {
		if p.Component == "agent" {
			m.Agent = p
		}
	}
	if clusters > 0 {
		m.AgentShare = m.Agent.RSS / int64(clusters)
	}
	for _, p := range procs {
		if p.Cluster == "" {
			continue
		}
		i := slices.IndexFunc(m.Clusters, func(c ClusterMemory) bool { return c.Name == p.Cluster })
		if i < 0 {
			m.Clusters = append(m.Clusters, ClusterMemory{Name: p.Cluster, RSS: m.AgentShare, PSS: m.Agent.PSS / int64(max(clusters, 1))})
			i = len(m.Clusters) - 1
		}
		c := &m.Clusters[i]
		c.Processes = append(c.Processes, p)
		c.RSS += p.RSS
		c.PSS += p.PSS
	}
	return m
}

func mib(n int64) string { return fmt.Sprintf("%.0f", float64(n)/(1<<20)) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }

// Markdown renders the report.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# harness bench: topology %s, %s\n\n", r.Topology, r.Started.Format(time.RFC3339))
	fmt.Fprintf(&b, "| measure | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| bring-up (fresh, to every node Ready) | %.1f s |\n", r.BringUp.Seconds())
	fmt.Fprintf(&b, "| matrix wall time | %.1f s (%d cases: %d pass, %d fail, %d error, %d skip) |\n",
		r.Matrix.Seconds(), r.Cases.Total(), r.Cases.Pass, r.Cases.Fail, r.Cases.Error, r.Cases.Skip)
	for _, c := range r.Idle.Clusters {
		fmt.Fprintf(&b, "| idle cluster %s, RSS (PSS) incl. agent share | %s MiB (%s MiB) |\n", c.Name, mib(c.RSS), mib(c.PSS))
	}
	switch {
	case r.Tunnel != nil:
		t := r.Tunnel
		fmt.Fprintf(&b, "| invocation p50: tunnel / direct | %s ms / %s ms = %.2f× |\n", ms(t.Tunnel.P50), ms(t.Direct.P50), t.Ratio50())
		fmt.Fprintf(&b, "| invocation p99: tunnel / direct | %s ms / %s ms = %.2f× |\n", ms(t.Tunnel.P99), ms(t.Direct.P99), t.Ratio99())
	case r.TunnelErr != nil:
		fmt.Fprintf(&b, "| invocation latency | not measured: %s |\n", strings.ReplaceAll(r.TunnelErr.Error(), "|", "/"))
	}
	if len(r.Idle.Clusters) > 0 {
		fmt.Fprintf(&b, "\n## Resident memory per idle process (MiB)\n\n")
		fmt.Fprintf(&b, "| cluster | process | RSS | anon | file | PSS |\n|---|---|---|---|---|---|\n")
		for _, c := range r.Idle.Clusters {
			for _, p := range c.Processes {
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", c.Name, p.Component, mib(p.RSS), mib(p.Anon), mib(p.File), mib(p.PSS))
			}
		}
		a := r.Idle.Agent
		fmt.Fprintf(&b, "| (all) | agent (kubelets, load balancers, DNS) | %s | %s | %s | %s |\n", mib(a.RSS), mib(a.Anon), mib(a.File), mib(a.PSS))
		fmt.Fprintf(&b, "\nRSS counts a binary's code in every process that maps it; PSS shares it among them (the clusters run the same binaries).\n")
	}
	if r.Tunnel != nil {
		t := r.Tunnel
		fmt.Fprintf(&b, "\n## Invocation latency (%d requests per path, interleaved, keep-alive)\n\n", t.Requests)
		fmt.Fprintf(&b, "Each is a streaming chat completion (\"stream\": true, the only kind a real Pylon forwards), timed to its data: [DONE].\n\n")
		fmt.Fprintf(&b, "- tunnel: POST %s/v1/chat/completions (Stargate → reverse QUIC tunnel → Pylon → echo)\n", t.TunnelURL)
		fmt.Fprintf(&b, "- direct: POST %s/v1/chat/completions (the echo server itself)\n\n", t.DirectURL)
		fmt.Fprintf(&b, "| path | p50 ms | p99 ms | mean ms |\n|---|---|---|---|\n")
		fmt.Fprintf(&b, "| tunnel | %s | %s | %s |\n| direct | %s | %s | %s |\n",
			ms(t.Tunnel.P50), ms(t.Tunnel.P99), ms(t.Tunnel.Mean), ms(t.Direct.P50), ms(t.Direct.P99), ms(t.Direct.Mean))
	}
	if r.Profile != nil {
		b.WriteString(r.Profile.Markdown())
	}
	return b.String()
}
