package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
)

// The README is the front page and docs/ holds the depth. These tests keep both true: every
// relative link resolves, and every README command that can run on the demo runs, with the exit
// code the README states.

// TestReadmeLinks: every relative link and image of README.md and docs/*.md names a file of the
// repository and, with a #fragment into a markdown file, one of its headings (GitHub's anchors);
// and README.md links every page of docs/.
func TestReadmeLinks(t *testing.T) {
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files := append([]string{"README.md"}, pages...)
	anchors := map[string][]string{} // markdown file (absolute) → its headings' anchors
	anchorsOf := func(path string) []string {
		if a, ok := anchors[path]; ok {
			return a
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		a := headingAnchors(string(data))
		anchors[path] = a
		return a
	}
	linked := map[string]bool{} // what README.md links, relative to the root
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range markdownLinks(string(data)) {
			if !isRelativeLink(l.target) {
				continue
			}
			where := fmt.Sprintf("%s:%d: link %q", file, l.line, l.target)
			path, frag, _ := strings.Cut(l.target, "#")
			path, _, _ = strings.Cut(path, "?")
			target := filepath.Join(root, file) // a bare #fragment is into the file itself
			if path != "" {
				target = filepath.Join(root, filepath.Dir(file), filepath.FromSlash(path))
			}
			rel, err := filepath.Rel(root, target)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				t.Errorf("%s: points outside the repository", where)
				continue
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s: no such file %s", where, filepath.ToSlash(rel))
				continue
			}
			if file == "README.md" {
				linked[filepath.ToSlash(rel)] = true
			}
			if frag == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			if have := anchorsOf(target); !slices.Contains(have, frag) {
				t.Errorf("%s: %s has no heading with anchor #%s (it has: %s)", where, filepath.ToSlash(rel), frag, strings.Join(have, " "))
			}
		}
	}
	for _, page := range pages {
		if !linked[filepath.ToSlash(page)] {
			t.Errorf("README.md does not link %s: every page of docs/ is reached from the front page", page)
		}
	}
}

// TestReadmeCommands runs the README's commands that can run on the demo cluster, in-process as the
// binary's main (runCLI), and checks each exits as the README says: a command's comment "exit N"
// states its code, otherwise 0. The commands are the lines of the README's ```sh blocks that run
// doomwatch (`doomwatch …`, `go run . …`); of a pipeline or a list only doomwatch's part runs,
// without its redirections. The commands of one block run in order in an empty directory of their
// own, so a replay reads what a record of the same block wrote.
//
// Which commands run (readmeCommand.skip says why the others do not):
//   - run: `--demo --once`, `wait --demo`, `record --demo --for D`, `replay DIR --once` and
//     `replay DIR --timeline` where DIR was recorded earlier in the block, `--help`, `--version`;
//   - skipped: commands without --demo, which need a real cluster (a kubeconfig, credentials);
//     `kubectl doomwatch`, which needs kubectl on the PATH (the e2e suite runs the plugin); the
//     dashboard (`--demo` alone, `--record`, `replay DIR`), which needs a terminal; `--watch` and
//     `record` without --for, which run until interrupted; anything that needs a shell's expansion.
func TestReadmeCommands(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := shellBlocks(string(data))
	ran := map[string]bool{}
	for i, block := range blocks {
		t.Run(fmt.Sprintf("block%d", i+1), func(t *testing.T) {
			t.Chdir(t.TempDir())
			recorded := map[string]bool{}
			for _, c := range block {
				cmd, ok := parseReadmeCommand(c)
				if !ok {
					continue // not doomwatch (go build, kubectl apply, make …)
				}
				if why := cmd.skip(recorded); why != "" {
					t.Logf("README.md:%d: skipped %q: %s", c.line, c.text, why)
					continue
				}
				code, stdout, stderr := runWithEnv(t, cmd.env, cmd.args)
				if code != cmd.exit {
					t.Errorf("README.md:%d: %q exited %d, the README says %d\nstdout:\n%s\nstderr:\n%s",
						c.line, c.text, code, cmd.exit, stdout, stderr)
					continue
				}
				t.Logf("README.md:%d: %q exited %d", c.line, c.text, code)
				ran[cmd.kind()] = true
				if dir := cmd.recordDir(); dir != "" {
					recorded[dir] = true
				}
			}
		})
	}
	// A README that lost its runnable commands would pass the loop above without running any.
	for _, kind := range []string{"once", "wait", "record", "replay"} {
		if !ran[kind] {
			t.Errorf("no README command of kind %q ran on the demo: the README should show one the demo can run", kind)
		}
	}
}

