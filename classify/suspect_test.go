package classify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The binomial tail against the exact sums, sum over j >= k of C(n, j) p^j (1-p)^(n-j).
func TestBinomialTail(t *testing.T) {
	tests := []struct {
		k, n int
		p    float64
		want float64
	}{
		{3, 3, 0.02, 8e-6},
		{1, 1, 0.5, 0.5},
		{0, 10, 0.1, 1},
		{11, 10, 0.1, 0},
		{5, 100, 0.01, 0.0034323}, // 1 - P(X <= 4)
		{3, 30, 0.02, 0.02172},
		{7, 10, 0.3, 0.010592},
		{2, 10, 0.3, 1}, // at or below the median: at least a half, reported as 1
	}
	for _, tc := range tests {
		got := tail(tc.k, tc.n, tc.p)
		if math.Abs(got-tc.want) > 1e-3*tc.want+1e-12 {
			t.Errorf("tail(%d, %d, %g) = %.6g, want %.6g", tc.k, tc.n, tc.p, got, tc.want)
		}
	}
}

// population builds the rule's input from every node's (failed, started) pods: the totals over
// all of them, and the candidates with at least minPods failed pods.
func population(nodes [][2]int, minPods int) (SuspectPopulation, []NodeStarts, []int) {
	pop := SuspectPopulation{Nodes: len(nodes), MinPods: minPods}
	var cands []NodeStarts
	var idx []int
	for i, n := range nodes {
		pop.Failed += n[0]
		pop.Started += n[1]
		if n[0] >= minPods {
			cands = append(cands, NodeStarts{Failed: n[0], Started: n[1]})
			idx = append(idx, i)
		}
	}
	return pop, cands, idx
}

func suspectsOf(nodes [][2]int, minPods int) []int {
	pop, cands, idx := population(nodes, minPods)
	var out []int
	for i, v := range JudgeSuspects(pop, cands) {
		if v.Suspect {
			out = append(out, idx[i])
		}
	}
	return out
}

// repeat is n nodes with failed of started pods each.
func repeat(n, failed, started int) [][2]int {
	out := make([][2]int, n)
	for i := range out {
		out[i] = [2]int{failed, started}
	}
	return out
}

// The rule on small populations, node by node: (failed, started) pods per node, node 0 first.
func TestJudgeSuspects(t *testing.T) {
	tests := []struct {
		name  string
		nodes [][2]int
		want  []int
	}{
		// Three nodes failing 4-5 of a few pods each, one with 3 spurious failures among many pods,
		// the rest 0-2: the median of counts (5, 4, 4, 3, 2, 1, 0) hid them all behind the fourth.
		{"7 nodes: 3 bad, one spurious", [][2]int{{5, 8}, {4, 6}, {4, 7}, {3, 40}, {2, 40}, {1, 40}, {0, 40}}, []int{0, 1, 2}},
		{"3 of 3 weighs more than 3 of 49", [][2]int{{3, 49}, {3, 3}, {1, 50}, {1, 50}, {1, 50}, {1, 50}}, []int{1}},
		{"single node: 3 of 3", [][2]int{{3, 3}}, []int{0}},
		{"single node: 3 of 300 is not an outlier", [][2]int{{3, 300}}, nil},
		{"2 bad of 3", [][2]int{{4, 6}, {5, 6}, {0, 10}}, []int{0, 1}},
		// One clean start is no rate: by failure percentage, two of three nodes may be suspect.
		{"2 bad of 3, one clean start on the third", [][2]int{{4, 6}, {5, 6}, {0, 1}}, []int{0, 1}},
		{"3 bad of 3: cluster-wide", [][2]int{{4, 6}, {5, 6}, {3, 5}}, nil},
		{"noise: 2% everywhere", repeat(40, 2, 100), nil},
		{"cluster-wide: every node fails 60%", repeat(5, 6, 10), nil},
		{"cluster-wide with spread", [][2]int{{8, 10}, {6, 10}, {4, 10}, {5, 10}, {7, 10}}, nil},
		{"no clean start anywhere: 4 of 5 nodes fail alike", append(repeat(4, 4, 4), [2]int{0, 0}), nil},
		{"no clean start anywhere: 3 of 5 nodes", append(repeat(3, 4, 4), [2]int{0, 0}, [2]int{0, 0}), []int{0, 1, 2}},
		{"a busy node at 2.5x the rest is not an outlier", append([][2]int{{25, 500}}, repeat(10, 10, 500)...), nil},
		{"a busy node at 5x the rest is", append([][2]int{{50, 500}}, repeat(10, 10, 500)...), []int{0}},
		{"5 bad of 5,000", append(repeat(5, 10, 20), repeat(4995, 0, 20)...), []int{0, 1, 2, 3, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := suspectsOf(tc.nodes, 3); !slices.Equal(got, tc.want) {
				t.Errorf("suspects = %v, want %v", got, tc.want)
			}
		})
	}
}

