package report

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/model"
	"doomwatch/model/podtest"
	"doomwatch/podrec"
)

// The shared builders (model/podtest), under the names these tests use.
var (
	t0                = podtest.T0
	pod               = podtest.Pod
	onNode            = podtest.OnNode
	ownedBy           = podtest.OwnedBy
	app               = podtest.App
	startFailed128    = podtest.StartFailed128
	recoveredAfter128 = podtest.RecoveredAfter128
	node              = podtest.Node
	replicaSet        = podtest.ReplicaSet
	deployment        = podtest.Deployment
	withUID           = podtest.WithUID
	createError       = podtest.CreateError
)

const (
	runtimeMsg     = podtest.RuntimeMsg
	crioRuntimeMsg = podtest.CrioRuntimeMsg
)

type podOpt = podtest.PodOpt

func apply(m *model.Model, now time.Time, pods ...*corev1.Pod) {
	recs := make([]*podrec.Record, len(pods))
	for i, p := range pods {
		recs[i] = podrec.RecordOf(p)
	}
	m.Apply(&model.Batch{Pods: recs}, now)
}
