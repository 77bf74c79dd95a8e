"""The kinds lint understands: where each keeps its pod templates, and what its controller adds.

Every object lint reads is one of three things: a workload whose pod templates it can check, a
kind known to run no pods (a Service, a ConfigMap, a queue), or a kind it does not understand,
which is counted and named rather than passed over in silence. An object's kind is its API group
and kind together: a Knative `Service` is a workload, a core `Service` is not.
"""

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from enum import StrEnum
from typing import Any

from msgspec import Struct, field


class Work(StrEnum):
    """What a pod template's pods do, as far as the probe rules care."""

    ROLLED_OUT = "rolled-out"
    """Long-running, and replaced by a rollout that waits for readiness (Deployment, ...)."""
    LONG_RUNNING = "long-running"
    """Long-running without a rollout to gate (a bare Pod, a ReplicaSet, a Ray cluster)."""
    BATCH = "batch"
    """Runs to completion: a Job and everything built of Jobs, a training job."""


class PodTemplate(Struct, frozen=True):
    """One pod template of an object, as its controller will run it."""

    metadata: Mapping[str, Any]
    spec: Mapping[str, Any]
    work: Work
    role: str = ""
    """Which of the object's templates this is (`worker`, `head`); "" when it has one."""
    by_kind: str = ""
    """Why the kind itself is batch or training work ("a PyTorchJob"), else ""."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels the controller puts on the pods besides the template's own."""
    ready_by_controller: tuple[str, ...] = ()
    """Containers the controller gives a readiness probe when they have none."""
    restarted_by_controller: tuple[str, ...] = ()
    """Containers the controller gives a liveness probe when they have none."""
    ports_by_controller: tuple[tuple[str, str, int], ...] = ()
    """(container, port name, number): ports the controller declares when that name is not."""
    routed_by_controller: tuple[str, ...] = ()
    """Containers the controller itself sends traffic to (Knative's queue-proxy): they serve a
    port whatever their spec lists, so GPUs alone do not make them training work."""
    controller: str = ""
    """Who adds those probes, for the messages (`KubeRay`, `Knative`)."""
    group_restart: str = ""
    """The restart policy under which the controller recreates the whole group of pods when any
    container of it restarts (`RecreateGroupOnPodRestart, the default`); "" when it does not."""
    not_objects: tuple[tuple[str, object], ...] = ()
    """(path, value): a field on the way to the pod spec that holds no object (`spec: 5`),
    which the API server cannot decode; the template is then empty."""


class Understood(Struct, frozen=True):
    """What lint makes of one object: its pod templates (none for a kind that runs no pods)."""

    templates: tuple[PodTemplate, ...] = ()


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _sequence(value: object) -> Sequence[Any]:
    return value if isinstance(value, list) else []


def group_of(obj: Mapping[str, Any]) -> str:
    """The API group of an object: `apps` for `apps/v1`, "" for the core `v1`."""
    api_version = obj.get("apiVersion")
    if not isinstance(api_version, str) or "/" not in api_version:
        return ""
    return api_version.partition("/")[0]


def _name(obj: Mapping[str, Any]) -> str:
    return str(_mapping(obj.get("metadata")).get("name", ""))


def _template(holder: Mapping[str, Any], work: Work, **details: Any) -> Iterator[PodTemplate]:
    """The pod template under `holder["template"]`, when there is one."""
    template = _mapping(holder.get("template"))
    if template:
        yield PodTemplate(
            _mapping(template.get("metadata")), _mapping(template.get("spec")), work, **details
        )


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(obj.get("spec"))


Reader = Callable[[Mapping[str, Any]], Iterator[PodTemplate]]
_TEMPLATE_PATH = ("spec", "template", "spec")
_CRON_JOB_PATH = ("spec", "jobTemplate", "spec", "template", "spec")


