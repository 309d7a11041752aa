package demo

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/model"
	"doomwatch/report"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// goldenTimes are the --at values the golden files cover: node-3's first failure, the
// rollouts under way, and the finished story.
var goldenTimes = []time.Duration{5 * time.Second, 20 * time.Second, 45 * time.Second, 90 * time.Second}

// once does what `doomwatch --demo --once -o json --at at` does: start the demo in snapshot
// mode, apply batches until the source has synced and gone quiet, and snapshot the model at the
// source's (simulated) time.
func once(t *testing.T, seed int64, at time.Duration) (report.Snapshot, []byte) {
	t.Helper()
	_, snap, out := onceModel(t, seed, at)
	return snap, out
}

// onceModel is once that also hands back the model, for tests that look at evidence the
// JSON does not carry (the failure ledger).
func onceModel(t *testing.T, seed int64, at time.Duration) (*model.Model, report.Snapshot, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	src, err := Start(ctx, Options{Seed: seed, At: at})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	m := model.New(model.DefaultConfig())
	if err := src.Settle(ctx, func(b contract.Batch) { m.Apply(&b, src.Now()) }); err != nil {
		t.Fatalf("Settle: %v", err)
	}
	if want := Epoch.Add(at); !src.Now().Equal(want) {
		t.Fatalf("snapshot clock = %s, want %s", src.Now(), want)
	}
	snap := report.NewSnapshot(m, src.Context(), src.Now())
	var buf bytes.Buffer
	if err := report.SnapshotPrinters.Print(&buf, "json", &snap); err != nil {
		t.Fatalf("writing JSON: %v", err)
	}
	return m, snap, buf.Bytes()
}

func TestSameSeedSameBytes(t *testing.T) {
	_, a := once(t, 7, 90*time.Second)
	_, b := once(t, 7, 90*time.Second)
	if !bytes.Equal(a, b) {
		t.Fatalf("two runs with seed 7 --at 90s differ:\n%s", firstDiff(a, b))
	}
	_, c := once(t, 8, 90*time.Second)
	if bytes.Equal(a, c) {
		t.Fatal("seeds 7 and 8 produced identical output; the seed should vary names and IDs")
	}
}

func TestGolden(t *testing.T) {
	for _, at := range goldenTimes {
		t.Run(at.String(), func(t *testing.T) {
			_, got := once(t, 1, at)
			path := filepath.Join("testdata", fmt.Sprintf("at-%ds.json", int(at.Seconds())))
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./kube/demo -run TestGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("--demo --once -o json --at %s differs from %s:\n%s", at, path, firstDiff(want, got))
			}
		})
	}
}

