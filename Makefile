# doomwatch: `make test` builds what the tests need (the real kube-apiserver and etcd, cached
# outside the work tree) and runs every test.
GO ?= go

.PHONY: test unit e2e-bins build bench screenshots fuzz

build:
	$(GO) build -o doomwatch .

# Everything CI runs: vet, unit tests, and the e2e suite against a real API server.
test: e2e-bins
	$(GO) vet ./...
	DOOMWATCH_K8S_BIN="$$(hack/build-k8s.sh 2>/dev/null | tail -n 1)" $(GO) test -race -timeout 25m ./...

# Unit tests only (no API server).
unit:
	$(GO) vet ./...
	$(GO) test -race $$($(GO) list ./... | grep -v /e2e)

e2e-bins:
	hack/build-k8s.sh >/dev/null

# screenshots/*.png from the demo scenario at 90 s, rendered as the golden tests render.
screenshots:
	hack/screenshots.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./classify ./model ./tui

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzClassify -fuzztime 30s ./classify
