#!/usr/bin/env bash
# Builds the real Argo Rollouts controller (rollouts-controller) and copies its CRDs beside it, for
# the e2e tests that check doomwatch's Argo Rollout verdicts against the statuses it writes. From
# the Go module proxy, pinned and idempotent like hack/build-k8s.sh: the binary is cached outside the
# work tree, keyed by version, so later runs on the same machine skip the build. Prints the
# directory holding rollouts-controller and the CRDs (*.yaml) on its last line.
#
#   hack/build-argo-rollouts.sh   # build if missing, print the bin dir on the last line
#   DOOMWATCH_K8S_CACHE=/path     # cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/doomwatch)
set -euo pipefail

# v1.10.2 and v1.9.3 declare a newer go directive than the toolchain the project pins; v1.10.1
# builds with it.
ARGO_ROLLOUTS_VERSION=v1.10.1
MODULE=github.com/argoproj/argo-rollouts

cache_root=${DOOMWATCH_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/doomwatch}
bin_dir="$cache_root/bin-argo-rollouts-$ARGO_ROLLOUTS_VERSION"
src="$cache_root/src-argo-rollouts-$ARGO_ROLLOUTS_VERSION"

log() { printf '[build-argo-rollouts] %s\n' "$*" >&2; }

crds_present() {
	local n
	n=$(find "$bin_dir" -maxdepth 1 -name '*-crd.yaml' 2>/dev/null | wc -l)
	[ "$n" -eq 5 ]
}

if [ -x "$bin_dir/rollouts-controller" ] && crds_present; then
	log "rollouts-controller $ARGO_ROLLOUTS_VERSION cached at $bin_dir"
	echo "$bin_dir"
	exit 0
fi
mkdir -p "$bin_dir"

# The module's go.mod has replace directives, so `go install pkg@version` refuses it: build inside
# a writable copy of the module instead, where its go.mod (and its replaces) is the main module's.
if [ ! -f "$src/go.mod" ]; then
	log "downloading $MODULE@$ARGO_ROLLOUTS_VERSION from the module proxy"
	# From the cache root, outside any module: the caller's go.mod plays no part.
	mod_dir=$(cd "$cache_root" && go mod download -json "$MODULE@$ARGO_ROLLOUTS_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
	if [ -z "$mod_dir" ] || [ ! -d "$mod_dir" ]; then
		log "go mod download did not report the module's directory"
		exit 1
	fi
	rm -rf "$src.tmp"
	cp -R "$mod_dir" "$src.tmp"
	# The module cache is read-only; the build writes nothing into the copy, but a later rm -rf must work.
	chmod -R u+w "$src.tmp"
	mv "$src.tmp" "$src"
fi

cd "$src"
log "building rollouts-controller $ARGO_ROLLOUTS_VERSION (6 to 10 minutes on 2 cores, once per machine)"
( while sleep 30; do log "still building rollouts-controller ..."; done ) &
ticker=$!
# The ticker must end however the build ends: an orphan would hold make's stderr open.
trap 'kill $ticker 2>/dev/null || true' EXIT
status=0
# The version stamp argo-rollouts' own Makefile sets (utils/version); -s -w and -trimpath drop the
# symbol table, DWARF and local paths, which the tests never need.
ldflags="-s -w -X $MODULE/utils/version.version=${ARGO_ROLLOUTS_VERSION#v}"
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" \
	-o "$bin_dir/rollouts-controller.tmp" ./cmd/rollouts-controller || status=$?
kill "$ticker" 2>/dev/null || true
trap - EXIT
if [ "$status" -ne 0 ]; then
	log "building rollouts-controller failed (exit $status)"
	exit "$status"
fi

# The CRDs the controller serves (Rollout, AnalysisRun, AnalysisTemplate, ClusterAnalysisTemplate,
# Experiment): it waits for all of them to sync its informers.
for crd in manifests/crds/*-crd.yaml; do
	cp "$crd" "$bin_dir/$(basename "$crd").tmp"
	mv "$bin_dir/$(basename "$crd").tmp" "$bin_dir/$(basename "$crd")"
done
mv "$bin_dir/rollouts-controller.tmp" "$bin_dir/rollouts-controller"
log "rollouts-controller done"
echo "$bin_dir"