def _undecodable(obj: Mapping[str, Any], path: tuple[str, ...], work: Work) -> PodTemplate | None:
    """An empty template naming the first field on `path` (the way to a built-in kind's pod
    spec) that is there but holds no object: the API server refuses the object, so it is
    reported, never read as a workload with no containers."""
    value: object = obj
    for depth, key in enumerate(path):
        value = value.get(key) if isinstance(value, Mapping) else None
        if value is None:
            return None
        if not isinstance(value, Mapping):
            where = ".".join(path[: depth + 1])
            return PodTemplate({}, {}, work, not_objects=((where, value),))
    return None


def _decodable(path: tuple[str, ...], work: Work) -> Callable[[Reader], Reader]:
    """A built-in kind's reader, run only once the way to its pod spec (`path`) holds objects;
    else the one empty template that names the field (_undecodable)."""

    def guard(reader: Reader) -> Reader:
        @functools.wraps(reader)
        def read(obj: Mapping[str, Any]) -> Iterator[PodTemplate]:
            undecodable = _undecodable(obj, path, work)
            return iter((undecodable,)) if undecodable is not None else reader(obj)

        return read

    return guard


# -- the Kubernetes workloads ----------------------------------------------------------------


@_decodable(("spec",), Work.LONG_RUNNING)
def _pod(obj: Mapping[str, Any]) -> Iterator[PodTemplate]:
    spec = _spec(obj)
    # A bare Pod that does not restart its containers runs to completion.
    done = spec.get("restartPolicy") in ("Never", "OnFailure")
    yield PodTemplate(
        _mapping(obj.get("metadata")),
        spec,
        Work.BATCH if done else Work.LONG_RUNNING,
        by_kind="a Pod that runs to completion" if done else "",
    )


@_decodable(_TEMPLATE_PATH, Work.ROLLED_OUT)
def _rolled_out(obj: Mapping[str, Any]) -> Iterator[PodTemplate]:
    yield from _template(_spec(obj), Work.ROLLED_OUT)


@_decodable(_TEMPLATE_PATH, Work.LONG_RUNNING)
def _long_running(obj: Mapping[str, Any]) -> Iterator[PodTemplate]:
    yield from _template(_spec(obj), Work.LONG_RUNNING)


@_decodable(_TEMPLATE_PATH, Work.BATCH)
def _job(obj: Mapping[str, Any]) -> Iterator[PodTemplate]:
    yield from _template(_spec(obj), Work.BATCH, by_kind="a Job")


@_decodable(_CRON_JOB_PATH, Work.BATCH)
def _cron_job(obj: Mapping[str, Any]) -> Iterator[PodTemplate]:
    job = _mapping(_mapping(_spec(obj).get("jobTemplate")).get("spec"))
    yield from _template(job, Work.BATCH, by_kind="a CronJob")


def _rollout(obj: Mapping[str, Any]) -> Iterator[PodTemplate]:
    # Argo Rollouts: spec.template, or spec.workloadRef naming a Deployment whose template it
    # runs (that Deployment is checked where it is defined).
    yield from _template(_spec(obj), Work.ROLLED_OUT)


# -- batch and training: JobSet, Kubeflow, Kubeflow Trainer -----------------------------------


def _jobset(obj: Mapping[str, Any]) -> Iterator[PodTemplate]:
    # sigs.k8s.io/jobset api/jobset/v1alpha2: spec.replicatedJobs[].template is a JobTemplateSpec.
    yield from _replicated_jobs(_spec(obj), _name(obj), "a JobSet", with_labels=True)


def _replicated_jobs(
    spec: Mapping[str, Any], name: str, why: str, *, with_labels: bool
) -> Iterator[PodTemplate]:
    for replicated in map(_mapping, _sequence(spec.get("replicatedJobs"))):
        job = _mapping(_mapping(replicated.get("template")).get("spec"))
        role = str(replicated.get("name", ""))
        labels = (
            {"jobset.sigs.k8s.io/jobset-name": name, "jobset.sigs.k8s.io/replicatedjob-name": role}
            if with_labels
            else {}
        )
        yield from _template(job, Work.BATCH, role=role, by_kind=why, labels=labels)