// TestReadmeClusterRoleInDocs: docs/real-cluster.md shows the README's ClusterRole, character for
// character. The e2e suite applies the README's (TestRBACDocumentedClusterRole) and checks it
// against e2e/testdata/clusterrole.yaml; this keeps the page that explains it from drifting.
func TestReadmeClusterRoleInDocs(t *testing.T) {
	role := func(path string) string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range fencedBlocks(string(data)) {
			if b.lang == "yaml" && strings.Contains(b.body, "kind: ClusterRole\n") {
				return b.body
			}
		}
		t.Fatalf("%s has no ```yaml block with the ClusterRole", path)
		return ""
	}
	if readme, docs := role("README.md"), role("docs/real-cluster.md"); readme != docs {
		t.Errorf("the ClusterRole of docs/real-cluster.md differs from the README's:\nREADME.md:\n%s\ndocs/real-cluster.md:\n%s", readme, docs)
	}
}

// TestReadmeAnchorRules checks the anchor and command helpers on the cases the README has.
func TestReadmeAnchorRules(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{
		{"Deploy gate: `doomwatch wait`", "deploy-gate-doomwatch-wait"},
		{"`-o json`", "-o-json"},
		{"The RBAC it needs", "the-rbac-it-needs"},
		{"kubectl's columns", "kubectls-columns"},
		{"A real node: kubelet, containerd, runc", "a-real-node-kubelet-containerd-runc"},
		{"See [the docs](docs/x.md) *now*", "see-the-docs-now"},
	} {
		if got := anchorOf(tc.heading); got != tc.want {
			t.Errorf("anchorOf(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
	if got := headingAnchors("# A\n## A\n```\n# not a heading\n```\n### A\n"); !slices.Equal(got, []string{"a", "a-1", "a-2"}) {
		t.Errorf("repeated headings: %v, want a, a-1, a-2", got)
	}
	for _, tc := range []struct {
		line string
		args []string
		exit int
		skip bool
	}{
		{"doomwatch wait --demo -n shop deployment/payments     # exit 1: doomed", []string{"wait", "--demo", "-n", "shop", "deployment/payments"}, 1, false},
		{"go run . --demo --once --at 90s -o json | jq '.nodes[]' > out.json", []string{"--demo", "--once", "--at", "90s", "-o", "json"}, 0, false},
		{"doomwatch --context 'prod-*' --once", []string{"--context", "prod-*", "--once"}, 0, true},
		{"go run . --demo                      # the dashboard", []string{"--demo"}, 0, true},
		{"doomwatch replay rec/ --once", []string{"replay", "rec/", "--once"}, 0, true}, // rec/ not recorded
		{"kubectl doomwatch --once -n shop", []string{"--once", "-n", "shop"}, 0, true},
		{"NO_COLOR=1 doomwatch --demo --once 2>/dev/null && echo ok", []string{"--demo", "--once"}, 0, false},
	} {
		cmd, ok := parseReadmeCommand(shellLine{text: tc.line})
		if !ok || !slices.Equal(cmd.args, tc.args) || cmd.exit != tc.exit || (cmd.skip(map[string]bool{}) != "") != tc.skip {
			t.Errorf("%q: parsed %v, %+v (skip %q); want args %q, exit %d, skipped %v", tc.line, ok, cmd, cmd.skip(map[string]bool{}), tc.args, tc.exit, tc.skip)
		}
	}
	if _, ok := parseReadmeCommand(shellLine{text: "go build -o doomwatch ."}); ok {
		t.Error("go build is taken for a doomwatch command")
	}
}

// runWithEnv runs the command with env set for it alone, as a shell runs `VAR=v cmd`.
func runWithEnv(t *testing.T, env map[string]string, args []string) (int, string, string) {
	t.Helper()
	for k, v := range env {
		prev, had := os.LookupEnv(k)
		t.Setenv(k, v)
		defer func() {
			if had {
				os.Setenv(k, prev)
			} else {
				os.Unsetenv(k)
			}
		}()
	}
	return runWithin(t, 2*time.Minute, args)
}

// runWithin runs the CLI in-process and fails the test when it has not returned within d: a README
// command that hangs (a wait that never decides) is as broken as one that fails.
func runWithin(t *testing.T, d time.Duration, args []string) (int, string, string) {
	t.Helper()
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := runCLI(args...)
		done <- result{code, stdout, stderr}
	}()
	select {
	case r := <-done:
		return r.code, r.stdout, r.stderr
	case <-time.After(d):
		t.Fatalf("doomwatch %s did not return within %s", strings.Join(args, " "), d)
		return 0, "", ""
	}
}

// mdLink is a link or image of a markdown file, with its line.
type mdLink struct {
	target string
	line   int
}

var (
	// inlineLink is [text](target) or ![alt](target), with an optional "title".
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// refDefinition is a reference-style link's definition, [name]: target.
	refDefinition = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	codeSpan      = regexp.MustCompile("`+[^`]*`+")
	atxHeading    = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$`)
	exitComment   = regexp.MustCompile(`(?i)\bexit (\d+)\b`)
	envAssignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
)

// markdownLinks returns the links of a markdown text outside fenced blocks and code spans.
func markdownLinks(text string) []mdLink {
	var out []mdLink
	for i, line := range proseLines(text) {
		if line == "" {
			continue
		}
		line = codeSpan.ReplaceAllString(line, "``")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, mdLink{target: m[1], line: i + 1})
		}
		if m := refDefinition.FindStringSubmatch(line); m != nil {
			out = append(out, mdLink{target: m[1], line: i + 1})
		}
	}
	return out
}

// proseLines is text's lines with those of fenced code blocks (and their fences) blanked, so line
// numbers stay.
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
				fence = ""
			}
			lines[i] = ""
		case strings.HasPrefix(trimmed, "```"), strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
			for len(fence) < len(trimmed) && trimmed[len(fence)] == fence[0] {
				fence += fence[:1]
			}
			lines[i] = ""
		}
	}
	return lines
}

