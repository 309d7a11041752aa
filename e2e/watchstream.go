package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// StreamLine is one line of `doomwatch --watch -o json` (docs/json.md: one JSON object per rollout, pod
// and node once synced, then one per change of a verdict, a reason or a suspect call):
//
//	{"time":"RFC3339Nano","type":"rollout","namespace":"","kind":"Deployment","name":"","verdict":"progressing|complete|doomed","reason":""}
//	{"time":"","type":"pod","namespace":"","name":"","node":"","owner":"Deployment/web","verdict":"healthy|completed|progressing|transient|doomed","reason":"","deleted":false}
//	{"time":"","type":"node","name":"","suspect":true,"reason":"why, or \"\""}
type StreamLine struct {
	Time      time.Time `json:"-"`
	TimeText  string    `json:"time"`
	Type      string    `json:"type"`
	Namespace string    `json:"namespace"`
	Kind      string    `json:"kind"`
	Name      string    `json:"name"`
	Node      string    `json:"node"`
	Owner     string    `json:"owner"`
	Verdict   string    `json:"verdict"`
	Reason    string    `json:"reason"`
	Suspect   *bool     `json:"suspect"`
	Deleted   bool      `json:"deleted"`
	// Received is when the runner read it; Raw is the line, ParseErr why it did not parse.
	Received time.Time `json:"-"`
	Raw      string    `json:"-"`
	ParseErr string    `json:"-"`
}

// ParseStreamLine reads one line. Its time is doomwatch's own stamp (the same clock as the
// runner's); a line without one is dated when it was received.
func ParseStreamLine(b []byte, received time.Time) (StreamLine, error) {
	l := StreamLine{Received: received, Raw: string(b)}
	if err := json.Unmarshal(b, &l); err != nil {
		return l, fmt.Errorf("not a JSON object: %w", err)
	}
	switch l.Type {
	case "rollout", "pod", "node":
	default:
		return l, fmt.Errorf("unknown type %q", l.Type)
	}
	l.Time = received
	if l.TimeText != "" {
		t, err := time.Parse(time.RFC3339Nano, l.TimeText)
		if err != nil {
			return l, fmt.Errorf("time %q: %w", l.TimeText, err)
		}
		l.Time = t
	}
	return l, nil
}

// StreamResult is what the verdict stream said about a scenario after its trigger.
type StreamResult struct {
	// Err is set when the stream broke: a line that did not parse, or doomwatch exiting on its
	// own.
	Err   error
	Lines int
	// First is the target's first verdict that ends a rollout (complete or doomed), at FirstAt;
	// Final its last verdict.
	First   string
	FirstAt time.Time
	Final   string
	// DoomedAt is when the target was first called doomed (zero if never).
	DoomedAt time.Time
	// Flips counts the target going from doomed back to progressing or complete; PodFlips a pod
	// going from doomed to any other verdict while it still exists.
	Flips, PodFlips int
	// DoomedPods counts the pods doomed at some moment.
	DoomedPods int
	// Suspects are the scenario's nodes (as the scenario names them) called suspect at some
	// moment, with the first why.
	Suspects   []string
	SuspectWhy map[string]string
	// Excerpt is the target's lines and the first doomed pods' and suspect nodes' lines, for
	// a report of a disagreement.
	Excerpt []string
}

// rolloutKinds maps kubectl's resource to the stream's kind.
var rolloutKinds = map[string]string{"deployment": "Deployment", "statefulset": "StatefulSet", "daemonset": "DaemonSet", "job": "Job", "rollout": "Rollout"}