// The verdict says what it compared with: the nodes not suspect, the suspect itself left out.
func TestJudgeSuspectsBaseline(t *testing.T) {
	pop, cands, _ := population([][2]int{{4, 6}, {5, 6}, {2, 300}, {0, 10}}, 3)
	vs := JudgeSuspects(pop, cands)
	for i, v := range vs {
		if !v.Suspect || !v.ByRate || v.Base != (NodeStarts{Failed: 2, Started: 310}) || v.Others != 1 {
			t.Errorf("candidate %d: %+v, want suspect by rate against 2 of 310, 1 other suspect", i, v)
		}
	}
}

// sweepPods is a profile of started pods per node: uniform in [lo, hi], or log-uniform.
type sweepPods struct {
	name   string
	lo, hi int
	log    bool
}

func (p sweepPods) draw(r *rand.Rand) int {
	if p.log {
		return int(math.Round(math.Exp(math.Log(float64(p.lo)) + r.Float64()*(math.Log(float64(p.hi))-math.Log(float64(p.lo))))))
	}
	return p.lo + r.IntN(p.hi-p.lo+1)
}

// binomial draws the number of n pods that fail at rate p, by skipping from one failure to the
// next (a geometric gap), so it costs the failures, not the pods.
func binomial(r *rand.Rand, n int, p float64) int {
	switch {
	case p <= 0:
		return 0
	case p >= 1:
		return n
	}
	k, i := 0, -1
	l := math.Log1p(-p)
	for {
		i += 1 + int(math.Log(1-r.Float64())/l)
		if i >= n {
			return k
		}
		k++
	}
}

// sweepCase is one simulated population's parameters.
type sweepCase struct {
	nodes, bad  int
	rate, noise float64 // the bad nodes' failure rate, and every node's background noise
	pods        sweepPods
	seed        uint64
}

// sweepResult is one population's outcome.
type sweepResult struct {
	truePos, falsePos int
	bad3              int // bad nodes with at least 3 failed pods
	// covered counts the bad nodes the target covers (covers, against the rest) and caught how
	// many of them were named; coveredPure and caughtPure the same against the good nodes alone.
	covered, caught         int
	coveredPure, caughtPure int
}

// covers reports whether bad node i must be named: it has at least minPods failed pods and the
// rule's own two routes name it against the rest, every other node pooled (pure: the other nodes
// that are not bad candidates, as if the rule knew which of them are bad). That is, its share is
// at least SuspectRatio times the rest's and its failures are improbable at the rest's rate
// (p <= SuspectAlpha/nodes, with the rest's rate counted as baseRate counts it); or, where the rest has
// too few pods that started without failing to tell, at least SuspectShare of its pods failed and
// at most half of the other nodes have failed alike (at least minPods failed pods, at least
// SuspectShare of their starts).
func covers(nodes [][2]int, bad []bool, i, minPods int, pure bool) bool {
	c := NodeStarts{Failed: nodes[i][0], Started: nodes[i][1]}
	if c.Failed < minPods {
		return false
	}
	var base NodeStarts
	alike := 0
	for j, n := range nodes {
		if j == i {
			continue
		}
		if n[0] >= minPods && share(NodeStarts{Failed: n[0], Started: n[1]}) >= SuspectShare {
			alike++
		}
		if pure && bad[j] && n[0] >= minPods {
			continue
		}
		base.Failed += n[0]
		base.Started += n[1]
	}
	limit := SuspectAlpha / float64(len(nodes))
	ok := base.Started - base.Failed
	if ok >= minPods && tail(c.Failed, c.Started, 1/float64(ok+1)) <= limit {
		return float64(c.Failed)*float64(base.Started) >= SuspectRatio*float64(base.Failed)*float64(c.Started) &&
			tail(c.Failed, c.Started, baseRate(base)) <= limit
	}
	return share(c) >= SuspectShare && 2*alike <= len(nodes)-1
}

