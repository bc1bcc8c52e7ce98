package udpproxy

import (
	"math/rand/v2"
	"time"
)

// GilbertElliott is a two-state loss model that makes losses come in
// bursts: each packet first moves the chain (Good→Bad with probability P,
// Bad→Good with probability R), then is lost with LossGood or LossBad. The
// long-run loss rate is P/(P+R)·LossBad + R/(P+R)·LossGood and the mean burst
// length in the Bad state is 1/R packets.
type GilbertElliott struct {
	P, R              float64
	LossGood, LossBad float64
}

// Rate is the model's long-run loss rate.
func (g GilbertElliott) Rate() float64 {
	if g.P+g.R == 0 {
		return g.LossGood
	}
	return g.P/(g.P+g.R)*g.LossBad + g.R/(g.P+g.R)*g.LossGood
}

// BurstLoss returns a model with long-run loss rate rate whose losses come
// in bursts of mean length burst packets (LossBad 1, LossGood 0).
func BurstLoss(rate, burst float64) GilbertElliott {
	if burst < 1 {
		burst = 1
	}
	r := 1 / burst
	// rate = P/(P+R)  ⇒  P = rate·R/(1-rate)
	p := 1.0
	if rate < 1 {
		p = rate * r / (1 - rate)
	}
	return GilbertElliott{P: min(p, 1), R: r, LossBad: 1}
}

// Schedule switches a blackhole on and off: after Delay the direction
// drops everything for On, passes for Off, and repeats. Off 0 means one
// window; On 0 means no blackhole.
type Schedule struct {
	Delay, On, Off time.Duration
}

func (s Schedule) active(elapsed time.Duration) bool {
	if s.On <= 0 {
		return false
	}
	e := elapsed - s.Delay
	if e < 0 {
		return false
	}
	if s.Off <= 0 {
		return e < s.On
	}
	return e%(s.On+s.Off) < s.On
}

// Impairment is what happens to the packets of one direction. The zero
// value passes every packet unchanged and at once.
type Impairment struct {
	// Loss is the probability that a packet is dropped (0..1), unless Burst is set.
	Loss float64
	// Burst, when set, replaces Loss with a Gilbert-Elliott model.
	Burst *GilbertElliott
	// Delay is added to every packet; Jitter spreads it uniformly over
	// [Delay-Jitter, Delay+Jitter] (so packets may overtake each other).
	Delay, Jitter time.Duration
	// Duplicate is the probability that a packet is sent twice.
	Duplicate float64
	// Reorder is the probability that a packet is held back and sent right
	// after the next one of the same direction.
	Reorder float64
	// Corrupt is the probability that one random bit of a packet is flipped.
	Corrupt float64
	// Blackhole drops everything during its on-windows, counted from when
	// the impairment was set.
	Blackhole Schedule
}

// decision is what the model decided for one packet.
type decision struct {
	blackholed, lost, corrupt, duplicate, reorder bool
	bit                                           int
	delays                                        [2]time.Duration
}

// model holds one direction's random state.
type model struct {
	imp   Impairment
	rng   *rand.Rand
	bad   bool
	since time.Time
}

func (m *model) decide(now time.Time, size int) decision {
	var d decision
	imp := &m.imp
	if imp.Blackhole.active(now.Sub(m.since)) {
		d.blackholed = true
		return d
	}
	if g := imp.Burst; g != nil {
		if m.bad {
			m.bad = m.rng.Float64() >= g.R
		} else {
			m.bad = m.rng.Float64() < g.P
		}
		loss := g.LossGood
		if m.bad {
			loss = g.LossBad
		}
		d.lost = m.rng.Float64() < loss
	} else {
		d.lost = m.rng.Float64() < imp.Loss
	}
	if d.lost {
		return d
	}
	if size > 0 && m.rng.Float64() < imp.Corrupt {
		d.corrupt = true
		d.bit = m.rng.IntN(size * 8)
	}
	d.duplicate = m.rng.Float64() < imp.Duplicate
	d.reorder = m.rng.Float64() < imp.Reorder
	for i := range d.delays {
		delay := imp.Delay
		if imp.Jitter > 0 {
			delay += time.Duration(m.rng.Int64N(int64(2*imp.Jitter)+1)) - imp.Jitter
		}
		d.delays[i] = max(delay, 0)
	}
	return d
}
