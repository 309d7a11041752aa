package model

import (
	"doomwatch/classify"
	"doomwatch/podrec"
	"doomwatch/sanitize"
)

// stickyDoom remembers a container that classify doomed because the registry refused its image:
// not found (RuleImageNotFound) or access denied (RuleImageAccessDenied). The kubelet alternates
// ErrImagePull, whose message says why, with ImagePullBackOff, whose message no longer does;
// classify alone would flip the badge between doomed and transient on every back-off. The model
// keeps the container doomed (RuleStickyImageNotFound, for both causes: the reason it carries is
// the original one) through the ImagePullBackOff and ErrImagePull that follow, until the
// container leaves the pull states, its image is pulled, its image changes, or the pod is gone.
//
// Leaving is read from the status, not from seeing the container run: batches coalesce, so the
// model may see the pull error and next a crash loop or a completed container, never the running
// state in between. Any state other than waiting in ErrImagePull or ImagePullBackOff ends it, and
// so does an imageID: the kubelet reports one only for a container the runtime created, from an
// image it had pulled (kubernetes pkg/kubelet/kubelet_pods.go, convertToAPIContainerStatuses).
//
// The same per-container memory keeps the other things the model must remember across updates of
// a container: its first back-off after a start failure (memoryBackOff, backoff.go) and the error
// of its last failed pull while the kubelet backs off (memoryPullError, pullerror.go).
//
// A pod keeps no entry at all (a nil slice) unless one of its containers is in one of these states;
// an entry is 120 bytes and points at strings the pod's record or verdict already holds.
type stickyDoom struct {
	kind      memoryKind
	init      bool
	restarts  int32 // memoryBackOff: the restart count at the first back-off
	container string
	image     string
	// verdict is memoryPull's doomed verdict; memoryPullError keeps only its Message, the pull's
	// error as the ErrImagePull status said it (sanitised).
	verdict classify.Verdict
	seen    int64 // memoryPullError: when the model saw that status (the batch's time, Unix ns)
}

// memoryKind says what a stickyDoom entry remembers.
type memoryKind uint8

const (
	memoryPull      memoryKind = iota // a registry refused the image (sticky doom)
	memoryBackOff                     // the first back-off after a start failure on the node
	memoryPullError                   // the last pull error, for the back-off that follows it
)

// The kubelet's waiting reasons while it pulls an image (kubernetes pkg/kubelet/images/types.go,
// ErrImagePull and ErrImagePullBackOff).
const (
	reasonErrImagePull     = "ErrImagePull"
	reasonImagePullBackOff = "ImagePullBackOff"
)

// applySticky applies what the model remembers of one container's image pulls to its verdict:
// sticky doom after a registry refused the image, else the last pull error for a back-off whose
// message does not say it (applyPullError). It reports whether it changed the verdict.
func (m *Model) applySticky(p *Pod, c *classify.ContainerVerdict) bool {
	if m.stickyNotFound(p, c) {
		return true
	}
	return m.applyPullError(p, c)
}

// stickyNotFound records or applies sticky doom for one container verdict and reports whether it
// promoted the verdict.
func (m *Model) stickyNotFound(p *Pod, c *classify.ContainerVerdict) bool {
	switch c.Rule {
	case classify.RuleImageNotFound, classify.RuleImageAccessDenied:
		img := specImage(p.rec, c.Name, c.Init)
		if s := p.findMemory(memoryPull, c.Name, c.Init); s != nil {
			s.image, s.verdict = img, c.Verdict
		} else {
			p.sticky = append(p.sticky, stickyDoom{kind: memoryPull, container: c.Name, init: c.Init, image: img, verdict: c.Verdict})
		}
		return false
	}
	if len(p.sticky) == 0 {
		return false
	}
	s := p.findMemory(memoryPull, c.Name, c.Init)
	if s == nil {
		return false
	}
	st := containerStatus(p.rec, c.Name, c.Init)
	if st == nil {
		return false // no status says anything new
	}
	if !pulling(st) || st.ImageID() != "" || s.image != specImage(p.rec, c.Name, c.Init) {
		p.dropMemory(memoryPull, c.Name, c.Init)
		return false
	}
	var promoted bool
	*c, promoted = classify.StillNotFound(*c, s.verdict)
	return promoted
}

// pulling reports whether the container waits in one of the kubelet's pull states.
func pulling(st *podrec.ContainerStatus) bool {
	w := st.State()
	return w.Kind() == podrec.StateWaiting && (w.Reason() == reasonErrImagePull || w.Reason() == reasonImagePullBackOff)
}

func (p *Pod) findMemory(kind memoryKind, name string, init bool) *stickyDoom {
	for i := range p.sticky {
		if p.sticky[i].kind == kind && p.sticky[i].container == name && p.sticky[i].init == init {
			return &p.sticky[i]
		}
	}
	return nil
}

func (p *Pod) dropMemory(kind memoryKind, name string, init bool) {
	for i := range p.sticky {
		if p.sticky[i].kind == kind && p.sticky[i].container == name && p.sticky[i].init == init {
			p.sticky = append(p.sticky[:i], p.sticky[i+1:]...)
			if len(p.sticky) == 0 {
				p.sticky = nil
			}
			return
		}
	}
}

// specImage returns the image r's spec asks for (the sanitised name is compared, so both sides
// are sanitised).
func specImage(r *podrec.Record, name string, init bool) string {
	cs := r.Containers()
	if init {
		cs = r.InitContainers()
	}
	for i := range cs {
		if sanitize.Text(cs[i].Name) == name {
			return cs[i].Image
		}
	}
	return ""
}

// containerStatus finds a container's status in r by (sanitised) name.
func containerStatus(r *podrec.Record, name string, init bool) *podrec.ContainerStatus {
	ss := r.Statuses()
	if init {
		ss = r.InitStatuses()
	}
	for i := range ss {
		if sanitize.Text(ss[i].Name()) == name {
			return &ss[i]
		}
	}
	return nil
}
