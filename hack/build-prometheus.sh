#!/usr/bin/env bash
# Builds the real Prometheus server and promtool from the Go module proxy, for `promtool test rules`
# on deploy/prometheus/rules.yaml (make test) and for the e2e test in which Prometheus scrapes
# `doomwatch serve` running as a pod on the real node and evaluates those rules. Pinned and
# idempotent like hack/build-k8s.sh: cached outside the work tree, keyed by version. Prints the
# directory holding prometheus and promtool on its last line.
#
#   hack/build-prometheus.sh     # build if missing, print the bin dir on the last line
#   DOOMWATCH_K8S_CACHE=/path    # cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/doomwatch)
#
# The build tags are Prometheus's own (plugins/plugin_*.go): remove_all_sd drops every service
# discovery but the ones enabled again, here Kubernetes, which the e2e's scrape config uses. The
# web UI's assets are built with npm in Prometheus's release, not shipped in the module: without
# the builtinassets tag the server answers its HTTP API (all the tests read) and no UI.
set -euo pipefail

# The module version of Prometheus 3.16 (Go module versions are v0.MINOR.PATCH of the release).
PROMETHEUS_VERSION=v0.316.0
MODULE=github.com/prometheus/prometheus
TAGS=netgo,remove_all_sd,enable_kubernetes_sd

cache_root=${DOOMWATCH_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/doomwatch}
bin_dir="$cache_root/bin-prometheus-$PROMETHEUS_VERSION"

log() { printf '[build-prometheus] %s\n' "$*" >&2; }

if [ -x "$bin_dir/prometheus" ] && [ -x "$bin_dir/promtool" ]; then
	log "prometheus and promtool $PROMETHEUS_VERSION cached at $bin_dir"
	echo "$bin_dir"
	exit 0
fi
mkdir -p "$bin_dir"

log "building prometheus and promtool $PROMETHEUS_VERSION from the module proxy (several minutes on 2 cores, once per machine)"
( while sleep 30; do log "still building prometheus ..."; done ) &
ticker=$!
# The ticker must end however the build ends: an orphan would hold make's stderr open.
trap 'kill $ticker 2>/dev/null || true' EXIT
# The version stamp of Prometheus's release build (.promu.yml: common/version's variables); module
# v0.316.0 is release 3.16.0.
minor_patch=${PROMETHEUS_VERSION#v0.3}
release="3.$((10#${minor_patch%%.*})).${minor_patch#*.}"
ldflags="-s -w -X github.com/prometheus/common/version.Version=$release -X github.com/prometheus/common/version.Revision=module-proxy"
# Outside any module, so that doomwatch's go.mod has no say in Prometheus's dependencies; into a
# temporary GOBIN, moved in place whole, so an interrupted build is never mistaken for a cached one.
rm -rf "$bin_dir/tmp"
mkdir -p "$bin_dir/tmp"
status=0
(cd "$bin_dir" && GOBIN="$bin_dir/tmp" CGO_ENABLED=0 GOFLAGS=-mod=mod go install -trimpath -tags "$TAGS" \
	-ldflags "$ldflags" "$MODULE/cmd/prometheus@$PROMETHEUS_VERSION" "$MODULE/cmd/promtool@$PROMETHEUS_VERSION") || status=$?
kill "$ticker" 2>/dev/null || true
trap - EXIT
if [ "$status" -ne 0 ]; then
	log "building prometheus failed (exit $status)"
	exit "$status"
fi
mv "$bin_dir/tmp/promtool" "$bin_dir/promtool"
mv "$bin_dir/tmp/prometheus" "$bin_dir/prometheus"
rmdir "$bin_dir/tmp"
log "prometheus and promtool done"
echo "$bin_dir"
