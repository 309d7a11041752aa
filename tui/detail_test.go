package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// detailBody is the detail pane's text below its title, as on screen.
func detailBody(d *dashboard) []string {
	f := d.computeFrame()
	lines := strings.Split(screen(d), "\n")[f.bodyTop+1 : f.bodyTop+f.bodyH]
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return lines
}

// plain is line i of the pane's text as the screen shows it.
func plain(d *dashboard, i int) string {
	return strings.TrimRight(ansi.Strip(clip(d.detail.lines[i], d.width)), " ")
}

// TestDetailScrollKeys: the list keys scroll the detail pane line by line, by page and to either
// end, never past its text; an update keeps the place; opening another pod starts at its top.
func TestDetailScrollKeys(t *testing.T) {
	d := newTestDashboard(t, 80, 24)
	d.pods.selectKey("shop/api-7d9f8b6c5-xk2lq")
	press(d, "enter")
	all := d.detail.lines
	first := detailBody(d)
	if len(all) <= len(first) {
		t.Fatalf("the detail (%d lines) fits on screen (%d): the test proves nothing", len(all), len(first))
	}
	press(d, "k")
	if got := detailBody(d); got[0] != first[0] {
		t.Errorf("up at the top moved the text: %q", got[0])
	}
	press(d, "j")
	if got := detailBody(d); got[0] != first[1] {
		t.Errorf("down should scroll one line: first line %q, want %q", got[0], first[1])
	}
	press(d, "G")
	body := detailBody(d)
	if want := plain(d, len(all)-1); body[len(body)-1] != want {
		t.Errorf("G should end at the last line %q, screen ends %q", want, body[len(body)-1])
	}
	press(d, "j", "pgdown")
	if got := detailBody(d); strings.Join(got, "\n") != strings.Join(body, "\n") {
		t.Errorf("scrolled past the end:\n%s", strings.Join(got, "\n"))
	}
	press(d, "g", "pgdown")
	if got := detailBody(d); got[0] != plain(d, len(first)) {
		t.Errorf("page down from the top should start at line %d %q, got %q", len(first), plain(d, len(first)), got[0])
	}
	// A batch rebuilds the lines; the reader keeps their place.
	before := detailBody(d)
	d.Update(batchMsg{})
	if got := detailBody(d); strings.Join(got, "\n") != strings.Join(before, "\n") {
		t.Errorf("an update moved the detail:\n%s", strings.Join(got, "\n"))
	}
	press(d, "esc")
	d.pods.selectKey("shop/search-7d9f8b6c5-s00")
	press(d, "enter")
	if !strings.HasPrefix(detailBody(d)[0], "Verdict") {
		t.Errorf("another pod's detail should open at its top:\n%s", strings.Join(detailBody(d), "\n"))
	}
}