// TestStory checks the story the README tells, at 90s and for several seeds: the seed changes
// names and jitter, never the outcome.
func TestStory(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		m, snap, _ := onceModel(t, seed, 90*time.Second)

		// node-3's runtime trouble shows in both spellings the kubelet uses for an exit-128 start
		// failure: containerd's StartError and dockershim/cri-dockerd's ContainerCannotRun. Both
		// are node evidence, and all of it is on node-3. So is runc's "no such file or directory"
		// for the pod's cgroup: an errno in a /sys/fs/cgroup path is node trouble, not a missing
		// entrypoint.
		// The CNI failing a sandbox there (FailedCreatePodSandBox, from events) is node evidence too.
		reasons := map[string]int{}
		cgroupErrno := 0
		for _, f := range m.Failures(Epoch.Add(90 * time.Second)) {
			sandbox := f.Reason == "FailedCreatePodSandBox" && f.ExitCode == 0 && f.Container == ""
			if f.Node != "node-3" || f.ExitCode != 128 && !sandbox {
				t.Errorf("seed %d: ledger holds %s/%s %s exit %d on %s, want exit 128 or a sandbox failure on node-3 only",
					seed, f.Pod, f.Container, f.Reason, f.ExitCode, f.Node)
			}
			reasons[f.Reason]++
			if strings.Contains(f.Message, "/sys/fs/cgroup/") && strings.Contains(f.Message, "no such file or directory") {
				cgroupErrno++
			}
		}
		if reasons["StartError"] == 0 || reasons["ContainerCannotRun"] != 1 || reasons["FailedCreatePodSandBox"] == 0 {
			t.Errorf("seed %d: node-3 failure reasons %v, want StartError, one ContainerCannotRun and a FailedCreatePodSandBox", seed, reasons)
		}
		if cgroupErrno == 0 {
			t.Errorf("seed %d: no start failure with an errno in a cgroup path counts as node-3's evidence", seed)
		}

		// node-3 is suspect, and only node-3; it holds every exit-128 start failure.
		for _, n := range snap.Nodes {
			switch {
			case n.Name == "node-3":
				if !n.Suspect || n.Why == "" {
					t.Errorf("seed %d: node-3 not suspect (or no why): %+v", seed, n)
				}
				if n.FailedPods < 3 {
					t.Errorf("seed %d: node-3 failed pods = %d, want >= 3", seed, n.FailedPods)
				}
				if !strings.Contains(n.DominantMessage, "context deadline exceeded") {
					t.Errorf("seed %d: node-3 dominant message = %q", seed, n.DominantMessage)
				}
			case n.Suspect || n.StartFailures128 != 0:
				t.Errorf("seed %d: %s has exit-128 failures or is suspect: %+v", seed, n.Name, n)
			}
			if !n.Ready || !n.Known {
				t.Errorf("seed %d: %s not a known Ready node: %+v", seed, n.Name, n)
			}
		}
		if len(snap.Nodes) != 5 {
			t.Errorf("seed %d: %d nodes, want 5", seed, len(snap.Nodes))
		}

		rollouts := map[string]report.SnapshotRollout{}
		for _, r := range snap.Rollouts {
			rollouts[r.Namespace+"/"+r.Name] = r
		}
		for _, k := range []string{"shop/payments", "search/search"} {
			if r := rollouts[k]; r.Verdict != string(classify.RolloutDoomed) || r.Reason == "" {
				t.Errorf("seed %d: rollout %s = %q (%q), want doomed with a reason", seed, k, r.Verdict, r.Reason)
			}
		}
		if r := rollouts["shop/payments"]; !strings.Contains(r.Reason, "not found") && !strings.Contains(r.Reason, "ProgressDeadlineExceeded") {
			t.Errorf("seed %d: payments reason %q names neither the missing image nor the deadline", seed, r.Reason)
		}
		if r := rollouts["shop/checkout"]; r.Verdict == string(classify.RolloutDoomed) || r.Verdict == "" || r.Updated != 12 || r.Desired != 12 {
			t.Errorf("seed %d: checkout rollout = %+v, want 12/12 updated and not doomed", seed, r)
		}

		byName := map[string]report.SnapshotPod{}
		var node3Failed, unschedulable, jobs, evicted, sandbox int
		for _, p := range snap.Pods {
			byName[p.Namespace+"/"+p.Name] = p
			var last *report.SnapshotState
			if len(p.Containers) > 0 {
				last = p.Containers[0].LastState
			}
			lastStartFailure := last != nil && (last.Reason == "StartError" || last.Reason == "ContainerCannotRun") &&
				last.ExitCode != nil && *last.ExitCode == 128
			switch {
			case lastStartFailure:
				node3Failed++
				if p.Node != "node-3" || p.Verdict != "healthy" {
					t.Errorf("seed %d: pod %s with a past exit 128 is %s on %s, want healthy on node-3", seed, p.Name, p.Verdict, p.Node)
				}
			case p.Owner == "Job/db-migrate-v2":
				jobs++
				if p.Verdict != "completed" || p.Phase != "Succeeded" {
					t.Errorf("seed %d: migration job pod is %s/%s, want completed/Succeeded", seed, p.Verdict, p.Phase)
				}
			case p.Owner == "Deployment/recommender":
				unschedulable++
				if p.Verdict != "progressing" || !strings.Contains(p.Reason, "Unschedulable") || p.Status != "Pending" {
					t.Errorf("seed %d: recommender pod = %s %q %s, want progressing Unschedulable Pending", seed, p.Verdict, p.Reason, p.Status)
				}
			case p.Owner == "Deployment/notifier":
				// Waiting for its sandbox, the cause only in its events.
				sandbox++
				if p.Verdict != "transient" || !strings.HasPrefix(p.Reason, "Failed to create pod sandbox, will retry: ") ||
					p.Status != "ContainerCreating" || p.Node != "node-3" || len(p.Events) == 0 || p.Events[0].Reason != "FailedCreatePodSandBox" {
					t.Errorf("seed %d: notifier pod = %s %q %s on %s, events %+v; want transient sandbox failure on node-3",
						seed, p.Verdict, p.Reason, p.Status, p.Node, p.Events)
				}
			case p.Phase == "Failed":
				evicted++
				// STATUS is the container's ContainerStatusUnknown, as kubectl prints it
				// (printPod prefers a terminated container's reason over the pod's).
				if p.Owner != "Deployment/inventory" || p.Verdict != "transient" || !strings.Contains(p.Reason, "Evicted") {
					t.Errorf("seed %d: failed pod %s = %s %s %q, want an evicted, transient inventory pod", seed, p.Name, p.Owner, p.Verdict, p.Reason)
				}
			}
		}
		if node3Failed < 4 || jobs != 1 || unschedulable != 1 || evicted != 1 || sandbox != 1 {
			t.Errorf("seed %d: recovered exit-128 pods %d (want >= 4), job pods %d, unschedulable %d, evicted %d, waiting for a sandbox %d (want 1 each)",
				seed, node3Failed, jobs, unschedulable, evicted, sandbox)
		}
		if snap.Summary.Pods < 50 || snap.Summary.Pods > 80 {
			t.Errorf("seed %d: %d pods, want a modest cluster of 50-80", seed, snap.Summary.Pods)
		}
	}
}

