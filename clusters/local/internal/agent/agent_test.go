package agent

import (
	"bufio"
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters"
)

// The notifier writes one message per line to the inherited descriptor
// named in NotifyFDEnv, and nothing (without failing) when there is none.
func TestNotifier(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	fd, err := syscall.Dup(int(w.Fd())) // the notifier owns and closes its own copy
	require.NoError(t, err)
	w.Close()
	t.Setenv(NotifyFDEnv, strconv.Itoa(fd))
	n := openNotifier()
	n.progress("%s: API server ready", "a")
	n.send(MsgError, "two\nlines")
	n.close()
	n.send(MsgReady, "") // after close: dropped
	sc := bufio.NewScanner(r)
	var got []string
	for sc.Scan() {
		got = append(got, sc.Text())
	}
	require.Equal(t, []string{"progress a: API server ready", "error two lines"}, got)

	t.Setenv(NotifyFDEnv, "")
	openNotifier().send(MsgReady, "") // no launcher: a no-op
}

func TestConfigRoundTrip(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadConfig(dir)
	require.Error(t, err)
	c := Config{Spec: clusters.Spec{Name: "x", Domain: "nvcf.test", Clusters: []clusters.ClusterSpec{{Name: "a", Nodes: 1}}},
		Images: map[string]string{"nvcf-ref": "/bin/nvcf-ref"}}
	require.NoError(t, WriteConfig(dir, c))
	got, err := ReadConfig(dir)
	require.NoError(t, err)
	require.Equal(t, c, got)
	c.Spec.Clusters[0].Nodes = 0
	require.NoError(t, WriteConfig(dir, c))
	_, err = ReadConfig(dir)
	require.ErrorIs(t, err, clusters.ErrInvalidSpec)
}
