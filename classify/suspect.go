package classify

import (
	"math"
	"sort"
)

// The suspect rule judges nodes the way Envoy's outlier detection judges the hosts of a cluster
// (envoyproxy.io, "Outlier detection"): by rates rather than counts, with minimum volumes, and by
// two routes. Success-rate ejection takes a host whose success rate is below the mean minus
// success_rate_stdev_factor/1000 standard deviations of the hosts' rates, counting only hosts
// with success_rate_request_volume requests and only when success_rate_minimum_hosts qualify;
// failure-percentage ejection takes a host whose failure percentage is above
// failure_percentage_threshold, with its own minimum volume and hosts; max_ejection_percent
// bounds how many hosts are out. Here the rate is the share of the pods that started (or tried
// to) on a node within the window that failed to start; the volume is --suspect-pods failed pods
// on the node (SuspectPopulation.MinPods), and as many pods that started without failing on the
// baseline. And:
//
//   - By rate (Envoy's success rate): a node is suspect when its share is at least SuspectRatio
//     times the share pooled over the nodes that are not suspect, and that many failures would be
//     unlikely at their rate: the binomial probability of at least as many failures among the pods
//     that started on the node is at most SuspectAlpha divided by the number of nodes. Envoy's
//     spread is the standard deviation over the hosts; with a few pods per node most of that
//     spread is the sampling noise of each node's own volume, which the binomial measures
//     exactly. Dividing by the number of nodes (Bonferroni) keeps background noise from making a
//     suspect of one node in 5,000.
//   - By failure percentage (Envoy's failure percentage), where a small population cannot meet
//     that bound: at least SuspectShare of the pods that started on the node failed, and at most
//     half of the other nodes are suspect too (Envoy's max_ejection_percent: when more fail alike,
//     the trouble is the cluster's). The route is open when the binomial bound cannot tell: the
//     nodes not suspect have fewer than --suspect-pods pods that started without failing, or so
//     few that this node could not stand out by rate even if none had failed there, or fewer
//     than SuspectBaseStarts starts in all, too few to know their rate; or when the node's share
//     is SuspectRatio times theirs and its failures would be unlikely at their rate at the looser
//     family-wise SuspectShareAlpha (4 of 4 against 3 of 23 on 10 nodes). The model's why sentence
//     says the evidence is thin (SuspectCall.ByRate is false).
//
// The baseline must not include the bad nodes, or several bad nodes hide each other (the median
// of failing-pod counts hid three bad nodes behind one with spurious evidence). It is found from
// the bottom up, a forward search: it starts with the nodes below --suspect-pods, which cannot be
// suspect, and takes in the nodes that do not stand out from it, the most ordinary half first,
// until none is left; the nodes it never takes in are judged against it. A node that failed at
// least SuspectShare of its starts is never taken in, whether or not it is named: on a small
// population a bad node the bound cannot name would raise the baseline's rate and hide the bad
// nodes judged after it. When the nodes below --suspect-pods have fewer than --suspect-pods pods
// that started without failing, the candidates with the lowest shares (below SuspectShare) are
// taken in first until they do.
//
// In the baseline's rate the nodes not suspect are counted as if half a pod more of theirs had
// failed, (F+½)/(S+1) (baseRate): a handful of clean starts elsewhere is not proof that the rate
// there is 0.

// SuspectRatio: a suspect node's share of failed starts is at least this multiple of the share
// on the nodes that are not suspect.
const SuspectRatio = 3

// SuspectShare is the failure-percentage route's threshold: at least half of the pods that
// started on the node failed to start.
const SuspectShare = 0.5

// SuspectBaseStarts is how many pods must have started on the nodes not suspect within the window
// for their rate to be known: below it, a few failures among a few starts (3 of 9 could be a rate
// of 10% or of 60%) leave the binomial bound unable to tell, and the failure-percentage route
// decides, as Envoy's failure_percentage route judges hosts the success-rate route cannot.
const SuspectBaseStarts = 20

