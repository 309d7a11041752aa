package classify

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// TimeoutOverride reads the value of Krane's per-resource timeout (contract.TimeoutAnnotation,
// krane.shopify.io/timeout-override) as Krane does (lib/krane/duration_parser.rb, and
// kubernetes_resource.rb's validation): case-insensitive, first as the time portion of an ISO8601
// duration ("5M", "1h30m", "90S"), else as a whole one ("PT5M", "P1DT2H" is over the limit); then
// above 0 and at most 24 hours, in whole seconds. The error is one line.
func TimeoutOverride(value string) (time.Duration, error) {
	d, err := KraneDuration(value)
	if err != nil {
		return 0, err
	}
	// Krane's validate_timeout_annotation refuses 0 and over 24 hours, and its timeout is the
	// value's whole seconds (to_i); under a second, where Krane would time out at once, is refused.
	switch {
	case d <= 0:
		return 0, fmt.Errorf("%q: Value must be greater than 0", oneLine(value))
	case d > 24*time.Hour:
		return 0, fmt.Errorf("%q: Value must be less than 24h", oneLine(value))
	case d < time.Second:
		return 0, fmt.Errorf("%q: Value must be at least 1 second (Krane would time out at once)", oneLine(value))
	}
	return d.Truncate(time.Second), nil
}

// KraneDuration reads a duration as Krane's DurationParser does (lib/krane/duration_parser.rb):
// case-insensitive, first as the time portion of an ISO8601 duration ("5M", "1h30m", "90S"), else as
// a whole one ("PT5M", "P1D"), with no bounds: Krane's CRD krane.shopify.io/instance-timeout takes
// it as it is (custom_resource_definition.rb timeout_for_instance). The error is one line.
func KraneDuration(value string) (time.Duration, error) {
	s := strings.ToUpper(strings.TrimSpace(value))
	d, err := iso8601("PT" + s)
	if err != nil {
		d, err = iso8601(s)
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not an ISO8601 duration (e.g. PT5M, or 5M)", oneLine(value))
	}
	return d, nil
}

// iso8601 parses an ISO8601 duration of weeks, days, hours, minutes and seconds ("P1W", "P2DT3H",
// "PT1.5S"); years and months, whose length varies, are refused, as no timeout within 24 hours
// needs them.
func iso8601(s string) (time.Duration, error) {
	rest, ok := strings.CutPrefix(s, "P")
	if !ok || rest == "" {
		return 0, fmt.Errorf("no P")
	}
	date, clock, hasT := strings.Cut(rest, "T")
	if hasT && clock == "" {
		return 0, fmt.Errorf("empty time part")
	}
	var total time.Duration
	for _, part := range []struct {
		text  string
		units map[byte]time.Duration
	}{
		{date, map[byte]time.Duration{'W': 7 * 24 * time.Hour, 'D': 24 * time.Hour}},
		{clock, map[byte]time.Duration{'H': time.Hour, 'M': time.Minute, 'S': time.Second}},
	} {
		t := part.text
		for t != "" {
			i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != ',' })
			if i <= 0 {
				return 0, fmt.Errorf("bad number in %q", t)
			}
			unit, ok := part.units[t[i]]
			if !ok {
				return 0, fmt.Errorf("bad unit %q", t[i])
			}
			n, err := strconv.ParseFloat(strings.ReplaceAll(t[:i], ",", "."), 64)
			if err != nil || n > 1e6 {
				return 0, fmt.Errorf("bad number %q", t[:i])
			}
			total += time.Duration(n * float64(unit))
			t = t[i+1:]
		}
	}
	return total, nil
}
