// Package podnet builds the embedded provider's pod network on the host:
// per cluster a Linux bridge nvcfbr<i> holding 198.18.(10+i).1/24, and per
// pod a network namespace nvcf-<cluster>-<uid8> joined to that bridge by a
// veth pair, with an address from a small persisted IPAM, a default route
// via the bridge, and /etc/netns/<ns>/{resolv.conf,hosts} for `ip netns
// exec` to bind-mount. An nftables table `inet nvcf_harness` keeps the test
// range 198.18.0.0/15 between our bridges: it never forwards to or from
// another interface, and the host never sends it anywhere but our bridges.
//
// Everything is done with the iproute2 `ip` and nftables `nft` commands
// rather than netlink from Go. The reasons: `ip netns add` creates exactly
// the /run/netns bind mount and /etc/netns convention that `ip netns exec`
// (how the kubelet starts containers) relies on; the agent never has to move
// one of its OS threads into another namespace (netlink's netns.Set affects
// only the calling thread, a classic source of bugs in a Go process full of
// goroutines); nftables rules stay readable as the text a user would type;
// and both tools are installed (hack/deps.sh on CI). The cost is a few
// milliseconds per pod, measured in the root test. Commands are batched with
// `ip -batch` where it matters.
//
// Forwarding is switched on per bridge (net.ipv4.conf.nvcfbr<i>.forwarding)
// rather than globally with net.ipv4.ip_forward: that is all the kernel
// needs to route between our bridges, and it leaves the host's other
// interfaces as they were.
//
// Everything here needs root; calls return an error wrapping ErrNotRoot
// otherwise.
package podnet
