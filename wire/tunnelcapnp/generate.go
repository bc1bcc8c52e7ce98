// Package tunnelcapnp holds the Cap'n Proto schema of the reverse QUIC
// tunnel (quic.capnp) and its generated Go code. Regenerate with
// `make generate`, which needs the capnp compiler (hack/deps.sh installs it)
// and builds capnpc-go into _tools/.
package tunnelcapnp

//go:generate sh -c "capnp compile -I\"$(go list -m -f '{{.Dir}}' capnproto.org/go/capnp/v3)/std\" -o../../_tools/capnpc-go quic.capnp"
