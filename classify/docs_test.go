package classify

import (
	"os"
	"strings"
	"testing"
)

// TestRulesDocumented keeps RULES.md true to the code: every rule has a row. The README links
// the table rather than copying it, so there is one table to keep.
func TestRulesDocumented(t *testing.T) {
	rules := rulesTable(t, "RULES.md")
	for r := RuleNone + 1; r <= lastRule; r++ {
		if !strings.Contains(rules, "`"+r.String()+"`") {
			t.Errorf("RULES.md has no row for rule %s", r)
		}
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "(classify/RULES.md)") {
		t.Error("README.md does not link classify/RULES.md")
	}
	if strings.Contains(string(readme), "| Rule (`Verdict.Rule`)") {
		t.Error("README.md copies the verdict table again; link classify/RULES.md instead")
	}
}

// rulesTable returns the markdown table that starts with the "Rule (`Verdict.Rule`)" header.
func rulesTable(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i := strings.Index(s, "| Rule (`Verdict.Rule`)")
	if i < 0 {
		t.Fatalf("%s has no verdict table", path)
	}
	s = s[i:]
	if j := strings.Index(s, "\n\n"); j >= 0 {
		s = s[:j]
	}
	return s
}
