#!/usr/bin/env bash
# Builds k9s, the dashboard `make bench-scale` measures doomwatch against, from the Go module proxy,
# the way its own release build does (its Makefile: CGO_ENABLED=0, -tags netgo, -w -s, the version
# stamped in). Pinned and idempotent: the binary is cached outside the work tree, keyed by version.
# Prints the binary's path on the last line.
#
#   hack/build-k9s.sh            # build if missing
#   DOOMWATCH_K8S_CACHE=/path    # cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/doomwatch)
set -euo pipefail

K9S_VERSION=v0.50.16

cache_root=${DOOMWATCH_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/doomwatch}
bin_dir="$cache_root/k9s-$K9S_VERSION"
bin="$bin_dir/k9s"
mkdir -p "$bin_dir"

log() { printf '[build-k9s] %s\n' "$*" >&2; }

if [ -x "$bin" ] && "$bin" version --short 2>/dev/null | grep -q "$K9S_VERSION"; then
	log "k9s $K9S_VERSION cached at $bin"
else
	log "building k9s $K9S_VERSION from the module proxy (several minutes on 2 cores)"
	pkg=github.com/derailed/k9s
	# Outside any module, so that doomwatch's go.mod has no say in k9s's dependencies.
	(cd "$bin_dir" && GOBIN="$bin_dir" CGO_ENABLED=0 GOFLAGS=-mod=mod go install -tags netgo \
		-ldflags "-w -s -X $pkg/cmd.version=$K9S_VERSION -X $pkg/cmd.commit=module-proxy" "$pkg@$K9S_VERSION")
	log "k9s done"
fi
echo "$bin"
