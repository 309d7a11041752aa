package tui

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify"
	"doomwatch/model"
)

// The pod table's columns, in display order.
const (
	colNamespace = iota
	colName
	colReady
	colStatus
	colRestarts
	colNode
	colAge
	colVerdict
	colState
	colLastState
	colExit
	colReason
	numCols
)

var colTitles = [numCols]string{"NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "NODE", "AGE",
	"VERDICT", "STATE", "LAST STATE", "EXIT", "REASON"}

// colMax caps each column's width; REASON takes whatever is left.
var colMax = [numCols]int{16, 40, 5, 20, 14, 16, 5, 13, 26, 30, 4, 0}

// reasonMin is the narrowest REASON worth showing; reasonKeep is how much of it the less useful
// columns may not take away.
const (
	reasonMin  = 12
	reasonKeep = 40
)

// colPriority lists the columns most useful first: when the terminal is narrow the columns at the
// end go first. The verdict, its reason and the node (start failures cluster by node) answer
// "is this rollout doomed, why and where", so at 80 columns they stay and kubectl's STATUS, which
// the reason restates, goes; the raw container states repeat the reason too.
var colPriority = [numCols]int{colName, colVerdict, colNode, colReason, colStatus, colReady,
	colRestarts, colAge, colNamespace, colExit, colLastState, colState}

// rowCells formats one pod's cells. Only rows on screen are formatted (the table is virtualised),
// so this runs at most a screenful of times per frame.
func rowCells(p *model.Pod, c *common, out *[numCols]string) {
	out[colNamespace] = p.Namespace
	out[colName] = p.Name
	out[colNode] = p.Node
	out[colAge] = age(p.Created, c.now)
	out[colVerdict] = badgeText(p.Verdict.Kind)
	out[colReason] = p.Verdict.Reason
	out[colReady], out[colStatus], out[colRestarts] = "", "", ""
	out[colState], out[colLastState], out[colExit] = "", "", ""
	if rec := p.Record(); rec != nil {
		// One printPod pass for the three; READY and RESTARTS are built from numbers, STATUS
		// may carry a container's reason, which is object text.
		obj := c.scratch.Pod(rec)
		ready, status, restarts := classify.Columns(obj, c.now)
		out[colReady], out[colStatus], out[colRestarts] = ready, model.Sanitize(status), restarts
		if cs := decidingStatus(p, obj); cs != nil {
			out[colState] = stateSummary(cs.State)
			out[colLastState] = stateSummary(cs.LastTerminationState)
			if t := cs.LastTerminationState.Terminated; t != nil {
				out[colExit] = strconv.Itoa(int(t.ExitCode))
			}
			if t := cs.State.Terminated; t != nil {
				out[colExit] = strconv.Itoa(int(t.ExitCode))
			}
		}
	}
	if p.Verdict.HasExitCode {
		out[colExit] = strconv.Itoa(int(p.Verdict.ExitCode))
	}
}

// decidingStatus is the status of the container that decided the pod's verdict, or of the first
// container when the pod itself decided; obj is the pod rebuilt from its record.
func decidingStatus(p *model.Pod, obj *corev1.Pod) *corev1.ContainerStatus {
	if name := p.Verdict.Container; name != "" {
		if cs := model.ContainerStatusOf(obj, name, p.Verdict.Init); cs != nil {
			return cs
		}
	}
	if st := &obj.Status; len(st.ContainerStatuses) > 0 {
		return &st.ContainerStatuses[0]
	}
	return nil
}

// stateSummary is a container state in a few words: "waiting CrashLoopBackOff".
func stateSummary(s corev1.ContainerState) string {
	switch {
	case s.Waiting != nil:
		return "waiting " + model.Sanitize(s.Waiting.Reason)
	case s.Running != nil:
		return "running"
	case s.Terminated != nil:
		return "terminated " + model.Sanitize(s.Terminated.Reason)
	}
	return ""
}
