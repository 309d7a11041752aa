package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// waitfNamespace holds the manifest set of testWaitManifests.
const waitfNamespace = "wait-f-e2e"

// testWaitManifests runs `doomwatch wait -f` on a manifest set (testdata/waitf/set: a Deployment,
// a StatefulSet, an Argo Rollout, a ConfigMap, a Service, a CRD and a custom resource of it),
// applied as `kubectl apply -f` would apply it, against the real controllers: the wait starts
// right after the apply, as in a CI job, and must end complete once every controller has observed
// and rolled out its object. The same set's Deployment then updated to pods that crash must be
// doomed, not passed on the revision before; and objects never applied must be named, a line each.
func testWaitManifests(t *testing.T, ctx context.Context, cp *ControlPlane) {
	if _, err := cp.AdminClient.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: waitfNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	set := filepath.Join("testdata", "waitf", "set")
	objs := readManifests(t, set)
	applyManifests(t, ctx, cp, objs)

	r, doc := runWaitF(t, cp, "-f", set, "-R")
	if r.code != 0 || doc.Verdict != "complete" {
		t.Fatalf("wait -f on the applied set: want exit 0 and complete: %s", r)
	}
	// The kinds doomwatch does not model are judged with kstatus, whose messages these are
	// (fluxcd/cli-utils pkg/kstatus/status core.go and status.go).
	want := map[string]string{
		"Deployment/web": "", "StatefulSet/db": "", "Rollout/api": `rollout "api" is Healthy`,
		"ConfigMap/app-config": "Current: Resource is always ready", "Service/web": "Current: Service is ready",
		"Widget/blue": "Current: Resource is current", "CustomResourceDefinition/widgets.doomwatch.test": "Current: CRD is established",
	}
	for _, w := range doc.Workloads {
		key := w.Kind + "/" + w.Name
		reason, ok := want[key]
		if !ok || w.Verdict != "complete" || reason != "" && w.Reason != reason {
			t.Errorf("workload %+v, want one of %v, complete", w, want)
		}
		if wantNS := waitfNamespace; w.Kind == "CustomResourceDefinition" && w.Namespace != "" || w.Kind != "CustomResourceDefinition" && w.Namespace != wantNS {
			t.Errorf("%s in namespace %q", key, w.Namespace)
		}
		delete(want, key)
	}
	if len(want) != 0 {
		t.Errorf("not in wait's document: %v\n%s", want, r.stdout)
	}
	// Complete means rolled out at the applied generation: the controller had observed it.
	d, err := cp.AdminClient.AppsV1().Deployments(waitfNamespace).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.ObservedGeneration != d.Generation || d.Status.UpdatedReplicas != 2 || d.Status.AvailableReplicas != 2 {
		t.Errorf("wait passed with deployment/web at observed generation %d of %d, %d updated, %d available",
			d.Status.ObservedGeneration, d.Generation, d.Status.UpdatedReplicas, d.Status.AvailableReplicas)
	}

	t.Run("update to a crash", func(t *testing.T) {
		// app.yaml with the Deployment's pods crashing (kwok's behaviour-crash Stages), applied and
		// waited for at once: the revision before is complete, and must not pass the wait.
		dir := t.TempDir()
		var web *unstructured.Unstructured
		for _, o := range objs {
			if o.GetKind() == "Deployment" {
				web = o.DeepCopy()
			}
		}
		tmpl := web.Object["spec"].(map[string]any)["template"].(map[string]any)
		tmpl["metadata"].(map[string]any)["annotations"] = map[string]any{
			"doomwatch.test/behaviour": "crash", "doomwatch.test/exit-code": "1",
			"doomwatch.test/exit-reason": "Error", "doomwatch.test/run-seconds": "2",
		}
		containers, _, _ := unstructured.NestedSlice(web.Object, "spec", "template", "spec", "containers")
		containers[0].(map[string]any)["image"] = "registry.example.com/shop/web:v2"
		if err := unstructured.SetNestedSlice(web.Object, containers, "spec", "template", "spec", "containers"); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(web.Object)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "web.json")
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		applyManifests(t, ctx, cp, []*unstructured.Unstructured{web})
		r, doc := runWaitF(t, cp, "-f", file)
		if r.code != 1 || doc.Verdict != "doomed" || len(doc.Workloads) != 1 {
			t.Fatalf("wait -f after the update to crashing pods: want exit 1, doomed: %s", r)
		}
		if w := doc.Workloads[0]; w.Kind != "Deployment" || w.Verdict != "doomed" || len(w.Doomed) == 0 || !strings.Contains(w.Doomed[0].Reason, "Crash") {
			t.Errorf("workload %+v, want deployment/web doomed by its crash loop", w)
		}
		t.Logf("doomed after %s: %s", r.took.Round(100*time.Millisecond), doc.Workloads[0].Reason)
	})

	t.Run("custom resource lifecycle", func(t *testing.T) {
		testWidgetLifecycle(t, ctx, cp)
	})

	t.Run("custom resource owning crashing pods", func(t *testing.T) {
		testWidgetOwnsPods(t, ctx, cp)
	})

	t.Run("cronjob latest job", func(t *testing.T) {
		testCronJobLatestJob(t, ctx, cp)
	})

	t.Run("krane rollout conditions", func(t *testing.T) {
		testKraneConditions(t, ctx, cp)
	})

	t.Run("type/name", func(t *testing.T) {
		// Any kind the API server serves, named as kubectl names it; discovery maps each TYPE, and a
		// kind doomwatch models (a StatefulSet) is waited for as one. (deployment/web crashes since
		// "update to a crash".)
		r, doc := runWaitF(t, cp, "widgets.doomwatch.test/blue", "svc/web", "cm/app-config", "statefulsets.v1.apps/db")
		if r.code != 0 || doc.Verdict != "complete" || len(doc.Workloads) != 4 {
			t.Fatalf("wait TYPE/NAME of four kinds: want exit 0, complete: %s", r)
		}
		kinds := map[string]bool{}
		for _, w := range doc.Workloads {
			kinds[w.Kind+"/"+w.Name] = w.Verdict == "complete"
		}
		if !kinds["Widget/blue"] || !kinds["Service/web"] || !kinds["ConfigMap/app-config"] || !kinds["StatefulSet/db"] {
			t.Errorf("workloads %v", kinds)
		}
		r = runDoomwatch(t, waitLimit, nil, "wait", "gadgets/g", "widget/absent", "-n", waitfNamespace, "--request-timeout=10s", "--kubeconfig", cp.AdminKubeconfig)
		want := "doomwatch: the server doesn't have a resource type \"gadgets\"\ndoomwatch: widget/absent not found in namespace " + waitfNamespace + "\n"
		if r.code != 1 || r.stderr != want {
			t.Errorf("want exit 1 and\n%s%s", want, r)
		}
	})

	t.Run("missing", func(t *testing.T) {
		missing := filepath.Join("testdata", "waitf", "missing", "objects.yaml")
		r := runDoomwatch(t, waitLimit, nil, "wait", "-f", missing, "-n", waitfNamespace, "--request-timeout=10s", "--kubeconfig", cp.AdminKubeconfig)
		lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
		slices.Sort(lines)
		want := []string{
			"doomwatch: " + missing + ": document 1: configmap/absent not found in namespace " + waitfNamespace,
			"doomwatch: " + missing + ": document 2: deployment/ghost not found in namespace " + waitfNamespace,
			"doomwatch: " + missing + ": document 3: Gadget g: no API group version gadgets.doomwatch.test/v1: not served by the cluster",
		}
		if r.code != 1 || !slices.Equal(lines, want) {
			t.Errorf("want exit 1 and the lines\n%s\n%s", strings.Join(want, "\n"), r)
		}
	})
}

