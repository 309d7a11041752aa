package kube

import (
	"fmt"

	"k8s.io/client-go/util/jsonpath"

	"doomwatch/sanitize"
)

// JSONPath is a JSONPath expression as Krane writes one in its rollout conditions
// ("$.status.conditions[?(@.type == "Ready")].status"), compiled with client-go's JSONPath.
type JSONPath struct{ p *jsonpath.JSONPath }

// CompileJSONPath compiles Krane's form for client-go's, which takes kubectl's template form
// ("{$.status.x}"); missing keys find nothing rather than fail. The error is one sanitised line.
func CompileJSONPath(expr string) (*JSONPath, error) {
	j := jsonpath.New("krane")
	j.AllowMissingKeys(true)
	if err := j.Parse("{" + expr + "}"); err != nil {
		return nil, oneLine(fmt.Errorf("invalid JsonPath expression %q: %s", sanitize.Text(expr), err))
	}
	return &JSONPath{j}, nil
}

// First is the first value at the path in obj, as the jsonpath gem's first: nil when there is none.
func (j *JSONPath) First(obj map[string]any) any {
	res, err := j.p.FindResults(obj)
	if err != nil || len(res) == 0 || len(res[0]) == 0 || !res[0][0].IsValid() || !res[0][0].CanInterface() {
		return nil
	}
	return res[0][0].Interface()
}
