// Package netnsx opens sockets and runs functions inside a named network
// namespace (as made by `ip netns add`), or in the caller's namespace when
// the name is empty. A socket keeps the namespace it was created in, so a
// listener or connection made here can be used from any goroutine.
package netnsx

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"syscall"

	"github.com/vishvananda/netns"
)

// Do runs fn on a thread switched into the named namespace ("" = the
// current one) and switches back before returning.
func Do(name string, fn func() error) error {
	if name == "" {
		return fn()
	}
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("get current netns: %w", err)
	}
	defer orig.Close()
	target, err := netns.GetFromName(name)
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("open netns %q (does `ip netns list` show it?): %w", name, err)
	}
	defer target.Close()
	if err := netns.Set(target); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter netns %q: %w", name, err)
	}
	ferr := fn()
	if err := netns.Set(orig); err != nil {
		// Leave the thread locked: the runtime discards it when the goroutine ends.
		return fmt.Errorf("return from netns %q: %w", name, err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// Mark is the socket mark (SO_MARK) that the fault injector's own upstream
// sockets carry, so that nftables rules can exclude them and never loop.
const Mark = 0x4e564346 // "NVCF"

// markControl sets SO_MARK on a socket before it connects or binds.
func markControl(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_MARK, Mark)
	})
	if err != nil {
		return err
	}
	return serr
}

// Listen opens a TCP listener in the named namespace.
func Listen(name, network, addr string) (net.Listener, error) {
	var l net.Listener
	err := Do(name, func() error {
		var err error
		l, err = net.Listen(network, addr)
		return err
	})
	return l, err
}

// ListenPacket opens a packet socket in the named namespace. When marked is
// true the socket carries Mark.
func ListenPacket(name, network, addr string, marked bool) (net.PacketConn, error) {
	var pc net.PacketConn
	lc := net.ListenConfig{}
	if marked {
		lc.Control = markControl
	}
	err := Do(name, func() error {
		var err error
		pc, err = lc.ListenPacket(context.Background(), network, addr)
		return err
	})
	return pc, err
}

// Dialer dials from inside a named namespace; its sockets carry Mark.
type Dialer struct {
	// Netns is the namespace name ("" = the caller's).
	Netns string
}

// DialContext connects to addr from inside the namespace.
func (d Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	nd := net.Dialer{Control: markControl}
	err := Do(d.Netns, func() error {
		var err error
		c, err = nd.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}