// isRelativeLink reports whether a link target names something of the repository: not a URL
// with a scheme (https:, mailto:) nor protocol-relative.
func isRelativeLink(target string) bool {
	if strings.HasPrefix(target, "//") {
		return false
	}
	if i := strings.Index(target, ":"); i > 0 && !strings.ContainsAny(target[:i], "/#?.") {
		return false
	}
	return true
}

// headingAnchors returns the anchors GitHub gives a markdown text's ATX headings, in order: a
// repeated anchor gets -1, -2… as GitHub numbers them.
func headingAnchors(text string) []string {
	var out []string
	seen := map[string]int{}
	for _, line := range proseLines(text) {
		m := atxHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		a := anchorOf(m[2])
		if n, ok := seen[a]; ok {
			seen[a] = n + 1
			a += "-" + strconv.Itoa(n+1)
		} else {
			seen[a] = 0
		}
		out = append(out, a)
	}
	return out
}

// anchorOf is GitHub's anchor of a heading: its text (links as their text), lowercased, every
// character but letters, marks, digits, '_', '-' and spaces dropped, and spaces turned into '-'.
func anchorOf(heading string) string {
	heading = inlineLink.ReplaceAllStringFunc(heading, func(l string) string {
		return l[strings.Index(l, "[")+1 : strings.Index(l, "]")]
	})
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r), unicode.IsMark(r), unicode.IsDigit(r), r == '_', r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// fencedBlock is a fenced code block: its info string's first word and its body.
type fencedBlock struct {
	lang  string
	body  string
	start int // the line of its first body line
}

func fencedBlocks(text string) []fencedBlock {
	var out []fencedBlock
	var cur *fencedBlock
	var body strings.Builder
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			lang, _, _ := strings.Cut(strings.TrimSpace(strings.TrimLeft(trimmed, "`")), " ")
			cur = &fencedBlock{lang: lang, start: i + 2}
			body.Reset()
		case cur != nil && strings.HasPrefix(trimmed, "```") && strings.TrimSpace(strings.Trim(trimmed, "`")) == "":
			cur.body = body.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	return out
}

