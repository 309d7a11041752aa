package manifest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"doomwatch/sanitize"
)

// FuzzRead feeds arbitrary bytes through stdin, seeded with every file of testdata, and checks
// what a caller relies on: no panic, each error one sanitised line that says where, and each
// object one that can be looked up (apiVersion, kind and name set), once.
func FuzzRead(f *testing.F) {
	err := filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		f.Add(data)
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte("\xff\xfe" + "k\x00i\x00n\x00d\x00:\x00 \x00X\x00"))
	f.Add([]byte(`{"kind": "List", "items": [{"kind": "List", "items": [null, 1, {"metadata": []}]}]}`))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"a\\e]0;x\\a\\nb\"}\n--- x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := Read([]string{"-"}, false, bytes.NewReader(data))
		if err != nil {
			errs := err.(interface{ Unwrap() []error }).Unwrap()
			for _, e := range errs {
				line := e.Error()
				if strings.ContainsAny(line, "\n\r") || sanitize.Text(line) != line {
					t.Errorf("error is not one sanitised line: %q", line)
				}
				if !strings.HasPrefix(line, "stdin: document ") {
					t.Errorf("error does not say where: %q", line)
				}
			}
			if got := len(strings.Split(err.Error(), "\n")); got != len(errs) {
				t.Errorf("%d errors print as %d lines", len(errs), got)
			}
		}
		seen := map[objectKey]bool{}
		for _, o := range objs {
			if o.GetAPIVersion() == "" || o.GetKind() == "" || o.GetName() == "" {
				t.Errorf("object without apiVersion, kind or name: %v", o.Object)
			}
			if o.Source.File != "stdin" || o.Source.Document < 1 {
				t.Errorf("source %+v", o.Source)
			}
			k := objectKey{o.GroupVersionKind().Group, o.GetKind(), o.GetNamespace(), o.GetName()}
			if seen[k] {
				t.Errorf("%v read twice", k)
			}
			seen[k] = true
		}
	})
}