// SuspectShareAlpha is the failure-percentage route's bound: the family-wise chance, spread
// over the nodes, that a node failing at the baseline's rate fails as often as a node it names.
// Looser than SuspectAlpha, for the populations too small for that bound (4 of 4 pods against 3
// of 23 elsewhere is 7.7e-4 on 10 nodes), and strict enough that sparse noise on 5,000 nodes
// (3 of 3 pods at 2%, 8e-6) names nothing.
const SuspectShareAlpha = 0.02

// SuspectAlpha is the family-wise chance of naming a node by rate when every node fails alike,
// spread over the nodes (Bonferroni).
const SuspectAlpha = 0.001

// NodeStarts is one node as the suspect rule sees it, counting the pods of node-local workloads
// within the window.
type NodeStarts struct {
	Failed  int // distinct pods that failed to start here
	Started int // distinct pods that started or tried to start here; at least Failed
}

// SuspectPopulation is what the rule compares the candidates with.
type SuspectPopulation struct {
	// Failed and Started are the totals over every node, candidates included.
	Failed, Started int
	// Nodes is the number of nodes that may be suspect: the Bonferroni divisor, and the "other
	// nodes" of the failure-percentage route.
	Nodes int
	// MinPods is --suspect-pods: the least number of failed pods of a suspect, and of pods that
	// started without failing on the baseline before a rate is taken from it.
	MinPods int
}

// SuspectCall is the rule's answer for one candidate.
type SuspectCall struct {
	Suspect bool
	// ByRate is set when the node was judged by rate (against Base); otherwise by failure
	// percentage, the nodes not suspect holding too few starts to tell.
	ByRate bool
	// Base is the pooled count over the nodes that are not suspect (the candidate itself
	// excluded); Others is the number of suspect nodes besides this one.
	Base   NodeStarts
	Others int
}

// JudgeSuspects applies the suspect rule to the candidates: the nodes that may be suspect (not
// gone) with at least pop.MinPods failed pods. Every other node only counts in pop's totals. The
// answer holds one call per candidate, in the candidates' order.
func JudgeSuspects(pop SuspectPopulation, cands []NodeStarts) []SuspectCall {
	out := make([]SuspectCall, len(cands))
	if len(cands) == 0 {
		return out
	}
	limit := SuspectAlpha / float64(max(pop.Nodes, 1))
	shareLimit := SuspectShareAlpha / float64(max(pop.Nodes, 1))
	// out[i].Suspect marks the candidates outside the baseline; the baseline is pop minus them.
	base := NodeStarts{Failed: pop.Failed, Started: pop.Started}
	for i, c := range cands {
		out[i].Suspect = true
		base.Failed -= c.Failed
		base.Started -= c.Started
	}
	join := func(i int) {
		out[i].Suspect = false
		base.Failed += cands[i].Failed
		base.Started += cands[i].Started
	}
	if base.Started-base.Failed < pop.MinPods {
		order := make([]int, 0, len(cands))
		for i := range cands {
			if share(cands[i]) < SuspectShare {
				order = append(order, i)
			}
		}
		sort.SliceStable(order, func(a, b int) bool { return lessShare(cands[order[a]], cands[order[b]]) })
		for _, i := range order {
			if base.Started-base.Failed >= pop.MinPods {
				break
			}
			join(i)
		}
	}
	// The forward search: of the candidates that do not stand out from the baseline, the half with
	// the lowest shares (at least one) joins it, and the rest are judged again against the larger
	// baseline, until every candidate left stands out. Half at a time, so a baseline that starts
	// small and noisy grows from its most ordinary nodes before it judges the others, and the
	// search takes O(n log n) judgements. A candidate that failed at least SuspectShare of its
	// starts never joins, whether or not it stands out: a bad node the binomial bound cannot name
	// on a small population would raise the baseline's rate and hide the bad nodes judged after it.
	var ordinary []int
	for {
		ordinary = ordinary[:0]
		for i := range cands {
			if out[i].Suspect && !standsOut(cands[i], base, &out[i], pop.MinPods, limit, shareLimit) && share(cands[i]) < SuspectShare {
				ordinary = append(ordinary, i)
			}
		}
		if len(ordinary) == 0 {
			break
		}
		sort.SliceStable(ordinary, func(a, b int) bool { return lessShare(cands[ordinary[a]], cands[ordinary[b]]) })
		for _, i := range ordinary[:(len(ordinary)+1)/2] {
			join(i)
		}
	}
	for i := range out {
		if out[i].Suspect && !standsOut(cands[i], base, &out[i], pop.MinPods, limit, shareLimit) {
			out[i].Suspect, out[i].ByRate = false, false
		}
	}
	suspects := 0
	for i := range out {
		if out[i].Suspect {
			suspects++
		}
	}
	for i := range out {
		v := &out[i]
		if !v.Suspect {
			continue
		}
		v.Base, v.Others = base, suspects-1
		// Failure percentage: at most half of the other nodes may be suspect too.
		if !v.ByRate && 2*v.Others > pop.Nodes-1 {
			v.Suspect = false
		}
	}
	return out
}

