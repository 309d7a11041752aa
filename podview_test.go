package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify/corpus"
	"doomwatch/contract"
	"doomwatch/model"
	"doomwatch/podrec"
	"doomwatch/report"
	"doomwatch/tui"
)

// TestTableDetailAndJSONAgree: the pod table, the detail pane and --once -o json say the same of
// every pod of classify's fixture corpus, as a user reads them: kubectl's READY, STATUS and
// RESTARTS (and those the fixture states kubectl prints), the verdict's reason, and for each
// container its verdict, state and last state (summary, exit code, message), readiness and
// restarts; the table's STATE, LAST STATE and EXIT are those of the container the pod table
// describes (model.Pod.Deciding). The three once formatted a pod each on their own.
func TestTableDetailAndJSONAgree(t *testing.T) {
	all, err := corpus.Load(filepath.Join("classify", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	for _, fx := range all {
		t.Run(strings.TrimSuffix(fx.File, ".yaml"), func(t *testing.T) {
			events := make([]*corev1.Event, len(fx.Events))
			for i := range fx.Events {
				events[i] = &fx.Events[i]
			}
			m := model.New(model.DefaultConfig())
			b := contract.Batch{Pods: []*podrec.Record{podrec.RecordOf(fx.Pod)}, Events: events,
				Health: &contract.Health{Synced: true}}
			m.Apply(&b, fx.Now)
			view := m.View(model.Query{})
			if len(view) != 1 {
				t.Fatalf("the model holds %d pods, want 1", len(view))
			}
			p := view[0]

			jp := onceJSON(t, m, fx.Now)
			row := tableRow(t, tui.RenderFrame(m, tui.FrameOptions{Width: 400, Height: 30, Now: fx.Now, NoColor: true,
				Selected: p.Key}))
			detail := parseDetail(t, tui.RenderFrame(m, tui.FrameOptions{Width: 300, Height: 300, Now: fx.Now,
				NoColor: true, Selected: p.Key, Detail: true}))

			// kubectl's columns: the fixture's, the JSON's, the table's and the detail's.
			ann := fx.Pod.Annotations
			for _, c := range []struct{ name, want, json, cell, detail string }{
				{"READY", ann["test.doomwatch.io/ready"], jp.Ready, row["READY"], detail.ready},
				{"STATUS", ann["test.doomwatch.io/status"], jp.Status, row["STATUS"], detail.status},
				{"RESTARTS", ann["test.doomwatch.io/restarts"], jp.Restarts, row["RESTARTS"], detail.restarts},
			} {
				if c.json != c.want || c.detail != c.want || !fits(c.cell, c.want) {
					t.Errorf("%s: fixture %q, JSON %q, table %q, detail %q", c.name, c.want, c.json, c.cell, c.detail)
				}
			}
			if !fits(row["REASON"], jp.Reason) || squash(detail.reason) != squash(jp.Reason) {
				t.Errorf("reason: JSON %q, table %q, detail %q", jp.Reason, row["REASON"], detail.reason)
			}

			// Every container, in the JSON's order, in the detail pane.
			if len(detail.containers) != len(jp.Containers) {
				t.Fatalf("the detail lists %d containers, the JSON %d", len(detail.containers), len(jp.Containers))
			}
			for i, jc := range jp.Containers {
				dc := detail.containers[i]
				if dc.name != jc.Name || dc.init != jc.Init || dc.verdict != jc.Verdict || squash(dc.reason) != squash(jc.Reason) {
					t.Errorf("container %d: detail %s (init %v) %s %q, JSON %s (init %v) %s %q", i,
						dc.name, dc.init, dc.verdict, dc.reason, jc.Name, jc.Init, jc.Verdict, jc.Reason)
				}
				if jc.State == nil {
					// Not reported, or reported without a state: the detail says which.
					if !dc.noStatus && dc.state.line != "none" {
						t.Errorf("%s: the JSON has no state, the detail %q", jc.Name, dc.state.line)
					}
					continue
				}
				if dc.noStatus || dc.ready != strconv.FormatBool(jc.Ready) || dc.restarts != strconv.Itoa(int(jc.RestartCount)) {
					t.Errorf("%s: detail ready %q restarts %q (no status %v), JSON ready %v restarts %d",
						jc.Name, dc.ready, dc.restarts, dc.noStatus, jc.Ready, jc.RestartCount)
				}
				agreeState(t, jc.Name+" state", jc.State, dc.state)
				agreeState(t, jc.Name+" last state", jc.LastState, dc.last)
			}

			// The table's container columns, of the container it describes.
			var state, last, exit string
			if c, ok := p.Deciding(); ok {
				jc := jsonContainer(t, jp, c.Name, c.Init)
				// A cell is trimmed: "terminated " (no reason) shows as "terminated".
				state, last = strings.TrimSpace(summary(jc.State)), strings.TrimSpace(summary(jc.LastState))
				for _, s := range []*report.SnapshotState{jc.LastState, jc.State} {
					if s != nil && s.ExitCode != nil {
						exit = strconv.Itoa(int(*s.ExitCode))
					}
				}
			}
			if p.Verdict.HasExitCode {
				exit = strconv.Itoa(int(p.Verdict.ExitCode))
			}
			if !fits(row["STATE"], state) || !fits(row["LAST STATE"], last) || row["EXIT"] != exit {
				t.Errorf("table STATE %q, LAST STATE %q, EXIT %q; the JSON's container says %q, %q, %q",
					row["STATE"], row["LAST STATE"], row["EXIT"], state, last, exit)
			}
		})
	}
}

// onceJSON is the one pod of m as `--once -o json` prints it.
func onceJSON(t *testing.T, m *model.Model, now time.Time) report.SnapshotPod {
	t.Helper()
	snap := report.NewSnapshot(m, "fixtures", now)
	var buf bytes.Buffer
	if err := report.SnapshotPrinters.Print(&buf, "json", &snap); err != nil {
		t.Fatal(err)
	}
	var doc report.Snapshot
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("the JSON does not decode: %v", err)
	}
	if len(doc.Pods) != 1 {
		t.Fatalf("the JSON has %d pods, want 1", len(doc.Pods))
	}
	return doc.Pods[0]
}

func jsonContainer(t *testing.T, p report.SnapshotPod, name string, init bool) report.SnapshotContainer {
	t.Helper()
	for _, c := range p.Containers {
		if c.Name == name && c.Init == init {
			return c
		}
	}
	t.Fatalf("the JSON has no container %s (init %v)", name, init)
	return report.SnapshotContainer{}
}

// summary is a state in a few words, as a user reads the JSON's: "waiting CrashLoopBackOff",
// "running", "terminated Error".
func summary(s *report.SnapshotState) string {
	switch {
	case s == nil:
		return ""
	case s.Kind == "running":
		return "running"
	}
	return s.Kind + " " + s.Reason
}

// agreeState checks the detail's lines of a state against the JSON's.
func agreeState(t *testing.T, what string, js *report.SnapshotState, d detailState) {
	t.Helper()
	if js == nil {
		if d.line != "" && d.line != "none" {
			t.Errorf("%s: the JSON has none, the detail %q", what, d.line)
		}
		return
	}
	want := summary(js)
	switch js.Kind {
	case "running":
		want += " since "
	case "terminated":
		want += " exit " + strconv.Itoa(int(*js.ExitCode))
	}
	ok := strings.HasPrefix(d.line, want)
	if js.Kind == "terminated" {
		ok = d.line == want || strings.HasPrefix(d.line, want+" signal ")
	}
	if js.Kind == "waiting" {
		ok = d.line == want
	}
	if !ok || squash(d.message) != squash(js.Message) {
		t.Errorf("%s: detail %q message %q; JSON %+v", what, d.line, d.message, *js)
	}
}

// fits reports whether a table cell shows want: whole, or cut to the column with "…".
func fits(cell, want string) bool {
	if cut, ok := strings.CutSuffix(cell, "…"); ok && cell != want {
		return strings.HasPrefix(want, cut)
	}
	return cell == want
}

// squash drops white space, to compare text the detail pane wrapped with the JSON's.
func squash(s string) string { return strings.Join(strings.Fields(s), "") }

// tableRow reads the selected row of the pod table in frame, cell by column title.
func tableRow(t *testing.T, frame string) map[string]string {
	t.Helper()
	var header, row string
	for _, l := range strings.Split(frame, "\n") {
		switch {
		case header == "" && strings.HasPrefix(l, "  NAMESPACE "):
			header = l
		case header != "" && strings.HasPrefix(l, "▶ "):
			row = strings.Replace(l, "▶", " ", 1) // one cell wide, as the header's indent
		}
	}
	if header == "" || row == "" {
		t.Fatalf("no pod table with a selected row in the frame:\n%s", frame)
	}
	titles := []string{"NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "NODE", "AGE", "VERDICT", "STATE", "LAST STATE", "EXIT", "REASON"}
	starts := make([]int, len(titles))
	from := 0
	for i, title := range titles {
		at := strings.Index(header[from:], " "+title+" ")
		if title == "REASON" {
			at = strings.Index(header[from:], " "+title)
		}
		if at < 0 {
			t.Fatalf("no column %s in %q", title, header)
		}
		starts[i] = from + at + 1
		from = starts[i] + len(title)
	}
	cells := make(map[string]string, len(titles))
	// Positions count cells: the header is ASCII, the row too but for its glyphs (the verdict's,
	// "…"), one cell each.
	runes := []rune(row)
	for i, title := range titles {
		start, end := starts[i], len(runes)
		if i+1 < len(titles) {
			end = starts[i+1]
		}
		if end > len(runes) {
			t.Fatalf("row %q shorter than its header %q", row, header)
		}
		cells[title] = strings.TrimSpace(string(runes[start:end]))
	}
	return cells
}

// detailPane is what a user reads in the detail pane of a pod.
type detailPane struct {
	status, ready, restarts string
	reason                  string
	containers              []detailContainer
}

type detailContainer struct {
	name            string
	init            bool
	verdict, reason string
	noStatus        bool
	state, last     detailState
	ready, restarts string
}

// detailState is a state's first line after its label and its message, unwrapped.
type detailState struct{ line, message string }

var (
	statusLine   = regexp.MustCompile(`^Status   (.*)  ready (\S*)  restarts (.*)  phase `)
	readyLine    = regexp.MustCompile(`^    ready (\S+)  restarts (\S+)$`)
	containerRow = regexp.MustCompile(`^  (\S[^ ]*)( \((?:init|sidecar)\))?(?:  \S+ (\S+))?$`)
)

// parseDetail reads the detail pane in frame: the verdict's reason, the Status line and the
// Containers section.
func parseDetail(t *testing.T, frame string) detailPane {
	t.Helper()
	var d detailPane
	lines := strings.Split(frame, "\n")
	i := 0
	for ; i < len(lines) && !strings.HasPrefix(lines[i], "Verdict  "); i++ {
	}
	if i == len(lines) {
		t.Fatalf("no detail pane in the frame:\n%s", frame)
	}
	var cont *string // the text a continuation line goes on
	var c *detailContainer
	section := "Verdict"
	for _, l := range lines[i+1:] {
		l = strings.TrimRight(l, " ")
		trimmed := strings.TrimLeft(l, " ")
		indent := len(l) - len(trimmed)
		switch {
		case l == "":
			cont = nil
		case indent == 0:
			cont = nil
			section, _, _ = strings.Cut(l, " ")
			if m := statusLine.FindStringSubmatch(l); m != nil {
				d.status, d.ready, d.restarts = m[1], m[2], m[3]
			}
		case section == "Verdict" && strings.HasPrefix(l, "  reason: "):
			d.reason, cont = strings.TrimPrefix(l, "  reason: "), &d.reason
		case section != "Containers":
			if cont != nil && indent > 2 {
				*cont += " " + trimmed
			} else {
				cont = nil
			}
		case indent == 2:
			m := containerRow.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("container line %q", l)
			}
			d.containers = append(d.containers, detailContainer{name: m[1], init: m[2] != "", verdict: m[3]})
			c, cont = &d.containers[len(d.containers)-1], nil
		case c == nil:
			t.Fatalf("a line before the first container: %q", l)
		case strings.HasPrefix(l, "    verdict: "):
			c.reason, cont = strings.TrimPrefix(l, "    verdict: "), &c.reason
		case strings.HasPrefix(l, "    state:      "):
			c.state.line, cont = strings.TrimPrefix(l, "    state:      "), nil
		case strings.HasPrefix(l, "    last state: "):
			c.last.line, cont = strings.TrimPrefix(l, "    last state: "), nil
		case strings.HasPrefix(trimmed, "message: ") && indent == 16:
			st := &c.state
			if c.last.line != "" {
				st = &c.last
			}
			st.message, cont = strings.TrimPrefix(trimmed, "message: "), &st.message
		case l == "    no status yet":
			c.noStatus, cont = true, nil
		case readyLine.MatchString(l):
			m := readyLine.FindStringSubmatch(l)
			c.ready, c.restarts, cont = m[1], m[2], nil
		case cont != nil && indent > 4:
			*cont += " " + trimmed
		default:
			cont = nil // image, times
		}
	}
	return d
}
