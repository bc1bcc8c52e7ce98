package controlplane

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters/internal/binaries"
	"github.com/nvcf/conformance/clusters/local/internal/plan"
)

// A start failure after the first process is running (here: the API
// server's binary does not exist, after etcd started) stops what was
// started and returns an error. Before the fix the deferred clean-up ran
// on the nil named result and panicked, leaving etcd orphaned.
func TestStartFailureAfterLaunchCleansUp(t *testing.T) {
	dir := t.TempDir()
	fakeEtcd := filepath.Join(dir, "fake-etcd")
	require.NoError(t, os.WriteFile(fakeEtcd, []byte("#!/bin/sh\nexec sleep 300\n"), 0o755))
	var logs bytes.Buffer
	cfg := Config{
		Plan: plan.For(7, "crash"), Nodes: 1,
		Dir: filepath.Join(dir, "crash"), LogDir: filepath.Join(dir, "logs"),
		Bin: binaries.Set{Etcd: fakeEtcd, APIServer: filepath.Join(dir, "no-such-kube-apiserver")},
		Log: slog.New(slog.NewTextHandler(&logs, nil)),
	}
	var (
		c   *Cluster
		err error
	)
	require.NotPanics(t, func() { c, err = Start(context.Background(), cfg) })
	require.Error(t, err)
	require.Nil(t, c)
	require.Contains(t, err.Error(), "no-such-kube-apiserver")

	// etcd was started (the log names its pid) and is gone again.
	m := regexp.MustCompile(`msg=started process=crash/etcd pid=(\d+)`).FindStringSubmatch(logs.String())
	require.NotNil(t, m, "etcd was never started:\n%s", logs.String())
	pid, _ := strconv.Atoi(m[1])
	require.Equal(t, syscall.ESRCH, syscall.Kill(pid, 0), "etcd (pid %d) outlived the failed start", pid)
}