// analyseStream reads a scenario's stream. Only lines from the trigger on count: before it the
// stream shows the setup's rollout, complete.
func analyseStream(lines []StreamLine, s *Scenario, trigger time.Time, streamErr error) StreamResult {
	r := StreamResult{Err: streamErr, Lines: len(lines), SuspectWhy: map[string]string{}}
	kind, name, _ := s.target()
	ns := s.Namespace()
	target := func(l *StreamLine) bool {
		return l.Type == "rollout" && l.Namespace == ns && l.Kind == rolloutKinds[kind] && l.Name == name
	}
	jobOwner := "Job/" + name
	pods := map[string]string{} // pod name → latest verdict, for a Job's verdict and the flips
	jobPods := map[string]bool{}
	everDoomed := map[string]bool{}
	jobVerdict := ""
	var doomedExcerpts, nodeExcerpts int
	for i := range lines {
		l := &lines[i]
		if l.ParseErr != "" {
			if r.Err == nil {
				r.Err = fmt.Errorf("stream line %q: %s", l.Raw, l.ParseErr)
			}
			continue
		}
		after := !l.Time.Before(trigger)
		switch {
		case l.Type == "pod" && l.Namespace == ns:
			prev := pods[l.Name]
			if l.Deleted {
				delete(pods, l.Name)
			} else {
				pods[l.Name] = l.Verdict
				if after && prev == "doomed" && l.Verdict != "doomed" {
					r.PodFlips++
					r.Excerpt = append(r.Excerpt, excerpt(l, trigger))
				}
				if after && l.Verdict == "doomed" && !everDoomed[l.Name] {
					everDoomed[l.Name] = true
					if doomedExcerpts < 3 {
						doomedExcerpts++
						r.Excerpt = append(r.Excerpt, excerpt(l, trigger))
					}
				}
			}
			if kind == "job" && l.Owner == jobOwner {
				jobPods[l.Name] = true
			}
			if kind == "job" && l.Owner == jobOwner && after {
				if v := jobVerdictOf(pods, jobPods); v != jobVerdict {
					jobVerdict = v
					r.observe(v, l.Time, "job/"+name+": "+v+" (from its pods)", trigger)
				}
			}
		case target(l) && after:
			r.Excerpt = append(r.Excerpt, excerpt(l, trigger))
			r.observe(l.Verdict, l.Time, "", trigger)
		case l.Type == "node" && l.Suspect != nil && *l.Suspect && after:
			short, ok := strings.CutPrefix(l.Name, s.Name+"-")
			if !ok {
				continue
			}
			if _, seen := r.SuspectWhy[short]; !seen {
				r.SuspectWhy[short] = l.Reason
				r.Suspects = append(r.Suspects, short)
				if nodeExcerpts < 3 {
					nodeExcerpts++
					r.Excerpt = append(r.Excerpt, excerpt(l, trigger))
				}
			}
		}
	}
	r.DoomedPods = len(everDoomed)
	sort.Strings(r.Suspects)
	return r
}

// observe records one verdict of the target.
func (r *StreamResult) observe(v string, at time.Time, note string, trigger time.Time) {
	if note != "" {
		r.Excerpt = append(r.Excerpt, fmt.Sprintf("+%s %s", at.Sub(trigger).Round(100*time.Millisecond), note))
	}
	if r.Final == "doomed" && v != "doomed" {
		r.Flips++
	}
	r.Final = v
	if v == "doomed" && r.DoomedAt.IsZero() {
		r.DoomedAt = at
	}
	if (v == "doomed" || v == "complete") && r.First == "" {
		r.First, r.FirstAt = v, at
	}
}

// jobVerdictOf judges a Job by its pods in the stream, the rule the scenarios use for a Job
// (doomwatch has no rollout line for one): doomed when any of its pods is doomed, complete when
// it has pods and all are completed, else progressing.
func jobVerdictOf(pods map[string]string, owned map[string]bool) string {
	n, completed := 0, 0
	for p, v := range pods {
		if !owned[p] {
			continue
		}
		n++
		switch v {
		case "doomed":
			return "doomed"
		case "completed":
			completed++
		}
	}
	if n > 0 && completed == n {
		return "complete"
	}
	return "progressing"
}

// excerpt is a line as the report quotes it: its time after the trigger and its fields.
func excerpt(l *StreamLine, trigger time.Time) string {
	at := l.Time.Sub(trigger).Round(100 * time.Millisecond)
	reason := l.Reason
	if len(reason) > 160 {
		reason = reason[:157] + "..."
	}
	switch l.Type {
	case "node":
		return fmt.Sprintf("+%s node %s suspect: %s", at, l.Name, reason)
	case "pod":
		del := ""
		if l.Deleted {
			del = " (deleted)"
		}
		return fmt.Sprintf("+%s pod %s on %s: %s: %s%s", at, l.Name, l.Node, l.Verdict, reason, del)
	}
	return fmt.Sprintf("+%s %s/%s: %s: %s", at, strings.ToLower(l.Kind), l.Name, l.Verdict, reason)
}

// sameNodes says whether two node lists name the same nodes.
func sameNodes(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	sort.Strings(a)
	sort.Strings(b)
	return slices.Equal(a, b)
}