// runWaitF runs `doomwatch wait -o json` with args in waitfNamespace and decodes its document.
func runWaitF(t *testing.T, cp *ControlPlane, args ...string) (result, waitDoc) {
	t.Helper()
	args = append(append([]string{"wait", "-o", "json"}, args...),
		"-n", waitfNamespace, "--timeout", "2m", "--request-timeout=10s", "--kubeconfig", cp.AdminKubeconfig)
	r := runDoomwatch(t, 3*time.Minute, nil, args...)
	var doc waitDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("decoding wait -o json: %v\n%s", err, r)
	}
	return r, doc
}

// readManifests reads every YAML file under dir, in lexical order.
func readManifests(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		objs, err := parseObjects(path, b)
		out = append(out, objs...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// applyManifests applies objs in waitfNamespace as kubectl apply -f would (server-side here),
// CRDs first and established before the objects of their kinds.
func applyManifests(t *testing.T, ctx context.Context, cp *ControlPlane, objs []*unstructured.Unstructured) {
	t.Helper()
	var rest []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			rest = append(rest, o)
			continue
		}
		if _, err := cp.Dynamic.Resource(crdGVR).Apply(ctx, o.GetName(), o, applyOptions); err != nil {
			t.Fatal(err)
		}
		if err := cp.waitEstablished(ctx, o.GetName()); err != nil {
			t.Fatal(err)
		}
		cp.Mapper.Reset()
	}
	for _, o := range rest {
		gvk := o.GroupVersionKind()
		m, err := cp.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s %s: %v", gvk.Kind, o.GetName(), err)
		}
		res := cp.Dynamic.Resource(m.Resource)
		o = o.DeepCopy()
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			o.SetNamespace(waitfNamespace)
			_, err = res.Namespace(waitfNamespace).Apply(ctx, o.GetName(), o, applyOptions)
		} else {
			_, err = res.Apply(ctx, o.GetName(), o, applyOptions)
		}
		if err != nil {
			t.Fatalf("applying %s %s: %v", gvk.Kind, o.GetName(), err)
		}
	}
}

