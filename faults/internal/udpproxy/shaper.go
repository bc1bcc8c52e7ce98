package udpproxy

import (
	"container/heap"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Stats counts what one direction did to its packets.
type Stats struct {
	// Received packets entered the direction; Delivered copies left it.
	Received, Delivered uint64
	// Lost by the loss model, Blackholed by the schedule.
	Lost, Blackholed uint64
	// Duplicated, Reordered and Corrupted packets.
	Duplicated, Reordered, Corrupted uint64
}

type counters struct {
	received, delivered, lost, blackholed, duplicated, reordered, corrupted atomic.Uint64
}

func (c *counters) snapshot() Stats {
	return Stats{
		Received: c.received.Load(), Delivered: c.delivered.Load(),
		Lost: c.lost.Load(), Blackholed: c.blackholed.Load(),
		Duplicated: c.duplicated.Load(), Reordered: c.reordered.Load(), Corrupted: c.corrupted.Load(),
	}
}

// packet is one copy waiting to be sent.
type packet struct {
	due  time.Time
	seq  uint64
	data []byte
	send func([]byte)
	// held marks a packet that waits for the next one (reordering).
	held bool
}

type queue []*packet

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].due.Equal(q[j].due) {
		return q[i].seq < q[j].seq
	}
	return q[i].due.Before(q[j].due)
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(*packet)) }
func (q *queue) Pop() any {
	old := *q
	p := old[len(old)-1]
	*q = old[:len(old)-1]
	return p
}

// holdLimit bounds how long a reordered packet waits for a successor.
const holdLimit = 50 * time.Millisecond

// shaper applies one direction's impairment and sends packets when due,
// from one goroutine, so that equal due times keep their arrival order.
type shaper struct {
	mu    sync.Mutex
	m     model
	q     queue
	seq   uint64
	held  *packet
	wake  chan struct{}
	done  chan struct{}
	stats counters
}

func newShaper(seed1, seed2 uint64) *shaper {
	s := &shaper{
		m:    model{rng: rand.New(rand.NewPCG(seed1, seed2)), since: time.Now()},
		wake: make(chan struct{}, 1),
		done: make(chan struct{}),
	}
	go s.loop()
	return s
}

func (s *shaper) set(imp Impairment) {
	s.mu.Lock()
	s.m.imp = imp
	s.m.since = time.Now()
	s.m.bad = false
	s.mu.Unlock()
}

func (s *shaper) get() Impairment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m.imp
}

// submit takes ownership of data and schedules it through send.
func (s *shaper) submit(data []byte, send func([]byte)) {
	s.stats.received.Add(1)
	now := time.Now()
	s.mu.Lock()
	d := s.m.decide(now, len(data))
	switch {
	case d.blackholed:
		s.mu.Unlock()
		s.stats.blackholed.Add(1)
		return
	case d.lost:
		s.mu.Unlock()
		s.stats.lost.Add(1)
		return
	}
	if d.corrupt {
		data[d.bit/8] ^= 1 << (d.bit % 8)
		s.stats.corrupted.Add(1)
	}
	copies := 1
	if d.duplicate {
		copies = 2
		s.stats.duplicated.Add(1)
	}
	for i := range copies {
		buf := data
		if i > 0 {
			buf = append([]byte(nil), data...)
		}
		s.seq++
		p := &packet{due: now.Add(d.delays[i]), seq: s.seq, data: buf, send: send}
		heap.Push(&s.q, p)
		if i > 0 {
			continue
		}
		if h := s.held; h != nil {
			// Release the held packet right after this one.
			s.removeLocked(h)
			s.seq++
			h.due, h.seq, h.held = p.due, s.seq, false
			heap.Push(&s.q, h)
			s.held = nil
			s.stats.reordered.Add(1)
		} else if d.reorder {
			s.removeLocked(p)
			p.held = true
			p.due = p.due.Add(holdLimit)
			s.held = p
			heap.Push(&s.q, p)
		}
	}
	s.mu.Unlock()
	s.poke()
}

func (s *shaper) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *shaper) loop() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.mu.Lock()
		var ready []*packet
		now := time.Now()
		for s.q.Len() > 0 && !s.q[0].due.After(now) {
			p := heap.Pop(&s.q).(*packet)
			if p.held && s.held == p {
				// Its successor never came in time: send it in place.
				s.held = nil
			}
			ready = append(ready, p)
		}
		wait := time.Hour
		if s.q.Len() > 0 {
			wait = time.Until(s.q[0].due)
		}
		s.mu.Unlock()
		for _, p := range ready {
			p.send(p.data)
			s.stats.delivered.Add(1)
		}
		timer.Reset(wait)
		select {
		case <-s.done:
			return
		case <-s.wake:
		case <-timer.C:
		}
	}
}

func (s *shaper) removeLocked(p *packet) {
	for i, x := range s.q {
		if x == p {
			heap.Remove(&s.q, i)
			return
		}
	}
}

func (s *shaper) close() { close(s.done) }
