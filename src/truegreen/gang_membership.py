"""What ties a pod to a gang, the group of pods a scheduler or a queue places all at once or not
at all: one notion for doctor's gang reads (truegreen.doctor.knowledge.gangs) and the trial's
pods, which belong to none of the job's (truegreen.trial.pods)."""

from typing import Final

VOLCANO_GROUP_ANNOTATION: Final = "scheduling.k8s.io/group-name"
"""Volcano's: the PodGroup a pod is a task of (volcano-sh/apis pkg/apis/scheduling/v1beta1/
labels.go `KubeGroupNameAnnotationKey`)."""
COSCHEDULING_GROUP_LABEL: Final = "scheduling.x-k8s.io/pod-group"
"""scheduler-plugins' coscheduling: the PodGroup a pod is counted in (kubernetes-sigs/
scheduler-plugins apis/scheduling/v1alpha1/types.go `PodGroupLabel`)."""
KAI_GROUP_ANNOTATION: Final = "pod-group-name"
"""KAI's: the PodGroup a pod belongs to (NVIDIA/KAI-Scheduler pkg/common/constants
`PodGroupAnnotationForPod`)."""

GANG_LABELS: Final = frozenset(
    {
        COSCHEDULING_GROUP_LABEL,
        # YuniKorn's application, the unit its gangs (task groups) belong to: the keys it reads
        # a pod's application from (apache/yunikorn-k8shim pkg/common/constants/constants.go
        # `AppIdLabelKeys`: CanonicalLabelApplicationID, SparkLabelAppID, LabelApplicationID).
        "yunikorn.apache.org/app-id",
        "spark-app-selector",
        "applicationId",
        # Kueue's pod group, one Workload for all its pods, which Kueue's StatefulSet and
        # LeaderWorkerSet integrations write into the pod template (kueue pkg/controller/jobs/
        # pod/constants/constants.go `GroupNameLabel`), and the prebuilt Workload a pod is
        # matched to (pkg/controller/constants `PrebuiltWorkloadLabel`).
        "kueue.x-k8s.io/pod-group-name",
        "kueue.x-k8s.io/prebuilt-workload-name",
    }
)
"""The labels that make a pod a member of a gang."""

GANG_ANNOTATIONS: Final = frozenset(
    {
        VOLCANO_GROUP_ANNOTATION,
        KAI_GROUP_ANNOTATION,
        # YuniKorn's application and task group (constants.go `AppIdAnnotationKeys`,
        # `AnnotationTaskGroupName`, `AnnotationTaskGroups`: the first pod of an application
        # that names task groups has YuniKorn reserve the whole gang with placeholders).
        "yunikorn.apache.org/app-id",
        "yunikorn.apache.org/task-group-name",
        "yunikorn.apache.org/task-groups",
        # The size of Kueue's pod group; its webhook refuses it without the group's label
        # (kueue pkg/controller/jobs/pod/pod_webhook.go validatePodGroupMetadata).
        "kueue.x-k8s.io/pod-group-total-count",
    }
)
"""The annotations that make a pod a member of a gang, or size the gang it is in."""

GANG_FIELDS: Final = ("workloadRef",)
"""The pod spec's fields that make it a member of a gang: Kubernetes' own, `spec.workloadRef`
naming a Workload and its PodGroup, whose pods the scheduler places together (core/v1 PodSpec
`WorkloadRef`, feature GenericWorkload, KEP-4671)."""
