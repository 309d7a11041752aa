package classify

import (
	"testing"
	"time"
)

// benchNow is the clock the benchmarks judge at.
var benchNow = testNow

// Targets: Pod of a healthy two-container pod <= 300 ns/op and 0 allocs/op; a failing
// pod <= 3 µs/op; Status <= 1 µs/op. A 150,000-pod cluster must reclassify in well under a second.

func BenchmarkPodHealthy(b *testing.B) {
	pod := fixturePod(b, "healthy-two-containers")
	b.ReportAllocs()
	for b.Loop() {
		_ = Pod(pod, benchNow)
	}
}

func BenchmarkPodFailing(b *testing.B) {
	// The longest decision path: state first (CrashLoopBackOff), reason composed from lastState's
	// start-failure message.
	pod := fixturePod(b, "crashloop-after-cannotrun-128")
	b.ReportAllocs()
	for b.Loop() {
		_ = Pod(pod, benchNow)
	}
}

func BenchmarkPodStartError(b *testing.B) {
	// containerd StartError 128 about the node (a shim timeout): the marker scan runs and finds
	// no command error.
	pod := fixturePod(b, "starterror-128-shim-deadline")
	b.ReportAllocs()
	for b.Loop() {
		_ = Pod(pod, benchNow)
	}
}

func BenchmarkStatus(b *testing.B) {
	pod := fixturePod(b, "sidecar-running")
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		_ = Status(pod, now)
	}
}

func BenchmarkStatusInit(b *testing.B) {
	pod := fixturePod(b, "init-second-running")
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		_ = Status(pod, now)
	}
}

func BenchmarkRestarts(b *testing.B) {
	pod := fixturePod(b, "crashloop-exit-1")
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		_ = Restarts(pod, now)
	}
}

// BenchmarkColumns is all three kubectl columns of a row in one printPod pass (what a table row
// costs): READY, STATUS and RESTARTS "5 (2m ago)".
func BenchmarkColumns(b *testing.B) {
	pod := fixturePod(b, "crashloop-exit-1")
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		_, _, _ = Columns(pod, now)
	}
}

// BenchmarkPodAndContainers is the model's per-update call: both verdicts, each container judged
// once, into a reused slice.
func BenchmarkPodAndContainers(b *testing.B) {
	for _, name := range []string{"healthy-two-containers", "crashloop-after-cannotrun-128"} {
		b.Run(name, func(b *testing.B) {
			pod := fixturePod(b, name)
			var dst []ContainerVerdict
			b.ReportAllocs()
			for b.Loop() {
				_, dst = PodAndContainers(pod, benchNow, dst[:0])
			}
		})
	}
}