_REPLICA_SPECS = {
    "PyTorchJob": "pytorchReplicaSpecs",
    "TFJob": "tfReplicaSpecs",
    "MPIJob": "mpiReplicaSpecs",
    "PaddleJob": "paddleReplicaSpecs",
    "XGBoostJob": "xgbReplicaSpecs",
    "JAXJob": "jaxReplicaSpecs",
}
"""Kubeflow training-operator (kubeflow.org/v1, and MPIJob v2beta1): each kind keeps its replica
types (`Master`, `Worker`, `Launcher` ...) under its own key, each with a pod template."""
_DEFAULT_PORTS = {
    "PyTorchJob": ("pytorch", "pytorchjob-port", 23456),
    "TFJob": ("tensorflow", "tfjob-port", 2222),
    "PaddleJob": ("paddle", "master", 36543),
    "XGBoostJob": ("xgboost", "xgboostjob-port", 9999),
    "JAXJob": ("jax", "jaxjob-port", 6666),
}
"""The port the training operator's defaulting adds to its default container when no port of
that name is declared (pkg/apis/kubeflow.org/v1/*_defaults.go, e.g. setPytorchDefaultPort)."""


def _kubeflow(obj: Mapping[str, Any]) -> Iterator[PodTemplate]:
    kind = str(obj.get("kind"))
    name = _name(obj)
    for role, replicas in _mapping(_spec(obj).get(_REPLICA_SPECS[kind])).items():
        labels = {
            "training.kubeflow.org/job-name": name,
            "training.kubeflow.org/replica-type": str(role).lower(),
        }
        default_port = _DEFAULT_PORTS.get(kind)
        yield from _template(
            _mapping(replicas),
            Work.BATCH,
            role=str(role),
            by_kind=f"a {kind}",
            labels=labels,
            ports_by_controller=(default_port,) if default_port else (),
        )


def _training_runtime(obj: Mapping[str, Any]) -> Iterator[PodTemplate]:
    # Kubeflow Trainer (trainer.kubeflow.org/v1alpha1): spec.template is a JobSet's template.
    jobset = _mapping(_mapping(_spec(obj).get("template")).get("spec"))
    yield from _replicated_jobs(jobset, _name(obj), f"a {obj.get('kind')}", with_labels=False)


def _nothing(_: Mapping[str, Any]) -> Iterator[PodTemplate]:
    # A TrainJob's pods come from the runtime it names; a Rollout's workloadRef from a Deployment.
    return iter(())


# -- Ray (KubeRay) ------------------------------------------------------------------------------


_RAY_METRICS_PORT = ("metrics", 8080)
"""The port KubeRay declares on the Ray container of every head and worker pod when no port of
that name is (ray-operator/controllers/ray/common/pod.go DefaultHeadPodTemplate and
DefaultWorkerPodTemplate: utils.MetricsPortName, utils.DefaultMetricsPort)."""


def _ray_cluster_templates(
    cluster: Mapping[str, Any], work: Work, why: str, cluster_name: str | None
) -> Iterator[PodTemplate]:
    """The head group and each worker group. KubeRay gives the Ray container (the first one) a
    readiness and a liveness probe when it has none (ray-operator/controllers/ray/common/pod.go,
    initLivenessAndReadinessProbe, unless the operator runs with ENABLE_PROBES_INJECTION=false),
    and its `metrics` port (_RAY_METRICS_PORT)."""
    groups = [("head", "headgroup", _mapping(cluster.get("headGroupSpec")))]
    for worker in map(_mapping, _sequence(cluster.get("workerGroupSpecs"))):
        name = str(worker.get("groupName", ""))
        groups.append((f"worker group {name}", name, worker))
    for role, group, spec in groups:
        template = _mapping(spec.get("template"))
        pod_spec = _mapping(template.get("spec"))
        first = _mapping((_sequence(pod_spec.get("containers")) or [{}])[0]).get("name")
        ray_container = (str(first),) if first else ()
        labels = {"ray.io/node-type": "head" if role == "head" else "worker", "ray.io/group": group}
        if cluster_name is not None:
            labels["ray.io/cluster"] = cluster_name
        yield from _template(
            spec,
            work,
            role=role,
            by_kind=why,
            labels=labels,
            ready_by_controller=ray_container,
            restarted_by_controller=ray_container,
            ports_by_controller=tuple((name, *_RAY_METRICS_PORT) for name in ray_container),
            controller="KubeRay",
        )