// widgetGVR is the resource of testdata/waitf/set/00-crd.yaml's Widgets.
var widgetGVR = schema.GroupVersionResource{Group: "doomwatch.test", Version: "v1", Resource: "widgets"}

// testWidgetLifecycle drives a custom resource through the kstatus conditions an operator writes
// (Reconciling while it works, Ready when done, Stalled when it gives up: the conventions of
// fluxcd/cli-utils pkg/kstatus/README.md), on its status subresource as operators do, while `doomwatch wait -f` waits on it. The test writes
// the status as the operator would: no operator exists for a test's CRD, and the point is what
// wait makes of the conditions, whoever writes them.
func testWidgetLifecycle(t *testing.T, ctx context.Context, cp *ControlPlane) {
	res := cp.Dynamic.Resource(widgetGVR).Namespace(waitfNamespace)
	file := filepath.Join(t.TempDir(), "widget.yaml")
	manifest := "apiVersion: doomwatch.test/v1\nkind: Widget\nmetadata:\n  name: %s\nspec:\n  size: 3\n"
	setStatus := func(name string, generation int64, conds ...map[string]any) {
		t.Helper()
		w, err := res.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cs := make([]any, len(conds))
		for i, c := range conds {
			c["lastTransitionTime"] = time.Now().UTC().Format(time.RFC3339)
			cs[i] = c
		}
		w.Object["status"] = map[string]any{"observedGeneration": generation, "conditions": cs}
		if _, err := res.UpdateStatus(ctx, w, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cond := func(typ, status, reason, message string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": message}
	}
	for _, tc := range []struct {
		name    string
		end     []map[string]any
		code    int
		verdict string
		reason  string
	}{
		{"ready", []map[string]any{cond("Ready", "True", "Succeeded", "3 widgets ready")}, 0, "complete", "Current: Resource is Ready"},
		{"stalled", []map[string]any{cond("Stalled", "True", "QuotaExceeded", "exceeded quota: widgets, requested: 3, limited: 2"),
			cond("Ready", "False", "QuotaExceeded", "exceeded quota: widgets, requested: 3, limited: 2")},
			1, "doomed", "Failed: exceeded quota: widgets, requested: 3, limited: 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "widget-" + tc.name
			if err := os.WriteFile(file, []byte(fmt.Sprintf(manifest, name)), 0o644); err != nil {
				t.Fatal(err)
			}
			objs, err := parseObjects(file, []byte(fmt.Sprintf(manifest, name)))
			if err != nil {
				t.Fatal(err)
			}
			applyManifests(t, ctx, cp, objs)
			setStatus(name, 1, cond("Reconciling", "True", "Progressing", "creating 3 widgets"))
			// wait starts on a Reconciling Widget, and must still be waiting when its progress
			// says so on stderr; then the operator's last word decides it.
			w := startWait(t, "-f", file, "-o", "json", "-n", waitfNamespace, "--timeout", "2m", "--request-timeout=10s", "--kubeconfig", cp.AdminKubeconfig)
			w.awaitStderr("the Widget progressing", time.Minute, func(s string) bool {
				return strings.Contains(s, " widget/"+name+": progressing: InProgress: creating 3 widgets\n")
			})
			setStatus(name, 1, tc.end...)
			r := w.wait(time.Minute)
			var doc waitDoc
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatalf("decoding wait -o json: %v\n%s", err, r)
			}
			if r.code != tc.code || doc.Verdict != tc.verdict || len(doc.Workloads) != 1 || doc.Workloads[0].Reason != tc.reason {
				t.Errorf("want exit %d, %s, %q: %s", tc.code, tc.verdict, tc.reason, r)
			}
		})
	}
}