func runSweepCase(c sweepCase) sweepResult {
	// Every parameter picks the stream, so no two populations share their draws.
	r := rand.New(rand.NewPCG(c.seed, uint64(c.nodes)<<32|uint64(c.bad)<<24|uint64(1000*c.rate)<<12|
		uint64(1000*c.noise)<<4|uint64(slices.Index(sweepProfs, c.pods))))
	nodes := make([][2]int, c.nodes)
	bad := make([]bool, c.nodes)
	for _, i := range r.Perm(c.nodes)[:c.bad] {
		bad[i] = true
	}
	for i := range nodes {
		s := c.pods.draw(r)
		p := c.noise
		if bad[i] {
			p = c.rate + c.noise - c.rate*c.noise
		}
		nodes[i] = [2]int{binomial(r, s, p), s}
	}
	var res sweepResult
	named := make([]bool, c.nodes)
	for _, i := range suspectsOf(nodes, 3) {
		named[i] = true
		if bad[i] {
			res.truePos++
		} else {
			res.falsePos++
		}
	}
	for i := range nodes {
		if !bad[i] {
			continue
		}
		if nodes[i][0] >= 3 {
			res.bad3++
		}
		if covers(nodes, bad, i, 3, false) {
			res.covered++
			if named[i] {
				res.caught++
			}
		}
		if covers(nodes, bad, i, 3, true) {
			res.coveredPure++
			if named[i] {
				res.caughtPure++
			}
		}
	}
	return res
}

var (
	sweepSizes  = []int{3, 5, 10, 40, 200, 1000, 5000}
	sweepBad    = []int{0, 1, 2, 3, 5}
	sweepRates  = []float64{0.05, 0.10, 0.25, 0.50, 1}
	sweepNoises = []float64{0, 0.01, 0.02}
	sweepProfs  = []sweepPods{{"3-12", 3, 12, false}, {"10-60", 10, 60, false}, {"50-400", 50, 400, false}, {"3-400 log", 3, 400, true}}
)

// sweepCases lists the populations: every size, number of bad nodes (fewer than the nodes), bad
// nodes' rate, noise and pods per node, with two seeds each for the smaller clusters and one for
// 1,000 and 5,000 nodes.
func sweepCases() []sweepCase {
	var out []sweepCase
	for _, n := range sweepSizes {
		seeds := 2
		if n >= 1000 {
			seeds = 1
		}
		for _, b := range sweepBad {
			if b >= n {
				continue
			}
			rates := sweepRates
			if b == 0 {
				rates = rates[:1] // no bad node: the rate does not matter
			}
			for _, rate := range rates {
				for _, noise := range sweepNoises {
					for _, prof := range sweepProfs {
						for s := range seeds {
							out = append(out, sweepCase{nodes: n, bad: b, rate: rate, noise: noise, pods: prof, seed: uint64(s + 1)})
						}
					}
				}
			}
		}
	}
	return out
}

