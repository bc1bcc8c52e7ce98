package kubelet

import (
	"os/exec"
	"runtime"
	"sync"
)

// Containers are started with Pdeathsig=SIGKILL so that they die with the
// agent. The kernel ties that signal to the *thread* that forked the child,
// and Go may end a thread when a goroutine that locked it exits; a container
// would then be killed at random. So every container is started from one
// goroutine locked to its thread for the life of the process: that thread
// never exits while the agent runs.
var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

// startPinned starts cmd from the pinned spawner thread.
func startPinned(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for r := range spawner.reqs {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawner.reqs <- spawnReq{cmd: cmd, done: done}
	return <-done
}
