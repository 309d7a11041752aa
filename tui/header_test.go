package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"doomwatch/contract"
	"doomwatch/model"
)

// rolloutsLine is the header's rollouts line on screen.
func rolloutsLine(t *testing.T, d *dashboard) string {
	t.Helper()
	for _, l := range strings.Split(screen(d), "\n") {
		if strings.HasPrefix(l, "rollouts") {
			return l
		}
	}
	t.Fatalf("no rollouts line:\n%s", screen(d))
	return ""
}

// TestHeaderRolloutsLineFollowsDataAndWidth: the header's rollouts line is made when the rollouts
// or the width change, not per frame; it must still show a new Deployment, widen with the
// terminal and, with more rollouts than fit, end in "…" at the width.
func TestHeaderRolloutsLineFollowsDataAndWidth(t *testing.T) {
	d := newTestDashboard(t, 100, 30)
	if l := rolloutsLine(t, d); strings.Contains(l, "…") || !strings.Contains(l, "checkout 12/8/12") {
		t.Fatalf("four rollouts fit in 100 columns: %q", l)
	}
	var b contract.Batch
	for i := range 40 {
		dep, rs := deployment(fmt.Sprintf("svc-%02d", i), 1, 1, 1)
		b.Workloads = append(b.Workloads, contract.Workloads(dep, rs)...)
	}
	d.Update(batchMsg{batches: []contract.Batch{b}})
	narrow := rolloutsLine(t, d)
	if !strings.HasSuffix(narrow, "…") || !strings.Contains(narrow, "svc-00") {
		t.Errorf("44 rollouts should fill the line and end in …: %q", narrow)
	}
	d.Update(tea.WindowSizeMsg{Width: 180, Height: 30})
	wide := rolloutsLine(t, d)
	if len([]rune(wide)) != 180 || !strings.HasSuffix(wide, "…") || !strings.HasPrefix(wide, narrow[:len(narrow)-len("…")]) {
		t.Errorf("at 180 columns the line should be 180 wide and continue the narrow one:\n%q\n%q", narrow, wide)
	}
	if strings.Count(wide, "svc-") <= strings.Count(narrow, "svc-") {
		t.Errorf("a wider terminal should show more rollouts:\n%q\n%q", narrow, wide)
	}
}

// TestHeaderAcrossClustersLeadsWithWhatDiffers: the fleet's header line leads with the workload
// whose verdict differs between clusters (the fleet's story), not the worst one, alike in every
// cluster, and counts those that fare the same rather than calling them "more".
func TestHeaderAcrossClustersLeadsWithWhatDiffers(t *testing.T) {
	contexts := []string{"eu", "us", "ap"}
	f := model.NewFleet(model.DefaultConfig(), contexts)
	for i, ctx := range contexts {
		b := contract.Batch{Cluster: i, Health: &contract.Health{Synced: true}}
		ready := int32(3)
		if ctx == "us" {
			ready = 0 // payments is still rolling out in us alone
		}
		for _, d := range []struct {
			name            string
			replicas, ready int32
		}{{"api", 2, 0}, {"payments", 3, ready}, {"cart", 1, 1}, {"checkout", 4, 4}} {
			dep, rs := deployment(d.name, d.replicas, d.replicas, d.ready)
			b.Workloads = append(b.Workloads, contract.Workloads(dep, rs)...)
		}
		f.Apply(&b, t0)
	}
	d := newDashboard(Options{Model: f, Now: func() time.Time { return t0 }}, true)
	d.Update(tea.WindowSizeMsg{Width: 200, Height: 30})
	var line string
	for _, l := range strings.Split(screen(d), "\n") {
		if strings.HasPrefix(l, "across clusters: ") {
			line = l
		}
	}
	// api, progressing in every cluster, is the worst; payments is the story.
	if want := "across clusters: shop/Deployment/payments: progressing in us; complete in eu, ap · 3 the same everywhere"; line != want {
		t.Errorf("the header's line is\n%q, want\n%q", line, want)
	}

	// With none that differ, the line says so.
	if got, want := acrossLine(f.Spreads()[:1]), "across clusters: 1 workload, the same everywhere it runs"; got != want {
		t.Errorf("one spread alike everywhere: %q, want %q", got, want)
	}
}

// TestFleetDeliveryAppliedAtOnce: what the fleet's fan-in hands over at once, a batch of each
// cluster, is applied before the one refresh that follows: the frame after it shows every
// cluster's pods and nodes.
func TestFleetDeliveryAppliedAtOnce(t *testing.T) {
	contexts := []string{"eu", "us"}
	f := model.NewFleet(model.DefaultConfig(), contexts)
	d := newDashboard(Options{Model: f, Now: func() time.Time { return t0 }}, true)
	d.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	var delivery []contract.Batch
	for i := range contexts {
		b := fixtureBatch()
		b.Cluster = i
		delivery = append(delivery, b)
	}
	one := model.FleetOf("", model.New(model.DefaultConfig()))
	one.Apply(&delivery[0], t0)
	d.Update(batchMsg{batches: delivery})
	if got, want := d.snap.counts.Pods, 2*one.Counts().Pods; got != want || want == 0 {
		t.Errorf("after one delivery the dashboard shows %d pods, want %d: both clusters'", got, want)
	}
	in := map[string]int{}
	for _, n := range d.snap.nodes {
		in[n.Context]++
	}
	if n := len(one.Nodes(t0)); in["eu"] != n || in["us"] != n {
		t.Errorf("after one delivery the nodes panel has %v nodes per cluster, want %d of each", in, n)
	}
	s := screen(d)
	for _, ctx := range contexts {
		if !strings.Contains(s, "  "+ctx+"  live  pods 19") || !strings.Contains(s, "⚠ SUSPECT "+ctx+"      node-3") {
			t.Errorf("the frame after one delivery lacks %s's header line or suspect node:\n%s", ctx, s)
		}
	}
}
