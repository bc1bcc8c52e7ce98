package faults

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/nvcf/conformance/faults/internal/netnsx"
	"github.com/nvcf/conformance/faults/internal/udpproxy"
)

// Impairment is what happens to the datagrams of one direction: loss
// (Bernoulli, or bursts with Burst), delay and jitter, duplication,
// reordering, corruption and blackhole schedules. The zero value passes
// everything.
type Impairment = udpproxy.Impairment

// gilbertElliott is the two-state burst-loss model of Impairment.Burst.
type gilbertElliott = udpproxy.GilbertElliott

// schedule switches a blackhole on and off (Impairment.Blackhole).
type schedule = udpproxy.Schedule

// burstLoss returns a burst-loss model with long-run loss rate rate and
// mean burst length burst packets.
func burstLoss(rate, burst float64) *gilbertElliott {
	g := udpproxy.BurstLoss(rate, burst)
	return &g
}

// UDPFault impairs UDP datagrams over a path (QUIC), per direction, through
// a proxy with one session (one upstream socket) per client.
type UDPFault struct {
	Path Path
	// Upstream is client → load balancer; Downstream the replies.
	Upstream, Downstream Impairment
	// Seed makes the random impairments reproducible.
	Seed uint64
	// rebindEvery moves every session to a new upstream source port at this
	// interval (client address rebinding, as after a NAT timeout); 0 never.
	rebindEvery time.Duration
}

// Kind is kindUDP.
func (UDPFault) Kind() Kind { return kindUDP }

// Describe summarises the impairments.
func (f UDPFault) Describe() string {
	s := fmt.Sprintf("%s up=%s down=%s", f.Path, describeImp(f.Upstream), describeImp(f.Downstream))
	if f.rebindEvery > 0 {
		s += fmt.Sprintf(" rebind-every=%s", f.rebindEvery)
	}
	return s
}

func describeImp(i Impairment) string {
	s := ""
	add := func(f string, a ...any) { s += fmt.Sprintf(f, a...) + "," }
	if i.Burst != nil {
		add("loss=%.0f%%(bursts)", i.Burst.Rate()*100)
	} else if i.Loss > 0 {
		add("loss=%.0f%%", i.Loss*100)
	}
	if i.Delay > 0 || i.Jitter > 0 {
		add("delay=%s±%s", i.Delay, i.Jitter)
	}
	if i.Duplicate > 0 {
		add("dup=%.0f%%", i.Duplicate*100)
	}
	if i.Reorder > 0 {
		add("reorder=%.0f%%", i.Reorder*100)
	}
	if i.Corrupt > 0 {
		add("corrupt=%.0f%%", i.Corrupt*100)
	}
	if i.Blackhole.On > 0 {
		add("blackhole=%s/%s", i.Blackhole.On, i.Blackhole.Off)
	}
	if s == "" {
		return "none"
	}
	return s[:len(s)-1]
}

func (f UDPFault) inject(ctx context.Context, e *env) (undoFunc, error) {
	if err := f.Path.validate(); err != nil {
		return nil, err
	}
	conn, err := netnsx.ListenPacket(f.Path.Netns, "udp", netip.AddrPortFrom(f.Path.Gateway, 0).String(), false)
	if err != nil {
		return nil, fmt.Errorf("listen for the UDP fault proxy on %s (is this the host of the clusters?): %w", f.Path.Gateway, err)
	}
	p, err := udpproxy.New(udpproxy.Config{
		Conn:     conn,
		Upstream: f.Path.To,
		OpenUpstream: func() (net.PacketConn, error) {
			return netnsx.ListenPacket(f.Path.Netns, "udp", "0.0.0.0:0", true)
		},
		Up: f.Upstream, Down: f.Downstream,
		Seed:   f.Seed,
		Logger: e.log,
	})
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	done := make(chan struct{})
	if f.rebindEvery > 0 {
		go func() {
			t := time.NewTicker(f.rebindEvery)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					if _, err := p.Rebind(); err != nil {
						e.log.Warn("udp fault rebind", "err", err)
					}
				}
			}
		}()
	}
	stop := func(context.Context) error {
		close(done)
		up, down := p.Stats(udpproxy.Upstream), p.Stats(udpproxy.Downstream)
		e.note("up %s; down %s; %d sessions, %d rebinds", statLine(up), statLine(down), p.Sessions(), p.Rebinds())
		return p.Close()
	}
	undo, err := redirect(ctx, e, f.Path, "udp", conn.LocalAddr().(*net.UDPAddr).AddrPort())
	if err != nil {
		return nil, errors.Join(err, stop(ctx))
	}
	return chain(stop, undo), nil
}

func statLine(s udpproxy.Stats) string {
	return fmt.Sprintf("%d in, %d out, %d lost, %d blackholed, %d duplicated, %d reordered, %d corrupted",
		s.Received, s.Delivered, s.Lost, s.Blackholed, s.Duplicated, s.Reordered, s.Corrupted)
}
