package faults

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/nvcf/conformance/faults/internal/journal"
	"github.com/nvcf/conformance/faults/internal/nft"
	"github.com/nvcf/conformance/faults/internal/nstest"
	"github.com/stretchr/testify/require"
)

func TestCleanupLeftoversAfterKill(t *testing.T) {
	lab := nstest.New(t, 2)
	state := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "NVCF_FAULTS_CHILD_NETNS="+lab.Host, "NVCF_FAULTS_CHILD_STATE="+state)
	out, err := child.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "injected\n", line)

	// A live owner's fault is not touched.
	cleaned, err := CleanupLeftovers(context.Background(), state, nil)
	require.NoError(t, err)
	require.Empty(t, cleaned)

	require.NoError(t, child.Process.Kill())
	_ = child.Wait()
	comments, err := nft.Comments(context.Background(), lab.Host)
	require.NoError(t, err)
	require.NotEmpty(t, comments, "the killed run left its rules")
	es, err := List(state)
	require.NoError(t, err)
	require.Len(t, es, 1)
	require.False(t, es[0].Alive)
	require.Equal(t, "orphan", es[0].Name)

	cleaned, err = CleanupLeftovers(context.Background(), state, nil)
	require.NoError(t, err)
	require.Len(t, cleaned, 1)
	comments, err = nft.Comments(context.Background(), lab.Host)
	require.NoError(t, err)
	require.Empty(t, comments, "the next command removed them")
	es, err = List(state)
	require.NoError(t, err)
	require.Empty(t, es)
}

func TestCleanupDropsEntriesWhoseEnvironmentIsGone(t *testing.T) {
	state := t.TempDir()
	j, err := journal.Open(state)
	require.NoError(t, err)
	require.NoError(t, j.Put(journal.Entry{ID: "scale-1", Kind: "scale", PID: 1 << 30, PIDStart: 1,
		Cleanup: journal.Cleanup{Scale: &journal.Scale{Cluster: journal.Cluster{Kubeconfig: "/nonexistent/kubeconfig", Context: "region-a"}, Namespace: "nvcf", Kind: "StatefulSet", Name: "stargate", Replicas: 3}}}))
	require.NoError(t, j.Put(journal.Entry{ID: "partition-1", Kind: "partition", PID: 1 << 30, PIDStart: 1,
		Cleanup: journal.Cleanup{NFT: &journal.NFT{Netns: "nvcft-gone", Comment: "nvcf-fault:partition-1"}}}))
	cleaned, err := CleanupLeftovers(context.Background(), state, nil)
	require.NoError(t, err)
	require.Len(t, cleaned, 2)
	es, err := List(state)
	require.NoError(t, err)
	require.Empty(t, es)
}

func TestRecorderCleansLeftoversBeforeItsFirstFault(t *testing.T) {
	state := t.TempDir()
	j, err := journal.Open(state)
	require.NoError(t, err)
	require.NoError(t, j.Put(journal.Entry{ID: "scale-dead", Kind: "scale", PID: 1 << 30, PIDStart: 1,
		Cleanup: journal.Cleanup{Scale: &journal.Scale{Cluster: journal.Cluster{Kubeconfig: "/nonexistent"}}}}))
	h, err := Start(context.Background(), Fault{Action: newCounting()}, NewRecorder(state, nil))
	require.NoError(t, err)
	es, err := List(state)
	require.NoError(t, err)
	require.Len(t, es, 1)
	require.Equal(t, h.ID(), es[0].ID, "only the new fault is journaled")
	require.NoError(t, h.Stop(context.Background()))
}

// Before an environment goes down, the live owners of its faults are
// stopped and whatever they left is undone: no owner process, no rule, no
// journal entry remains.
func TestStopOwnersBeforeDown(t *testing.T) {
	lab := nstest.New(t, 2)
	state := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "NVCF_FAULTS_CHILD_NETNS="+lab.Host, "NVCF_FAULTS_CHILD_STATE="+state)
	out, err := child.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "injected\n", line)
	exited := make(chan struct{})
	go func() { _ = child.Wait(); close(exited) }() // the owner is no zombie of ours

	n, err := StopOwners(context.Background(), state, 5*time.Second, nil)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	<-exited
	comments, err := nft.Comments(context.Background(), lab.Host)
	require.NoError(t, err)
	require.Empty(t, comments)
	es, err := List(state)
	require.NoError(t, err)
	require.Empty(t, es)

	n, err = StopOwners(context.Background(), state, time.Second, nil)
	require.NoError(t, err)
	require.Zero(t, n, "nothing left to stop")
}
