package contract

import (
	"slices"
	"testing"
)

// ParseWaitable reads exactly the TYPE names kubectl accepts for the kinds wait knows (kubectl
// api-resources: name, plural, short name, group-qualified), whatever their case, and no other.
func TestParseWaitable(t *testing.T) {
	want := map[string]Kind{
		"deployment": KindDeployment, "deployments": KindDeployment, "deploy": KindDeployment,
		"deployment.apps": KindDeployment, "deployments.apps": KindDeployment,
		"statefulset": KindStatefulSet, "statefulsets": KindStatefulSet, "sts": KindStatefulSet,
		"statefulset.apps": KindStatefulSet, "statefulsets.apps": KindStatefulSet,
		"daemonset": KindDaemonSet, "daemonsets": KindDaemonSet, "ds": KindDaemonSet,
		"daemonset.apps": KindDaemonSet, "daemonsets.apps": KindDaemonSet,
		"job": KindJob, "jobs": KindJob, "job.batch": KindJob, "jobs.batch": KindJob,
		"cronjob": KindCronJob, "cronjobs": KindCronJob, "cj": KindCronJob, "cronjobs.batch": KindCronJob,
		"rollout": KindRollout, "rollouts": KindRollout, "ro": KindRollout, "rollouts.argoproj.io": KindRollout,
		"pod": KindPod, "pods": KindPod, "po": KindPod,
	}
	for typ, k := range want {
		for _, s := range []string{typ, string(typ[0]-'a'+'A') + typ[1:]} {
			if got, ok := ParseWaitable(s); !ok || got != k {
				t.Errorf("ParseWaitable(%q) = %q, %v; want %q", s, got, ok, k)
			}
		}
	}
	for _, typ := range []string{"", "cronjob.apps", "job.apps", "rs", "replicaset", "replicasets.apps", "node", "no",
		"event", "ev", "pod.apps", "deployment.batch", "deploy.apps", "svc"} {
		if got, ok := ParseWaitable(typ); ok {
			t.Errorf("ParseWaitable(%q) = %q, want none", typ, got)
		}
	}
}

func TestKindTable(t *testing.T) {
	if got := Waitable(); !slices.Equal(got, []string{"deployments", "statefulsets", "daemonsets", "jobs", "cronjobs", "rollouts", "pods"}) {
		t.Errorf("Waitable() = %v", got)
	}
	for k, res := range map[Kind]string{KindPod: "pods", KindNode: "nodes", KindReplicaSet: "replicasets", KindEvent: "events",
		KindJob: "jobs", KindCronJob: "cronjobs", Kind("Gadget"): "gadgets"} {
		if got := k.Resource(); got != res {
			t.Errorf("%s.Resource() = %q, want %q", k, got, res)
		}
	}
	seen := map[Kind]bool{}
	for _, k := range Kinds {
		if seen[k.Kind] || k.Resource == "" || k.Version == "" {
			t.Errorf("row %+v: a kind once, each with its resource and version", k)
		}
		seen[k.Kind] = true
	}
}
