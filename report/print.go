package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Printer prints document D in one format (-o NAME).
type Printer[D any] struct {
	Name string
	// Print takes the document first, so that a document's own printer is its method expression
	// ((*Snapshot).WriteTable).
	Print func(doc D, w io.Writer) error
}

// Printers are the formats of one document, the default first.
type Printers[D any] []Printer[D]

// The formats of each document. A format every document has (JSON) is one function here and a
// line in each list; a document's human format is its own printer.
var (
	SnapshotPrinters = Printers[*Snapshot]{{"table", (*Snapshot).WriteTable}, {"json", writeJSON[*Snapshot]}}
	GatePrinters     = Printers[*Gate]{{"text", (*Gate).WriteText}, {"json", writeJSON[*Gate]}, {"junit", (*Gate).WriteJUnit}}
	// WatchPrinters print --watch's lines: one tab-separated line each, or JSON lines.
	WatchPrinters = Printers[[]WatchLine]{{"table", writeWatchTable}, {"json", writeWatchJSON}}
)

// Check says whether format is one of ps, in -o's words.
func (ps Printers[D]) Check(format string) error {
	if _, ok := ps.find(format); ok {
		return nil
	}
	return fmt.Errorf("-o/--output must be %s, not %q", ps.List(), format)
}

// List names the formats for a help text: "table or json".
func (ps Printers[D]) List() string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Print writes doc in format, which Check accepted.
func (ps Printers[D]) Print(w io.Writer, format string, doc D) error {
	p, ok := ps.find(format)
	if !ok {
		return ps.Check(format)
	}
	return p.Print(doc, w)
}

func (ps Printers[D]) find(format string) (Printer[D], bool) {
	for _, p := range ps {
		if p.Name == format {
			return p, true
		}
	}
	return Printer[D]{}, false
}

// writeJSON writes doc as indented JSON, as kubectl -o json does.
func writeJSON[D any](doc D, w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