def _ray_cluster(obj: Mapping[str, Any]) -> Iterator[PodTemplate]:
    yield from _ray_cluster_templates(_spec(obj), Work.LONG_RUNNING, "", _name(obj))


def _ray_job(obj: Mapping[str, Any]) -> Iterator[PodTemplate]:
    spec = _spec(obj)
    cluster = _mapping(spec.get("rayClusterSpec"))
    yield from _ray_cluster_templates(cluster, Work.BATCH, "a RayJob", None)
    submitter = _mapping(spec.get("submitterPodTemplate"))
    if submitter:
        yield from _template(
            {"template": submitter}, Work.BATCH, role="submitter", by_kind="a RayJob"
        )


def _ray_service(obj: Mapping[str, Any]) -> Iterator[PodTemplate]:
    cluster = _mapping(_spec(obj).get("rayClusterConfig"))
    yield from _ray_cluster_templates(cluster, Work.LONG_RUNNING, "", None)


# -- serving: LeaderWorkerSet, Knative ------------------------------------------------------------


_RECREATES_GROUP = ("RecreateGroupOnPodRestart", "RecreateGroupAfterStart")
"""LeaderWorkerSet restart policies that recreate the whole group when any container of any of
its pods restarts (sigs.k8s.io/lws pkg/controllers/pod_controller.go handleRestartPolicy, when
pkg/utils/pod/pod_utils.go ContainerRestarted finds a restartCount above 0 among the init
containers' statuses, native sidecars included, or the containers'); `None` and the deprecated
`Default` restart only the failed pod."""


def _group_restart(spec: Mapping[str, Any]) -> str:
    """The LeaderWorkerSet's restart policy when it recreates the whole group, else "". Left
    out (or null, which the API server's structural defaulting prunes) it is
    RecreateGroupOnPodRestart: api/leaderworkerset/v1 `+kubebuilder:default`."""
    policy = spec.get("restartPolicy")
    if policy is None:
        return "RecreateGroupOnPodRestart, the default"
    return str(policy) if policy in _RECREATES_GROUP else ""


def _leader_worker_set(obj: Mapping[str, Any]) -> Iterator[PodTemplate]:
    # sigs.k8s.io/lws api/leaderworkerset/v1: without a leaderTemplate the leader runs the
    # workerTemplate too. The controller labels every pod with the set's name.
    spec = _mapping(_spec(obj).get("leaderWorkerTemplate"))
    labels = {"leaderworkerset.sigs.k8s.io/name": _name(obj)}
    leader = _mapping(spec.get("leaderTemplate"))
    worker = _mapping(spec.get("workerTemplate"))
    group = _group_restart(spec)
    if leader:
        yield from _template(
            {"template": leader}, Work.ROLLED_OUT, role="leader", labels=labels, group_restart=group
        )
    role = "worker" if leader else ""
    yield from _template(
        {"template": worker}, Work.ROLLED_OUT, role=role, labels=labels, group_restart=group
    )


_KNATIVE_USER_PORT = ("user-port", 8080)
"""The port Knative declares on the serving container, numbered as its first declared port or
8080 (knative/serving pkg/reconciler/revision/resources/deploy.go makeServingContainer,
getUserPort, buildContainerPorts; pkg/apis/serving/v1/revision_helpers.go DefaultUserPort,
UserPortName)."""