// testWidgetOwnsPods: a custom resource whose pods crash-loop is doomed with the pods' reason
// while its own status still says Reconciling, which kstatus calls InProgress and would wait on
// until --timeout. The chain is three objects deep above the pods, as an operator's often is: the
// Widget controls a second Widget (an object the model does not hold: wait reads its owner with a
// GET), which controls a Deployment, whose ReplicaSet the real controller-manager makes, whose pods
// kwok's behaviour-crash Stages crash. The test writes what the operator would (the child Widget,
// the Deployment, the Reconciling status): no operator exists for a test's CRD, and the point is
// what wait makes of the ownerReferences, whoever writes them.
func testWidgetOwnsPods(t *testing.T, ctx context.Context, cp *ControlPlane) {
	res := cp.Dynamic.Resource(widgetGVR).Namespace(waitfNamespace)
	file := filepath.Join(t.TempDir(), "widget.yaml")
	manifest := "apiVersion: doomwatch.test/v1\nkind: Widget\nmetadata:\n  name: shop\nspec:\n  size: 2\n"
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	objs, err := parseObjects(file, []byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	applyManifests(t, ctx, cp, objs)
	top, err := res.Get(ctx, "shop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	top.Object["status"] = map[string]any{"observedGeneration": top.GetGeneration(), "conditions": []any{
		map[string]any{"type": "Reconciling", "status": "True", "reason": "Progressing", "message": "rolling out shop-web",
			"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
	if _, err := res.UpdateStatus(ctx, top, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controls := func(o *unstructured.Unstructured) []metav1.OwnerReference {
		yes := true
		return []metav1.OwnerReference{{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Name: o.GetName(), UID: o.GetUID(),
			Controller: &yes, BlockOwnerDeletion: &yes}}
	}
	part := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "doomwatch.test/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "shop-part"}, "spec": map[string]any{"size": int64(2)}}}
	part.SetOwnerReferences(controls(top))
	if part, err = res.Create(ctx, part, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	replicas := int32(2)
	labels := map[string]string{"app": "shop-web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-web", OwnerReferences: controls(part)},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
					"doomwatch.test/behaviour": "crash", "doomwatch.test/exit-code": "1",
					"doomwatch.test/exit-reason": "Error", "doomwatch.test/run-seconds": "2"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/shop/web:v2"}}}}},
	}
	if _, err := cp.AdminClient.AppsV1().Deployments(waitfNamespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r, doc := runWaitF(t, cp, "-f", file)
	if r.code != 1 || doc.Verdict != "doomed" || len(doc.Workloads) != 1 {
		t.Fatalf("wait -f on a Widget whose pods crash-loop: want exit 1, doomed: %s", r)
	}
	w := doc.Workloads[0]
	if w.Kind != "Widget" || w.Verdict != "doomed" || !strings.Contains(w.Reason, " pods it controls doomed: Crash") ||
		len(w.Doomed) == 0 || !strings.HasPrefix(w.Doomed[0].Pod, "shop-web-") {
		t.Errorf("workload %+v, want widget/shop doomed by shop-web's crash loop", w)
	}
	// The Widget's own status never changed: kstatus alone would still be waiting.
	if got, err := res.Get(ctx, "shop", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions"); len(conds) != 1 {
		t.Errorf("the Widget's conditions changed: %v", conds)
	}
	t.Logf("doomed after %s: %s", r.took.Round(100*time.Millisecond), w.Reason)
}

// testCronJobLatestJob: `wait cronjob/NAME` waits for the CronJob's latest Job. A CronJob that
// has made none is complete, as Krane passes it; once `kubectl create job --from=cronjob/NAME` (the
// real kubectl, which makes the CronJob the Job's controller) has started a Job whose pod crashes
// with no retry left, the real Job controller fails it, and so does the wait, naming the Job; a
// wait begun after that failure does not judge it again. The schedule is Jan 1 at 04:00, which no
// test run reaches.
func testCronJobLatestJob(t *testing.T, ctx context.Context, cp *ControlPlane) {
	never, zero := int32(0), false
	cron := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec: batchv1.CronJobSpec{Schedule: "0 4 1 1 *", Suspend: &zero, JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			BackoffLimit: &never,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"doomwatch.test/behaviour": "crash",
					"doomwatch.test/exit-code": "1", "doomwatch.test/run-seconds": "2"}},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "export", Image: "registry.example.com/shop/export:v2"}}},
			}}}},
	}
	if _, err := cp.AdminClient.BatchV1().CronJobs(waitfNamespace).Create(ctx, cron, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r, doc := runWaitF(t, cp, "cronjob/nightly")
	if r.code != 0 || len(doc.Workloads) != 1 || !strings.Contains(doc.Workloads[0].Reason, `cronjob "nightly" has no Job running or made since the wait began`) {
		t.Fatalf("a CronJob with no Job: want exit 0, complete: %s", r)
	}
	if k := runKubectl(t, time.Minute, cp.AdminKubeconfig, "create", "job", "nightly-manual", "--from=cronjob/nightly", "-n", waitfNamespace); k.code != 0 {
		t.Fatalf("kubectl create job --from: %s", k)
	}
	r, doc = runWaitF(t, cp, "cj/nightly")
	if r.code != 1 || doc.Verdict != "doomed" || len(doc.Workloads) != 1 || !strings.HasPrefix(doc.Workloads[0].Reason, "job/nightly-manual: ") {
		t.Fatalf("a CronJob whose latest Job fails: want exit 1, doomed by job/nightly-manual: %s", r)
	}
	t.Logf("doomed after %s: %s", r.took.Round(100*time.Millisecond), doc.Workloads[0].Reason)
	// A wait begun after that run failed does not judge it: it is the CronJob's history. The
	// Job's conditions are timed in whole seconds, and a wait begun within the second of the failure
	// still counts it: this one begins the second after.
	job, err := cp.AdminClient.BatchV1().Jobs(waitfNamespace).Get(ctx, "nightly-manual", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed {
			time.Sleep(time.Until(c.LastTransitionTime.Add(2 * time.Second)))
		}
	}
	if r, doc = runWaitF(t, cp, "cronjob/nightly"); r.code != 0 || len(doc.Workloads) != 1 || !strings.Contains(doc.Workloads[0].Reason, "no Job running or made since") {
		t.Errorf("a CronJob whose latest run failed before the wait: want exit 0, complete: %s", r)
	}
}

