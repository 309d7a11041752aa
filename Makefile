# doomwatch: `make test` builds what the tests need (the real kube-apiserver and etcd, cached
# outside the work tree) and runs every test.
GO ?= go

.PHONY: test check unit e2e-bins build bench bench-scale screenshots fuzz scenarios

build:
	$(GO) build -o doomwatch .

# Everything CI runs: vet, unit tests, and the e2e suite against a real API server, including the
# quick scenarios of e2e/scenarios on the full control plane (TestScenarioSubset) and the real
# node's failures (TestRealNode: kubelet, containerd and runc; it needs root and cgroups), and the
# statuses the real Argo Rollouts controller writes (TestArgoRolloutsController); the alerting
# rules' unit tests with the real promtool (deploy/prometheus), and the real Prometheus scraping
# serve in a pod on the real node (TestServeInCluster).
test: check e2e-bins
	$(GO) vet ./...
	"$$(hack/build-prometheus.sh 2>/dev/null | tail -n 1)"/promtool check rules deploy/prometheus/rules.yaml
	"$$(hack/build-prometheus.sh 2>/dev/null | tail -n 1)"/promtool test rules deploy/prometheus/rules_test.yaml
	DOOMWATCH_K8S_BIN="$$(hack/build-k8s.sh 2>/dev/null | tail -n 1)" \
	DOOMWATCH_NODE_BIN="$$(hack/build-node.sh 2>/dev/null | tail -n 1)" \
	DOOMWATCH_ARGO_BIN="$$(hack/build-argo-rollouts.sh 2>/dev/null | tail -n 1)" \
	DOOMWATCH_PROMETHEUS_BIN="$$(hack/build-prometheus.sh 2>/dev/null | tail -n 1)" \
		$(GO) test -race -timeout 25m ./...

# The habits CI holds: gofmt-clean sources, a tidy go.mod and go.sum, no staticcheck finding
# (pinned, run from the Go module proxy). The import boundaries are a test (imports_test.go).
STATICCHECK_VERSION = v0.8.2
check:
	@unformatted="$$(gofmt -l .)"; if [ -n "$$unformatted" ]; then \
		echo "gofmt -l: these files are not formatted:"; echo "$$unformatted"; exit 1; fi
	@$(GO) mod tidy -diff || { echo "go mod tidy would change go.mod or go.sum (the diff above): run go mod tidy"; exit 1; }
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# Unit tests only (no API server).
unit:
	$(GO) vet ./...
	$(GO) test -race $$($(GO) list ./... | grep -v /e2e)

# The binaries the e2e suite runs, each cached after its first build: the Kubernetes servers, kwok
# and kubectl (about 25 minutes on 2 cores), the real node's kubelet, containerd and runc (2 to 4),
# the Argo Rollouts controller (6 to 10), Prometheus and promtool (5 to 7). Two build at a time: each
# has phases that keep one core alone (module downloads, linking), which the other fills.
E2E_BINS = build-k8s build-node build-argo-rollouts build-prometheus
.PHONY: $(E2E_BINS)
e2e-bins:
	@$(MAKE) --no-print-directory -j2 $(E2E_BINS)

$(E2E_BINS):
	hack/$@.sh >/dev/null

# screenshots/*.png from the demo scenario at 90 s, rendered as the golden tests render.
screenshots:
	hack/screenshots.sh

# The Go benchmarks: classify's verdicts, the model and the dashboard at 150,000 pods (a batch and the
# refresh it causes, per sort; a sort key; a tick; memory per pod, informer included), the pod
# informer's decoding, and the replay's keys at 10,000 pods (the recording's own, which record
# 10 minutes an operation, are in BENCHMARKS.md).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./classify ./model ./tui ./kube ./replay

# doomwatch and k9s side by side on a real kube-apiserver holding N pods (not part of `make test`):
# builds the servers and k9s from the Go module proxy (pinned, cached), loads the pods, runs both in
# a pseudo-terminal and prints the figures of BENCHMARKS.md as markdown. N=150000 takes about 40
# minutes on 2 cores, most of it loading. BENCHFLAGS="--clusters 3" is the fleet mode: three
# servers of N pods each, doomwatch --context a,b,c in one process beside one k9s per context
# (N=10000: about 20 minutes).
N ?= 10000
bench-scale: e2e-bins
	$(GO) run ./hack/benchscale --pods $(N) --k8s-bin "$$(hack/build-k8s.sh 2>/dev/null | tail -n 1)" \
		--k9s "$$(hack/build-k9s.sh | tail -n 1)" $(BENCHFLAGS)

# The fuzz tests, one after the other (go test fuzzes one target at a time): classify's verdicts,
# the pod record's protobuf decoder against the generated one, the recording of unstructured
# objects (any JSON written and read back, any bytes read) and wait -f's manifest reader on
# arbitrary stdin. A new input is minimized for at most 5s: the decoders' inputs are whole
# objects, and the default minute stalls the run.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzClassify -fuzztime 30s ./classify
	$(GO) test -run '^$$' -fuzz FuzzPodFromProto -fuzztime 30s -fuzzminimizetime 5s ./podrec
	$(GO) test -run '^$$' -fuzz FuzzUnstructured -fuzztime 30s -fuzzminimizetime 5s ./recording
	$(GO) test -run '^$$' -fuzz FuzzRead -fuzztime 30s -fuzzminimizetime 5s ./manifest

# Every scenario of e2e/scenarios on the full control plane (kube-controller-manager,
# kube-scheduler, kwok's nodes, and the Argo Rollouts controller for the rollout/ targets), doomwatch's verdict stream and `doomwatch wait` beside
# `kubectl rollout status`: prints the confusion matrix, the times and the targets as markdown and
# writes them to e2e/scenarios/REPORT.md (ACCURACY.md holds a run). About 13 minutes on 2 cores,
# most of it kubectl waiting out the doomed Deployments' 10-minute progress deadline.
# SCENARIOFLAGS="--scenarios crashloop,flake-*" runs some; "--no-kubectl" skips kubectl.
scenarios: e2e-bins
	$(GO) run ./hack/scenarios --k8s-bin "$$(hack/build-k8s.sh 2>/dev/null | tail -n 1)" \
		--argo-bin "$$(hack/build-argo-rollouts.sh 2>/dev/null | tail -n 1)" \
		--out e2e/scenarios/REPORT.md $(SCENARIOFLAGS)