def _knative(obj: Mapping[str, Any]) -> Iterator[PodTemplate]:
    """serving.knative.dev Service and Configuration: spec.template is a revision's template.
    Knative's serving container is the only one, or each one with ports
    (pkg/reconciler/revision/resources/deploy.go BuildUserContainers). It gives that container
    a TCP readiness probe when it has none, run by its queue-proxy
    (pkg/apis/serving/v1/revision_defaults.go, applyProbes), declares its `user-port`
    (_KNATIVE_USER_PORT: 8080 when it lists none) and routes every request there; an unnamed
    container is `user-container`."""
    template = _mapping(_spec(obj).get("template"))
    spec = _mapping(template.get("spec"))
    containers = [_mapping(c) for c in _sequence(spec.get("containers"))]
    serving = [
        (str(c.get("name") or "user-container"), bool(_sequence(c.get("ports"))))
        for c in containers
        if len(containers) == 1 or _sequence(c.get("ports"))
    ]
    labels = {"serving.knative.dev/service": _name(obj)} if obj.get("kind") == "Service" else {}
    yield from _template(
        {"template": template},
        Work.LONG_RUNNING,
        labels=labels,
        ready_by_controller=tuple(name for name, _ in serving),
        # a listed port already serves; one listing none gets the default
        ports_by_controller=tuple(
            (name, *_KNATIVE_USER_PORT) for name, listed in serving if not listed
        ),
        routed_by_controller=tuple(name for name, _ in serving),
        controller="Knative",
    )


def _app_wrapper(obj: Mapping[str, Any]) -> Iterator[PodTemplate]:
    # workload.codeflare.dev AppWrapper: spec.components[].template is a whole object.
    for number, component in enumerate(_sequence(_spec(obj).get("components"))):
        inner = _mapping(_mapping(component).get("template"))
        understood = understand(inner)
        for template in understood.templates if understood else ():
            role = f"component {number + 1} ({inner.get('kind')})"
            yield PodTemplate(
                template.metadata,
                template.spec,
                template.work,
                role=f"{role} {template.role}".strip(),
                by_kind=template.by_kind,
                labels=template.labels,
                ready_by_controller=template.ready_by_controller,
                restarted_by_controller=template.restarted_by_controller,
                ports_by_controller=template.ports_by_controller,
                routed_by_controller=template.routed_by_controller,
                controller=template.controller,
                group_restart=template.group_restart,
            )


def _app_wrapper_understood(obj: Mapping[str, Any]) -> bool:
    """An AppWrapper is understood when every component's object is."""
    components = _sequence(_spec(obj).get("components"))
    return all(
        understand(_mapping(_mapping(component).get("template"))) is not None
        for component in components
    )


WORKLOADS: dict[tuple[str, str], Reader] = {
    ("", "Pod"): _pod,
    ("", "ReplicationController"): _long_running,
    ("apps", "Deployment"): _rolled_out,
    ("apps", "StatefulSet"): _rolled_out,
    ("apps", "DaemonSet"): _rolled_out,
    ("apps", "ReplicaSet"): _long_running,
    ("batch", "Job"): _job,
    ("batch", "CronJob"): _cron_job,
    ("apps.openshift.io", "DeploymentConfig"): _rolled_out,
    ("argoproj.io", "Rollout"): _rollout,
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): _leader_worker_set,
    ("jobset.x-k8s.io", "JobSet"): _jobset,
    **{("kubeflow.org", kind): _kubeflow for kind in _REPLICA_SPECS},
    ("trainer.kubeflow.org", "TrainingRuntime"): _training_runtime,
    ("trainer.kubeflow.org", "ClusterTrainingRuntime"): _training_runtime,
    ("trainer.kubeflow.org", "TrainJob"): _nothing,
    ("ray.io", "RayCluster"): _ray_cluster,
    ("ray.io", "RayJob"): _ray_job,
    ("ray.io", "RayService"): _ray_service,
    ("serving.knative.dev", "Service"): _knative,
    ("serving.knative.dev", "Configuration"): _knative,
    ("workload.codeflare.dev", "AppWrapper"): _app_wrapper,
}
"""(API group, kind) -> where its pod templates are."""

