package classify

import (
	"regexp"
	"strings"
	"testing"
)

// The forms a fixture's source may take (testdata/README.md), each of which names where to read
// the message: an upstream issue or pull request, a URL, or a file in an upstream repository.
// Prose around them ("same runc text in ...", a parenthesised note) is allowed.
var (
	// containerd/containerd#11033
	citeIssue = regexp.MustCompile(`(?:^|[\s(])[A-Za-z0-9][\w.-]*/[\w.-]+#[0-9]+\b`)
	// https://...
	citeURL = regexp.MustCompile(`\bhttps?://[^\s;]+`)
	// kubernetes/kubernetes pkg/kubelet/status/generate.go, distribution/reference normalize.go
	citeFile = regexp.MustCompile(`(?:^|[\s(])[A-Za-z0-9][\w.-]*/[\w.-]+ (?:[\w.-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]*\b`)
	// recorded from kubelet v1.37.2, containerd v2.4.2, runc v1.5.3: written by a real node
	// (e2e/realnode_test.go), whose versions are the source.
	citeRecorded = regexp.MustCompile(`^recorded from kubelet v[0-9][\w.-]*, containerd v[0-9][\w.-]*, runc v[0-9][\w.-]*\b`)
)

// citeSourceOK reports whether one source of a cite annotation names an issue, a URL or a file in
// a repository.
func citeSourceOK(src string) bool {
	return citeIssue.MatchString(src) || citeURL.MatchString(src) || citeFile.MatchString(src) || citeRecorded.MatchString(src)
}

func TestCiteSourceForms(t *testing.T) {
	tests := []struct {
		src  string
		want bool
	}{
		{"containerd/containerd#11033", true},
		{"kubernetes/minikube#20613, #9161", true},
		{"same runc text in opencontainers/runc#4713", true},
		{"https://github.com/moby/moby/blob/v28.0.0/daemon/start.go", true},
		{"kubernetes/kubernetes pkg/kubelet/status/generate.go (v1.37, condition reasons and messages)", true},
		{"containers/crun src/libcrun/container.c", true},
		{"distribution/reference normalize.go (v0.6.0: `invalid reference format`)", true},
		{"recorded from kubelet v1.37.2, containerd v2.4.2, runc v1.5.3 (e2e/realnode_test.go TestRealNode)", true},
		{"recorded on a node", false},
		{"", false},
		{"kubelet event", false},
		{"containerd internal/cri/server/helpers.go (errorExitReason)", false}, // no owner
		{"pkg/kubelet/kubelet.go (rejectPod)", false},                          // no repository
		{"moby/moby", false},                                                   // a repository is not a source
		{"application output (Go os.PathError)", false},
	}
	for _, tt := range tests {
		if got := citeSourceOK(tt.src); got != tt.want {
			t.Errorf("citeSourceOK(%q) = %v, want %v", tt.src, got, tt.want)
		}
	}
}

// TestFixturesCiteSources fails when a fixture does not say where its runtime, kubelet, registry,
// scheduler and controller messages come from. Every such message is copied from an upstream issue
// or test, or formatted the way upstream code formats it; a message written to pass a rule hides
// the bug the rule has on real clusters. The annotation test.doomwatch.io/cite names the sources,
// separated by "; " (outside parentheses and backquotes), each in one of the forms citeSourceOK
// accepts (testdata/README.md).
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
		for i, src := range splitCite(cite) {
			if !citeSourceOK(strings.TrimSpace(src)) {
				t.Errorf("%s: source %d of %scite, %q, names no issue (owner/repo#N), URL or file (owner/repo path/to/file)",
					fx.file, i+1, expectPrefix, src)
			}
		}
	}
}

// splitCite splits a cite annotation into its sources at each "; " that is not inside parentheses
// or backquotes, so a note like "(prefix dropped; exit code from docker inspect)" or a quoted
// format string stays with its source.
func splitCite(cite string) []string {
	var out []string
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(cite); i++ {
		switch c := cite[i]; {
		case c == '`':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case c == ';' && depth == 0 && strings.HasPrefix(cite[i:], "; "):
			out = append(out, cite[start:i])
			start = i + 2
		}
	}
	return append(out, cite[start:])
}

func TestSplitCite(t *testing.T) {
	got := splitCite("a/b#1 (x; y); c/d e.go (`%s; %s`); f/g#2")
	want := []string{"a/b#1 (x; y)", "c/d e.go (`%s; %s`)", "f/g#2"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("splitCite = %q, want %q", got, want)
	}
}
