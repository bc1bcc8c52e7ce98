package kind

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// serveArg makes the test binary run Serve for the folder after it, as
// `harness kind serve --state DIR` does: the root test's Up starts it
// through Options.ServeCommand.
const serveArg = "kind-serve"

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == serveArg {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		err := Serve(ctx, os.Args[2], slog.New(slog.NewTextHandler(os.Stderr, nil)))
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
