#!/usr/bin/env bash
# Builds the real control plane the e2e suite runs (kube-apiserver, etcd, kube-controller-manager,
# kube-scheduler), kwok for its simulated nodes, and the kubectl it runs doomwatch under as a plugin
# (kubectl-doomwatch) and beside it (`kubectl rollout status` in the scenarios), from the Go module
# proxy. Pinned and idempotent: binaries are cached outside the work tree, keyed by version, so later
# runs on the same machine skip the build. Prints the directory holding the binaries.
#
#   hack/build-k8s.sh            # build if missing, print the bin dir on the last line
#   DOOMWATCH_K8S_CACHE=/path    # cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/doomwatch)
set -euo pipefail

K8S_VERSION=v1.37.2
STAGING_VERSION=v0.37.2
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0

cache_root=${DOOMWATCH_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/doomwatch}
bin_dir="$cache_root/bin-k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION"
mkdir -p "$bin_dir"

log() { printf '[build-k8s] %s\n' "$*" >&2; }

build_etcd() {
	if [ -x "$bin_dir/etcd" ]; then
		log "etcd $ETCD_VERSION cached at $bin_dir/etcd"
		return
	fi
	local src="$cache_root/src-etcd-$ETCD_VERSION"
	mkdir -p "$src"
	cd "$src"
	[ -f go.mod ] || go mod init doomwatch-etcd-build >/dev/null 2>&1
	log "fetching etcd $ETCD_VERSION modules"
	go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >&2
	log "building etcd (under a minute on 2 cores)"
	go build -o "$bin_dir/etcd.tmp" go.etcd.io/etcd/server/v3
	mv "$bin_dir/etcd.tmp" "$bin_dir/etcd"
	log "etcd done"
}

# kubernetes_module prepares the scratch module that builds commands of k8s.io/kubernetes (once per
# version) and enters it.
kubernetes_module() {
	local src="$cache_root/src-kubernetes-$K8S_VERSION"
	mkdir -p "$src"
	cd "$src"
	if [ ! -f go.mod ] || ! grep -q "k8s.io/kubernetes $K8S_VERSION" go.mod; then
		log "preparing a scratch module for k8s.io/kubernetes $K8S_VERSION"
		rm -f go.mod go.sum
		go mod init doomwatch-kube-apiserver-build >/dev/null 2>&1
		# kubernetes' own go.mod replaces every staging module with ./staging/src/k8s.io/X;
		# outside its tree those become the published modules at the matching version.
		local kmod
		kmod=$(GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
		{
			echo "require k8s.io/kubernetes $K8S_VERSION"
			echo "replace ("
			grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/src/k8s\.io/' "$kmod" |
				sed -E "s#^\s*(k8s\.io/[a-z0-9-]+) => .*#\t\1 => \1 $STAGING_VERSION#"
			echo ")"
		} >>go.mod
	fi
}

# build_kube_cmd builds k8s.io/kubernetes/cmd/$1 into the bin dir, unless it is there already;
# $2 says how long that takes, for the log.
build_kube_cmd() {
	local name=$1 duration=$2
	if [ -x "$bin_dir/$name" ]; then
		log "$name $K8S_VERSION cached at $bin_dir/$name"
		return
	fi
	kubernetes_module
	# Each command imports modules the others do not (kubectl: cli-runtime, kustomize), whose
	# go.sum entries only a go get of that command adds. It is quick once they are downloaded.
	log "resolving modules for $name"
	go get "k8s.io/kubernetes/cmd/$name@$K8S_VERSION" >&2
	log "building $name $K8S_VERSION ($duration on 2 cores, once per machine)"
	( while sleep 30; do log "still building $name ..."; done ) &
	local ticker=$!
	# The ticker must end however the build ends: an orphan would hold make's stderr open.
	trap 'kill $ticker 2>/dev/null || true' EXIT
	local status=0
	# The version stamps kubernetes' hack/lib/version.sh sets: without them a binary reports
	# v0.0.0-master, and the kubelet writes that into its Node's nodeInfo.
	local minor=${K8S_VERSION#v1.}
	minor=${minor%%.*}
	local ldflags=""
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
	done
	go build -ldflags "$ldflags" -o "$bin_dir/$name.tmp" "k8s.io/kubernetes/cmd/$name" || status=$?
	kill "$ticker" 2>/dev/null || true
	trap - EXIT
	if [ "$status" -ne 0 ]; then
		log "building $name failed (exit $status)"
		exit "$status"
	fi
	mv "$bin_dir/$name.tmp" "$bin_dir/$name"
	log "$name done"
}

# kwok is its own module with its own pins of the k8s.io libraries; go install builds it as released.
build_kwok() {
	if [ -x "$bin_dir/kwok" ]; then
		log "kwok $KWOK_VERSION cached at $bin_dir/kwok"
		return
	fi
	log "building kwok $KWOK_VERSION (a few minutes on 2 cores, once per machine)"
	GOBIN="$bin_dir/kwok.d" go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
	mv "$bin_dir/kwok.d/kwok" "$bin_dir/kwok"
	rmdir "$bin_dir/kwok.d"
	log "kwok done"
}

build_etcd
build_kube_cmd kube-apiserver "about 7 minutes"
build_kube_cmd kubectl "a few minutes, under one after kube-apiserver"
build_kube_cmd kube-controller-manager "about 4 minutes after kube-apiserver"
build_kube_cmd kube-scheduler "a minute or two after kube-apiserver"
build_kube_cmd kubelet "a few minutes after kube-apiserver"
build_kwok
echo "$bin_dir"
