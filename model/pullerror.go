package model

import (
	"math"
	"time"

	"doomwatch/classify"
	"doomwatch/podrec"
	"doomwatch/sanitize"
)

// The pull error behind a back-off. The kubelet alternates ErrImagePull, whose message is the
// runtime's error (a registry's rate limit, a timeout), with ImagePullBackOff, whose message before
// kubelet v1.32 is only `Back-off pulling image "x"` (kubernetes pkg/kubelet/images/
// image_manager.go pullImage; v1.32 appends the previous error itself). So that the reason keeps
// the cause while the back-off lasts, the model passes classify.PullBackOff the error of the last
// failed pull it saw for the container's image, from either of two places:
//
//   - the container's own ErrImagePull status, remembered per container (memoryPullError) while it
//     waits in the pull states: its message, a string the pod's record already held, and when the
//     model saw it;
//   - the kubelet's Failed event for the pull (`Failed to pull image "x": <error>`, the same error),
//     which the model keeps with the pod's events anyway: all a pod first seen in the back-off
//     (--once, or the dashboard opened mid-incident) has.
//
// The one the model saw later wins. A doom the status's "not found" set stays sticky first
// (stickyNotFound).

// notePullErrors updates the pull-error memory of every container of the pod from its new record;
// prev is the pod's previous record (nil for a pod seen for the first time). A container waiting in
// ErrImagePull has its error remembered, dated now unless prev showed the same status (a resync, or
// an update of another field), which must not make an older error look newer than an event. The
// memory ends when the container leaves the pull states, its image is pulled (an imageID: see
// stickyDoom), or its spec names another image.
func (m *Model) notePullErrors(p *Pod, prev *podrec.Record, now time.Time) {
	var prevInit, prevStatuses []podrec.ContainerStatus
	if prev != nil {
		prevInit, prevStatuses = prev.InitStatuses(), prev.Statuses()
	}
	init, statuses := p.rec.InitStatuses(), p.rec.Statuses()
	for i := range init {
		m.notePullError(p, &init[i], true, prevInit, now)
	}
	for i := range statuses {
		m.notePullError(p, &statuses[i], false, prevStatuses, now)
	}
}

func (m *Model) notePullError(p *Pod, cs *podrec.ContainerStatus, init bool, prev []podrec.ContainerStatus, now time.Time) {
	st := cs.State()
	failed := st.Kind() == podrec.StateWaiting && st.Reason() == reasonErrImagePull && st.Message() != ""
	if !failed && len(p.sticky) == 0 {
		return // the common case: nothing to remember, nothing to forget
	}
	name := sanitize.Text(cs.Name())
	s := p.findMemory(memoryPullError, name, init)
	if !pulling(cs) || cs.ImageID() != "" {
		if s != nil {
			p.dropMemory(memoryPullError, name, init)
		}
		return
	}
	img := specImage(p.rec, name, init)
	if !failed {
		// ImagePullBackOff: the error stays for the back-off, if it was about this image.
		if s != nil && s.image != img {
			p.dropMemory(memoryPullError, name, init)
		}
		return
	}
	msg := sanitize.Text(st.Message())
	if s != nil && s.image == img && s.verdict.Message == msg && showedPullError(prev, cs.Name(), st.Message()) {
		return
	}
	if s == nil {
		p.sticky = append(p.sticky, stickyDoom{kind: memoryPullError, container: name, init: init})
		s = &p.sticky[len(p.sticky)-1]
	}
	s.image, s.verdict.Message, s.seen = img, msg, now.UnixNano()
}

// showedPullError reports whether prev has the container named name waiting in ErrImagePull with
// message msg.
func showedPullError(prev []podrec.ContainerStatus, name, msg string) bool {
	for i := range prev {
		if prev[i].Name() == name {
			st := prev[i].State()
			return st.Kind() == podrec.StateWaiting && st.Reason() == reasonErrImagePull && st.Message() == msg
		}
	}
	return false
}

// applyPullError judges a container in a back-off whose message does not say why with the error of
// its image's last failed pull the model saw, and reports whether it changed the verdict.
func (m *Model) applyPullError(p *Pod, c *classify.ContainerVerdict) bool {
	if c.Rule != classify.RuleImagePullBackOff {
		return false
	}
	img := specImage(p.rec, c.Name, c.Init)
	lastErr, at := "", int64(math.MinInt64)
	if s := p.findMemory(memoryPullError, c.Name, c.Init); s != nil && s.image == img {
		lastErr, at = s.verdict.Message, s.seen
	}
	shown := sanitize.Text(img) // the verdict's strings are sanitised, and so are the events'
	if err, seen, ok := m.pullFailure(p, shown); ok && seen.UnixNano() > at {
		lastErr = err
	}
	var changed bool
	*c, changed = classify.PullBackOff(*c, shown, lastErr)
	return changed
}
