package model

import (
	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify"
)

// stickyDoom remembers a container that classify doomed because its image was not found
// (RuleImageNotFound). The kubelet alternates ErrImagePull ("... not found") with ImagePullBackOff,
// whose message no longer says why; classify alone would flip the badge between doomed and
// transient on every back-off. The model keeps the container doomed (RuleStickyImageNotFound)
// through the ImagePullBackOff and ErrImagePull that follow, until the container runs, its image
// changes, or the pod is gone.
type stickyDoom struct {
	container string
	init      bool
	image     string
	verdict   classify.Verdict
}

// applySticky records or applies sticky doom for one container verdict and reports whether it
// promoted the verdict.
func (m *Model) applySticky(p *Pod, c *classify.ContainerVerdict) bool {
	switch c.Rule {
	case classify.RuleImageNotFound:
		img := specImage(p.Object, c.Name, c.Init)
		if s := p.findSticky(c.Name, c.Init); s != nil {
			s.image, s.verdict = img, c.Verdict
		} else {
			p.sticky = append(p.sticky, stickyDoom{container: c.Name, init: c.Init, image: img, verdict: c.Verdict})
		}
		return false
	case classify.RuleImagePullBackOff, classify.RuleImagePull:
		s := p.findSticky(c.Name, c.Init)
		if s == nil {
			return false
		}
		if s.image != specImage(p.Object, c.Name, c.Init) {
			p.dropSticky(c.Name, c.Init)
			return false
		}
		c.Verdict = classify.Verdict{
			Kind:      classify.Doomed,
			Rule:      classify.RuleStickyImageNotFound,
			Reason:    s.verdict.Reason,
			Message:   s.verdict.Message,
			Source:    classify.FromState,
			Container: c.Name,
			Init:      c.Init,
		}
		return true
	}
	if len(p.sticky) > 0 && running(p.Object, c.Name, c.Init) {
		p.dropSticky(c.Name, c.Init)
	}
	return false
}

func (p *Pod) findSticky(name string, init bool) *stickyDoom {
	for i := range p.sticky {
		if p.sticky[i].container == name && p.sticky[i].init == init {
			return &p.sticky[i]
		}
	}
	return nil
}

func (p *Pod) dropSticky(name string, init bool) {
	for i := range p.sticky {
		if p.sticky[i].container == name && p.sticky[i].init == init {
			p.sticky = append(p.sticky[:i], p.sticky[i+1:]...)
			if len(p.sticky) == 0 {
				p.sticky = nil
			}
			return
		}
	}
}

// specImage returns the image the spec asks for (the sanitised name is compared, so both sides
// are sanitised).
func specImage(pod *corev1.Pod, name string, init bool) string {
	cs := pod.Spec.Containers
	if init {
		cs = pod.Spec.InitContainers
	}
	for i := range cs {
		if Sanitize(cs[i].Name) == name {
			return cs[i].Image
		}
	}
	return ""
}

// running reports whether the container's current state is running.
func running(pod *corev1.Pod, name string, init bool) bool {
	st := containerStatus(pod, name, init)
	return st != nil && st.State.Running != nil
}

// containerStatus finds a container's status by (sanitised) name.
func containerStatus(pod *corev1.Pod, name string, init bool) *corev1.ContainerStatus {
	ss := pod.Status.ContainerStatuses
	if init {
		ss = pod.Status.InitContainerStatuses
	}
	for i := range ss {
		if Sanitize(ss[i].Name) == name {
			return &ss[i]
		}
	}
	return nil
}
