#!/usr/bin/env bash
# Builds the container runtime of the e2e suite's real node from the Go module proxy: containerd
# (with its runc shim), runc, and the CNI plugins the node's pod network uses (bridge, host-local,
# loopback). The kubelet itself is built by hack/build-k8s.sh, at the API server's version.
#
# Why these and not Debian's packages: Debian 12 ships containerd 1.6.20 (end of life upstream
# since August 2025; SIG Node named Kubernetes 1.35 the last release to support containerd 1.x)
# and runc 1.1.5, and the node is there to record what a current runtime writes. containerd 2.4 and runc 1.5 are
# the current releases; the CNI plugins are built alongside for the same reason (Debian's are 1.1.1).
# runc is built with seccomp, as its release binaries are, against Debian's libseccomp-dev, which
# this script installs when it is missing (it is a build dependency, like gcc).
#
# Pinned and idempotent: binaries are cached outside the work tree, keyed by version. Prints the
# directory holding the binaries on its last line.
#
#   hack/build-node.sh            # build if missing, print the bin dir on the last line
#   DOOMWATCH_K8S_CACHE=/path     # cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/doomwatch)
set -euo pipefail

CONTAINERD_VERSION=v2.4.2
RUNC_VERSION=v1.5.3
CNI_PLUGINS_VERSION=v1.10.0

cache_root=${DOOMWATCH_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/doomwatch}
bin_dir="$cache_root/bin-node-containerd-$CONTAINERD_VERSION-runc-$RUNC_VERSION-cni-$CNI_PLUGINS_VERSION"
mkdir -p "$bin_dir"

log() { printf '[build-node] %s\n' "$*" >&2; }

# install builds the packages into the bin dir unless every named binary is there already.
install() {
	local names=$1 tags=$2
	shift 2
	local missing=0
	for n in $names; do
		[ -x "$bin_dir/$n" ] || missing=1
	done
	if [ "$missing" -eq 0 ]; then
		log "$names cached in $bin_dir"
		return
	fi
	log "building $names"
	GOBIN="$bin_dir" go install ${tags:+-tags "$tags"} "$@"
}

install "containerd containerd-shim-runc-v2" "" \
	"github.com/containerd/containerd/v2/cmd/containerd@$CONTAINERD_VERSION" \
	"github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION"

if [ ! -x "$bin_dir/runc" ] && ! pkg-config --exists libseccomp 2>/dev/null && [ ! -f /usr/include/seccomp.h ]; then
	log "installing Debian's libseccomp-dev (runc's seccomp support links against it)"
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
		log "libseccomp-dev is missing and this is not a root Debian machine: install it, then rerun"
		exit 1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q libseccomp-dev >&2 ||
		{ apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libseccomp-dev >&2; }
fi
install runc seccomp "github.com/opencontainers/runc@$RUNC_VERSION"

install "bridge host-local loopback" "" \
	"github.com/containernetworking/plugins/plugins/main/bridge@$CNI_PLUGINS_VERSION" \
	"github.com/containernetworking/plugins/plugins/ipam/host-local@$CNI_PLUGINS_VERSION" \
	"github.com/containernetworking/plugins/plugins/main/loopback@$CNI_PLUGINS_VERSION"

echo "$bin_dir"
