package kubelet

import (
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// TestMain doubles as the container image of the root tests: with
// KUBELET_TEST_ROLE=serve the test binary is a small HTTP server that
// reports what a container sees (files at mount paths, env, hostname);
// with KUBELET_TEST_ROLE=exit it exits 3 at once.
func TestMain(m *testing.M) {
	if os.Getenv("KUBELET_TEST_ROLE") == "serve" {
		os.Exit(serve())
	}
	if os.Getenv("KUBELET_TEST_ROLE") == "exit" {
		os.Exit(3)
	}
	if len(os.Args) > 1 && os.Args[1] == WrapperCommand {
		err := RunWrapper(os.Args[2:])
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func serve() int {
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		b, err := os.ReadFile(r.URL.Query().Get("path"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		_, _ = w.Write(b)
	})
	mux.HandleFunc("/env", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, os.Getenv(r.URL.Query().Get("name"))) })
	mux.HandleFunc("/hostname", func(w http.ResponseWriter, r *http.Request) { h, _ := os.Hostname(); fmt.Fprint(w, h) })
	mux.HandleFunc("/crash", func(http.ResponseWriter, *http.Request) {
		_ = os.WriteFile(testTerminationPath, []byte("crashed on request"), 0o644)
		os.Exit(3)
	})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	go func() {
		<-sig
		fmt.Println("SIGTERM: bye")
		os.Exit(0)
	}()
	fmt.Println("serving on :8080")
	if err := http.ListenAndServe(":8080", mux); err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}

// testTerminationPath is the terminationMessagePath of servePod's container.
const testTerminationPath = "/etc/nvcf/kubelet-test/termination-log"
