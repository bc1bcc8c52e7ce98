package clusters

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// The first IPv4 InternalIP wins; other types, IPv6 and unparsable
// addresses are passed over.
func TestNodeInternalIP(t *testing.T) {
	n := &corev1.Node{Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
		{Type: corev1.NodeHostName, Address: "10.0.0.9"},
		{Type: corev1.NodeExternalIP, Address: "10.0.0.8"},
		{Type: corev1.NodeInternalIP, Address: "fd00::1"},
		{Type: corev1.NodeInternalIP, Address: "not-an-ip"},
		{Type: corev1.NodeInternalIP, Address: "198.18.224.2"},
		{Type: corev1.NodeInternalIP, Address: "198.18.224.3"},
	}}}
	ip, ok := NodeInternalIP(n)
	require.True(t, ok)
	require.Equal(t, netip.MustParseAddr("198.18.224.2"), ip, "the first, not the last")

	_, ok = NodeInternalIP(&corev1.Node{Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "n"}}}})
	require.False(t, ok)
}
