package lb

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nvcf/conformance/clusters/internal/guard"
)

// backends is a round-robin set of upstream addresses, swapped atomically
// when the EndpointSlices change.
type backends struct {
	list atomic.Pointer[[]netip.AddrPort]
	next atomic.Uint64
}

func (b *backends) set(l []netip.AddrPort) { b.list.Store(&l) }

func (b *backends) get() []netip.AddrPort {
	if p := b.list.Load(); p != nil {
		return *p
	}
	return nil
}

// pick returns the next backend, round-robin; false when there is none.
func (b *backends) pick() (netip.AddrPort, bool) {
	l := b.get()
	if len(l) == 0 {
		return netip.AddrPort{}, false
	}
	return l[int(b.next.Add(1)-1)%len(l)], true
}

// tcpForwarder accepts connections on one address and splices each to a
// backend, trying the next one when a dial fails.
type tcpForwarder struct {
	ln  net.Listener
	be  backends
	log *slog.Logger
	wg  sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func listenTCP(addr netip.AddrPort, log *slog.Logger) (*tcpForwarder, error) {
	ln, err := net.Listen("tcp", addr.String())
	if err != nil {
		return nil, err
	}
	f := &tcpForwarder{ln: ln, log: log, conns: map[net.Conn]struct{}{}}
	f.wg.Add(1)
	guard.Go("lb: tcp listener", func() { f.serve() })
	return f, nil
}

func (f *tcpForwarder) addr() netip.AddrPort { return netip.MustParseAddrPort(f.ln.Addr().String()) }

func (f *tcpForwarder) serve() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				f.log.Warn("accept", "err", err)
			}
			return
		}
		f.wg.Add(1)
		guard.Go("lb: tcp connection", func() { defer f.wg.Done(); f.handle(c) })
	}
}

func (f *tcpForwarder) track(c net.Conn, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if on {
		f.conns[c] = struct{}{}
	} else {
		delete(f.conns, c)
	}
}

func (f *tcpForwarder) handle(client net.Conn) {
	f.track(client, true)
	defer f.track(client, false)
	defer client.Close()
	var up net.Conn
	for range max(len(f.be.get()), 1) {
		target, ok := f.be.pick()
		if !ok {
			break
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", target.String())
		cancel()
		if err == nil {
			up = c
			break
		}
		f.log.Debug("backend dial failed", "backend", target, "err", err)
	}
	if up == nil {
		f.log.Debug("no reachable backend; closing client", "client", client.RemoteAddr())
		return
	}
	f.track(up, true)
	defer f.track(up, false)
	defer up.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}
	guard.Go("lb: tcp copy", func() { pipe(up, client) })
	guard.Go("lb: tcp copy", func() { pipe(client, up) })
	<-done
	<-done
}

// close stops accepting, cuts open connections and waits for them.
func (f *tcpForwarder) close() {
	_ = f.ln.Close()
	f.mu.Lock()
	for c := range f.conns {
		_ = c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}
