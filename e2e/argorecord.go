package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"
)

// RolloutStatus is the part of an argoproj.io/v1alpha1 Rollout's status the tests read, with the
// field types of pkg/apis/rollouts/v1alpha1/types.go (RolloutStatus): observedGeneration is a
// string there, not an integer.
type RolloutStatus struct {
	Phase              string                   `json:"phase"`
	Message            string                   `json:"message"`
	ObservedGeneration string                   `json:"observedGeneration"`
	CurrentPodHash     string                   `json:"currentPodHash"`
	StableRS           string                   `json:"stableRS"`
	CurrentStepIndex   *int32                   `json:"currentStepIndex"`
	Abort              bool                     `json:"abort"`
	AbortedAt          string                   `json:"abortedAt"`
	ControllerPause    bool                     `json:"controllerPause"`
	PauseConditions    []RolloutPauseCondition  `json:"pauseConditions"`
	Conditions         []RolloutConditionStatus `json:"conditions"`
	Canary             struct {
		CurrentStepHash string `json:"currentStepHash"`
	} `json:"canary"`
	Replicas          int32 `json:"replicas"`
	UpdatedReplicas   int32 `json:"updatedReplicas"`
	ReadyReplicas     int32 `json:"readyReplicas"`
	AvailableReplicas int32 `json:"availableReplicas"`
}

// RolloutPauseCondition is one of status.pauseConditions.
type RolloutPauseCondition struct {
	Reason    string `json:"reason"`
	StartTime string `json:"startTime"`
}

// RolloutConditionStatus is one of status.conditions.
type RolloutConditionStatus struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Condition returns the condition of type t, or nil.
func (s RolloutStatus) Condition(t string) *RolloutConditionStatus {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// RolloutSnapshot is one Rollout as a watch delivered it.
type RolloutSnapshot struct {
	// At is when the watch delivered it.
	At         time.Time
	Generation int64
	Status     RolloutStatus
	// Object is the whole Rollout, managedFields left out.
	Object *unstructured.Unstructured
}

// Observed says whether the controller has seen the Rollout's current spec: its phase means
// nothing before (utils/rollout/rolloututil.go GetRolloutPhase, isGenerationObserved).
func (s RolloutSnapshot) Observed() bool {
	return s.Status.ObservedGeneration == fmt.Sprint(s.Generation)
}

// String is the snapshot in one line, for the test log.
func (s RolloutSnapshot) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gen %d observed %q phase %q", s.Generation, s.Status.ObservedGeneration, s.Status.Phase)
	if s.Status.Message != "" {
		fmt.Fprintf(&b, " (%s)", s.Status.Message)
	}
	if s.Status.CurrentStepIndex != nil {
		fmt.Fprintf(&b, " step %d", *s.Status.CurrentStepIndex)
	}
	fmt.Fprintf(&b, " replicas %d/%d/%d updated/ready/available of %d", s.Status.UpdatedReplicas, s.Status.ReadyReplicas, s.Status.AvailableReplicas, s.Status.Replicas)
	for _, p := range s.Status.PauseConditions {
		fmt.Fprintf(&b, " pause:%s", p.Reason)
	}
	if s.Status.Abort {
		b.WriteString(" abort")
	}
	if c := s.Status.Condition("Progressing"); c != nil {
		fmt.Fprintf(&b, " Progressing=%s/%s", c.Status, c.Reason)
	}
	return b.String()
}

// RolloutRecorder keeps every distinct status a Rollout goes through, from a watch.
type RolloutRecorder struct {
	cp        *ControlPlane
	ns, name  string
	mu        sync.Mutex
	snaps     []RolloutSnapshot
	changed   chan struct{} // closed, and replaced, at each new snapshot
	watchErrs []error
}

