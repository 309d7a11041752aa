package classify

import (
	"testing"
	"time"
)

// TestTimeoutOverride: the values Krane's DurationParser and its validation take and refuse.
func TestTimeoutOverride(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  time.Duration
	}{
		{"1H", time.Hour}, {"1h", time.Hour}, {"PT1H", time.Hour}, {" 90s ", 90 * time.Second},
		{"5M", 5 * time.Minute}, {"1h30m", 90 * time.Minute}, {"PT1.5S", time.Second},
		{"P1D", 24 * time.Hour}, {"PT24H", 24 * time.Hour}, {"1S", time.Second},
	} {
		if got, err := TimeoutOverride(tc.value); err != nil || got != tc.want {
			t.Errorf("%q: %s, %v; want %s", tc.value, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "5 minutes", "PT", "P", "M5", "P1DT1S", "0.5S", "P1Y", "P1M", "1X", "PT25H", "5m\nx"} {
		if got, err := TimeoutOverride(bad); err == nil {
			t.Errorf("%q: %s, want an error", bad, got)
		}
	}
}
