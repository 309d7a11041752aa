package classify

import (
	"math/rand/v2"
	"testing"
	"time"

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
