package classify

import (
	"strings"
	"testing"
)

// TestFixturesCiteSources fails when a fixture does not say where its runtime, kubelet, registry,
// scheduler and controller messages come from. Every such message is copied from an upstream issue
// or test, or formatted the way upstream code formats it; a message written to pass a rule hides
// the bug the rule has on real clusters. The annotation test.doomwatch.io/cite names the sources,
// separated by "; " (testdata/README.md).
func TestFixturesCiteSources(t *testing.T) {
	for _, fx := range loadFixtures(t) {
		cite, ok := fx.want["cite"]
		if !ok {
			t.Errorf("%s: missing annotation %scite", fx.file, expectPrefix)
			continue
		}
		if strings.TrimSpace(cite) == "" {
			t.Errorf("%s: annotation %scite is empty", fx.file, expectPrefix)
			continue
		}
		for i, src := range strings.Split(cite, "; ") {
			if strings.TrimSpace(src) == "" {
				t.Errorf("%s: source %d of %scite is empty: %q", fx.file, i+1, expectPrefix, cite)
			}
		}
	}
}