// shellLine is one command line of a shell block (continuations joined) and where it starts.
type shellLine struct {
	text string
	line int
}

// shellBlocks returns the command lines of the ```sh (bash, shell) blocks of a markdown text.
func shellBlocks(text string) [][]shellLine {
	var out [][]shellLine
	for _, b := range fencedBlocks(text) {
		if b.lang != "sh" && b.lang != "bash" && b.lang != "shell" {
			continue
		}
		var lines []shellLine
		pending, at := "", 0
		for i, l := range strings.Split(strings.TrimSuffix(b.body, "\n"), "\n") {
			if pending == "" {
				at = b.start + i
			}
			if cont, ok := strings.CutSuffix(l, "\\"); ok {
				pending += cont + " "
				continue
			}
			if s := strings.TrimSpace(pending + l); s != "" && !strings.HasPrefix(s, "#") {
				lines = append(lines, shellLine{text: s, line: at})
			}
			pending = ""
		}
		out = append(out, lines)
	}
	return out
}

// shellToken is a word or an operator (|, ||, &, &&, ;, and the redirections) of a command line.
type shellToken struct {
	text string
	op   bool
	// expands is set for a word a shell would expand ($VAR, $(…), `…`): its text is not literal.
	expands bool
}

// shellTokens splits a command line as a POSIX shell does, for the quoting a README uses: single
// and double quotes, backslashes, operators, and a comment from a word-initial #.
func shellTokens(line string) (tokens []shellToken, comment string) {
	var word strings.Builder
	inWord, expands := false, false
	flush := func() {
		if inWord {
			tokens = append(tokens, shellToken{text: word.String(), expands: expands})
		}
		word.Reset()
		inWord, expands = false, false
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\'':
			inWord = true
			for i++; i < len(rs) && rs[i] != '\''; i++ {
				word.WriteRune(rs[i])
			}
		case r == '"':
			inWord = true
			for i++; i < len(rs) && rs[i] != '"'; i++ {
				if rs[i] == '\\' && i+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[i+1]) {
					i++
				} else if rs[i] == '$' || rs[i] == '`' {
					expands = true
				}
				word.WriteRune(rs[i])
			}
		case r == '\\' && i+1 < len(rs):
			i++
			inWord = true
			word.WriteRune(rs[i])
		case r == '#' && !inWord:
			return tokens, strings.TrimSpace(string(rs[i+1:]))
		case unicode.IsSpace(r):
			flush()
		case strings.ContainsRune("|&;<>", r):
			op := string(r)
			if (r == '>' || r == '<') && inWord && !expands && strings.Trim(word.String(), "0123456789") == "" {
				op = word.String() + op // 2>, 1>
				word.Reset()
				inWord = false
			}
			flush()
			if i+1 < len(rs) && (rs[i+1] == r || (r == '>' && rs[i+1] == '&')) {
				i++
				op += string(rs[i])
			}
			tokens = append(tokens, shellToken{text: op, op: true})
		default:
			if r == '$' || r == '`' {
				expands = true
			}
			inWord = true
			word.WriteRune(r)
		}
	}
	flush()
	return tokens, ""
}

// readmeCommand is a doomwatch command of the README: its arguments, environment and the exit
// code its comment states.
type readmeCommand struct {
	args    []string
	env     map[string]string
	exit    int
	plugin  bool // kubectl doomwatch …
	expands bool // a word the shell would expand
}

