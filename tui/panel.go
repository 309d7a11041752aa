package tui

import (
	tea "charm.land/bubbletea/v2"

	"doomwatch/contract"
	"doomwatch/model"
)

// panel is one of the views tab cycles through (soft-serve's common.Component): the root holds
// them in a slice (dashboard.panels) and routes to the focused one, so a new panel is a new file
// and one entry in that slice.
type panel interface {
	// SetSize gives the panel its part of the body, title and column header included.
	SetSize(w, h int)
	// Update handles a key the root does not (the list keys, enter), a turn of the wheel, a left
	// click on the panel's line msg.Y, and any message the root does not know. A key that leads
	// elsewhere answers nav (showPodsMsg, openDetailMsg), which the root handles within the same
	// Update; cmd goes to bubbletea.
	Update(msg tea.Msg) (nav tea.Msg, cmd tea.Cmd)
	// View draws the panel in the size SetSize gave; focused says it has the keyboard.
	View(focused bool) string
	// Help is the panel's keys for the footer and `?`, made from the shared KeyMap.
	Help() rankedHelp
	// Refresh shows what the root last read from the model (a batch, a tick, a new query). It
	// may keep s's slices but not change them.
	Refresh(s *snapshot)
}

// pane is a closer look at one thing that covers the body until esc: the pod's detail. The root
// holds them in a slice (dashboard.panes) and offers each message no one else handles to Open,
// so a new pane is a new file, one entry in that slice, and the message that opens it.
type pane interface {
	panel
	// Open shows what msg asks for (openDetailMsg: that pod) and reports whether msg is this
	// pane's; the root then sizes and refreshes it.
	Open(msg tea.Msg) (ok bool, cmd tea.Cmd)
	// Close is called when esc leaves the pane: one that streams stops here.
	Close()
}

// snapshot is what the root last read from the model, for the panels and panes to show. The
// model hands back the very same slices while a view is unchanged (sameSlice), so a panel can
// tell cheaply whether it has anything to remake.
type snapshot struct {
	// m answers look-ups by key (the detail's pod). Only the root changes it, in Update.
	m        *model.Fleet
	health   contract.Health
	counts   model.Counts
	nodes    []model.Node
	rollouts []model.Rollout
	// share says what the suspect nodes have in common that the others do not
	// (model.SuspectsShare), a sentence each; nil when nothing stands out.
	share []string
	// nodesForbidden is set when RBAC forbids listing nodes.
	nodesForbidden bool
	// clusters are each cluster's state with several contexts (nil with one), and spreads the
	// workloads in several clusters with each one's verdict (model.Fleet.Spreads).
	clusters []clusterState
	spreads  []model.Spread
	// pods are the pod table's rows: the view of the query shown (queryBar.shown); podsStatus
	// says what they are ("12 of 5,000 · sort: severity …").
	pods       model.PodView
	podsStatus string
}

// clusterState is one cluster's line in the header of a fleet.
type clusterState struct {
	context string
	health  contract.Health
	counts  model.Counts
}

// sameSlice reports whether a and b are the same slice: the model returns the very same one while
// a view is unchanged.
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