NO_PODS: dict[str, frozenset[str]] = {
    "": frozenset(
        [
            "Binding",
            "ComponentStatus",
            "ConfigMap",
            "Endpoints",
            "Event",
            "LimitRange",
            "Namespace",
            "Node",
            "PersistentVolume",
            "PersistentVolumeClaim",
            "PodTemplate",
            "ResourceQuota",
            "Secret",
            "Service",
            "ServiceAccount",
        ]
    ),
    "apps": frozenset({"ControllerRevision"}),
    "autoscaling": frozenset({"HorizontalPodAutoscaler"}),
    "policy": frozenset({"PodDisruptionBudget", "Eviction"}),
    "networking.k8s.io": frozenset(
        {"Ingress", "IngressClass", "NetworkPolicy", "IPAddress", "ServiceCIDR"}
    ),
    "rbac.authorization.k8s.io": frozenset(
        {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}
    ),
    "storage.k8s.io": frozenset(
        [
            "StorageClass",
            "CSIDriver",
            "CSINode",
            "CSIStorageCapacity",
            "VolumeAttachment",
            "VolumeAttributesClass",
        ]
    ),
    "apiextensions.k8s.io": frozenset({"CustomResourceDefinition"}),
    "admissionregistration.k8s.io": frozenset(
        [
            "ValidatingWebhookConfiguration",
            "MutatingWebhookConfiguration",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyBinding",
            "MutatingAdmissionPolicy",
            "MutatingAdmissionPolicyBinding",
        ]
    ),
    "apiregistration.k8s.io": frozenset({"APIService"}),
    "scheduling.k8s.io": frozenset({"PriorityClass"}),
    "coordination.k8s.io": frozenset({"Lease", "LeaseCandidate"}),
    "node.k8s.io": frozenset({"RuntimeClass"}),
    "discovery.k8s.io": frozenset({"EndpointSlice"}),
    "certificates.k8s.io": frozenset({"CertificateSigningRequest", "ClusterTrustBundle"}),
    "events.k8s.io": frozenset({"Event"}),
    "flowcontrol.apiserver.k8s.io": frozenset({"FlowSchema", "PriorityLevelConfiguration"}),
    "resource.k8s.io": frozenset(
        {"ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice"}
    ),
    "kustomize.config.k8s.io": frozenset({"Kustomization", "Component"}),
    "monitoring.coreos.com": frozenset(
        {"ServiceMonitor", "PodMonitor", "PrometheusRule", "Probe", "AlertmanagerConfig"}
        | {"ScrapeConfig"}
    ),
    "cert-manager.io": frozenset({"Certificate", "CertificateRequest", "Issuer", "ClusterIssuer"}),
    "gateway.networking.k8s.io": frozenset(
        [
            "Gateway",
            "GatewayClass",
            "HTTPRoute",
            "GRPCRoute",
            "TCPRoute",
            "TLSRoute",
            "UDPRoute",
            "ReferenceGrant",
            "BackendTLSPolicy",
        ]
    ),
    "kueue.x-k8s.io": frozenset(
        [
            "ClusterQueue",
            "LocalQueue",
            "ResourceFlavor",
            "WorkloadPriorityClass",
            "AdmissionCheck",
            "Cohort",
            "Topology",
            "ProvisioningRequestConfig",
            "MultiKueueConfig",
            "MultiKueueCluster",
        ]
    ),
    "argoproj.io": frozenset({"Application", "ApplicationSet", "AppProject"}),
}
"""API group -> kinds that run no pods of their own: nothing in them for the probe rules."""


_BUILT_IN = ("", "apps", "batch")


def understand(obj: Mapping[str, Any]) -> Understood | None:
    """The object's pod templates (none for a kind that runs no pods); None for a kind lint does
    not understand. Without an apiVersion the kind is looked for among Kubernetes' own."""
    kind = str(obj.get("kind", ""))
    if "apiVersion" in obj:
        key = (group_of(obj), kind)
    else:
        key = next(((g, kind) for g in _BUILT_IN if (g, kind) in WORKLOADS), ("", kind))
    reader = WORKLOADS.get(key)
    if reader is not None:
        if reader is _app_wrapper and not _app_wrapper_understood(obj):
            return None
        return Understood(tuple(reader(obj)))
    if key[1] in NO_PODS.get(key[0], ()):
        return Understood()
    return None
