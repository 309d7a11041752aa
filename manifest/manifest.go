// Package manifest reads the manifests `doomwatch wait -f` judges, with kubectl's conventions for
// -f and -R (k8s.io/cli-runtime's resource.Builder.FilenameParam and k8s.io/kubectl's
// FilenameOptions) but without cli-runtime, which links kustomize. It only reads: doomwatch
// applies nothing.
//
// Text from the files is untrusted: every message this package makes is one line with paths, kinds
// and names passed through sanitize.Text, and no message quotes a document.
package manifest

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"doomwatch/sanitize"
)

// Object is one object read from a manifest, a List's items included.
type Object struct {
	// Unstructured is the document as written, names unsanitised, for the API. Its namespace is
	// empty when the manifest names none: the caller fills in -n or the context's.
	*unstructured.Unstructured
	// Source is where the object was read (for a duplicate, where it was read last).
	Source Source
	// Also lists the other places the same object was read, earlier in the order (see Dedupe).
	Also []Source
}

// String names the object for a message, sanitised: "Deployment shop/web", or "Deployment web"
// without a namespace.
func (o Object) String() string {
	name := o.GetName()
	if ns := o.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return display(o.GetKind()) + " " + display(name)
}

// Source is where a document was read.
type Source struct {
	// File is the path as given or walked, sanitised; "stdin" for -. Empty for an error that
	// concerns no file (a URL).
	File string
	// Document counts from 1 the non-empty YAML documents of the file (the text between two
	// "---" lines; a comment-only document counts, an empty one does not), or its JSON objects;
	// 0 for an error about the file itself.
	Document int
	// Item is the object's place in a List document, from 1, one number per nested List; nil
	// outside a List.
	Item []int
}

// String is the source for a message: "deploy/web.yaml, document 2", with ", item 3" for a
// List's item.
func (s Source) String() string { return s.join(", ") }

// Line is msg about what was read at s, as an Error says it: "deploy/web.yaml: document 2: msg".
// msg is the caller's to sanitise.
func (s Source) Line(msg string) string {
	if where := s.join(": "); where != "" {
		return where + ": " + msg
	}
	return msg
}

func (s Source) join(sep string) string {
	var parts []string
	if s.File != "" {
		parts = append(parts, s.File)
	}
	if s.Document > 0 {
		parts = append(parts, "document "+strconv.Itoa(s.Document))
	}
	if len(s.Item) > 0 {
		n := make([]string, len(s.Item))
		for i, v := range s.Item {
			n[i] = strconv.Itoa(v)
		}
		parts = append(parts, "item "+strings.Join(n, "."))
	}
	return strings.Join(parts, sep)
}

// Error is one problem with one path, file or document. Its text is one sanitised line:
// "deploy/web.yaml: document 2: Deployment web: kind is not set".
type Error struct {
	Source Source
	// Err is the cause when there is one (an *fs.PathError for a missing file), for errors.Is.
	Err error
	msg string
}

func (e *Error) Error() string { return e.Source.Line(e.msg) }

func (e *Error) Unwrap() error { return e.Err }

// newError makes an Error whose message is safe to print: msg is sanitised and its runs of
// spaces (a YAML error's line breaks and indentation) are folded into one.
func newError(src Source, cause error, msg string) *Error {
	return &Error{Source: src, Err: cause, msg: strings.Join(strings.Fields(sanitize.Text(msg)), " ")}
}

// maxDisplay bounds a kind, name or path in a message: 253 bytes is the longest name the API
// accepts (a DNS subdomain), and a file can hold a megabyte of name.
const maxDisplay = 253

// display sanitises untrusted text for a message and cuts it to maxDisplay bytes.
func display(s string) string { return cut(sanitize.Text(s), maxDisplay) }

// cut shortens s to at most n bytes, on a rune boundary, marking the cut with an ellipsis.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Read reads the objects of paths as `kubectl apply -f` would: files (any extension when named),
// directories (their *.json, *.yaml and *.yml files; subdirectories too when recursive, as -R),
// glob patterns that name no file, and "-" for stdin. URLs are refused: doomwatch reads local
// files only.
//
// It reads everything it can and returns every problem, one *Error each, joined with errors.Join,
// beside the objects that did parse: a manifest set with three bad files reports three lines. A
// decoding error ends its file, as in cli-runtime's StreamVisitor.Visit; a document without
// apiVersion, kind or metadata.name is an error of its own and the next document is read.
//
// Objects come in kubectl's order (paths as given, files in lexical order within a directory,
// documents and List items in file order) and once each (see Dedupe).
func Read(paths []string, recursive bool, stdin io.Reader) ([]Object, error) {
	var objs []Object
	var errs []error
	for _, p := range paths {
		if p == "-" {
			if stdin == nil {
				errs = append(errs, newError(Source{}, nil, "-: there is no standard input to read"))
				continue
			}
			o, e := decodeStream(Source{File: "stdin"}, stdin)
			objs, errs = append(objs, o...), append(errs, e...)
			continue
		}
		files, e := expand(p, recursive)
		errs = append(errs, e...)
		for _, f := range files {
			o, e := decodeFile(f)
			objs, errs = append(objs, o...), append(errs, e...)
		}
	}
	return Dedupe(objs), errors.Join(errs...)
}

// objectKey is what makes two objects the same object to the API server: the group (the version
// is only a representation), the kind, the namespace and the name.
type objectKey struct{ group, kind, namespace, name string }

// Dedupe keeps one object of each group, kind, namespace and name, in the place of the first and
// with the content and Source of the last: `kubectl apply -f` applies each document in turn, so
// the cluster ends up holding the last. The others' sources go to Also, earliest first, for a
// warning. No error: kubectl raises none.
//
// Read dedupes what it returns; a caller that fills in namespaces dedupes again, since "default"
// and no namespace may then be the same object.
func Dedupe(objs []Object) []Object {
	at := make(map[objectKey]int, len(objs))
	out := objs[:0:0]
	for _, o := range objs {
		k := objectKey{o.GroupVersionKind().Group, o.GetKind(), o.GetNamespace(), o.GetName()}
		i, seen := at[k]
		if !seen {
			at[k] = len(out)
			out = append(out, o)
			continue
		}
		also := append(append(out[i].Also, out[i].Source), o.Also...)
		out[i] = o
		out[i].Also = also
	}
	return out
}

// errorf is fmt.Sprintf for newError.
func errorf(src Source, cause error, format string, args ...any) *Error {
	return newError(src, cause, fmt.Sprintf(format, args...))
}
