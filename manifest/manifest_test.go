package manifest

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"doomwatch/sanitize"
)

// The objects of testdata/app without -R, in kubectl's order: files sorted by name (nested/ left
// out), documents and List items in file order; empty.yaml, README.md and notes.txt add nothing.
var appTop = []string{
	"ConfigMap web-config @ testdata/app/configmap.yaml, document 1",
	"Deployment shop/web @ testdata/app/deployment.yaml, document 1",
	"Deployment shop/api @ testdata/app/list.yaml, document 1, item 1",
	"Service shop/api @ testdata/app/list.yaml, document 1, item 2",
	// Document 1 is the header comment before the leading "---", document 3 a comment-only one;
	// the empty document between two "---" lines is not counted.
	"Service web @ testdata/app/multi.yaml, document 2",
	"DaemonSet kube-system/log-agent @ testdata/app/multi.yaml, document 4",
	"StatefulSet db @ testdata/app/statefulset.yml, document 1",
	"Job shop/migrate @ testdata/app/web.json, document 1",
}

// appNested is what -R adds, where filepath.Walk visits it: nested/ sorts after multi.yaml, and
// its files are two levels down.
var appNested = []string{
	"Deployment shop/cron @ testdata/app/nested/deeper/typed-list.yaml, document 1, item 1",
	"Deployment shop/mailer @ testdata/app/nested/deeper/typed-list.yaml, document 1, item 2",
	"Deployment shop/worker @ testdata/app/nested/deeper/worker.yaml, document 1",
}

