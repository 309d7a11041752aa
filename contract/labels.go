package contract

import (
	corev1 "k8s.io/api/core/v1"

	"doomwatch/podrec"
)

// RevisionAnnotation is the annotation the Deployment controller stamps with the same revision on a
// Deployment and its new ReplicaSet (kubernetes pkg/controller/deployment/util/deployment_util.go,
// RevisionAnnotation). The model finds the new ReplicaSet by it, so kube/'s informer transform must
// keep it.
const RevisionAnnotation = "deployment.kubernetes.io/revision"

// TimeoutAnnotation is Krane's per-resource timeout (Shopify/krane README, "Annotations"):
// "Override the tool's hard timeout for one specific resource. Both full ISO8601 durations and the
// time portion of ISO8601 durations are valid. Value must be between 1 second and 24 hours."
// doomwatch wait honours it on the workloads it waits for (classify.TimeoutOverride reads it), so
// kube/'s transform keeps it on workloads.
const TimeoutAnnotation = "krane.shopify.io/timeout-override"

// RequiredRolloutAnnotation is Krane's per-Deployment rollout requirement (Shopify/krane README,
// "Annotations": "Modifies how much of the rollout needs to finish before the deployment is
// considered successful"): full (the default), none, maxUnavailable, or a percentage of the
// desired replicas ("90%"). classify.RequiredRollout reads it; kube/'s transform keeps it.
const RequiredRolloutAnnotation = "krane.shopify.io/required-rollout"

// KraneAnnotations are the Krane annotations doomwatch reads on workloads, the only annotations
// kube/'s transform keeps besides the Deployment revision.
var KraneAnnotations = []string{TimeoutAnnotation, RequiredRolloutAnnotation}

// The labels a node's place is read from. For each attribute the first label set wins: the
// well-known labels (kubernetes.io/docs/reference/labels-annotations-taints), then their
// deprecated beta forms, which older kubelets and cloud providers set alone.
var (
	ZoneLabels         = []string{corev1.LabelTopologyZone, corev1.LabelFailureDomainBetaZone}
	RegionLabels       = []string{corev1.LabelTopologyRegion, corev1.LabelFailureDomainBetaRegion}
	InstanceTypeLabels = []string{corev1.LabelInstanceTypeStable, corev1.LabelInstanceType}
	// PoolLabels are the node-pool labels the managed services and Karpenter set; Kubernetes has
	// no well-known one. A node carries at most one of them.
	//   - GKE: cloud.google.com/gke-nodepool, the node pool's name (cloud.google.com/kubernetes-engine
	//     docs, "About node pools").
	//   - EKS managed node groups: eks.amazonaws.com/nodegroup (docs.aws.amazon.com/eks, "Managed
	//     node groups"; cluster-autoscaler reads it too).
	//   - AKS: kubernetes.azure.com/agentpool (learn.microsoft.com/azure/aks/use-labels, the
	//     reserved system labels).
	//   - Karpenter: karpenter.sh/nodepool, the NodePool that launched the node
	//     (kubernetes-sigs/karpenter pkg/apis/v1/labels.go NodePoolLabelKey).
	PoolLabels = []string{
		"cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup",
		"kubernetes.azure.com/agentpool", "karpenter.sh/nodepool",
	}
	placeLabels = [][]string{ZoneLabels, RegionLabels, InstanceTypeLabels, PoolLabels}
)

// FirstLabel is the key and value of the first of keys set to a non-empty value in labels.
func FirstLabel(labels map[string]string, keys []string) (key, value string) {
	for _, k := range keys {
		if v := labels[k]; v != "" {
			return k, v
		}
	}
	return "", ""
}

// NodeLabels returns the labels of a node the model reads: for each of zone, region, instance
// type and pool the one label that decides it, its value shared through in. nil when there are
// none. kube's transform keeps these and drops every other label of a node.
func NodeLabels(labels map[string]string, in *podrec.Interner) map[string]string {
	var out map[string]string
	for _, keys := range placeLabels {
		if k, v := FirstLabel(labels, keys); k != "" {
			if out == nil {
				out = make(map[string]string, len(placeLabels))
			}
			out[k] = in.String(v) // k is one of the constants above, not the object's string
		}
	}
	return out
}
