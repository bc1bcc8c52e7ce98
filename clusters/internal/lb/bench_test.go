package lb

import (
	"io"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkTCPThroughput moves 1 MiB per op through a TCP forwarder to a
// discarding backend on loopback.
func BenchmarkTCPThroughput(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, c); c.Close() }()
		}
	}()
	f, err := listenTCP(netip.MustParseAddrPort("127.0.0.1:0"), slogDiscard())
	require.NoError(b, err)
	defer f.close()
	f.setBackends([]netip.AddrPort{netip.MustParseAddrPort(ln.Addr().String())})
	c, err := net.Dial("tcp", f.addr().String())
	require.NoError(b, err)
	defer c.Close()
	buf := make([]byte, 1<<20)
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for range b.N {
		_, err := c.Write(buf)
		require.NoError(b, err)
	}
}

// BenchmarkUDPRoundTrip is one datagram through the forwarder to an echo
// backend and back, on loopback.
func BenchmarkUDPRoundTrip(b *testing.B) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(b, err)
	defer pc.Close()
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo(buf[:n], from)
		}
	}()
	f, err := listenUDP(netip.MustParseAddrPort("127.0.0.1:0"), time.Hour, slogDiscard())
	require.NoError(b, err)
	defer f.close()
	f.setBackends([]netip.AddrPort{netip.MustParseAddrPort(pc.LocalAddr().String())})
	c, err := net.Dial("udp", f.addr().String())
	require.NoError(b, err)
	defer c.Close()
	msg := make([]byte, 1200)
	in := make([]byte, 2048)
	b.ResetTimer()
	for range b.N {
		_, err := c.Write(msg)
		require.NoError(b, err)
		_, err = c.Read(in)
		require.NoError(b, err)
	}
}
