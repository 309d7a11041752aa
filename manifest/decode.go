package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/yaml"

	"doomwatch/sanitize"
)

// decodeFile reads the objects of one file.
func decodeFile(path string) ([]Object, []error) {
	src := Source{File: display(path)}
	f, err := os.Open(path)
	if err != nil {
		return nil, []error{newError(src, err, pathErrorText(err))}
	}
	defer f.Close()
	return decodeStream(src, f)
}

// decodeStream reads the documents of one file or of stdin as cli-runtime's FileVisitor and
// StreamVisitor do (pkg/resource/visitor.go): a UTF-16 file with a byte order mark is read as
// UTF-8 (Windows PowerShell's `>` writes UTF-16), apimachinery's YAMLOrJSONDecoder splits YAML
// documents on "---" lines or reads a stream of JSON objects, and a document that is empty or
// only comments (which decodes to null) is skipped.
func decodeStream(src Source, r io.Reader) ([]Object, []error) {
	r = transform.NewReader(r, unicode.BOMOverride(unicode.UTF8.NewDecoder()))
	// 4096 is how far cli-runtime's StreamVisitor looks for a '{' that makes the stream JSON.
	dec := yaml.NewYAMLOrJSONDecoder(r, 4096)
	var objs []Object
	var errs []error
	for doc := 1; ; doc++ {
		at := src
		at.Document = doc
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, errs
			}
			// The decoder cannot resynchronise after a syntax error (a JSON stream never can),
			// so the rest of the file is unread, as in StreamVisitor.Visit.
			return objs, append(errs, newError(at, err, decodeErrorText(err)))
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			continue
		}
		o, e := decodeDocument(at, raw)
		objs, errs = append(objs, o...), append(errs, e...)
	}
}

// decodeErrorText is a decoder's error without what is not the reader's business; it is
// sanitised and folded into one line by newError.
func decodeErrorText(err error) string {
	msg := err.Error()
	// sigs.k8s.io/yaml prefixes the JSON step's errors "error converting YAML to JSON: yaml:"
	// or "error unmarshaling JSON:"; the parser's own "yaml: line 3: ..." is what helps.
	for _, prefix := range []string{"error converting YAML to JSON: ", "error unmarshaling JSON: while decoding JSON: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	return cut(sanitize.Text(msg), 2*maxDisplay)
}

// decodeDocument turns one document, as JSON, into its objects: one, or a List's items.
func decodeDocument(src Source, raw []byte) ([]Object, []error) {
	if raw[0] != '{' {
		return nil, []error{errorf(src, nil, "is %s, not a Kubernetes object", jsonKind(raw[0]))}
	}
	var m map[string]any
	// PreserveInts keeps replicas: 3 an int64, as unstructured.Unstructured expects (its
	// UnstructuredJSONScheme decodes the same way).
	if err := utiljson.Unmarshal(raw, &m); err != nil {
		return nil, []error{newError(src, err, decodeErrorText(err))}
	}
	var objs []Object
	var errs []error
	flatten(src, m, &objs, &errs)
	return objs, errs
}

// flatten appends the object m, or the items of m when it is a List, to objs.
//
// A List is what apimachinery's UnstructuredJSONScheme decodes as an UnstructuredList: any object
// with an items field (kind List, v1/List, DeploymentList, ...), which cli-runtime's
// FlattenListVisitor expands, nested Lists included. An item with neither apiVersion nor kind
// takes the List's apiVersion and its kind without "List" (decodeToList), as the API server's
// typed lists leave them out.
func flatten(src Source, m map[string]any, objs *[]Object, errs *[]error) {
	items, isList := m["items"]
	if !isList {
		if err := check(src, m); err != nil {
			*errs = append(*errs, err)
			return
		}
		*objs = append(*objs, Object{Unstructured: &unstructured.Unstructured{Object: m}, Source: src})
		return
	}
	list, ok := items.([]any)
	if items != nil && !ok {
		*errs = append(*errs, errorf(src, nil, "%sitems is not a list", identify(m)))
		return
	}
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	for i, it := range list {
		at := src
		at.Item = append(slices.Clip(src.Item), i+1)
		obj, ok := it.(map[string]any)
		if !ok {
			*errs = append(*errs, errorf(at, nil, "is %s, not a Kubernetes object", goKind(it)))
			continue
		}
		if isEmpty(obj["apiVersion"]) && isEmpty(obj["kind"]) {
			obj["apiVersion"] = apiVersion
			obj["kind"] = strings.TrimSuffix(kind, "List")
		}
		flatten(at, obj, objs, errs)
	}
}

// isEmpty is unstructured's GetKind() == "" for a field that is missing, null or "". A kind of the
// wrong type stays, to be reported.
func isEmpty(v any) bool { return v == nil || v == "" }

// check is what doomwatch needs of an object to find it in the cluster: a string apiVersion that
// parses as GROUP/VERSION, a kind, and metadata.name; metadata.namespace, when set, a string. Every
// problem of the document is on the one line.
func check(src Source, m map[string]any) error {
	var problems []string
	apiVersion, p := stringField(m, "apiVersion")
	if p != "" {
		problems = append(problems, p)
	} else if _, err := schema.ParseGroupVersion(apiVersion); err != nil {
		problems = append(problems, "apiVersion "+quote(apiVersion)+" is not GROUP/VERSION")
	}
	if _, p := stringField(m, "kind"); p != "" {
		problems = append(problems, p)
	}
	switch md := m["metadata"].(type) {
	case nil:
		problems = append(problems, "metadata.name is not set")
	case map[string]any:
		if _, p := stringField(md, "name"); p != "" {
			p = "metadata." + p
			if g, _ := md["generateName"].(string); g != "" {
				// kubectl create accepts it, but the object's name is known only once it exists.
				p += " (generateName cannot be waited for)"
			}
			problems = append(problems, p)
		}
		if ns, ok := md["namespace"]; ok && ns != nil {
			if _, ok := ns.(string); !ok {
				problems = append(problems, "metadata.namespace is not a string")
			}
		}
	default:
		problems = append(problems, "metadata is not an object")
	}
	if len(problems) == 0 {
		return nil
	}
	return newError(src, nil, identify(m)+strings.Join(problems, "; "))
}

// stringField returns m[key] when it is a non-empty string, or the problem with it.
func stringField(m map[string]any, key string) (string, string) {
	switch v := m[key].(type) {
	case nil:
		return "", key + " is not set"
	case string:
		if v == "" {
			return "", key + " is not set"
		}
		return v, ""
	default:
		return "", key + " is not a string"
	}
}

// identify names what a document says it is, for the start of a message: "Deployment web: ",
// "web: ", "Deployment: ", or nothing.
func identify(m map[string]any) string {
	kind, _ := m["kind"].(string)
	var name string
	if md, ok := m["metadata"].(map[string]any); ok {
		name, _ = md["name"].(string)
	}
	var parts []string
	for _, s := range []string{kind, name} {
		if s = display(s); strings.TrimSpace(s) != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, " ") + ": "
}

// quote is display in quotes, for a value that may be empty or hold spaces.
func quote(s string) string { return `"` + display(s) + `"` }

// jsonKind names a JSON value by its first byte.
func jsonKind(b byte) string {
	switch b {
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

// goKind names a decoded JSON value.
func goKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	default:
		return "a number"
	}
}
