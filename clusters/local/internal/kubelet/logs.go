package kubelet

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
)

// GetContainerLogs serves `kubectl logs`: the container's current (or,
// with Previous, last) log file, honouring Tail, LimitBytes and Follow.
func (k *provider) GetContainerLogs(ctx context.Context, namespace, podName, container string, opts api.ContainerLogOpts) (io.ReadCloser, error) {
	r := k.get(namespace, podName)
	if r == nil {
		return nil, errdefs.NotFoundf("pod %s/%s is not on this node", namespace, podName)
	}
	r.mu.Lock()
	var c *ctrState
	for _, x := range append(append([]*ctrState{}, r.init...), r.ctrs...) {
		if x.spec.Name == container {
			c = x
		}
	}
	if c == nil && container == "" && len(r.ctrs) == 1 {
		c = r.ctrs[0]
	}
	var instance int
	if c != nil {
		instance = c.instance
	}
	r.mu.Unlock()
	if c == nil {
		return nil, errdefs.NotFoundf("pod %s/%s has no container %q", namespace, podName, container)
	}
	if opts.Previous {
		if instance == 0 {
			return nil, errdefs.NotFoundf("container %q of pod %s/%s has not restarted: no previous log", container, namespace, podName)
		}
		instance--
	}
	path := filepath.Join(r.dir, "logs", c.spec.Name, fmt.Sprintf("%d.log", instance))
	f, err := os.Open(path)
	if err != nil {
		return nil, errdefs.NotFoundf("log of container %q: %v", container, err)
	}
	if opts.Tail > 0 {
		if err := seekTail(f, opts.Tail); err != nil {
			f.Close()
			return nil, err
		}
	}
	var rc io.ReadCloser = f
	if opts.Follow && !opts.Previous {
		rc = &follower{ctx: ctx, f: f, live: func() bool {
			r.mu.Lock()
			defer r.mu.Unlock()
			return c.instance == instance && c.state.Terminated == nil && r.ctx.Err() == nil
		}}
	}
	if opts.LimitBytes > 0 {
		rc = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(rc, int64(opts.LimitBytes)), rc}
	}
	return rc, nil
}

// seekTail positions f at the start of its last n lines.
func seekTail(f *os.File, n int) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	const chunk = 32 << 10
	size := st.Size()
	off := size
	lines := 0
	buf := make([]byte, chunk)
	for off > 0 {
		step := min(int64(chunk), off)
		off -= step
		if _, err := f.ReadAt(buf[:step], off); err != nil && err != io.EOF {
			return err
		}
		b := buf[:step]
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] == '\n' && off+int64(i) != size-1 {
				lines++
				if lines == n {
					_, err := f.Seek(off+int64(i)+1, io.SeekStart)
					return err
				}
			}
		}
	}
	_, err = f.Seek(0, io.SeekStart)
	return err
}

// follower reads a log file and, at its end, waits for more while the
// container instance lives (kubectl logs -f).
type follower struct {
	ctx  context.Context
	f    *os.File
	live func() bool
}

func (fl *follower) Read(p []byte) (int, error) {
	for {
		n, err := fl.f.Read(p)
		if n > 0 || err != io.EOF {
			return n, err
		}
		if !fl.live() {
			// One last read: the process may have written before exiting.
			return fl.f.Read(p)
		}
		select {
		case <-fl.ctx.Done():
			return 0, io.EOF
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (fl *follower) Close() error { return fl.f.Close() }
