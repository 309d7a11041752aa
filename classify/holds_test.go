package classify

import (
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// TestHumanDurationHolds: HumanDuration's text of d is the same until d has grown by
// HumanDurationHolds(d), and for d ≥ 0 changes then. A frame drawn with ages is redrawn no later
// than its first age changes.
func TestHumanDurationHolds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ds := []time.Duration{-3 * time.Second, -1500 * time.Millisecond, -time.Millisecond, 0, 119 * time.Second,
		2 * time.Minute, 10*time.Minute - time.Nanosecond, 10 * time.Minute, 3*time.Hour - time.Second, 8 * time.Hour,
		48*time.Hour - time.Second, 8 * 24 * time.Hour, 2 * 365 * 24 * time.Hour, 9 * 365 * 24 * time.Hour}
	for range 20000 {
		ds = append(ds, time.Duration(r.Int64N(int64(3*365*24*time.Hour))))
	}
	for _, d := range ds {
		h := HumanDurationHolds(d)
		if h <= 0 {
			t.Fatalf("HumanDurationHolds(%v) = %v, want > 0", d, h)
		}
		text := duration.HumanDuration(d)
		for _, x := range []time.Duration{0, h / 2, h - time.Nanosecond} {
			if got := duration.HumanDuration(d + x); got != text {
				t.Fatalf("HumanDuration(%v) = %q but HumanDuration(%v + %v) = %q, before HumanDurationHolds (%v)", d, text, d, x, got, h)
			}
		}
		if d >= 0 && duration.HumanDuration(d+h) == text {
			t.Fatalf("HumanDuration(%v + HumanDurationHolds %v) is still %q", d, h, text)
		}
	}
}

// ColumnsUntil's RESTARTS "(60s ago)" reads the same until restartsUntil, and differently then.
func TestColumnsUntilRestarts(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	pod := &corev1.Pod{
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "app", RestartCount: 3,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1,
				FinishedAt: metav1.NewTime(now.Add(-60*time.Second - 300*time.Millisecond))}}}}},
	}
	_, _, restarts, until := ColumnsUntil(pod, now)
	if restarts != "3 (60s ago)" || !until.Equal(now.Add(700*time.Millisecond)) {
		t.Fatalf("ColumnsUntil = %q until %v, want \"3 (60s ago)\" until +700ms", restarts, until.Sub(now))
	}
	if _, _, r, _ := ColumnsUntil(pod, until.Add(-time.Nanosecond)); r != restarts {
		t.Errorf("just before until RESTARTS reads %q, want %q", r, restarts)
	}
	if _, _, r, _ := ColumnsUntil(pod, until); r == restarts {
		t.Errorf("at until RESTARTS still reads %q", r)
	}
	pod.Status.ContainerStatuses[0].RestartCount = 0
	if _, _, _, u := ColumnsUntil(pod, now); !u.IsZero() {
		t.Errorf("no restarts: until %v, want zero", u)
	}
}
