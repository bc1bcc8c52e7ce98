#!/usr/bin/env bash
# Installs the Debian packages the build and tests need, only when missing.
set -euo pipefail
need=()
command -v protoc >/dev/null || need+=(protobuf-compiler)
# capnp: the reverse tunnel's schema compiler, and the independent
# `capnp encode` / `capnp decode` peer of fixtures/tunnel's wire tests.
command -v capnp >/dev/null || need+=(capnproto)
command -v openssl >/dev/null || need+=(openssl)
command -v nft >/dev/null || need+=(nftables)
command -v ip >/dev/null || need+=(iproute2)
# `hack/deps.sh docker`: Debian's Docker daemon and iptables too, for the
# Docker-coexistence test, .ci/run and the kind provider.
if [ "${1:-}" = docker ]; then
	command -v dockerd >/dev/null || need+=(docker.io)
	command -v iptables >/dev/null || need+=(iptables)
	command -v debootstrap >/dev/null || need+=(debootstrap)
fi
# chromium: the headless browser that checks the HTML report (reports' tests).
command -v chromium >/dev/null || need+=(chromium)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
beat="$(dirname "$0")/heartbeat.sh"
"$beat" "updating the package lists" $SUDO apt-get update -qq
"$beat" "installing ${need[*]}" env DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
