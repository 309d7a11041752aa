// Package scale writes a large, realistic workload into a real kube-apiserver and changes it at a
// steady rate, for the scale harness (hack/benchscale, hack/loadgen). Pods are owned by
// Deployments and ReplicaSets across namespaces and bound to nodes, as the controllers and the
// scheduler would leave them; their status goes through the status subresource, as a kubelet
// writes it. Every runtime message comes from classify's fixtures, which cite their sources.
package scale

import (
	"fmt"
	"hash/fnv"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Config describes the fleet.
type Config struct {
	Pods             int // total pods
	Nodes            int
	PodsPerNamespace int // the last namespace may hold fewer
	Replicas         int // pods per Deployment (the last of a namespace may hold fewer)
	// BadNodes are nodes whose runtime fails to start containers (exit 128 StartError). Each
	// Deployment fails on at most one of them, so the failures look node-local, as they are.
	BadNodes int
	Workers  int // concurrent API requests while loading
	Messages Messages
}

// DefaultConfig is the setup: 10,000 pods a namespace on 100 nodes.
func DefaultConfig(pods int) Config {
	return Config{Pods: pods, Nodes: 100, PodsPerNamespace: 10000, Replicas: 50, BadNodes: 3, Workers: 48}
}

// State is what a pod's containers are doing when loaded.
type State uint8

// The states the load writes.
const (
	Healthy    State = iota // both containers running and ready
	CrashLoop               // app in CrashLoopBackOff after exit 1: one Deployment a namespace, a bad rollout
	OOMLoop                 // app in CrashLoopBackOff after OOMKilled: scattered
	StartError              // app terminated, exit 128 StartError, on a bad node
)

func (s State) String() string {
	return [...]string{"healthy", "crash-loop", "oom-loop", "start-error"}[s]
}

// crashDeployment is the Deployment of each namespace whose rollout crash-loops. Not the first, so
// that sorting by name and sorting by severity put different pods on top.
const crashDeployment = 7

// appNames are the Deployments' base names, cycled.
var appNames = []string{"cart", "checkout", "search", "web", "api", "worker", "payments", "catalog",
	"auth", "gateway", "orders", "inventory", "ledger", "mailer", "reports", "images"}

// nameAlphabet is the alphabet of generated name suffixes and pod-template hashes
// (k8s.io/apimachinery/pkg/util/rand: vowels and easily confused characters left out).
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// PodNamePattern matches the names of the pods this package creates (Deployment "app-017",
// pod-template hash, 5-character suffix), for finding pod rows on a screen.
const PodNamePattern = `[a-z]+-[0-9]{3}-[` + nameAlphabet + `]{10}-[` + nameAlphabet + `]{5}`

// Fleet is the layout of a load: which pod is where, owned by what, in which state. Names and
// placements are a pure function of the pod's index, so the load and the churn agree on them
// without storing them.
type Fleet struct {
	cfg      Config
	badNodes map[int]int // node index -> bad-node number
	created  time.Time
	uids     []types.UID // per pod, once created
	churn    churnState
}

// NewFleet checks cfg and lays the fleet out.
func NewFleet(cfg Config) (*Fleet, error) {
	switch {
	case cfg.Pods <= 0 || cfg.Nodes <= 0 || cfg.PodsPerNamespace <= 0 || cfg.Replicas <= 0:
		return nil, fmt.Errorf("pods, nodes, pods per namespace and replicas must be positive")
	case cfg.BadNodes > len(cfg.Messages.StartErrors):
		return nil, fmt.Errorf("%d bad nodes but %d StartError messages", cfg.BadNodes, len(cfg.Messages.StartErrors))
	case cfg.BadNodes >= cfg.Nodes:
		return nil, fmt.Errorf("%d bad nodes of %d", cfg.BadNodes, cfg.Nodes)
	case len(cfg.Messages.Crashes) < 2:
		return nil, fmt.Errorf("need two crash messages, got %d", len(cfg.Messages.Crashes))
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	f := &Fleet{cfg: cfg, badNodes: map[int]int{}, uids: make([]types.UID, cfg.Pods)}
	// Spread the bad nodes over the node list rather than taking the first few.
	for b := range cfg.BadNodes {
		f.badNodes[(2*b+1)*cfg.Nodes/(2*cfg.BadNodes)] = b
	}
	return f, nil
}

// Config returns the fleet's configuration.
func (f *Fleet) Config() Config { return f.cfg }

// Namespaces is the number of namespaces.
func (f *Fleet) Namespaces() int {
	return (f.cfg.Pods + f.cfg.PodsPerNamespace - 1) / f.cfg.PodsPerNamespace
}

// NamespaceName names namespace k.
func NamespaceName(k int) string { return fmt.Sprintf("scale-%02d", k) }

// NodeName names node n.
func NodeName(n int) string { return fmt.Sprintf("node-%03d", n) }

// BadNodeNames lists the nodes whose runtime fails.
func (f *Fleet) BadNodeNames() []string {
	var out []string
	for n := range f.cfg.Nodes {
		if _, ok := f.badNodes[n]; ok {
			out = append(out, NodeName(n))
		}
	}
	return out
}

// podsIn is the number of pods in namespace k.
func (f *Fleet) podsIn(k int) int {
	return min(f.cfg.PodsPerNamespace, f.cfg.Pods-k*f.cfg.PodsPerNamespace)
}

// DeploymentsIn is the number of Deployments in namespace k.
func (f *Fleet) DeploymentsIn(k int) int {
	return (f.podsIn(k) + f.cfg.Replicas - 1) / f.cfg.Replicas
}

// replicasOf is the replica count of Deployment d in namespace k.
func (f *Fleet) replicasOf(k, d int) int {
	return min(f.cfg.Replicas, f.podsIn(k)-d*f.cfg.Replicas)
}

// DeploymentName names Deployment d of a namespace.
func DeploymentName(d int) string { return fmt.Sprintf("%s-%03d", appNames[d%len(appNames)], d) }

// templateHash is the ReplicaSet's pod-template-hash: 10 characters of the name alphabet, fixed
// per namespace and Deployment.
func templateHash(k, d int) string { return encode(hash64(fmt.Sprint("rs", k, d)), 10) }

// ReplicaSetName names the ReplicaSet of Deployment d in namespace k.
func ReplicaSetName(k, d int) string { return DeploymentName(d) + "-" + templateHash(k, d) }

// podAt is one pod's place in the fleet.
type podAt struct {
	index     int // global
	ns        int // namespace
	deploy    int // Deployment within the namespace
	replica   int // within the ReplicaSet
	node      int
	state     State
	cond      int // which fixture's message: bad-node number or crash kind
	restarts  int32
	namespace string
	name      string
}

// pod places pod i.
func (f *Fleet) pod(i int) podAt {
	k := i / f.cfg.PodsPerNamespace
	j := i % f.cfg.PodsPerNamespace
	d, r := j/f.cfg.Replicas, j%f.cfg.Replicas
	p := podAt{index: i, ns: k, deploy: d, replica: r, namespace: NamespaceName(k)}
	// The ReplicaSet controller names pods <rs>-<5 random characters>; a bijection of the replica
	// number keeps them unique within the ReplicaSet.
	const space = 27 * 27 * 27 * 27 * 27
	p.name = ReplicaSetName(k, d) + "-" + encode(uint64((r*7919+int(hash64(p.namespace)%space))%space), 5)
	p.node = int(hash64(p.name) % uint64(f.cfg.Nodes))
	switch b, bad := f.badNodes[p.node]; {
	case d == crashDeployment:
		p.state, p.cond, p.restarts = CrashLoop, 0, int32(3+r%4)
	case j%997 == 500:
		p.state, p.cond, p.restarts = OOMLoop, 1, int32(2+r%3)
	case bad && d%f.cfg.BadNodes == b:
		p.state, p.cond = StartError, b
	}
	return p
}

// Counts is how many pods the fleet has in each state.
func (f *Fleet) Counts() map[State]int {
	out := map[State]int{}
	for i := range f.cfg.Pods {
		out[f.pod(i).state]++
	}
	return out
}

func hash64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// encode writes v in the name alphabet, n characters.
func encode(v uint64, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = nameAlphabet[v%uint64(len(nameAlphabet))]
		v /= uint64(len(nameAlphabet))
	}
	return string(b)
}

// PodRef names one pod of the fleet and the state it was loaded in.
type PodRef struct {
	Namespace, Name string
	State           State
}

// Index maps every pod's name to its PodRef. Names are unique across namespaces: the
// pod-template hash depends on the namespace.
func (f *Fleet) Index() map[string]PodRef {
	out := make(map[string]PodRef, f.cfg.Pods)
	for i := range f.cfg.Pods {
		p := f.pod(i)
		out[p.name] = PodRef{Namespace: p.namespace, Name: p.name, State: p.state}
	}
	return out
}