// TestEarlyFailuresAreTransient looks at node-3 while its first pod is failing to start:
// the failure is transient, not doomed, and already counts as node evidence.
func TestEarlyFailuresAreTransient(t *testing.T) {
	snap, _ := once(t, 1, 5*time.Second)
	failing := 0
	for _, p := range snap.Pods {
		if len(p.Containers) == 0 || p.Containers[0].State == nil || p.Containers[0].State.Reason != "StartError" {
			continue
		}
		failing++
		if p.Node != "node-3" || p.Verdict != "transient" {
			t.Errorf("pod %s failing to start is %s on %s, want transient on node-3", p.Name, p.Verdict, p.Node)
		}
		if c := p.Containers[0]; c.State.ExitCode == nil || *c.State.ExitCode != 128 {
			t.Errorf("pod %s: start failure exit code %v, want 128", p.Name, c.State.ExitCode)
		}
	}
	if failing == 0 {
		t.Fatal("no pod is failing to start at 5s; the scenario should show node-3's first failure")
	}
	for _, n := range snap.Nodes {
		if n.Name == "node-3" && n.StartFailures128 == 0 {
			t.Errorf("node-3 has no exit-128 evidence at 5s: %+v", n)
		}
	}
}

// TestCannotRunIsTransient looks at the checkout pod that fails as dockershim/cri-dockerd
// reports it (ContainerCannotRun, exit 128) while it is failing: transient on node-3, like its
// containerd StartError neighbours, not doomed. The moment comes from the ledger, so the test
// follows the scenario's jitter rather than a hard-coded time.
func TestCannotRunIsTransient(t *testing.T) {
	m, _, _ := onceModel(t, 1, 90*time.Second)
	var at time.Duration
	for _, f := range m.Failures(Epoch.Add(90 * time.Second)) {
		if f.Reason == "ContainerCannotRun" {
			// Before the kubelet writes RunContainerError, a second after the failure.
			at = f.FinishedAt.Sub(Epoch) + 500*time.Millisecond
		}
	}
	if at == 0 {
		t.Fatal("no ContainerCannotRun failure in node-3's ledger by 90s")
	}
	snap, _ := once(t, 1, at)
	failing := 0
	for _, p := range snap.Pods {
		if len(p.Containers) == 0 || p.Containers[0].State == nil || p.Containers[0].State.Reason != "ContainerCannotRun" {
			continue
		}
		failing++
		c := p.Containers[0]
		if p.Node != "node-3" || p.Verdict != "transient" || c.Verdict != "transient" {
			t.Errorf("at %s: pod %s failing with ContainerCannotRun is %s (container %s) on %s, want transient on node-3",
				at, p.Name, p.Verdict, c.Verdict, p.Node)
		}
		if c.State.ExitCode == nil || *c.State.ExitCode != 128 || !strings.Contains(c.Reason, "exit 128") {
			t.Errorf("at %s: pod %s: exit code %v, reason %q, want exit 128", at, p.Name, c.State.ExitCode, c.Reason)
		}
	}
	if failing != 1 {
		t.Errorf("at %s: %d pods failing with ContainerCannotRun, want 1", at, failing)
	}
}