// TestSuspectSweep runs the rule over simulated populations: 3 to 5,000 nodes, 0 to 5 bad ones
// failing 5% to 100% of their starts, background noise of 0, 1 and 2% of starts on every node,
// and 3 to 400 pods started per node. The targets:
//   - no false suspect in any population without a bad node;
//   - every bad node with at least 3 failed pods whose share is at least SuspectRatio times the
//     rest's, pooled over every other node, and improbable at the rest's rate, is named; and so is
//     one failing at least SuspectShare where the rest has too few clean starts to tell (covers).
//     The rule takes its baseline without the nodes that stand out, so it names more than that
//     target (the recall columns); the last column of the first table is the recall of the bad
//     nodes it would name if it knew which candidates are bad, which a rule that cannot tell a
//     weak bad node from noise does not reach.
//
// A bad node the target does not cover is one the evidence cannot tell from noise: a node at 5%
// against 2% noise is under SuspectRatio however many pods it has, and 3 failures among 12 pods
// are not improbable against 2% noise over 5,000 nodes.
//
// With -v it prints precision and recall by size, bad nodes and rate, and recall by noise, pods
// per node and rate.
func TestSuspectSweep(t *testing.T) {
	type key struct {
		nodes, bad int
		rate       float64
	}
	type key2 struct {
		noise float64
		prof  string
		rate  float64
	}
	add := func(a *sweepResult, r sweepResult) {
		a.truePos += r.truePos
		a.falsePos += r.falsePos
		a.bad3 += r.bad3
		a.covered += r.covered
		a.caught += r.caught
		a.coveredPure += r.coveredPure
		a.caughtPure += r.caughtPure
	}
	bySize := map[key]*sweepResult{}
	byNoise := map[key2]*sweepResult{}
	cases := sweepCases()
	var all sweepResult
	noiseOnly, falseInNoise := 0, 0
	for _, c := range cases {
		r := runSweepCase(c)
		if c.bad == 0 {
			noiseOnly++
			falseInNoise += r.falsePos
			if r.falsePos > 0 {
				t.Errorf("%d nodes, noise %.0f%%, pods %s, seed %d: %d false suspects without a bad node",
					c.nodes, 100*c.noise, c.pods.name, c.seed, r.falsePos)
			}
		}
		if r.caught < r.covered {
			t.Errorf("%d nodes, %d bad at %.0f%%, noise %.0f%%, pods %s, seed %d: named %d of the %d bad nodes the target covers",
				c.nodes, c.bad, 100*c.rate, 100*c.noise, c.pods.name, c.seed, r.caught, r.covered)
		}
		k := key{c.nodes, c.bad, c.rate}
		if bySize[k] == nil {
			bySize[k] = &sweepResult{}
		}
		add(bySize[k], r)
		add(&all, r)
		if c.bad > 0 {
			k2 := key2{c.noise, c.pods.name, c.rate}
			if byNoise[k2] == nil {
				byNoise[k2] = &sweepResult{}
			}
			add(byNoise[k2], r)
		}
	}
	ratio := func(a, b int) string {
		if b == 0 {
			return "   -"
		}
		return fmt.Sprintf("%4.2f", float64(a)/float64(b))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d populations; %d without a bad node, with %d false suspects; with bad nodes: %d named of %d with >= 3 failed pods, "+
		"%d of the %d the target covers, %d false suspects\n",
		len(cases), noiseOnly, falseInNoise, all.truePos, all.bad3, all.caught, all.covered, all.falsePos-falseInNoise)
	b.WriteString("per cell: precision, recall of bad nodes with >= 3 failed pods, recall of those the target covers, " +
		"recall of those named against the good nodes alone; FP false suspects\n")
	fmt.Fprintf(&b, "%5s %3s", "nodes", "bad")
	for _, r := range sweepRates {
		fmt.Fprintf(&b, " | %-24s", fmt.Sprintf("rate %.0f%%", 100*r))
	}
	b.WriteString("\n")
	for _, n := range sweepSizes {
		for _, bad := range sweepBad {
			if bad >= n {
				continue
			}
			fmt.Fprintf(&b, "%5d %3d", n, bad)
			if bad == 0 {
				fmt.Fprintf(&b, " | FP %d\n", bySize[key{n, 0, sweepRates[0]}].falsePos)
				continue
			}
			for _, rate := range sweepRates {
				a := bySize[key{n, bad, rate}]
				fmt.Fprintf(&b, " | %s %s %s %s FP%d", ratio(a.truePos, a.truePos+a.falsePos), ratio(a.truePos, a.bad3),
					ratio(a.caught, a.covered), ratio(a.caughtPure, a.coveredPure), a.falsePos)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\nover every size: recall of bad nodes with >= 3 failed pods, and the share of them the target covers\n")
	fmt.Fprintf(&b, "%5s %-9s", "noise", "pods")
	for _, r := range sweepRates {
		fmt.Fprintf(&b, " | %-9s", fmt.Sprintf("rate %.0f%%", 100*r))
	}
	b.WriteString("\n")
	for _, noise := range sweepNoises {
		for _, prof := range sweepProfs {
			fmt.Fprintf(&b, "%4.0f%% %-9s", 100*noise, prof.name)
			for _, rate := range sweepRates {
				a := byNoise[key2{noise, prof.name, rate}]
				fmt.Fprintf(&b, " | %s %s", ratio(a.truePos, a.bad3), ratio(a.covered, a.bad3))
			}
			b.WriteString("\n")
		}
	}
	t.Log("\n" + b.String())
}
