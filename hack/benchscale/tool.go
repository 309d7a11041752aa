package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"doomwatch/hack/scale"
)

// tool is one program the harness measures in a pseudo-terminal: how to start it, how its screen
// says it has synced, which keys sort, and how to quit it.
type tool struct {
	name string
	bin  string
	args []string
	env  []string
	// synced reports whether the screen shows the full pod count, n, as synced.
	synced func(screen string, n int) bool
	// sortKeys each change the sort; pressing them in turn cycles through the orders.
	sortKeys []string
	// filterOpen starts a text filter; filterApply ends typing (the filter must be applied by
	// then); filterClear drops the filter.
	filterOpen, filterApply, filterClear string
	quit                                 string
	// profile is where the tool writes a CPU profile of the churn window (doomwatch's
	// DOOMWATCH_CPUPROFILE); empty: none.
	profile string
}

// doomwatchTool runs doomwatch over every namespace, with a CPU profile of the churn window in
// dir; noGzip adds --disable-compression.
func doomwatchTool(bin, kubeconfig, dir string, noGzip bool, env []string) tool {
	profile := filepath.Join(dir, "doomwatch-churn.pprof")
	args := []string{"--kubeconfig", kubeconfig, "-A"}
	if noGzip {
		args = append(args, "--disable-compression")
	}
	return tool{
		name: "doomwatch", bin: bin, env: append(slices.Clip(env), "DOOMWATCH_CPUPROFILE="+profile), profile: profile,
		args: args,
		// The header says "live" once the informers have synced and counts the pods; while
		// syncing it says "syncing".
		synced: func(s string, n int) bool {
			return !strings.Contains(s, "syncing") && strings.Contains(firstLine(s), "live") && containsCount(s, n)
		},
		// s cycles severity → name → node → age (tui/root.go sortNames).
		sortKeys:   []string{"s", "s", "s", "s"},
		filterOpen: "/", filterApply: "\r", filterClear: "\x1b",
		quit: "q",
	}
}

// k9sTool runs k9s on the pod view of every namespace, with its own defaults otherwise.
func k9sTool(bin, kubeconfig string, env []string) tool {
	return tool{
		name: "k9s", bin: bin, env: env,
		args: []string{"--kubeconfig", kubeconfig, "-A", "-c", "pods"},
		// The table's title counts the rows: "pods(all)[10,000]" (v0.50; "[10000]" before).
		synced: func(s string, n int) bool {
			return strings.Contains(s, "["+thousands(n)+"]") || strings.Contains(s, "["+strconv.Itoa(n)+"]")
		},
		// k9s's pod view sorts by node, age, status and name with shift-O, A, S, N
		// (internal/view/pod.go, internal/view/table.go).
		sortKeys:   []string{"O", "A", "S", "N"},
		filterOpen: "/", filterApply: "\r", filterClear: "\x1b",
		// ctrl-c quits k9s without a confirmation (its default, ui.noExitOnCtrlC false).
		quit: "\x03",
	}
}

var podName = regexp.MustCompile(scale.PodNamePattern)

// rows returns the pod names on the screen, top to bottom, one per line at most.
func rows(screen string) []string {
	var out []string
	for _, l := range strings.Split(screen, "\n") {
		if m := podName.FindString(l); m != "" {
			out = append(out, m)
		}
	}
	return out
}

// lineWith returns the screen line holding the pod name.
func lineWith(screen, name string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, name) {
			return l
		}
	}
	return ""
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// containsCount reports whether s shows n, as 150,000 or as 150000.
func containsCount(s string, n int) bool {
	return strings.Contains(s, thousands(n)) || strings.Contains(s, strconv.Itoa(n))
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// hasToken reports whether line holds n as a whole number (not part of a longer one).
func hasToken(line string, n int) bool {
	re := regexp.MustCompile(fmt.Sprintf(`(^|[^0-9])%d([^0-9]|$)`, n))
	return re.MatchString(line)
}