// testKraneConditions: a custom resource whose CRD carries Krane's
// krane.shopify.io/instance-rollout-conditions is judged by those conditions, not by kstatus. The
// status is the example of Krane's README (Ready=False and Failed=True at the observed
// generation), which Krane fails with "resource is failed" and kstatus would call InProgress for
// ever; the test writes it as the operator would (no operator exists for a test's CRD).
func testKraneConditions(t *testing.T, ctx context.Context, cp *ControlPlane) {
	dir := filepath.Join("testdata", "waitf", "krane")
	applyManifests(t, ctx, cp, readManifests(t, dir))
	res := cp.Dynamic.Resource(schema.GroupVersionResource{Group: "stable.doomwatch.test", Version: "v1", Resource: "examples"}).Namespace(waitfNamespace)
	ex, err := res.Get(ctx, "example", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ex.Object["status"] = map[string]any{"observedGeneration": ex.GetGeneration(), "conditions": []any{
		map[string]any{"type": "Ready", "status": "False", "reason": "exampleNotReady", "message": "resource is not ready"},
		map[string]any{"type": "Failed", "status": "True", "reason": "exampleFailed", "message": "resource is failed"},
	}}
	if _, err := res.UpdateStatus(ctx, ex, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r, doc := runWaitF(t, cp, "-f", filepath.Join(dir, "example.yaml"))
	if r.code != 1 || doc.Verdict != "doomed" || len(doc.Workloads) != 1 ||
		doc.Workloads[0].Reason != "Krane's failure condition met: resource is failed" {
		t.Fatalf("want exit 1, doomed by Krane's failure condition: %s", r)
	}
}
