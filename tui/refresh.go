package tui

import (
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"doomwatch/contract"
	"doomwatch/model"
)

// refreshAll re-reads the model's views after it changed (batch, tick) or the clock moved and
// hands them to every component. The model hands back the same nodes and rollouts while they
// are unchanged, and then the panels remake nothing from them.
func (d *dashboard) refreshAll() tea.Cmd {
	d.c.now, d.c.until = d.opts.Now(), time.Time{}
	d.version = d.m.Version()
	s := &d.snap
	s.health = d.m.Health()
	s.counts = d.m.Counts()
	var until time.Time
	if s.health.Synced {
		d.soak.Prime(d.m.Rollouts(), d.c.now)
	}
	s.rollouts, until = d.soak.Rollouts(d.m.Rollouts(), d.m.Current, d.c.now)
	d.c.note(until)
	s.nodesForbidden = slices.Contains(s.health.Forbidden, contract.KindNode)
	s.nodes = d.m.Nodes(d.c.now)
	d.c.note(d.m.NodesUntil())
	s.share = d.m.SuspectsShare(d.c.now)
	if d.m.Multi() {
		s.clusters = s.clusters[:0]
		for _, c := range d.m.Clusters() {
			s.clusters = append(s.clusters, clusterState{context: c.Context, health: c.Health(), counts: c.Counts()})
		}
		s.spreads = d.m.Spreads()
	}
	if d.opts.Recording != nil {
		note, failing := d.opts.Recording()
		d.header.rec, d.header.recFailing = note, failing
	}
	cmd := d.readPods()
	d.header.Refresh(s)
	for _, p := range d.panels {
		p.Refresh(s)
	}
	if d.showDetail {
		d.pane.Refresh(s)
	}
	d.layout()
	return cmd
}

// refreshPods re-reads the pod view of the query after the query changed.
func (d *dashboard) refreshPods() tea.Cmd {
	cmd := d.readPods()
	d.pods.Refresh(&d.snap)
	return cmd
}

// readPods reads the pod view of the query into the snapshot. The model keeps the view up to
// date, so this is a look-up, except for a query whose view it does not keep yet: a verdict, node
// or owner filter is built here in one pass over the pods; a text filter over many pods is built
// off the UI goroutine (textFilter), and the rows of the previous query stay until it is done.
func (d *dashboard) readPods() tea.Cmd {
	var cmd tea.Cmd
	if d.query != d.shown {
		if d.offThread(d.query) {
			cmd = d.text.want(d, d.query)
		} else {
			d.shown = d.query
			d.text.drop()
		}
	}
	d.snap.pods = d.m.PodView(d.shown)
	d.snap.podsStatus = d.status(d.snap.pods.Len(), d.snap.counts.Pods)
	return cmd
}

// offThread reports whether q's view is built off the UI goroutine.
func (d *dashboard) offThread(q model.Query) bool {
	return strings.TrimSpace(q.Text) != "" && d.m.ViewCost(q) >= d.asyncPods
}
