package faults

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/nvcf/conformance/faults/internal/nft"
	"github.com/nvcf/conformance/faults/internal/nstest"
	"github.com/stretchr/testify/require"
)

// negative bounds how long a check that expects no answer waits; it only
// costs time, it cannot make a test pass wrongly.
const negative = 400 * time.Millisecond

func TestPartitionDropsBothDirectionsAndHeals(t *testing.T) {
	lab := nstest.New(t, 2)
	a, b := lab.Clusters[0], lab.Clusters[1]
	lbA, lbB := netip.AddrPortFrom(a.LB, 7000), netip.AddrPortFrom(b.LB, 7000)
	podB := netip.AddrPortFrom(b.Pod, 7002)
	newTCPEcho(t, lab.Host, lbA)
	newTCPEcho(t, lab.Host, lbB)
	newTCPEcho(t, b.PodNetns, podB)

	// A connection that is open before the partition.
	open, err := dialFrom(a.PodNetns, lbB, 10*time.Second)
	require.NoError(t, err)
	defer open.Close()
	_, err = echoRTT(open, 10*time.Second)
	require.NoError(t, err)

	require.True(t, reachable(a.PodNetns, lbB, 10*time.Second))
	require.True(t, reachable(b.PodNetns, lbA, 10*time.Second))
	require.True(t, reachable(a.PodNetns, podB, 10*time.Second))

	p := partition{A: side{Pods: a.Pods, LBs: a.LBs}, B: side{Pods: b.Pods, LBs: b.LBs}, Netns: lab.Host}
	rec := NewRecorder(t.TempDir(), nil)
	h := startT(context.Background(), t, Fault{Name: "split", Target: Target{From: "a", To: "b"}, Action: p}, rec)

	require.False(t, reachable(a.PodNetns, lbB, negative), "a → b's load balancer must be cut")
	require.False(t, reachable(b.PodNetns, lbA, negative), "b → a's load balancer must be cut")
	require.False(t, reachable(a.PodNetns, podB, negative), "a → b's pod must be cut")
	_, err = echoRTT(open, negative)
	require.Error(t, err, "an open connection stalls")
	// Traffic inside one cluster still flows.
	require.True(t, reachable(a.PodNetns, lbA, 10*time.Second))

	require.NoError(t, h.Stop(context.Background()))
	comments, err := nft.Comments(context.Background(), lab.Host)
	require.NoError(t, err)
	require.Empty(t, comments)
	require.True(t, reachable(a.PodNetns, lbB, 10*time.Second), "healed")
	require.True(t, reachable(b.PodNetns, lbA, 10*time.Second), "healed")
	require.True(t, reachable(a.PodNetns, podB, 10*time.Second), "healed")
	recs := rec.list()
	require.Len(t, recs, 1)
	require.False(t, recs[0].Undone.IsZero())
	require.Regexp(t, `dropped [1-9][0-9]* packets`, recs[0].Effect)
	t.Logf("record: %s", recs[0])
}

func TestPartitionOneWay(t *testing.T) {
	lab := nstest.New(t, 2)
	a, b := lab.Clusters[0], lab.Clusters[1]
	lbA, lbB := netip.AddrPortFrom(a.LB, 7000), netip.AddrPortFrom(b.LB, 7000)
	podA, podB := netip.AddrPortFrom(a.Pod, 7002), netip.AddrPortFrom(b.Pod, 7002)
	newTCPEcho(t, lab.Host, lbA)
	newTCPEcho(t, lab.Host, lbB)
	newTCPEcho(t, a.PodNetns, podA)
	newTCPEcho(t, b.PodNetns, podB)

	p := partition{A: side{Pods: a.Pods, LBs: a.LBs}, B: side{Pods: b.Pods, LBs: b.LBs}, OneWay: true, Netns: lab.Host}
	startT(context.Background(), t, Fault{Action: p}, nil)
	require.False(t, reachable(a.PodNetns, lbB, negative), "a's flows towards b are cut")
	require.False(t, reachable(a.PodNetns, podB, negative))
	require.True(t, reachable(b.PodNetns, lbA, 10*time.Second), "b's flows towards a pass, replies included")
	require.True(t, reachable(b.PodNetns, podA, 10*time.Second))
}