// RecordRollout watches the Rollout ns/name (which need not exist yet) until ctx ends.
func (cp *ControlPlane) RecordRollout(ctx context.Context, ns, name string) *RolloutRecorder {
	r := &RolloutRecorder{cp: cp, ns: ns, name: name, changed: make(chan struct{})}
	go r.run(ctx)
	return r
}

func (r *RolloutRecorder) run(ctx context.Context) {
	res := r.cp.Dynamic.Resource(RolloutGVR).Namespace(r.ns)
	rv := ""
	for ctx.Err() == nil {
		// From rv on, so that no status is missed between watches; "" starts with the
		// current object.
		w, err := res.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + r.name, ResourceVersion: rv})
		if err != nil {
			r.mu.Lock()
			r.watchErrs = append(r.watchErrs, err)
			r.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				rv = "" // expired: start again from the current object
				break
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			rv = u.GetResourceVersion()
			if ev.Type == watch.Added || ev.Type == watch.Modified {
				r.add(u)
			}
		}
		w.Stop()
	}
}

// add keeps u when its generation or status differs from the last snapshot's: the controller
// also writes annotations, which change neither.
func (r *RolloutRecorder) add(u *unstructured.Unstructured) {
	u = u.DeepCopy()
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	var st RolloutStatus
	if raw, ok := u.Object["status"]; ok {
		b, _ := json.Marshal(raw)
		_ = json.Unmarshal(b, &st)
	}
	s := RolloutSnapshot{At: time.Now(), Generation: u.GetGeneration(), Status: st, Object: u}
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.snaps); n > 0 {
		last := r.snaps[n-1]
		if last.Generation == s.Generation && reflect.DeepEqual(last.Object.Object["status"], u.Object["status"]) {
			return
		}
	}
	r.snaps = append(r.snaps, s)
	close(r.changed)
	r.changed = make(chan struct{})
}

// Snapshots returns the snapshots so far.
func (r *RolloutRecorder) Snapshots() []RolloutSnapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]RolloutSnapshot(nil), r.snaps...)
}

// WaitFor returns the first snapshot, from index from on, for which ok holds, and its index; it
// gives up when ctx ends (a test's deadline for the controller), saying what it saw last.
func (r *RolloutRecorder) WaitFor(ctx context.Context, from int, what string, ok func(RolloutSnapshot) bool) (RolloutSnapshot, int, error) {
	for {
		r.mu.Lock()
		for i := from; i < len(r.snaps); i++ {
			if ok(r.snaps[i]) {
				s := r.snaps[i]
				r.mu.Unlock()
				return s, i, nil
			}
		}
		from = max(from, len(r.snaps))
		changed := r.changed
		last := "no snapshot"
		if n := len(r.snaps); n > 0 {
			last = r.snaps[n-1].String()
		}
		errs := r.watchErrs
		r.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return RolloutSnapshot{}, 0, fmt.Errorf("rollout %s/%s: no %s (last: %s; watch errors: %v): %w", r.ns, r.name, what, last, errs, ctx.Err())
		}
	}
}

// WriteRolloutTimeline writes snapshots as a YAML stream, one document per snapshot, each with a
// comment saying when it came relative to zero, after header (comment lines, "# " added).
func WriteRolloutTimeline(header []string, zero time.Time, snaps []RolloutSnapshot) ([]byte, error) {
	var b strings.Builder
	for _, h := range header {
		b.WriteString(strings.TrimRight("# "+h, " ") + "\n")
	}
	for i, s := range snaps {
		if i > 0 {
			b.WriteString("---\n")
		}
		obj := s.Object.DeepCopy()
		// Identity and versions differ on every run and say nothing about the status.
		for _, f := range []string{"uid", "resourceVersion"} {
			unstructured.RemoveNestedField(obj.Object, "metadata", f)
		}
		y, err := yaml.Marshal(obj.Object)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "# %+.1fs: %s\n", s.At.Sub(zero).Seconds(), s.String())
		b.Write(y)
	}
	return []byte(b.String()), nil
}
