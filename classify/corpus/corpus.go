// Package corpus reads classify's fixture corpus (classify/testdata, README.md there): each file
// a pod, then the Warning events posted about it, one YAML document each, the pod's annotations
// stating what is expected of it. classify's tests judge it, and the tests of kube, the views and
// e2e run the same pods through their own path. It is imported only by tests.
package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// ExpectPrefix is the annotation prefix under which a fixture states its expected verdict, its
// kubectl columns and its moment (testdata/README.md documents the keys).
const ExpectPrefix = "test.doomwatch.io/"

// Fixture is one pod of the corpus with the events after it.
type Fixture struct {
	File   string // the file's name, "crashloop-oom.yaml"
	Pod    *corev1.Pod
	Events []corev1.Event
	// Now is the moment the expectations hold at (the "now" annotation).
	Now time.Time
	// Want holds the expectations: annotation key without ExpectPrefix -> value.
	Want map[string]string
}

// Load decodes every *.yaml fixture in dir, in the order of their names. A file that does not
// decode strictly, or has no "now", is an error.
func Load(dir string) ([]Fixture, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no fixtures in %s", dir)
	}
	out := make([]Fixture, 0, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		docs := strings.Split(string(data), "\n---\n")
		fx := Fixture{File: filepath.Base(f), Pod: &corev1.Pod{}, Want: map[string]string{}}
		if err := yaml.UnmarshalStrict([]byte(docs[0]), fx.Pod); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for i, doc := range docs[1:] {
			var ev corev1.Event
			if err := yaml.UnmarshalStrict([]byte(doc), &ev); err != nil {
				return nil, fmt.Errorf("%s: document %d: %w", f, i+2, err)
			}
			fx.Events = append(fx.Events, ev)
		}
		for k, v := range fx.Pod.Annotations {
			if name, ok := strings.CutPrefix(k, ExpectPrefix); ok {
				fx.Want[name] = v
			}
		}
		if fx.Now, err = time.Parse(time.RFC3339, fx.Want["now"]); err != nil {
			return nil, fmt.Errorf("%s: annotation %snow: %w", f, ExpectPrefix, err)
		}
		out = append(out, fx)
	}
	return out, nil
}
