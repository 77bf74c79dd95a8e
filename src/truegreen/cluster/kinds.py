"""The Kubernetes kinds truegreen reads, with the coordinates of their API endpoints."""

from collections.abc import Mapping
from enum import Enum
from typing import Any

from msgspec import Struct


class KindSpec(Struct, frozen=True):
    """Where a kind lives in the API: group, version, plural, and whether it is namespaced."""

    name: str
    group: str
    version: str
    plural: str
    namespaced: bool

    @property
    def always_served(self) -> bool:
        """Whether every Kubernetes API server serves this kind: the core group and `apps`,
        which no supported release lacks. A 404 for their collection, or one that does not name
        the object asked for, is not the API server's answer. `batch` is left out: CronJob's
        batch/v1 is younger than some clusters still running."""
        return self.group in ("", "apps")

    @property
    def api_version(self) -> str:
        """The apiVersion string of objects of this kind (`v1`, `apps/v1`)."""
        return f"{self.group}/{self.version}" if self.group else self.version


class Kind(Enum):
    """Every kind truegreen reads or writes."""

    POD = KindSpec("Pod", "", "v1", "pods", True)
    NODE = KindSpec("Node", "", "v1", "nodes", False)
    SECRET = KindSpec("Secret", "", "v1", "secrets", True)
    SERVICE_ACCOUNT = KindSpec("ServiceAccount", "", "v1", "serviceaccounts", True)
    PERSISTENT_VOLUME_CLAIM = KindSpec(
        "PersistentVolumeClaim", "", "v1", "persistentvolumeclaims", True
    )
    LIMIT_RANGE = KindSpec("LimitRange", "", "v1", "limitranges", True)
    CONFIG_MAP = KindSpec("ConfigMap", "", "v1", "configmaps", True)
    NAMESPACE = KindSpec("Namespace", "", "v1", "namespaces", False)
    RESOURCE_QUOTA = KindSpec("ResourceQuota", "", "v1", "resourcequotas", True)
    DEPLOYMENT = KindSpec("Deployment", "apps", "v1", "deployments", True)
    STATEFUL_SET = KindSpec("StatefulSet", "apps", "v1", "statefulsets", True)
    DAEMON_SET = KindSpec("DaemonSet", "apps", "v1", "daemonsets", True)
    REPLICA_SET = KindSpec("ReplicaSet", "apps", "v1", "replicasets", True)
    JOB = KindSpec("Job", "batch", "v1", "jobs", True)
    CRON_JOB = KindSpec("CronJob", "batch", "v1", "cronjobs", True)
    STORAGE_CLASS = KindSpec("StorageClass", "storage.k8s.io", "v1", "storageclasses", False)
    PERSISTENT_VOLUME = KindSpec("PersistentVolume", "", "v1", "persistentvolumes", False)
    CSI_DRIVER = KindSpec("CSIDriver", "storage.k8s.io", "v1", "csidrivers", False)
    PRIORITY_CLASS = KindSpec("PriorityClass", "scheduling.k8s.io", "v1", "priorityclasses", False)
    RUNTIME_CLASS = KindSpec("RuntimeClass", "node.k8s.io", "v1", "runtimeclasses", False)
    EVENT = KindSpec("Event", "", "v1", "events", True)
    ENDPOINT_SLICE = KindSpec("EndpointSlice", "discovery.k8s.io", "v1", "endpointslices", True)
    VALIDATING_WEBHOOK_CONFIGURATION = KindSpec(
        "ValidatingWebhookConfiguration",
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
        False,
    )
    MUTATING_WEBHOOK_CONFIGURATION = KindSpec(
        "MutatingWebhookConfiguration",
        "admissionregistration.k8s.io",
        "v1",
        "mutatingwebhookconfigurations",
        False,
    )

    # The API groups that are there on some clusters only: each group's served versions come
    # from discovery (`API_GROUPS`), and a kind whose version is not served is absent.
    API_GROUPS = KindSpec("APIGroupList", "", "v1", "apis", False)
    """Discovery (`GET /apis`): every API group the server serves, with its versions."""
    JOB_SET = KindSpec("JobSet", "jobset.x-k8s.io", "v1alpha2", "jobsets", True)
    TRAIN_JOB = KindSpec("TrainJob", "trainer.kubeflow.org", "v1alpha1", "trainjobs", True)
    TRAINING_RUNTIME = KindSpec(
        "TrainingRuntime", "trainer.kubeflow.org", "v1alpha1", "trainingruntimes", True
    )
    CLUSTER_TRAINING_RUNTIME = KindSpec(
        "ClusterTrainingRuntime",
        "trainer.kubeflow.org",
        "v1alpha1",
        "clustertrainingruntimes",
        False,
    )
    PYTORCH_JOB = KindSpec("PyTorchJob", "kubeflow.org", "v1", "pytorchjobs", True)
    TF_JOB = KindSpec("TFJob", "kubeflow.org", "v1", "tfjobs", True)
    MPI_JOB = KindSpec("MPIJob", "kubeflow.org", "v2beta1", "mpijobs", True)
    """mpi-operator's MPIJob; the training operator's older one is `MPI_JOB_V1`."""
    MPI_JOB_V1 = KindSpec("MPIJob", "kubeflow.org", "v1", "mpijobs", True)
    XGBOOST_JOB = KindSpec("XGBoostJob", "kubeflow.org", "v1", "xgboostjobs", True)
    PADDLE_JOB = KindSpec("PaddleJob", "kubeflow.org", "v1", "paddlejobs", True)
    JAX_JOB = KindSpec("JAXJob", "kubeflow.org", "v1", "jaxjobs", True)
    RAY_JOB = KindSpec("RayJob", "ray.io", "v1", "rayjobs", True)
    RAY_CLUSTER = KindSpec("RayCluster", "ray.io", "v1", "rayclusters", True)
    LEADER_WORKER_SET = KindSpec(
        "LeaderWorkerSet", "leaderworkerset.x-k8s.io", "v1", "leaderworkersets", True
    )
    # Dynamic resource allocation (resource.k8s.io/v1, served from Kubernetes 1.34): devices a
    # pod asks for through claims, read only for a training job that has such claims.
    RESOURCE_CLAIM = KindSpec("ResourceClaim", "resource.k8s.io", "v1", "resourceclaims", True)
    RESOURCE_CLAIM_TEMPLATE = KindSpec(
        "ResourceClaimTemplate", "resource.k8s.io", "v1", "resourceclaimtemplates", True
    )
    RESOURCE_SLICE = KindSpec("ResourceSlice", "resource.k8s.io", "v1", "resourceslices", False)
    DEVICE_CLASS = KindSpec("DeviceClass", "resource.k8s.io", "v1", "deviceclasses", False)
    # Karpenter's machines on their way (karpenter.sh/v1 NodeClaim: pkg/apis/v1/nodeclaim.go).
    NODE_CLAIM = KindSpec("NodeClaim", "karpenter.sh", "v1", "nodeclaims", False)
    # Karpenter's machine pools and their limits (karpenter.sh/v1 NodePool: pkg/apis/v1/
    # nodepool.go `Limits`, status `Resources`).
    NODE_POOL = KindSpec("NodePool", "karpenter.sh", "v1", "nodepools", False)
    # Cluster API's machine groups, which cluster-autoscaler's clusterapi provider scales
    # (kubernetes/autoscaler cluster-autoscaler/cloudprovider/clusterapi: MachineDeployment,
    # MachineSet, MachinePool of cluster.x-k8s.io, at the version discovery prefers): v1beta2
    # (Cluster API v1.11 and later, stored) or v1beta1; discovery picks the one read. Got one at a
    # time, for the per-group provision time on its annotations (capacity/capi_groups.py).
    MACHINE_DEPLOYMENT = KindSpec(
        "MachineDeployment", "cluster.x-k8s.io", "v1beta2", "machinedeployments", True
    )
    MACHINE_SET = KindSpec("MachineSet", "cluster.x-k8s.io", "v1beta2", "machinesets", True)
    MACHINE_POOL = KindSpec("MachinePool", "cluster.x-k8s.io", "v1beta2", "machinepools", True)
    MACHINE_DEPLOYMENT_V1BETA1 = KindSpec(
        "MachineDeployment", "cluster.x-k8s.io", "v1beta1", "machinedeployments", True
    )
    MACHINE_SET_V1BETA1 = KindSpec("MachineSet", "cluster.x-k8s.io", "v1beta1", "machinesets", True)
    MACHINE_POOL_V1BETA1 = KindSpec(
        "MachinePool", "cluster.x-k8s.io", "v1beta1", "machinepools", True
    )
    # Kueue's queue (kueue.x-k8s.io, apis/kueue/v1beta2 and v1beta1): a release serves both
    # versions (v1beta2 stored) or, before v0.15, v1beta1 alone; discovery picks the one read.
    LOCAL_QUEUE = KindSpec("LocalQueue", "kueue.x-k8s.io", "v1beta2", "localqueues", True)
    CLUSTER_QUEUE = KindSpec("ClusterQueue", "kueue.x-k8s.io", "v1beta2", "clusterqueues", False)
    RESOURCE_FLAVOR = KindSpec(
        "ResourceFlavor", "kueue.x-k8s.io", "v1beta2", "resourceflavors", False
    )
    COHORT = KindSpec("Cohort", "kueue.x-k8s.io", "v1beta2", "cohorts", False)
    WORKLOAD = KindSpec("Workload", "kueue.x-k8s.io", "v1beta2", "workloads", True)
    ADMISSION_CHECK = KindSpec(
        "AdmissionCheck", "kueue.x-k8s.io", "v1beta2", "admissionchecks", False
    )
    LOCAL_QUEUE_V1BETA1 = KindSpec("LocalQueue", "kueue.x-k8s.io", "v1beta1", "localqueues", True)
    CLUSTER_QUEUE_V1BETA1 = KindSpec(
        "ClusterQueue", "kueue.x-k8s.io", "v1beta1", "clusterqueues", False
    )
    RESOURCE_FLAVOR_V1BETA1 = KindSpec(
        "ResourceFlavor", "kueue.x-k8s.io", "v1beta1", "resourceflavors", False
    )
    COHORT_V1BETA1 = KindSpec("Cohort", "kueue.x-k8s.io", "v1beta1", "cohorts", False)
    WORKLOAD_V1BETA1 = KindSpec("Workload", "kueue.x-k8s.io", "v1beta1", "workloads", True)
    ADMISSION_CHECK_V1BETA1 = KindSpec(
        "AdmissionCheck", "kueue.x-k8s.io", "v1beta1", "admissionchecks", False
    )

    # Gang schedulers' own groups (read only where discovery serves them): Volcano's PodGroup
    # and Queue (volcano-sh/apis pkg/apis/scheduling/v1beta1/types.go), the scheduler-plugins
    # coscheduling PodGroup (kubernetes-sigs/scheduler-plugins apis/scheduling/v1alpha1), and
    # KAI's PodGroup (NVIDIA/KAI-Scheduler pkg/apis/scheduling/v2alpha2). One resource name,
    # `podgroups`, in three groups: `from_plural` tells them apart by apiVersion.
    VOLCANO_POD_GROUP = KindSpec("PodGroup", "scheduling.volcano.sh", "v1beta1", "podgroups", True)
    VOLCANO_QUEUE = KindSpec("Queue", "scheduling.volcano.sh", "v1beta1", "queues", False)
    COSCHEDULING_POD_GROUP = KindSpec(
        "PodGroup", "scheduling.x-k8s.io", "v1alpha1", "podgroups", True
    )
    KAI_POD_GROUP = KindSpec("PodGroup", "scheduling.run.ai", "v2alpha2", "podgroups", True)
    # KAI's Queues (pkg/apis/scheduling/v2/queue_types.go), cluster-scoped and few: listed whole,
    # as a group's queue is judged with its parents.
    KAI_QUEUE = KindSpec("Queue", "scheduling.run.ai", "v2", "queues", False)

    @property
    def spec(self) -> KindSpec:
        """The API coordinates of this kind."""
        value: KindSpec = self.value
        return value

    @property
    def plural(self) -> str:
        """The resource name used in URLs and RBAC rules (`pods`)."""
        return self.spec.plural

    @property
    def resource(self) -> str:
        """The resource as kubectl and RBAC name it, with its group (`jobs.batch`, `pods`)."""
        return f"{self.plural}.{self.spec.group}" if self.spec.group else self.plural

    @property
    def namespaced(self) -> bool:
        """Whether objects of this kind live in a namespace."""
        return self.spec.namespaced

    @classmethod
    def from_plural(cls, plural: str, api_version: str | None = None) -> "Kind":
        """The kind whose resource name is `plural` (and whose apiVersion is `api_version`,
        when given: one resource name can be served at several versions); ValueError when
        none is."""
        for kind in cls:
            if kind.plural == plural and api_version in (None, kind.spec.api_version):
                return kind
        raise ValueError(f"unknown resource {plural!r}")


def stamp(obj: dict[str, Any], kind: Kind) -> dict[str, Any]:
    """`obj` itself, with its kind and apiVersion set where the server left them out.

    A real API server sends list items without them (kubernetes/kubernetes#3030); kubectl's
    printers add them back the same way, from the request that fetched the list.
    """
    if not obj.get("kind"):
        obj["kind"] = kind.spec.name
    if not obj.get("apiVersion"):
        obj["apiVersion"] = kind.spec.api_version
    return obj


def stamped(kind: Kind, obj: Mapping[str, Any]) -> dict[str, Any]:
    """A stamped copy of `obj` (see `stamp`), for objects this package does not own."""
    return stamp(dict(obj), kind)
