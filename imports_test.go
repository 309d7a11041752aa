package main

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestImportBoundaries holds the packages to the data flow the house style states: kube → model →
// tui, with classify and podrec pure underneath. classify and podrec (the pod record, which kube
// makes and model keeps) import only the standard library and the API types (k8s.io/api, and
// k8s.io/apimachinery, which those types are made of), and classify kstatus's status computation,
// which is as pure (status.Compute reads an object and nothing else); contract (the batches kube hands model) and
// sanitize (the terminal's rule for API text) are leaves that only podrec may be under, and kube
// and recording reach the model through contract alone; model reads no cluster and draws nothing;
// tui never links client-go, directly or through another package; only kube (and its demo
// cluster) talks to an API server; report builds its documents from the model alone; no package
// of the pipeline imports cmd.
func TestImportBoundaries(t *testing.T) {
	pkgs := listPackages(t)
	standard := map[string]bool{}
	for _, p := range pkgs {
		standard[p.ImportPath] = p.Standard
	}
	const mod = "doomwatch/"
	const kstatus = "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	for _, p := range pkgs {
		if p.Standard || !strings.HasPrefix(p.ImportPath, "doomwatch") {
			continue
		}
		imports := func(prefix string) []string {
			var out []string
			for _, i := range p.Imports {
				if i == prefix || strings.HasPrefix(i, prefix+"/") {
					out = append(out, i)
				}
			}
			return out
		}
		links := func(prefix string) bool {
			for _, d := range p.Deps {
				if d == prefix || strings.HasPrefix(d, prefix+"/") {
					return true
				}
			}
			return false
		}
		switch p.ImportPath {
		case mod + "classify", mod + "podrec":
			for _, i := range p.Imports {
				if !standard[i] && !strings.HasPrefix(i, "k8s.io/api/") && !strings.HasPrefix(i, "k8s.io/apimachinery/") && i != kstatus {
					t.Errorf("%s imports %s: it may import only the standard library, k8s.io/api, k8s.io/apimachinery and kstatus's status computation", p.ImportPath, i)
				}
			}
		case mod + "model":
			for _, bad := range []string{mod + "kube", mod + "tui", mod + "report", mod + "cmd"} {
				if got := imports(bad); len(got) > 0 {
					t.Errorf("model imports %v: data flows kube → model → tui", got)
				}
			}
			if links("k8s.io/client-go") {
				t.Errorf("model links k8s.io/client-go: only kube talks to the API server")
			}
		case mod + "tui":
			for _, bad := range []string{mod + "kube", mod + "cmd"} {
				if got := imports(bad); len(got) > 0 {
					t.Errorf("tui imports %v: the dashboard renders the model, never the source", got)
				}
			}
			if links("k8s.io/client-go") {
				t.Errorf("tui links k8s.io/client-go: only kube talks to the API server")
			}
		case mod + "report":
			// The documents are built from the model and printed; they neither watch nor draw.
			for _, bad := range []string{mod + "kube", mod + "tui", mod + "cmd"} {
				if got := imports(bad); len(got) > 0 {
					t.Errorf("report imports %v: a document is built from the model alone", got)
				}
			}
			if links("k8s.io/client-go") {
				t.Errorf("report links k8s.io/client-go: only kube talks to the API server")
			}
		case mod + "contract", mod + "sanitize":
			for _, i := range p.Imports {
				if strings.HasPrefix(i, mod) && i != mod+"podrec" {
					t.Errorf("%s imports %s: a leaf of the pipeline imports none of its packages but podrec", p.ImportPath, i)
				}
				if strings.HasPrefix(i, "k8s.io/client-go") {
					t.Errorf("%s imports %s: only kube talks to the API server", p.ImportPath, i)
				}
			}
		case mod + "recording":
			for _, bad := range []string{mod + "model", mod + "kube", mod + "tui", mod + "report", mod + "replay", mod + "cmd"} {
				if got := imports(bad); len(got) > 0 {
					t.Errorf("recording imports %v: it stores and reads contract batches; replay feeds them to the model", got)
				}
			}
		case mod + "kube", mod + "kube/demo":
			for _, bad := range []string{mod + "model", mod + "tui", mod + "report", mod + "cmd"} {
				if got := imports(bad); len(got) > 0 {
					t.Errorf("%s imports %v: data flows kube → model → tui", p.ImportPath, got)
				}
			}
		}
	}
	for _, want := range []string{"classify", "podrec", "contract", "sanitize", "model", "tui", "kube", "recording", "report", "cmd"} {
		found := false
		for _, p := range pkgs {
			found = found || p.ImportPath == mod+want
		}
		if !found {
			t.Errorf("package %s%s not listed: the test would hold nothing", mod, want)
		}
	}
}

type listedPackage struct {
	ImportPath string
	Standard   bool
	Imports    []string
	Deps       []string
}

// listPackages lists the module's packages and everything they depend on, as `go list -deps`
// does.
func listPackages(t *testing.T) []listedPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-json=ImportPath,Standard,Imports,Deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decoding go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}