// TestStartFailureBackOffIsTransient: a checkout pod on node-3 fails to start twice, and the
// kubelet backs off 10s before the start that succeeds; inside that back-off the pod is transient
// (start-failure-backoff). Checked at a fixed time, a few seconds after the pod's first failure,
// which no coalescing of live batches on a loaded machine can hide.
func TestStartFailureBackOffIsTransient(t *testing.T) {
	m, _, _ := onceModel(t, 1, 90*time.Second)
	first := map[string]time.Time{}
	for _, f := range m.Failures(Epoch.Add(90 * time.Second)) {
		if !strings.HasSuffix(f.Workload, "/Deployment/checkout") || f.FinishedAt.IsZero() {
			continue
		}
		if at, ok := first[f.PodUID]; !ok || f.FinishedAt.Before(at) {
			first[f.PodUID] = f.FinishedAt
		}
	}
	if len(first) == 0 {
		t.Fatal("no start failure of a checkout pod in node-3's ledger by 90s")
	}
	seen := 0
	for uid, failed := range first {
		at := failed.Sub(Epoch) + 6*time.Second
		m, _, _ := onceModel(t, 1, at)
		for _, p := range m.View(model.Query{Sort: model.ByName}) {
			if p.UID != uid {
				continue
			}
			if p.Verdict.Rule == classify.RuleStartFailureBackOff {
				seen++
				if p.Verdict.Class != classify.Transient {
					t.Errorf("at %s: pod %s in the back-off is %s, want transient", at, p.Key, p.Verdict.Class)
				}
			}
		}
	}
	if seen == 0 {
		t.Errorf("no checkout pod was in %s 6s after its first start failure", classify.RuleStartFailureBackOff)
	}
}

// TestLive plays the scenario in live mode at high speed through the real informer path and
// waits for the story to reach the model: node-3 suspect, payments and search doomed, checkout
// not, and the migration job completed.
func TestLive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	src, err := Start(ctx, Options{Seed: 1, Speed: 40, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	m := model.New(model.DefaultConfig())
	for {
		select {
		case <-ctx.Done():
			t.Fatalf("story did not reach the model in live mode; at %s: nodes %+v rollouts %+v",
				src.Now().Sub(Epoch), m.Nodes(src.Now()), m.Rollouts())
		case b, ok := <-src.Batches():
			if !ok {
				t.Fatal("batches closed")
			}
			now := src.Now()
			m.Apply(&b, now)
			if storyTold(m, now) {
				return
			}
		}
	}
}

func storyTold(m *model.Model, now time.Time) bool {
	suspect := false
	for _, n := range m.Nodes(now) {
		if n.Suspect {
			if n.Name != "node-3" {
				return false
			}
			suspect = true
		}
	}
	doomed := map[string]bool{}
	for _, r := range m.Rollouts() {
		doomed[r.Namespace+"/"+r.Name] = r.Verdict == classify.RolloutDoomed
	}
	return suspect && doomed["shop/payments"] && doomed["search/search"] && !doomed["shop/checkout"] &&
		m.Counts().Completed == 1
}

func TestStartRejectsNegativeAt(t *testing.T) {
	if _, err := Start(context.Background(), Options{At: -time.Second}); err == nil {
		t.Fatal("Start accepted --at -1s")
	}
}

// firstDiff shows the first differing line of two JSON documents.
func firstDiff(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl
		}
	}
	return "(no line differs)"
}

// TestStoryHolds looks at the demo long after checkout's failures left the 15m window: the
// CronJob runs that keep flaking on node-3 keep it suspect, and the doomed rollouts stay doomed.
func TestStoryHolds(t *testing.T) {
	snap, _ := once(t, 1, 20*time.Minute)
	for _, n := range snap.Nodes {
		if n.Suspect != (n.Name == "node-3") {
			t.Errorf("%s suspect = %v (%s)", n.Name, n.Suspect, n.Why)
		}
	}
	doomed := 0
	for _, r := range snap.Rollouts {
		if r.Verdict == string(classify.RolloutDoomed) && (r.Name == "payments" || r.Name == "search") {
			doomed++
		}
		if r.Name == "checkout" && r.Verdict != string(classify.RolloutComplete) {
			t.Errorf("checkout at 20m = %s, want complete", r.Verdict)
		}
	}
	if doomed != 2 {
		t.Errorf("payments and search doomed: %d of 2", doomed)
	}
	exports := 0
	for _, p := range snap.Pods {
		if strings.HasPrefix(p.Name, "ledger-export-") {
			exports++
			if p.Verdict != "completed" {
				t.Errorf("CronJob pod %s = %s, want completed", p.Name, p.Verdict)
			}
		}
	}
	if exports != 3 {
		t.Errorf("%d ledger-export pods, want the 3 the CronJob's history keeps", exports)
	}
}

// TestSyncForgetsActions: the fake clientset's action log would otherwise grow for as long as
// a live demo runs.
func TestSyncForgetsActions(t *testing.T) {
	cs := fake.NewClientset()
	e := newEngine(1, Classic, cs)
	e.advance(90 * time.Second)
	if err := e.sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(cs.Actions()); n != 0 {
		t.Errorf("the fake clientset still holds %d actions after a sync", n)
	}
	pods, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("the sync wrote no pods (%v); the test proves nothing", err)
	}
}

