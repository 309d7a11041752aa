package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// replayOnce runs `doomwatch replay DIR --once -o json [--at T]` and decodes its snapshot.
func replayOnce(t *testing.T, dir string, args ...string) (snapshot, result) {
	t.Helper()
	r := runDoomwatch(t, time.Minute, nil, append([]string{"replay", dir, "--once", "-o", "json"}, args...)...)
	var s snapshot
	if r.code == 0 {
		if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
			t.Fatalf("decoding replay --once -o json: %v\n%s", err, r)
		}
	}
	return s, r
}

// TestRecordKeepsWhatTheAPIDropped records a namespace of the real API server while a pod with
// its Warning events is judged, then its events go (deleted through the API: the watch sees what
// the API server's --event-ttl does when an event's etcd lease ends, a delete) and the pod is
// deleted. The API has neither any more; the recording replays both at a moment before, with the
// verdict and the events, and the recording's end has neither.
func TestRecordKeepsWhatTheAPIDropped(t *testing.T) {
	e := newEnv(t)
	fx := eventFixtures(t)[0]
	now, err := time.Parse(time.RFC3339, fx.pod.Annotations["test.doomwatch.io/now"])
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "rec")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rec := exec.CommandContext(ctx, doomwatchBinary(t), "record", "-o", dir, "--kubeconfig", adminKubeconfig(t), "-n", e.ns)
	var stderr bytes.Buffer
	rec.Stderr = &stderr
	if err := rec.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rec.Process.Kill(); _ = rec.Wait() }()

	p := loadFixture(t, e, &fx.pod)
	for _, ev := range fx.events {
		e.postEvent(ev, p, time.Now().Truncate(time.Second).Sub(now))
	}
	// The recorder flushes every second: poll the recording as it is written.
	var seen time.Time
	var before snapPod
	for deadline := time.Now().Add(30 * time.Second); seen.IsZero(); {
		if time.Now().After(deadline) {
			t.Fatalf("the recording never held pod %s with its %d events; recorder: %s", p.Name, len(fx.events), stderr.String())
		}
		time.Sleep(500 * time.Millisecond)
		s, r := replayOnce(t, dir)
		if r.code != 0 {
			continue // nothing flushed yet
		}
		if got, ok := s.pod(p.Name); ok && len(got.Events) == len(fx.events) {
			seen, before = time.Now(), got
		}
	}
	if want := fx.pod.Annotations["test.doomwatch.io/kind"]; before.Verdict != want {
		t.Errorf("recorded verdict %s %q, the fixture says %s", before.Verdict, before.Reason, want)
	}

	if err := e.client.CoreV1().Events(e.ns).DeleteCollection(e.ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	if err := e.client.CoreV1().Pods(e.ns).Delete(e.ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	// Until the recording's end has the pod gone: the delete was recorded.
	for deadline := time.Now().Add(30 * time.Second); ; {
		s, r := replayOnce(t, dir)
		if _, ok := s.pod(p.Name); r.code == 0 && !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the recording's end still has pod %s: %s", p.Name, r)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err := rec.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := rec.Wait(); err != nil {
		t.Fatalf("record after SIGINT: %v, want exit 0; stderr %s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "recorded ") {
		t.Errorf("record did not say what it recorded: %s", stderr.String())
	}
	if l, err := e.client.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("the API still lists events: %v %v", l, err)
	}

	s, r := replayOnce(t, dir, "--at", seen.UTC().Format(time.RFC3339Nano))
	if r.code != 0 {
		t.Fatalf("replay --once --at: %s", r)
	}
	got, ok := s.pod(p.Name)
	switch {
	case !ok:
		t.Errorf("replayed at %s, the deleted pod %s is missing", seen.Format(time.RFC3339Nano), p.Name)
	case got.Verdict != before.Verdict || got.Reason != before.Reason || len(got.Events) != len(fx.events):
		t.Errorf("replayed: %s %q with %d events; recorded live: %s %q with %d", got.Verdict, got.Reason, len(got.Events),
			before.Verdict, before.Reason, len(fx.events))
	}
}
