package model

import (
	"testing"
	"time"

	"doomwatch/classify"
)

// soakRollout is deployment shop/NAME with verdict v and doomed of its 4 new pods doomed.
func soakRollout(name string, v classify.RolloutClass, doomed int) Rollout {
	r := Rollout{Namespace: "shop", Kind: "Deployment", Name: name, Verdict: v, Reason: "kubectl's", NewPods: 4, NewDoomed: doomed}
	if doomed > 0 {
		r.DoomReason = "Crashing repeatedly (exit 1, 1 restart), restarting after the kubelet's back-off"
	}
	return r
}

// TestSoakLook: a complete rollout has held once it has stayed complete for the window; a doomed
// new pod within the window sours it, and the doom stands while the pod does, past the window too;
// after the window a new doomed pod does not sour it; doomed pods the rollout tolerates do not.
func TestSoakLook(t *testing.T) {
	type look struct {
		at     time.Duration
		v      classify.RolloutClass
		doomed int
		want   string // "", "held" or "soured"
	}
	for _, tc := range []struct {
		name      string
		tolerates int
		looks     []look
	}{
		{"held after the window", 0, []look{
			{0, classify.RolloutComplete, 0, ""}, {59 * time.Second, classify.RolloutComplete, 0, ""},
			{time.Minute, classify.RolloutComplete, 0, "held"},
		}},
		{"soured in the window, and still after it while the pod is doomed", 0, []look{
			{0, classify.RolloutComplete, 0, ""}, {7 * time.Second, classify.RolloutComplete, 1, "soured"},
			{2 * time.Minute, classify.RolloutComplete, 1, "soured"},
			{3 * time.Minute, classify.RolloutComplete, 0, "held"},
		}},
		{"a doomed pod after the window does not sour it", 0, []look{
			{0, classify.RolloutComplete, 0, ""}, {time.Minute, classify.RolloutComplete, 0, "held"},
			{2 * time.Minute, classify.RolloutComplete, 1, "held"},
		}},
		{"fallen back to progressing, still in the window", 0, []look{
			{0, classify.RolloutComplete, 0, ""}, {2 * time.Second, classify.RolloutProgressing, 0, ""},
			{7 * time.Second, classify.RolloutProgressing, 1, "soured"},
		}},
		{"doomed before completing is the rollout's to judge", 0, []look{
			{0, classify.RolloutProgressing, 1, ""},
		}},
		{"tolerated by its required rollout", 1, []look{
			{0, classify.RolloutComplete, 1, ""}, {time.Minute, classify.RolloutComplete, 1, "held"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSoak(time.Minute)
			for _, l := range tc.looks {
				r := soakRollout("web", l.v, l.doomed)
				r.Tolerates = tc.tolerates
				got := s.Look("shop/web", &r, t0.Add(l.at))
				state := ""
				switch {
				case got.Soured:
					state = "soured"
					if r.Verdict != classify.RolloutDoomed || r.Reason != "1/4 new pods doomed after the rollout completed (--stable 1m): "+r.DoomReason {
						t.Errorf("+%s: soured as %s %q", l.at, r.Verdict, r.Reason)
					}
				case got.Done:
					state = "held"
				}
				if state != l.want {
					t.Fatalf("+%s %s with %d doomed: %q, want %q", l.at, l.v, l.doomed, state, l.want)
				}
			}
		})
	}
	// Without a window a complete rollout has held at once, and a doomed pod does not sour it.
	s := NewSoak(0)
	r := soakRollout("web", classify.RolloutComplete, 1)
	if got := s.Look("shop/web", &r, t0); !got.Done || got.Soured || r.Verdict != classify.RolloutComplete {
		t.Errorf("without a window: %+v, %s", got, r.Verdict)
	}
}

// TestSoakRollouts: the dashboard's rollouts under the window: a complete one in it says how long
// it has held and when that next changes, a soured one is doomed and comes first, and outside any
// window the model's slice itself comes back.
func TestSoakRollouts(t *testing.T) {
	s := NewSoak(time.Minute)
	rs := []Rollout{soakRollout("api", classify.RolloutProgressing, 0), soakRollout("web", classify.RolloutComplete, 0)}
	out, until := s.Rollouts(rs, asListed, t0)
	if out[1].Reason != "complete, stable for 0s of 1m" || !until.Equal(t0.Add(time.Second)) || rs[1].Reason != "kubectl's" {
		t.Fatalf("in the window: %q until %s; the model's %q", out[1].Reason, until, rs[1].Reason)
	}
	out, _ = s.Rollouts(rs, asListed, t0.Add(12500*time.Millisecond))
	if out[1].Reason != "complete, stable for 12s of 1m" {
		t.Errorf("12.5s in: %q", out[1].Reason)
	}
	rs[1] = soakRollout("web", classify.RolloutComplete, 1)
	out, _ = s.Rollouts(rs, asListed, t0.Add(20*time.Second))
	if out[0].Name != "web" || out[0].Verdict != classify.RolloutDoomed {
		t.Errorf("soured: %+v first", out[0])
	}
	rs[1] = soakRollout("web", classify.RolloutComplete, 0)
	s.Rollouts(rs, asListed, t0.Add(time.Minute))
	if out, until = s.Rollouts(rs, asListed, t0.Add(2*time.Minute)); &out[0] != &rs[0] || !until.IsZero() {
		t.Errorf("out of every window: a copy, or until %s", until)
	}
	if out, _ := NewSoak(0).Rollouts(rs, asListed, t0); &out[0] != &rs[0] {
		t.Errorf("without a window: a copy")
	}
	// A rollout gone is forgotten.
	s.Rollouts(rs[:1], asListed, t0.Add(3*time.Minute))
	if _, ok := s.since["/shop/Deployment/web"]; ok || len(s.settled)+len(s.soured) != 0 {
		t.Errorf("a rollout gone is remembered: %v %v %v", s.since, s.settled, s.soured)
	}
}

// asListed is Fleet.Current for a list whose counts are current.
func asListed(r *Rollout) (Rollout, bool) { return *r, true }

// TestSoakGateAndRevisions: a gate's window keeps judging a rollout that has held while the wait
// runs; a new revision (another new ReplicaSet) starts a window afresh; Prime takes what was
// complete before the dashboard watched as having held.
func TestSoakGateAndRevisions(t *testing.T) {
	s := NewSoak(time.Minute)
	s.Gate = true
	r := soakRollout("web", classify.RolloutComplete, 0)
	s.Look("shop/web", &r, t0)
	s.Look("shop/web", &r, t0.Add(time.Minute))
	r = soakRollout("web", classify.RolloutComplete, 1)
	if got := s.Look("shop/web", &r, t0.Add(90*time.Second)); !got.Soured {
		t.Errorf("a gate's rollout that has held, then a doomed pod: %+v", got)
	}

	d := NewSoak(time.Minute)
	r = soakRollout("web", classify.RolloutComplete, 0)
	r.NewReplicaSet = "web-1"
	d.Look("shop/web", &r, t0)
	r = soakRollout("web", classify.RolloutProgressing, 1)
	r.NewReplicaSet = "web-2" // a new rollout: its doomed pod is its rollout's to judge
	if got := d.Look("shop/web", &r, t0.Add(10*time.Second)); got.Soured {
		t.Errorf("a new revision soured by the window of the one before: %+v", got)
	}

	p := NewSoak(time.Minute)
	rs := []Rollout{soakRollout("web", classify.RolloutComplete, 0)}
	p.Prime(rs, t0)
	if out, _ := p.Rollouts(rs, asListed, t0.Add(time.Second)); out[0].Reason != "kubectl's" {
		t.Errorf("complete before the dashboard watched: %q", out[0].Reason)
	}
}