func TestRead(t *testing.T) {
	appRecursive := slices.Concat(appTop[:6], appNested, appTop[6:])
	tests := []struct {
		name      string
		paths     []string
		recursive bool
		stdin     io.Reader
		want      []string // objects, as describe prints them
		wantErrs  []string // the error's lines
	}{
		{name: "directory", paths: []string{"testdata/app"}, want: appTop},
		{name: "directory -R", paths: []string{"testdata/app"}, recursive: true, want: appRecursive},
		{name: "directory with a trailing slash", paths: []string{"testdata/app/"}, want: appTop},
		{
			name:  "files in the order given",
			paths: []string{"testdata/app/web.json", "testdata/app/deployment.yaml"},
			want:  []string{appTop[7], appTop[1]},
		},
		{
			name:  "a named file is read whatever its extension",
			paths: []string{"testdata/app/notes.txt"},
			wantErrs: []string{
				"testdata/app/notes.txt: document 1: NotAManifest: apiVersion is not set; metadata.name is not set",
			},
		},
		{name: "a 0-byte file holds no object and no error", paths: []string{"testdata/app/empty.yaml"}},
		{name: "a glob that names no file", paths: []string{"testdata/app/*.json"}, want: []string{appTop[7]}},
		{
			name:  "a typed List's items take its apiVersion and kind",
			paths: []string{"testdata/app/nested/deeper/typed-list.yaml"},
			want: []string{
				"Deployment shop/cron @ testdata/app/nested/deeper/typed-list.yaml, document 1, item 1",
				"Deployment shop/mailer @ testdata/app/nested/deeper/typed-list.yaml, document 1, item 2",
			},
		},
		{
			name:  "stdin",
			paths: []string{"-"},
			stdin: strings.NewReader("---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n---\n" +
				`{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}}` + "\n"),
			want: []string{"Deployment web @ stdin, document 1", "Service web @ stdin, document 2"},
		},
		{
			name:  "a stream of JSON objects on stdin",
			paths: []string{"-"},
			stdin: strings.NewReader(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}` +
				`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}`),
			want: []string{"ConfigMap a @ stdin, document 1", "ConfigMap b @ stdin, document 2"},
		},
		{
			// Windows PowerShell's `kubectl get -o yaml > file` writes UTF-16 with a byte order
			// mark, and CRLF line ends.
			name:  "UTF-16 with a byte order mark, CRLF",
			paths: []string{"-"},
			stdin: strings.NewReader(utf16LE("apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: settings\r\n")),
			want:  []string{"ConfigMap settings @ stdin, document 1"},
		},
		{
			name:     "- without stdin",
			paths:    []string{"-"},
			wantErrs: []string{"-: there is no standard input to read"},
		},
		{
			name:     "a URL",
			paths:    []string{"https://example.com/deploy.yaml"},
			wantErrs: []string{"-f takes files, directories and -, not URLs: https://example.com/deploy.yaml"},
		},
		{
			name:     "a missing path",
			paths:    []string{"testdata/app/missing.yaml"},
			wantErrs: []string{"testdata/app/missing.yaml: does not exist"},
		},
		{
			name:     "a directory without manifests",
			paths:    []string{"testdata/docs"},
			wantErrs: []string{"testdata/docs: has no .json, .yaml or .yml file"},
		},
		{
			name:     "a directory whose manifests are all in subdirectories, without -R",
			paths:    []string{"testdata/app/nested"},
			wantErrs: []string{"testdata/app/nested: has no .json, .yaml or .yml file (-R reads its subdirectories)"},
		},
		{
			// The decoder cannot find where the broken document ends, so the rest of the file is
			// not read, as in kubectl; what came before is kept.
			name:     "a YAML syntax error",
			paths:    []string{"testdata/bad/syntax.yaml"},
			want:     []string{"ConfigMap before-the-error @ testdata/bad/syntax.yaml, document 1"},
			wantErrs: []string{"testdata/bad/syntax.yaml: document 2: yaml: line 5: mapping values are not allowed in this context"},
		},
		{
			name:  "documents without kind or name",
			paths: []string{"testdata/bad/nokind.yaml"},
			want:  []string{"Deployment fine @ testdata/bad/nokind.yaml, document 1"},
			wantErrs: []string{
				"testdata/bad/nokind.yaml: document 2: web: kind is not set",
				"testdata/bad/nokind.yaml: document 3: Deployment: metadata.name is not set (generateName cannot be waited for)",
			},
		},
		{
			name:  "every bad path is reported and the good ones are read",
			paths: []string{"testdata/app/missing.yaml", "https://example.com/x.yaml", "testdata/app/web.json", "testdata/docs"},
			want:  []string{appTop[7]},
			wantErrs: []string{
				"testdata/app/missing.yaml: does not exist",
				"-f takes files, directories and -, not URLs: https://example.com/x.yaml",
				"testdata/docs: has no .json, .yaml or .yml file",
			},
		},
		{
			// kubectl apply -f would apply the Deployment twice, the second copy last.
			name:  "the same object twice is read once",
			paths: []string{"testdata/app/deployment.yaml", "testdata/app"},
			want:  slices.Concat(appTop[1:2], appTop[:1], appTop[2:]),
		},
		{name: "no paths"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Read(tc.paths, tc.recursive, tc.stdin)
			if got := describe(objs); !slices.Equal(got, tc.want) {
				t.Errorf("objects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if got := errorLines(err); !slices.Equal(got, tc.wantErrs) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.wantErrs, "\n"))
			}
		})
	}
}

// utf16LE is s in UTF-16LE with its byte order mark; s is ASCII.
func utf16LE(s string) string {
	b := []byte{0xff, 0xfe}
	for _, c := range []byte(s) {
		b = append(b, c, 0)
	}
	return string(b)
}

func describe(objs []Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.String()+" @ "+o.Source.String())
	}
	return out
}

// errorLines is what a caller prints: the joined error, one line each.
func errorLines(err error) []string {
	if err == nil {
		return nil
	}
	return strings.Split(err.Error(), "\n")
}

func TestReadKeepsTheDocument(t *testing.T) {
	objs, err := Read([]string{"testdata/app/deployment.yaml", "testdata/app/list.yaml"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	web := objs[0]
	if web.GetAPIVersion() != "apps/v1" || web.GroupVersionKind().Group != "apps" {
		t.Errorf("apiVersion %q, group %q", web.GetAPIVersion(), web.GroupVersionKind().Group)
	}
	// Integers stay int64, as unstructured's accessors (NestedInt64) and converters expect.
	if n, found, err := unstructured.NestedInt64(web.Object, "spec", "replicas"); err != nil || !found || n != 3 {
		t.Errorf("spec.replicas = %d, %v, %v; want 3", n, found, err)
	}
	if img := web.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"]; img != "nginx:1.27" {
		t.Errorf("image %v", img)
	}
	if n, _, _ := unstructured.NestedInt64(objs[1].Object, "spec", "replicas"); n != 2 {
		t.Errorf("the List's Deployment has replicas %d, want 2", n)
	}
}

func TestReadLeavesTheNamespaceEmpty(t *testing.T) {
	objs, err := Read([]string{"testdata/app/statefulset.yml"}, false, nil)
	if err != nil || len(objs) != 1 {
		t.Fatalf("%v, %v", objs, err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(objs[0].Object, "metadata", "namespace"); found {
		t.Errorf("namespace set to %q: the caller fills it in", objs[0].GetNamespace())
	}
}

func TestReadErrors(t *testing.T) {
	_, err := Read([]string{"testdata/app/missing.yaml", "testdata/bad/nokind.yaml"}, false, nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.Is(%v, fs.ErrNotExist) = false", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Source.File != "testdata/app/missing.yaml" || e.Source.Document != 0 {
		t.Errorf("errors.As: %#v", e)
	}
	var docs []Source
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		if me := (*Error)(nil); errors.As(e, &me) && me.Source.Document > 0 {
			docs = append(docs, me.Source)
		}
	}
	if len(docs) != 2 || docs[0].File != "testdata/bad/nokind.yaml" || docs[0].Document != 2 || docs[1].Document != 3 {
		t.Errorf("sources %+v, want nokind.yaml's documents 2 and 3", docs)
	}
}

// A file is untrusted: what ends up in a message is sanitised and short, whichever field it
// came from.
func TestReadSanitisesMessages(t *testing.T) {
	dir := t.TempDir()
	evilName := "web\x1b]0;pwned\x07\u202egnp.exe"
	manifest := "apiVersion: apps/v1\nmetadata:\n  name: \"" + strings.ReplaceAll(strings.ReplaceAll(evilName, "\x1b", `\e`), "\x07", `\a`) + "\"\n" +
		"---\nkind: \"Deploy\\e[2Jment\\nInjected: line\"\nmetadata: {name: " + strings.Repeat("x", 5000) + "}\n" +
		"---\napiVersion: \"a/b/c\\r\"\nkind: ConfigMap\nmetadata: {name: c}\n"
	file := filepath.Join(dir, "evil\x1b[2J.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Read([]string{dir}, false, nil)
	lines := errorLines(err)
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	prefix := sanitize.Text(file) + ": document "
	for i, want := range []string{
		"1: webgnp.exe: kind is not set",
		"2: Deployment Injected: line " + strings.Repeat("x", maxDisplay) + "…: apiVersion is not set",
		`3: ConfigMap c: apiVersion "a/b/c " is not GROUP/VERSION`,
	} {
		if lines[i] != prefix+want {
			t.Errorf("line %d:\n%q\nwant\n%q", i+1, lines[i], prefix+want)
		}
	}
}

func TestDedupe(t *testing.T) {
	obj := func(apiVersion, kind, ns, name, image string, doc int) Object {
		u := &unstructured.Unstructured{Object: map[string]any{"image": image}}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetNamespace(ns)
		u.SetName(name)
		return Object{Unstructured: u, Source: Source{File: "all.yaml", Document: doc}}
	}
	got := Dedupe([]Object{
		obj("apps/v1", "Deployment", "shop", "web", "v1", 1),
		obj("v1", "Service", "shop", "web", "", 2),
		obj("apps/v1beta2", "Deployment", "shop", "web", "v2", 3), // the same group: the same object
		obj("extensions/v1beta1", "Deployment", "shop", "web", "", 4),
		obj("apps/v1", "Deployment", "", "web", "", 5), // the namespace is not filled in yet
		obj("apps/v1", "Deployment", "shop", "web", "v3", 6),
	})
	want := []string{
		"Deployment shop/web @ all.yaml, document 6",
		"Service shop/web @ all.yaml, document 2",
		"Deployment shop/web @ all.yaml, document 4",
		"Deployment web @ all.yaml, document 5",
	}
	if d := describe(got); !slices.Equal(d, want) {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(d, "\n"), strings.Join(want, "\n"))
	}
	// The cluster ends up with the last document kubectl applies; the warning names the others.
	if got[0].Object["image"] != "v3" || got[0].GetAPIVersion() != "apps/v1" {
		t.Errorf("kept %v, want the last document's content", got[0].Object)
	}
	if also := got[0].Also; len(also) != 2 || also[0].Document != 1 || also[1].Document != 3 {
		t.Errorf("Also = %+v, want documents 1 and 3", also)
	}
}
