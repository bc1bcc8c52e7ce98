package faults

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/nvcf/conformance/faults/internal/netnsx"
	"github.com/nvcf/conformance/faults/internal/tcpproxy"
)

// toxic is one of toxiproxy's toxics: Latency, Bandwidth, SlowClose,
// Timeout, ResetPeer, Slicer or LimitData.
type toxic interface {
	toxic() tcpproxy.Toxic
}

// latency delays data by Latency ± Jitter.
type latency struct{ Latency, Jitter time.Duration }

// bandwidth limits throughput to KBps kilobytes per second.
type bandwidth struct{ KBps int64 }

// slowClose delays the close of the connection by Delay.
type slowClose struct{ Delay time.Duration }

// timeout stops all data and closes the connection after After; After 0
// is a blackhole: data is held until the fault ends.
type timeout struct{ After time.Duration }

// resetPeer resets the connection (TCP RST) after After.
type resetPeer struct{ After time.Duration }

// slicer cuts data into pieces of AverageSize ± SizeVariation bytes, Delay apart.
type slicer struct {
	AverageSize, SizeVariation int
	Delay                      time.Duration
}

// limitData closes the connection after Bytes bytes.
type limitData struct{ Bytes int64 }

func ms(d time.Duration) int64 { return d.Milliseconds() }

func (t latency) toxic() tcpproxy.Toxic {
	return tcpproxy.Toxic{Type: "latency", Attributes: map[string]int64{"latency": ms(t.Latency), "jitter": ms(t.Jitter)}}
}
func (t bandwidth) toxic() tcpproxy.Toxic {
	return tcpproxy.Toxic{Type: "bandwidth", Attributes: map[string]int64{"rate": t.KBps}}
}
func (t slowClose) toxic() tcpproxy.Toxic {
	return tcpproxy.Toxic{Type: "slow_close", Attributes: map[string]int64{"delay": ms(t.Delay)}}
}
func (t timeout) toxic() tcpproxy.Toxic {
	return tcpproxy.Toxic{Type: "timeout", Attributes: map[string]int64{"timeout": ms(t.After)}}
}
func (t resetPeer) toxic() tcpproxy.Toxic {
	return tcpproxy.Toxic{Type: "reset_peer", Attributes: map[string]int64{"timeout": ms(t.After)}}
}
func (t slicer) toxic() tcpproxy.Toxic {
	return tcpproxy.Toxic{Type: "slicer", Attributes: map[string]int64{"average_size": int64(t.AverageSize), "size_variation": int64(t.SizeVariation), "delay": t.Delay.Microseconds()}}
}
func (t limitData) toxic() tcpproxy.Toxic {
	return tcpproxy.Toxic{Type: "limit_data", Attributes: map[string]int64{"bytes": t.Bytes}}
}

// tcpFault applies toxics to new TCP connections over a path, per
// direction: Upstream is client → load balancer, Downstream the replies.
type tcpFault struct {
	Path       Path
	Upstream   []toxic
	Downstream []toxic
}

// Kind is kindTCP.
func (tcpFault) Kind() Kind { return kindTCP }

// Describe lists the toxics per direction.
func (f tcpFault) Describe() string {
	var parts []string
	for _, d := range []struct {
		name string
		ts   []toxic
	}{{"up", f.Upstream}, {"down", f.Downstream}} {
		for _, t := range d.ts {
			parts = append(parts, fmt.Sprintf("%s:%s%v", d.name, t.toxic().Type, t.toxic().Attributes))
		}
	}
	return fmt.Sprintf("%s %s", f.Path, strings.Join(parts, " "))
}

func (f tcpFault) toxics() []tcpproxy.Toxic {
	var out []tcpproxy.Toxic
	for i, t := range f.Upstream {
		x := t.toxic()
		x.Stream, x.Name = "upstream", fmt.Sprintf("%s_up_%d", x.Type, i)
		out = append(out, x)
	}
	for i, t := range f.Downstream {
		x := t.toxic()
		x.Stream, x.Name = "downstream", fmt.Sprintf("%s_down_%d", x.Type, i)
		out = append(out, x)
	}
	return out
}

func (f tcpFault) inject(ctx context.Context, e *env) (undoFunc, error) {
	if err := f.Path.validate(); err != nil {
		return nil, err
	}
	l, err := netnsx.Listen(f.Path.Netns, "tcp", netip.AddrPortFrom(f.Path.Gateway, 0).String())
	if err != nil {
		return nil, fmt.Errorf("listen for the TCP fault proxy on %s (is this the host of the clusters?): %w", f.Path.Gateway, err)
	}
	p, err := tcpproxy.New(tcpproxy.Config{
		Listener: l,
		Upstream: f.Path.To.String(),
		Dial:     netnsx.Dialer{Netns: f.Path.Netns}.DialContext,
		Toxics:   f.toxics(),
		Logger:   e.log,
	})
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	stop := func(context.Context) error {
		e.note("%d connections through the toxics", p.Served())
		return p.Close()
	}
	undo, err := redirect(ctx, e, f.Path, "tcp", l.Addr().(*net.TCPAddr).AddrPort())
	if err != nil {
		return nil, errors.Join(err, stop(ctx))
	}
	return chain(stop, undo), nil
}
