package kubelet

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSeekTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	var b strings.Builder
	for i := 0; i < 5000; i++ {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%50))
		b.WriteString("\n")
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	lines := strings.SplitAfter(b.String(), "\n")
	lines = lines[:len(lines)-1]
	for _, n := range []int{1, 3, 4999, 5000, 7000} {
		f, err := os.Open(path)
		require.NoError(t, err)
		require.NoError(t, seekTail(f, n))
		got, err := io.ReadAll(f)
		require.NoError(t, err)
		f.Close()
		want := strings.Join(lines[max(0, len(lines)-n):], "")
		require.Equal(t, want, string(got), "tail %d", n)
	}
}

func TestFollowerEndsWithTheContainer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	w, err := os.Create(path)
	require.NoError(t, err)
	defer w.Close()
	_, _ = w.WriteString("first\n")
	f, err := os.Open(path)
	require.NoError(t, err)
	alive := make(chan bool, 1)
	alive <- true
	fl := &follower{ctx: context.Background(), f: f, live: func() bool { v := <-alive; alive <- v; return v }}
	got := make(chan string, 1)
	go func() { b, _ := io.ReadAll(fl); got <- string(b) }()
	_, _ = w.WriteString("second\n")
	select {
	case s := <-got:
		t.Fatalf("follow ended while the container lives: %q", s)
	case <-time.After(300 * time.Millisecond):
	}
	_, _ = w.WriteString("last\n")
	<-alive
	alive <- false
	select {
	case s := <-got:
		require.Equal(t, "first\nsecond\nlast\n", s)
	case <-time.After(5 * time.Second):
		t.Fatal("follow did not end with the container")
	}
}