// standsOut judges candidate c against the baseline base, and records in v by which route.
func standsOut(c, base NodeStarts, v *SuspectCall, minPods int, limit, shareLimit float64) bool {
	v.ByRate = false
	ok := base.Started - base.Failed
	if ok < minPods {
		// Nothing to compare with: no rate on the baseline. Failure percentage alone.
		return share(c) >= SuspectShare
	}
	// The rate route can tell when the baseline has enough pods that started without failing,
	// enough that the node would stand out if none there had failed.
	rate := baseRate(base)
	ratio := float64(c.Failed)*float64(base.Started) >= SuspectRatio*float64(base.Failed)*float64(c.Started)
	p := tail(c.Failed, c.Started, rate)
	powered := tail(c.Failed, c.Started, 1/float64(ok+1)) <= limit
	if ratio && p <= limit && powered {
		v.ByRate = true
		return true
	}
	if share(c) < SuspectShare {
		return false
	}
	// Failure percentage, half or more of the node's starts failed, when the binomial bound cannot
	// tell: the node could not stand out however clean the baseline (too few starts here), or the
	// baseline's rate is itself uncertain (fewer than SuspectBaseStarts starts there), or its
	// share is SuspectRatio times the baseline's and that many failures would still be unlikely at
	// the baseline's rate at the looser SuspectShareAlpha.
	return !powered || base.Started < SuspectBaseStarts || ratio && p <= shareLimit
}

// baseRate is the baseline's rate of failed starts, (F+½)/(S+1): the mean of its posterior under
// Jeffreys' prior, so a handful of clean starts elsewhere is not taken for a rate of 0, and a few
// failures among a few dozen starts are not inflated either ((F+1)/(S+1) doubled 1 of 23).
func baseRate(base NodeStarts) float64 {
	return (float64(base.Failed) + 0.5) / float64(base.Started+1)
}

func share(r NodeStarts) float64 {
	if r.Started == 0 {
		return 0
	}
	return float64(r.Failed) / float64(r.Started)
}

// lessShare orders by share, then by more starts first (more evidence of the share), then fewer
// failures.
func lessShare(a, b NodeStarts) bool {
	// a.Failed/a.Started < b.Failed/b.Started without division.
	l, r := a.Failed*b.Started, b.Failed*a.Started
	if l != r {
		return l < r
	}
	if a.Started != b.Started {
		return a.Started > b.Started
	}
	return a.Failed < b.Failed
}

// tail is the binomial probability of at least k successes in n trials of probability p, for
// 0 < p < 1: the chance that at least k of n pods fail at rate p. It sums the terms from k up
// in log space, each from the last (the terms fall once past the mean), and returns 1 when k is
// at most the median, where the tail is at least a half.
func tail(k, n int, p float64) float64 {
	switch {
	case k <= 0:
		return 1
	case k > n:
		return 0
	case p <= 0:
		return 0
	case p >= 1:
		return 1
	case float64(k) <= math.Floor(float64(n)*p):
		return 1
	}
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	logTerm := lg(n) - lg(k) - lg(n-k) + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p)
	term := math.Exp(logTerm)
	sum := term
	odds := p / (1 - p)
	for j := k; j < n && term > sum*1e-12; j++ {
		term *= float64(n-j) / float64(j+1) * odds
		sum += term
	}
	return min(sum, 1)
}