// parseReadmeCommand finds the doomwatch command of a line: the simple command of its pipeline or
// list that runs doomwatch (doomwatch, ./doomwatch, go run ., kubectl doomwatch), without its
// redirections. ok is false when the line runs no doomwatch.
func parseReadmeCommand(l shellLine) (readmeCommand, bool) {
	tokens, comment := shellTokens(l.text)
	var simple [][]shellToken
	var cur []shellToken
	for i := 0; i < len(tokens); i++ {
		tk := tokens[i]
		switch {
		case tk.op && strings.ContainsAny(tk.text, "<>"):
			i++ // the redirection's target
		case tk.op:
			simple, cur = append(simple, cur), nil
		default:
			cur = append(cur, tk)
		}
	}
	simple = append(simple, cur)
	for _, words := range simple {
		cmd := readmeCommand{env: map[string]string{}}
		for len(words) > 0 && envAssignment.MatchString(words[0].text) {
			k, v, _ := strings.Cut(words[0].text, "=")
			cmd.env[k] = v
			cmd.expands = cmd.expands || words[0].expands
			words = words[1:]
		}
		texts := make([]string, len(words))
		for i, w := range words {
			texts[i] = w.text
			cmd.expands = cmd.expands || w.expands
		}
		var args []string
		switch {
		case len(texts) >= 1 && (texts[0] == "doomwatch" || texts[0] == "./doomwatch"):
			args = texts[1:]
		case len(texts) >= 3 && texts[0] == "go" && texts[1] == "run" && texts[2] == ".":
			args = texts[3:]
		case len(texts) >= 2 && texts[0] == "kubectl" && texts[1] == "doomwatch":
			args, cmd.plugin = texts[2:], true
		default:
			continue
		}
		cmd.args = append([]string{}, args...)
		if m := exitComment.FindStringSubmatch(comment); m != nil {
			cmd.exit, _ = strconv.Atoi(m[1])
		}
		return cmd, true
	}
	return readmeCommand{}, false
}

// has reports whether the command has one of flags, alone or as --flag=value.
func (c readmeCommand) has(flags ...string) bool {
	for _, a := range c.args {
		name, _, _ := strings.Cut(a, "=")
		if slices.Contains(flags, name) {
			return true
		}
	}
	return false
}

// sub is the command's subcommand: wait, record, replay, or "" for the root command.
func (c readmeCommand) sub() string {
	for _, a := range c.args {
		if a == "wait" || a == "record" || a == "replay" {
			return a
		}
	}
	return ""
}

// kind is what the command exercises, for the check that each kind ran: once, wait, record,
// replay, help.
func (c readmeCommand) kind() string {
	switch {
	case c.has("--help", "-h", "--version"):
		return "help"
	case c.sub() != "":
		return c.sub()
	}
	return "once"
}

// value is the value of the first of flags, as "--flag v" or "--flag=v"; "" when absent.
func (c readmeCommand) value(flags ...string) string {
	for i, a := range c.args {
		name, v, eq := strings.Cut(a, "=")
		if slices.Contains(flags, name) {
			if eq {
				return v
			}
			if i+1 < len(c.args) {
				return c.args[i+1]
			}
		}
	}
	return ""
}

// recordDir is the directory a record writes, cleaned; "" for any other command.
func (c readmeCommand) recordDir() string {
	if c.sub() != "record" {
		return ""
	}
	if d := c.value("-o", "--output"); d != "" {
		return filepath.Clean(d)
	}
	return ""
}

// replayDir is the recording a replay reads: the first argument after replay.
func (c readmeCommand) replayDir() string {
	i := slices.Index(c.args, "replay")
	for _, a := range c.args[i+1:] {
		if !strings.HasPrefix(a, "-") {
			return filepath.Clean(a)
		}
	}
	return ""
}

// skip says why the command cannot run here (TestReadmeCommands' rule), "" when it can; recorded
// holds the directories recorded earlier in its block.
func (c readmeCommand) skip(recorded map[string]bool) string {
	switch {
	case c.expands:
		return "it needs a shell's expansion"
	case c.plugin:
		return "kubectl doomwatch needs kubectl on the PATH and a cluster (the e2e suite runs the plugin)"
	case c.has("--help", "-h", "--version"):
		return ""
	case c.sub() == "replay" && !c.has("--once", "--timeline"):
		return "the replay dashboard needs a terminal"
	case c.sub() == "replay" && !recorded[c.replayDir()]:
		return "it replays a recording no earlier command of its block made"
	case c.sub() == "replay":
		return ""
	case !c.has("--demo"):
		return "it needs a real cluster"
	case c.sub() == "wait":
		return ""
	case c.sub() == "record" && !c.has("--for"):
		return "record without --for runs until interrupted"
	case c.sub() == "record":
		return ""
	case c.has("--watch", "-w"):
		return "--watch runs until interrupted"
	case !c.has("--once"):
		return "the dashboard needs a terminal"
	}
	return ""
}
