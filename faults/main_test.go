package faults

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"testing"
)

// TestMain doubles as a child process that injects a partition and then
// waits to be killed, for TestCleanupLeftoversAfterKill.
func TestMain(m *testing.M) {
	if ns := os.Getenv("NVCF_FAULTS_CHILD_NETNS"); ns != "" {
		p := partition{
			A:     side{Pods: netip.MustParsePrefix("198.18.210.0/24"), LBs: netip.MustParsePrefix("198.19.210.0/24")},
			B:     side{Pods: netip.MustParsePrefix("198.18.211.0/24"), LBs: netip.MustParsePrefix("198.19.211.0/24")},
			Netns: ns,
		}
		if _, err := Start(context.Background(), Fault{Name: "orphan", Action: p}, NewRecorder(os.Getenv("NVCF_FAULTS_CHILD_STATE"), nil)); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("injected")
		select {}
	}
	os.Exit(m.Run())
}