// TestStoryEvents: the stories post the Warning events a real cluster would, through the events
// informer: the kubelet's for the failed starts, the missing image, the crash loop, the eviction and
// the sandbox, the scheduler's for the unschedulable pod, and node events for node-2's memory
// pressure and node-3's runtime.
func TestStoryEvents(t *testing.T) {
	snap, _ := once(t, 1, 90*time.Second)
	pods := map[string]int{} // "owner reason" → pods with such an event
	for _, p := range snap.Pods {
		for _, e := range p.Events {
			if e.Count < 1 || e.LastSeen == "" || e.Source == "" || e.Message == "" {
				t.Errorf("pod %s: event %+v lacks a count, time, source or message", p.Name, e)
			}
			pods[p.Owner+" "+e.Reason]++
		}
	}
	for _, want := range []string{
		"Deployment/checkout Failed", "Deployment/payments Failed", "Deployment/search BackOff",
		"Deployment/recommender FailedScheduling", "Deployment/inventory Evicted", "Deployment/notifier FailedCreatePodSandBox",
	} {
		if pods[want] == 0 {
			t.Errorf("no pod of %q has that event; events by owner and reason: %v", want, pods)
		}
	}
	nodes := map[string]string{}
	for _, n := range snap.Nodes {
		for _, e := range n.Events {
			nodes[n.Name] += e.Reason + " "
		}
	}
	if !strings.Contains(nodes["node-2"], "EvictionThresholdMet") || !strings.Contains(nodes["node-3"], "ContainerGCFailed") {
		t.Errorf("node events = %v, want node-2's EvictionThresholdMet and node-3's ContainerGCFailed", nodes)
	}
}

// TestVerdictsDoNotFlap plays the story live through its first two minutes and checks every
// batch, not only the end: search crash-loops, and its rollout and pods, once doomed, stay doomed
// through the seconds each container runs between crashes; checkout, whose pods flake on node-3,
// is never doomed.
func TestVerdictsDoNotFlap(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	src, err := Start(ctx, Options{Seed: 1, Speed: 20, Interval: 10 * time.Millisecond})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	m := model.New(model.DefaultConfig())
	doomedAt := map[string]time.Duration{} // rollouts and pods, when first doomed
	flake := map[classify.Rule]bool{}      // what checkout's pods on node-3 went through
	for src.Now().Sub(Epoch) < 2*time.Minute {
		var b contract.Batch
		select {
		case <-ctx.Done():
			t.Fatalf("the story did not reach 2m; at %s", src.Now().Sub(Epoch))
		case got, ok := <-src.Batches():
			if !ok {
				t.Fatal("batches closed")
			}
			b = got
		}
		now := src.Now()
		at := now.Sub(Epoch).Round(time.Second)
		m.Apply(&b, now)
		for _, r := range m.Rollouts() {
			if r.Name != "search" && r.Name != "checkout" {
				continue
			}
			key := "rollout " + r.Namespace + "/" + r.Name
			doomed := r.Verdict == classify.RolloutDoomed
			if r.Name == "checkout" && doomed {
				t.Errorf("at %s: checkout doomed: %s", at, r.Reason)
			}
			if since, was := doomedAt[key]; was && !doomed {
				t.Errorf("at %s: %s went back to %s (doomed since %s): %s", at, key, r.Verdict, since, r.Reason)
			} else if doomed && !was {
				doomedAt[key] = at
			}
		}
		for _, p := range m.View(model.Query{Sort: model.ByName}) {
			if p.Owner == "Deployment/checkout" {
				flake[p.Verdict.Rule] = true
			}
			if p.Namespace != "search" || p.Owner != "Deployment/search" {
				continue
			}
			key := "pod " + p.Key + " " + p.UID
			doomed := p.Verdict.Class == classify.Doomed
			if since, was := doomedAt[key]; was && !doomed {
				t.Errorf("at %s: %s went back to %s (doomed since %s): %s", at, key, p.Verdict.Class, since, p.Verdict.Reason)
			} else if doomed && !was {
				doomedAt[key] = at
			}
		}
	}
	if _, ok := doomedAt["rollout search/search"]; !ok {
		t.Error("search was never doomed")
	}
	// The kubelet's back-off after node-3's start failures lasts 10 demo seconds, half a second at
	// this speed: a loaded machine's batches can coalesce it away, so its presence is checked at a
	// fixed time (TestStartFailureBackOffIsTransient, and the one-second states before it in
	// TestCannotRunIsTransient, TestEarlyFailuresAreTransient); here it is only reported.
	if !flake[classify.RuleStartFailureBackOff] {
		t.Logf("no checkout pod was seen in %s live (batches coalesced it)", classify.RuleStartFailureBackOff)
	}
}
