// Command podnet is the kind provider test's pod: it says who it is and
// who called it, resolves names through the pod's DNS, and fetches URLs,
// so that the test can prove pod-to-pod traffic and CoreDNS from inside.
package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	http.HandleFunc("/whoami", func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		_ = json.NewEncoder(w).Encode(map[string]string{"pod": os.Getenv("POD_NAME"), "node": os.Getenv("NODE_NAME"), "caller": host})
	})
	http.HandleFunc("/resolve", func(w http.ResponseWriter, r *http.Request) {
		addrs, err := net.LookupHost(r.URL.Query().Get("name"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		_ = json.NewEncoder(w).Encode(addrs)
	})
	http.HandleFunc("/fetch", func(w http.ResponseWriter, r *http.Request) {
		c := http.Client{Timeout: 5 * time.Second}
		resp, err := c.Get(r.URL.Query().Get("url"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	})
	srv := &http.Server{Addr: ":8080", ReadHeaderTimeout: 5 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		os.Exit(1)
	}
}
