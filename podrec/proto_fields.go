package podrec

// The protobuf field numbers PodFromProto reads, named after their fields in the API's schema.
// Kubernetes never renumbers a field: its number is part of the wire compatibility every client
// relies on. Fields a record does not keep are not listed; PodFromProto skips them.

// k8s.io/api/core/v1/generated.proto, message Pod.
const (
	podMetadata = 1
	podSpec     = 2
	podStatus   = 3
)

// k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto, message ObjectMeta.
const (
	objectMetaName              = 1
	objectMetaNamespace         = 3
	objectMetaUID               = 5
	objectMetaResourceVersion   = 6
	objectMetaGeneration        = 7
	objectMetaCreationTimestamp = 8
	objectMetaDeletionTimestamp = 9
	objectMetaLabels            = 11
	objectMetaAnnotations       = 12
	objectMetaOwnerReferences   = 13
)

// The entries of a map<string, string> field (ObjectMeta's labels and annotations): protobuf
// encodes a map as a repeated message whose key is field 1 and value field 2 (the protobuf
// language guide, "Maps", backwards compatibility).
const (
	mapEntryKey   = 1
	mapEntryValue = 2
)

// k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto, message Time. protoTime does not read
// the nanos, which metav1.Time.Unmarshal drops.
const (
	timeSeconds = 1
	timeNanos   = 2
)

// k8s.io/api/core/v1/generated.proto, message PodSpec.
const (
	podSpecContainers     = 2
	podSpecRestartPolicy  = 3
	podSpecNodeName       = 10
	podSpecInitContainers = 20
	podSpecReadinessGates = 28
)

// k8s.io/api/core/v1/generated.proto, message Container: what Interner.Containers keeps, which
// the spec's key is made of (appendKept).
const (
	containerName           = 1
	containerImage          = 2
	containerReadinessProbe = 11
	containerStartupProbe   = 22
	containerRestartPolicy  = 24
)

// k8s.io/api/core/v1/generated.proto, message PodStatus.
const (
	podStatusPhase                 = 1
	podStatusConditions            = 2
	podStatusMessage               = 3
	podStatusReason                = 4
	podStatusContainerStatuses     = 8
	podStatusInitContainerStatuses = 10
)

// k8s.io/api/core/v1/generated.proto, message PodCondition.
const (
	podConditionType               = 1
	podConditionStatus             = 2
	podConditionLastTransitionTime = 4
	podConditionReason             = 5
	podConditionMessage            = 6
)

// k8s.io/api/core/v1/generated.proto, message ContainerStatus.
const (
	containerStatusName         = 1
	containerStatusState        = 2
	containerStatusLastState    = 3
	containerStatusReady        = 4
	containerStatusRestartCount = 5
	containerStatusImage        = 6
	containerStatusImageID      = 7
	containerStatusStarted      = 9
)

// k8s.io/api/core/v1/generated.proto, message ContainerState.
const (
	containerStateWaiting    = 1
	containerStateRunning    = 2
	containerStateTerminated = 3
)

// k8s.io/api/core/v1/generated.proto, message ContainerStateWaiting.
const (
	waitingReason  = 1
	waitingMessage = 2
)

// k8s.io/api/core/v1/generated.proto, message ContainerStateRunning.
const runningStartedAt = 1

// k8s.io/api/core/v1/generated.proto, message ContainerStateTerminated.
const (
	terminatedExitCode   = 1
	terminatedSignal     = 2
	terminatedReason     = 3
	terminatedMessage    = 4
	terminatedStartedAt  = 5
	terminatedFinishedAt = 6
)
