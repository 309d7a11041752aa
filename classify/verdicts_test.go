package classify

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestPodAndContainersAgrees checks that the single-pass entry point returns exactly what Pod and
// Containers return separately, for every fixture, and appends after what dst already holds.
func TestPodAndContainersAgrees(t *testing.T) {
	prefix := ContainerVerdict{Name: "keep-me"}
	for _, fx := range loadFixtures(t) {
		t.Run(strings.TrimSuffix(fx.file, ".yaml"), func(t *testing.T) {
			checkPodAndContainers(t, fx.pod, prefix)
		})
	}
	if v, cvs := PodAndContainers(nil, testNow, nil); !reflect.DeepEqual(v, Pod(nil, testNow)) || len(cvs) != 0 {
		t.Errorf("PodAndContainers(nil) = %+v, %v", v, cvs)
	}
}

func checkPodAndContainers(t *testing.T, pod *corev1.Pod, prefix ContainerVerdict) {
	t.Helper()
	v, cvs := PodAndContainers(pod, testNow, []ContainerVerdict{prefix})
	if want := Pod(pod, testNow); !reflect.DeepEqual(v, want) {
		t.Fatalf("PodAndContainers verdict = %+v\nPod = %+v", v, want)
	}
	if len(cvs) == 0 || cvs[0] != prefix {
		t.Fatalf("dst's existing element was not kept: %+v", cvs)
	}
	if want := Containers(pod, testNow, nil); len(want) > 0 && !reflect.DeepEqual(cvs[1:], want) || len(want) != len(cvs)-1 {
		t.Fatalf("PodAndContainers containers = %+v\nContainers = %+v", cvs[1:], want)
	}
	for _, cv := range cvs[1:] {
		if cv.Name != cv.Container || cv.Init != cv.Verdict.Init {
			t.Fatalf("container identity kept twice and differing: Name %q/%v, Verdict %q/%v",
				cv.Name, cv.Init, cv.Container, cv.Verdict.Init)
		}
	}
}

func TestContainerVerdictSetName(t *testing.T) {
	cv := newContainerVerdict("app", true, Verdict{Class: Doomed})
	cv.SetName("web")
	if cv.Name != "web" || cv.Container != "web" || !cv.Init || !cv.Verdict.Init {
		t.Errorf("after SetName: %+v", cv)
	}
}
