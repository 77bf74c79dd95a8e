"""Every Warning Event and failing condition a component wrote is evidence: a reason doctor has
no rule for is quoted in the component's words, never dropped, and no arithmetic remedy speaks
over it.

The table holds real reasons with their messages as their components write them (the source of
each is named in its row), and two made up, which stand for every reason no table lists.
"""

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, NamedTuple

import pytest

from tests.scenario.conftest import Doctor
from tests.support.fake_apiserver import RESOURCE_TYPES
from tests.support.scenarios import (
    NAMESPACE,
    Obj,
    healthy,
    held_by_running_job,
    job_pod,
    pod_for,
    training_job,
    ts,
)

ARITHMETIC = frozenset(
    {
        "capacity.held-by-running-job",
        "capacity.partly-fits",
        "capacity.blocked-by-other-work",
        "capacity.preempts",
        "capacity.too-large",
        "capacity.no-eligible-machine",
        "capacity.machine-kept-out",
        "capacity.no-such-gpu",
        "capacity.rules-block",
        "workloads.waiting-too-long",
    }
)
"""The codes whose remedies come from doctor's arithmetic: add a machine, ask for less, free
some capacity, let the job onto reserved machines, wait for the running job."""


def event(
    now: datetime,
    involved: Obj,
    reason: str,
    message: str,
    component: str,
    *,
    count: int = 3,
    age: timedelta = timedelta(minutes=1),
) -> Obj:
    """A core/v1 Event as client-go's EventRecorder writes it (`kubectl get events -o yaml`)."""
    meta = involved["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{meta['name']}.{abs(hash((reason, message))) % 10**16:016x}",
            "namespace": NAMESPACE,
            "creationTimestamp": ts(now - timedelta(minutes=9)),
        },
        "involvedObject": {
            "apiVersion": involved["apiVersion"],
            "kind": involved["kind"],
            "name": meta["name"],
            "namespace": meta.get("namespace", NAMESPACE),
            "uid": meta.get("uid", ""),
        },
        "reason": reason,
        "message": message,
        "source": {"component": component},
        "firstTimestamp": ts(now - timedelta(minutes=9)),
        "lastTimestamp": ts(now - age),
        "count": count,
        "type": "Warning",
    }


def _job(now: datetime) -> Obj:
    return training_job("train-002", now, gpus=1, finished=False, age=timedelta(minutes=10))


def placed_pod(now: datetime, *, phase: str = "Pending", waiting: str = "ContainerCreating") -> Obj:
    """train-002's pod, placed on gpu-1 ten minutes ago and not started: the kubelet's
    `ContainerCreating` waiting state while volumes mount and the sandbox is made."""
    pod = job_pod(
        _job(now), now, suffix="w0", node_name="gpu-1", phase=phase, age=timedelta(minutes=10)
    )
    pod["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "True"},
        {"type": "Ready", "status": "False", "reason": "ContainersNotReady"},
    ]
    pod["status"]["containerStatuses"] = [
        {
            "name": "trainer",
            "image": pod["spec"]["containers"][0]["image"],
            "imageID": "",
            "ready": False,
            "restartCount": 0,
            "state": {"waiting": {"reason": waiting}},
        }
    ]
    return pod


def failed_pod(now: datetime, reason: str, message: str) -> Obj:
    """A pod the kubelet refused at admission (pkg/kubelet/kubelet.go rejectPod: phase Failed,
    the reason and message on the pod's status)."""
    pod = job_pod(
        _job(now), now, suffix="w0", node_name="gpu-1", phase="Failed", age=timedelta(minutes=10)
    )
    pod["status"].update({"reason": reason, "message": f"Pod was rejected: {message}"})
    return pod


def unplaced_pod(now: datetime, scheduler: str) -> Obj:
    """train-002's pod, left to another scheduler that has not placed it (no PodScheduled
    condition: only kube-scheduler writes `Unschedulable` there)."""
    pod = job_pod(
        _job(now),
        now,
        suffix="w0",
        node_name=None,
        phase="Pending",
        age=timedelta(minutes=10),
        scheduler_said=False,
    )
    pod["spec"]["schedulerName"] = scheduler
    return pod


SERVED = frozenset(t.kind for t in RESOURCE_TYPES)


class Row(NamedTuple):
    """One reason: the objects that show it, and the words doctor must quote."""

    id: str
    build: Callable[[datetime], list[Obj]]
    quote: str


def _on_pod(
    reason: str,
    message: str,
    component: str = "kubelet",
    *,
    pod: Callable[[datetime], Obj] = placed_pod,
) -> Callable[[datetime], list[Obj]]:
    def build(now: datetime) -> list[Obj]:
        shown = pod(now)
        return [*healthy(now), _job(now), shown, event(now, shown, reason, message, component)]

    return build


def _on(
    involved: Callable[[datetime], Obj],
    reason: str,
    message: str,
    component: str,
    *,
    beside: Callable[[datetime], list[Obj]] = lambda now: [],
) -> Callable[[datetime], list[Obj]]:
    """An Event about an object other than the job's pod, while the job's pod waits (and the
    objects `beside` it)."""

    def build(now: datetime) -> list[Obj]:
        shown = involved(now)
        # An Event names its object by reference; a kind the fake does not serve (a custom
        # resource whose group is not installed here) is named without being stored.
        stored = [shown] if shown["kind"] in SERVED else []
        return [
            *healthy(now),
            _job(now),
            placed_pod(now),
            *beside(now),
            *stored,
            event(now, shown, reason, message, component),
        ]

    return build


def _with_condition(
    pod_condition: Obj | None = None, node_condition: Obj | None = None
) -> Callable[[datetime], list[Obj]]:
    """The job's pod waits on gpu-1 while a condition of the pod, or of gpu-1, fails."""

    def build(now: datetime) -> list[Obj]:
        objects = [*healthy(now), _job(now)]
        pod = placed_pod(now)
        if pod_condition is not None:
            pod["status"]["conditions"].append(pod_condition)
        objects.append(pod)
        if node_condition is not None:
            gpu = next(
                o for o in objects if o["kind"] == "Node" and o["metadata"]["name"] == "gpu-1"
            )
            gpu["status"]["conditions"] = [
                c
                for c in gpu["status"].get("conditions", [])
                if c["type"] != node_condition["type"]
            ] + [node_condition]
        return objects

    return build


def _exporter(now: datetime) -> list[Obj]:
    """A Deployment with no copy running: its ReplicaSet's creates are refused, and the
    Deployment controller says so in `ReplicaFailure` (pkg/controller/deployment/sync.go)."""
    return [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "metrics-exporter", "namespace": NAMESPACE},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "metrics-exporter"}},
                "template": {
                    "metadata": {"labels": {"app": "metrics-exporter"}},
                    "spec": {
                        "containers": [{"name": "exporter", "image": "prom/node-exporter:v1.8.2"}]
                    },
                },
            },
            "status": {"replicas": 0, "availableReplicas": 0, "updatedReplicas": 0},
        }
    ]


def _replica_set(now: datetime) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "metrics-exporter-7d9f8c6b5", "namespace": NAMESPACE},
    }


def _stateful_set(now: datetime) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "metadata-db", "namespace": NAMESPACE},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "metadata-db"}},
            "template": {
                "metadata": {"labels": {"app": "metadata-db"}},
                "spec": {"containers": [{"name": "db", "image": "mysql:8.0"}]},
            },
        },
        "status": {"replicas": 0, "readyReplicas": 0},
    }


def _claim(now: datetime) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "checkpoints", "namespace": NAMESPACE},
        "spec": {"storageClassName": "gp3", "accessModes": ["ReadWriteOnce"]},
        "status": {"phase": "Pending"},
    }


def _named(kind: str, api_version: str, name: str) -> Callable[[datetime], Obj]:
    def build(now: datetime) -> Obj:
        return {
            "apiVersion": api_version,
            "kind": kind,
            "metadata": {"name": name, "namespace": NAMESPACE},
        }

    return build


ROWS = (
    # -- the kubelet: pkg/kubelet/events/event.go reasons; messages from pkg/kubelet/volumemanager,
    #    kuberuntime and lifecycle as `kubectl describe pod` prints them.
    Row(
        "kubelet FailedMount (volume set-up)",
        _on_pod(
            "FailedMount",
            'MountVolume.SetUp failed for volume "datasets" : mount failed: exit status 32 '
            "Mounting command: mount Mounting arguments: -t nfs 10.0.0.5:/exports/data "
            "Output: mount.nfs: Connection timed out",
        ),
        'MountVolume.SetUp failed for volume "datasets" : mount failed: exit status 32',
    ),
    Row(
        "kubelet FailedMount (timed out)",
        _on_pod(
            "FailedMount",
            "Unable to attach or mount volumes: unmounted volumes=[datasets], unattached "
            "volumes=[datasets kube-api-access-8x2lq]: timed out waiting for the condition",
        ),
        "Unable to attach or mount volumes: unmounted volumes=[datasets]",
    ),
    Row(
        "kubelet FailedCreatePodSandBox",
        _on_pod(
            "FailedCreatePodSandBox",
            "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup "
            'network for sandbox "4f1c": plugin type="calico" failed (add): error getting '
            "ClusterInformation: connection is unauthorized: Unauthorized",
        ),
        "Failed to create pod sandbox: rpc error",
    ),
    Row(
        "kubelet NetworkNotReady",
        _on_pod(
            "NetworkNotReady",
            "network is not ready: container runtime network not ready: NetworkReady=false "
            "reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not "
            "initialized",
        ),
        "network is not ready: container runtime network not ready",
    ),
    Row(
        "kubelet FailedPostStartHook",
        _on_pod(
            "FailedPostStartHook",
            "PostStartHook failed",
            pod=lambda now: placed_pod(now, phase="Running", waiting="PostStartHookError"),
        ),
        "PostStartHook failed",
    ),
    Row(
        "kubelet UnexpectedAdmissionError (device plugin)",
        _on_pod(
            "UnexpectedAdmissionError",
            "Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. "
            "Requested: 1, Available: 0, which is unexpected",
            pod=lambda now: failed_pod(
                now,
                "UnexpectedAdmissionError",
                "Allocate failed due to requested number of devices unavailable for "
                "nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected",
            ),
        ),
        "Allocate failed due to requested number of devices unavailable for nvidia.com/gpu",
    ),
    Row(
        "kubelet OutOfnvidia.com/gpu (admission)",
        _on_pod(
            "OutOfnvidia.com/gpu",
            "Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 2, capacity: 2",
            pod=lambda now: failed_pod(
                now,
                "OutOfnvidia.com/gpu",
                "Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 2, "
                "capacity: 2",
            ),
        ),
        "Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 2, capacity: 2",
    ),
    Row(
        "kubelet TopologyAffinityError",
        _on_pod(
            "TopologyAffinityError",
            "Resources cannot be allocated with Topology locality",
            pod=lambda now: failed_pod(
                now, "TopologyAffinityError", "Resources cannot be allocated with Topology locality"
            ),
        ),
        "Resources cannot be allocated with Topology locality",
    ),
    Row(
        "kubelet Evicted",
        _on_pod(
            "Evicted",
            "The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, "
            "available: 9Gi. Container trainer was using 12Gi, request is 0, has larger "
            "consumption of ephemeral-storage.",
            pod=lambda now: failed_pod(
                now, "Evicted", "The node was low on resource: ephemeral-storage."
            ),
        ),
        "The node was low on resource: ephemeral-storage.",
    ),
    Row(
        "kubelet FailedSync",
        _on_pod(
            "FailedSync",
            "error determining status: rpc error: code = DeadlineExceeded desc = context "
            "deadline exceeded",
        ),
        "error determining status: rpc error: code = DeadlineExceeded",
    ),
    Row(
        "kubelet FailedKillPod",
        _on_pod(
            "FailedKillPod",
            'error killing pod: failed to "KillPodSandbox" for "uid-1" with KillPodSandboxError',
        ),
        'error killing pod: failed to "KillPodSandbox"',
    ),
    Row(
        "kubelet InspectFailed on an image no rule reads",
        _on_pod(
            "InspectFailed",
            'Failed to apply default image tag "Trainer:2.1": couldn\'t parse image name',
        ),
        "Failed to apply default image tag",
    ),
    Row(
        "kubelet FailedPreStopHook",
        _on_pod(
            "FailedPreStopHook",
            "PreStopHook failed",
            pod=lambda now: placed_pod(now, phase="Running", waiting="ContainerCreating"),
        ),
        "PreStopHook failed",
    ),
    Row(
        "kubelet SysctlForbidden",
        _on_pod(
            "SysctlForbidden",
            'forbidden sysctl: "net.core.somaxconn" not allowlisted',
            pod=lambda now: failed_pod(
                now, "SysctlForbidden", 'forbidden sysctl: "net.core.somaxconn" not allowlisted'
            ),
        ),
        'forbidden sysctl: "net.core.somaxconn" not allowlisted',
    ),
    # -- the node lifecycle controller: pkg/controller/util/node/controller_utils.go
    #    MarkPodsNotReady records `NodeNotReady` "Node is not ready" on each pod of the machine.
    Row(
        "node-controller NodeNotReady",
        _on_pod("NodeNotReady", "Node is not ready", "node-controller"),
        "Node is not ready",
    ),
    # -- other schedulers: their FailedScheduling is no kube-scheduler condition capacity reads.
    Row(
        "volcano FailedScheduling",
        _on_pod(
            "FailedScheduling",
            "all nodes are unavailable: 2 Insufficient nvidia.com/gpu.",
            "volcano",
            pod=lambda now: unplaced_pod(now, "volcano"),
        ),
        "all nodes are unavailable: 2 Insufficient nvidia.com/gpu.",
    ),
    Row(
        "yunikorn Scheduling refused",
        _on_pod(
            "PodUnschedulable",
            "Task train/train-002-w0 is pending for the requested resources become available",
            "yunikorn",
            pod=lambda now: unplaced_pod(now, "yunikorn"),
        ),
        "Task train/train-002-w0 is pending for the requested resources become available",
    ),
    # -- controllers: pkg/controller/replicaset (FailedCreate on the ReplicaSet), statefulset
    #    (stateful_pod_control.go: "create Pod %s in StatefulSet %s failed error: %s").
    Row(
        "replicaset-controller FailedCreate",
        _on(
            _replica_set,
            "FailedCreate",
            'Error creating: pods "metrics-exporter-7d9f8c6b5-x2k4p" is forbidden: exceeded quota: '
            "compute, requested: requests.cpu=2, used: requests.cpu=8, limited: requests.cpu=8",
            "replicaset-controller",
            beside=_exporter,
        ),
        'Error creating: pods "metrics-exporter-7d9f8c6b5-x2k4p" is forbidden: exceeded quota',
    ),
    Row(
        "statefulset-controller FailedCreate",
        _on(
            _stateful_set,
            "FailedCreate",
            "create Pod metadata-db-0 in StatefulSet metadata-db failed error: pods "
            '"metadata-db-0" is forbidden: error looking up service account train/db: '
            'serviceaccount "db" not found',
            "statefulset-controller",
        ),
        "create Pod metadata-db-0 in StatefulSet metadata-db failed error",
    ),
    # -- volumes: pkg/controller/volume/persistentvolume (ProvisioningFailed, FailedBinding) and
    #    the external provisioner (sig-storage-lib-external-provisioner controller.go).
    Row(
        "persistentvolume-controller FailedBinding",
        _on(
            _claim,
            "FailedBinding",
            "no persistent volumes available for this claim and no storage class is set",
            "persistentvolume-controller",
        ),
        "no persistent volumes available for this claim and no storage class is set",
    ),
    Row(
        "ebs.csi.aws.com ProvisioningFailed",
        _on(
            _claim,
            "ProvisioningFailed",
            'failed to provision volume with StorageClass "gp3": rpc error: code = Internal desc = '
            'Could not create volume "pvc-4a1b": UnauthorizedOperation: You are not authorized',
            "ebs.csi.aws.com_ebs-csi-controller-7c9d_1f2e",
        ),
        'failed to provision volume with StorageClass "gp3"',
    ),
    Row(
        "volume-expander VolumeResizeFailed",
        _on(
            _claim,
            "VolumeResizeFailed",
            'resize volume "pvc-4a1b" by resizer "ebs.csi.aws.com" failed: rpc error: '
            "code = Internal",
            "external-resizer ebs.csi.aws.com",
        ),
        'resize volume "pvc-4a1b" by resizer "ebs.csi.aws.com" failed',
    ),
    # -- the horizontal pod autoscaler (pkg/controller/podautoscaler: FailedGetResourceMetric).
    Row(
        "horizontal-pod-autoscaler FailedGetResourceMetric",
        _on(
            _named("HorizontalPodAutoscaler", "autoscaling/v2", "jobs-manager"),
            "FailedGetResourceMetric",
            "failed to get cpu utilization: unable to get metrics for resource cpu: no metrics "
            "returned from resource metrics API",
            "horizontal-pod-autoscaler",
        ),
        "failed to get cpu utilization: unable to get metrics for resource cpu",
    ),
    # -- the gang schedulers' groups (volcano pkg/scheduler/framework/job_updater.go,
    #    coscheduling's PodGroup controller, KAI's podgrouper).
    Row(
        "volcano PodGroup Unschedulable",
        _on(
            _named("PodGroup", "scheduling.volcano.sh/v1beta1", "train-002"),
            "Unschedulable",
            "4/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 4 minAvailable; "
            "Pending: 4 Unschedulable",
            "volcano",
        ),
        "4/4 tasks in gang unschedulable: pod group is not ready",
    ),
    Row(
        "coscheduling PodGroup FailedScheduling",
        _on(
            _named("PodGroup", "scheduling.x-k8s.io/v1alpha1", "train-002"),
            "FailedScheduling",
            "pod group train/train-002 rejected: not enough pods (1/4) to schedule the group",
            "coscheduling",
        ),
        "pod group train/train-002 rejected",
    ),
    Row(
        "kai-scheduler PodGroup Unschedulable",
        _on(
            _named("PodGroup", "scheduling.run.ai/v2alpha2", "pg-train-002"),
            "Unschedulable",
            "Unable to schedule podgroup: node-pool default: not enough resources: "
            "requested 4 GPUs",
            "kai-scheduler",
        ),
        "Unable to schedule podgroup",
    ),
    # -- the endpoints controller (pkg/controller/endpoint: FailedToCreateEndpoint).
    Row(
        "endpoint-controller FailedToCreateEndpoint",
        _on(
            _named("Service", "v1", "train-002-master-0"),
            "FailedToCreateEndpoint",
            "Failed to create endpoint for service train/train-002-master-0: endpoints is "
            "forbidden",
            "endpoint-controller",
        ),
        "Failed to create endpoint for service train/train-002-master-0",
    ),
    # -- failing conditions: a pod being stopped (DisruptionTarget, pkg/apis/core/types.go),
    #    the kubelet's node conditions (pkg/kubelet/nodestatus/setters.go).
    Row(
        "pod condition DisruptionTarget",
        _with_condition(
            pod_condition={
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "TerminationByKubelet",
                "message": "The node had condition: [DiskPressure].",
            }
        ),
        "The node had condition: [DiskPressure].",
    ),
    Row(
        "node condition Ready Unknown",
        _with_condition(
            node_condition={
                "type": "Ready",
                "status": "Unknown",
                "reason": "NodeStatusUnknown",
                "message": "Kubelet stopped posting node status.",
            }
        ),
        "Kubelet stopped posting node status.",
    ),
    Row(
        "node condition DiskPressure",
        _with_condition(
            node_condition={
                "type": "DiskPressure",
                "status": "True",
                "reason": "KubeletHasDiskPressure",
                "message": "kubelet has disk pressure",
            }
        ),
        "kubelet has disk pressure",
    ),
    # -- made up: a reason and a component no table lists, on a pod and on a kind nobody knows.
    Row(
        "made up: FrobnicatorJammed on the job's pod",
        _on_pod(
            "FrobnicatorJammed",
            "the frobnicator on gpu-1 is jammed; rack 7 needs a visit",
            "acme-operator",
        ),
        "the frobnicator on gpu-1 is jammed; rack 7 needs a visit",
    ),
    Row(
        "made up: QuantumFlux on a Widget",
        _on(
            _named("Widget", "acme.example/v1", "flux-capacitor"),
            "QuantumFlux",
            "flux out of phase by 3 degrees",
            "widget-controller",
        ),
        "flux out of phase by 3 degrees",
    ),
)


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_every_reported_reason_is_a_finding_in_the_component_s_words(
    doctor: Doctor, row: Row
) -> None:
    doctor.load(row.build)
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    quoting = [
        f
        for f in report["findings"]
        if f["status"] != "ok"
        and row.quote in f["headline"]
        and any(row.quote in d for d in f["details"])
    ]
    assert quoting, f"no finding quotes {row.quote!r}: " + "; ".join(
        f"{f['code']} {f['status']}: {f['headline']}" for f in report["findings"]
    )
    assert quoting[0]["status"] == "fail", quoting[0]
    contradicting = [f["code"] for f in report["findings"] if f["code"] in ARITHMETIC]
    assert not contradicting, f"arithmetic speaks over the cluster's word: {contradicting}"
    assert result.exit_code == 2, report["headline"]


def test_the_table_holds_thirty_reasons_and_two_made_up() -> None:
    assert len(ROWS) >= 32
    assert sum(r.id.startswith("made up") for r in ROWS) == 2


def test_a_workload_s_pod_another_scheduler_left_waiting_gets_its_words_not_a_room_guess(
    doctor: Doctor,
) -> None:
    """A copy of the database left unplaced by Volcano for ten minutes: without the scheduler's
    words the workloads check would guess "usually no machine has room"; with them it leaves
    the pod to the evidence check."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        database = next(o for o in objects if o["metadata"]["name"] == "mysql")
        waiting = pod_for(database, now, suffix="q7r8s", age=timedelta(minutes=10))
        del waiting["spec"]["nodeName"]
        waiting["spec"]["schedulerName"] = "volcano"
        waiting["status"] = {"phase": "Pending", "conditions": []}
        said = event(
            now,
            waiting,
            "FailedScheduling",
            "all nodes are unavailable: 1 node(s) had untolerated taint {dedicated: gpu}.",
            "volcano",
        )
        return [*objects, waiting, said]

    doctor.load(build)
    report = doctor.live("-o", "json").json()
    codes = [f["code"] for f in report["findings"] if f["status"] != "ok"]
    assert "workloads.waiting-too-long" not in codes, codes
    assert codes == ["evidence.cluster-reported"], codes
    assert report["headline"]["text"] == (
        "The cluster reports a problem with the workload 'mysql' (its copy 'mysql-q7r8s'): "
        "“volcano” says "
        "“FailedScheduling: all nodes are unavailable: 1 node(s) had untolerated taint "
        "{dedicated: gpu}.”."
    )


def test_a_pod_placed_on_a_machine_that_never_starts_is_not_told_to_find_room(
    doctor: Doctor,
) -> None:
    """Placed ten minutes ago, still creating, and nothing reported: what holds it is on that
    machine (its volumes, its sandbox, its image), so no capacity remedy applies."""

    def build(now: datetime) -> list[Obj]:
        return [*healthy(now), _job(now), placed_pod(now)]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    codes = [
        (f["code"], f["status"], f["basis"]) for f in report["findings"] if f["status"] != "ok"
    ]
    assert codes == [("workloads.stuck-on-machine", "fail", "inferred")], codes
    assert report["headline"]["text"] == (
        "The training job 'train-002' was given a machine 10 minutes ago and still hasn't "
        "started there."
    )
    assert report["headline"]["remedy"].startswith("See what holds it up on that machine with")
    assert report["headline"]["remedy"].endswith(" describe pod train-002-w0`.")
    assert result.exit_code == 2


def test_the_component_s_words_print_as_written_never_as_emoji_or_styles(
    doctor: Doctor,
) -> None:
    """An operator's controller may write `:x:`, `:100:` or `[bold]` in a message (chat-ops
    habits); the text report quotes them as written: no emoji code becomes a picture, no
    bracket a style."""
    said = "checks :x: failed, :100: retries; [bold]rack 7[/bold] \\[raw]"
    doctor.load(_on_pod("FrobnicatorJammed", said, "acme-operator"))
    result = doctor.live()
    assert result.exit_code == 2, result.stdout
    assert "FrobnicatorJammed" in result.stdout, "precondition: the event is the headline"
    assert f"FrobnicatorJammed: {said}" in result.stdout, result.stdout


UNTOLERATED = (
    "0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: infra}, 1 node(s) "
    "didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 "
    "Preemption is not helpful for scheduling."
)
"""kube-scheduler's FitError (pkg/scheduler/schedule_one.go) for a pod no machine takes."""


def _service_copy_unplaced(*, age: timedelta, with_event: bool) -> Callable[[datetime], list[Obj]]:
    """The jobs-manager's new copy, marked Unschedulable by kube-scheduler (the PodScheduled
    condition, and its FailedScheduling Event when `with_event`) `age` ago."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        manager = next(o for o in objects if o["metadata"]["name"] == "jobs-manager")
        waiting = pod_for(manager, now, suffix="zz9x1", age=age)
        del waiting["spec"]["nodeName"]
        waiting["status"] = {
            "phase": "Pending",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": UNTOLERATED,
                    "lastTransitionTime": ts(now - age),
                }
            ],
        }
        said = [event(now, waiting, "FailedScheduling", UNTOLERATED, "default-scheduler")]
        return [*objects, waiting, *(said if with_event else [])]

    return build


@pytest.mark.parametrize("with_event", [True, False], ids=["event-and-condition", "condition"])
@pytest.mark.parametrize(
    "age", [timedelta(minutes=1), timedelta(minutes=30)], ids=["a-minute", "half-an-hour"]
)
def test_the_scheduler_s_word_on_a_service_s_copy_is_evidence_not_a_wait(
    doctor: Doctor, age: timedelta, with_event: bool
) -> None:
    """The capacity check places only training pods: kube-scheduler's Unschedulable on any
    other pod is the cluster's word, quoted once (the Event and the condition it sets with it
    say the same), never "still starting" nor a room guess."""
    doctor.load(_service_copy_unplaced(age=age, with_event=with_event))
    result = doctor.live("-o", "json")
    report = result.json()
    codes = [f["code"] for f in report["findings"] if f["status"] != "ok"]
    assert "workloads.starting" not in codes, codes
    assert "workloads.waiting-too-long" not in codes, codes
    quoting = [f for f in report["findings"] if UNTOLERATED[:60] in f["headline"]]
    assert [f["code"] for f in quoting] == ["evidence.cluster-reported"], codes
    said = "“default-scheduler” says “" + (
        "FailedScheduling: " if with_event else "PodScheduled=False (Unschedulable): "
    )
    assert "its copy 'jobs-manager-zz9x1'" in quoting[0]["headline"], quoting[0]["headline"]
    assert said in quoting[0]["headline"], quoting[0]["headline"]
    assert result.exit_code == 2, report["headline"]


MOUNT_TIMED_OUT = (
    "Unable to attach or mount volumes: unmounted volumes=[datasets], unattached "
    "volumes=[datasets kube-api-access-8x2lq]: timed out waiting for the condition"
)
"""The kubelet pod worker's summary once WaitForAttachAndMount times out (pkg/kubelet/kubelet.go
SyncPod: `Eventf(pod, Warning, events.FailedMountVolume, "Unable to attach or mount volumes:
%v", err)`), written again every sync, about two minutes apart."""
NFS_REFUSED = (
    'MountVolume.SetUp failed for volume "datasets" : mount failed: exit status 32 Mounting '
    "command: mount Mounting arguments: -t nfs 10.0.0.5:/exports/data "
    "/var/lib/kubelet/pods/uid/volumes/kubernetes.io~nfs/datasets Output: mount.nfs: access "
    "denied by server while mounting 10.0.0.5:/exports/data"
)
"""The volume's own failure, with the same reason (pkg/volume/util/operationexecutor/
operation_generator.go `MountVolume.SetUp failed for volume %q : %v`, the mount helper's
output)."""


def _mount_said(messages: dict[str, timedelta]) -> Callable[[datetime], list[Obj]]:
    """train-002's pod, placed on gpu-1 and being created, its dataset an NFS export, with the
    kubelet's FailedMount of each message, last seen its age ago (one Event per message, as
    the EventRecorder's correlator keeps them: client-go tools/record events_cache.go)."""

    def build(now: datetime) -> list[Obj]:
        job, pod = _job(now), placed_pod(now)
        for spec in (job["spec"]["template"]["spec"], pod["spec"]):
            spec["volumes"] = [
                {"name": "datasets", "nfs": {"server": "10.0.0.5", "path": "/exports/data"}}
            ]
        said = [
            event(now, pod, "FailedMount", message, "kubelet", count=4, age=age)
            for message, age in messages.items()
        ]
        return [*healthy(now), job, pod, *said]

    return build


def test_the_volume_s_own_failure_leads_its_timed_out_summary(doctor: Doctor) -> None:
    """The kubelet writes FailedMount twice over for one volume: why the mount failed, and its
    pod worker's summary that it timed out waiting. The summary, though newer, must not hide
    the cause: the finding quotes the cause and keeps both in its details."""
    doctor.load(
        _mount_said({NFS_REFUSED: timedelta(seconds=50), MOUNT_TIMED_OUT: timedelta(seconds=20)})
    )
    result = doctor.live("-o", "json")
    report = result.json()
    found = [f for f in report["findings"] if f["code"] == "evidence.cluster-reported"]
    assert len(found) == 1, [(f["code"], f["headline"]) for f in found]
    assert "mount.nfs: access denied by server" in found[0]["headline"], found[0]["headline"]
    assert [d.split(": ", 1)[1] for d in found[0]["details"]] == [NFS_REFUSED, MOUNT_TIMED_OUT]
    assert (result.exit_code, report["headline"]["code"]) == (2, "evidence.cluster-reported")


def test_the_words_of_one_reason_are_kept_up_to_three_and_the_rest_counted(
    doctor: Doctor,
) -> None:
    """Five different FailedMount messages about one pod: the three newest are its details,
    the other two are counted with where to read them."""
    messages = {
        f'MountVolume.SetUp failed for volume "v{n}" : mount failed: exit status 32': timedelta(
            seconds=10 * n
        )
        for n in range(1, 6)
    }
    doctor.load(_mount_said(messages))
    found = [
        f
        for f in doctor.live("-o", "json").json()["findings"]
        if f["code"] == "evidence.cluster-reported"
    ]
    assert len(found) == 1, [(f["code"], f["headline"]) for f in found]
    assert [d.split(": ", 1)[1] for d in found[0]["details"][:3]] == list(messages)[:3]
    assert found[0]["details"][3].startswith("2 more messages of FailedMount on Pod/train-002-w0: ")
    assert found[0]["details"][3].endswith(" describe pod train-002-w0`"), found[0]["details"][3]
    assert len(found[0]["details"]) == 4, found[0]["details"]


# -- truegreen refresh's own Warning Events: the freshness check's to say ---------------------

_GONE = "sha256:" + "e" * 64
REFRESH_WARNINGS = {
    # Each message as refresh's tick words it (truegreen.refresh.events `planned_events`,
    # truegreen.refresh.steps `latch`).
    "RefreshRolloutFailed": "the restart toward the newest image did not complete: the new "
    "copies did not become ready in time; nothing was recorded, a later run tries again",
    "RefreshLatched": "2 tries at the same digests did not roll out healthy; stopped until "
    "someone looks (clear truegreen.io/refresh-latched and truegreen.io/refresh-attempts to "
    "retry)",
    "StalePin": f"mysql stays on its pinned image while its tag 8.0 has moved on to {_GONE}",
    "DanglingPin": f"mysql's pinned image is gone: 8.0 {_GONE}",
}
"""The Warning reasons docs/refresh.md's Events table gives for `truegreen refresh`."""


def _mid_rollout(now: datetime, event: Callable[[Obj], Obj] | None) -> list[Obj]:
    """The healthy namespace with its Deployment `mysql` mid-rollout: its new copy started a
    minute ago and is not Ready yet. The deployment controller's status while the new
    ReplicaSet's pod is unavailable (pkg/controller/deployment/sync.go `syncRolloutStatus`:
    Available=False MinimumReplicasUnavailable, Progressing=True ReplicaSetUpdated); the
    kubelet's Ready=False ContainersNotReady on the pod (pkg/kubelet/status
    generateContainersReadyCondition). `event`, given the Deployment, adds an Event about it."""
    objects = healthy(now)
    started = ts(now - timedelta(minutes=1))
    for obj in objects:
        name = obj["metadata"]["name"]
        if obj["kind"] == "Deployment" and name == "mysql":
            obj["metadata"]["uid"] = "uid-mysql"
            obj["status"] = {
                "observedGeneration": 3,
                "replicas": 1,
                "updatedReplicas": 1,
                "unavailableReplicas": 1,
                "conditions": [
                    {
                        "type": "Available",
                        "status": "False",
                        "reason": "MinimumReplicasUnavailable",
                    },
                    {"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"},
                ],
            }
            mysql = obj
        if obj["kind"] == "Pod" and name.startswith("mysql-"):
            obj["metadata"]["creationTimestamp"] = started
            obj["status"]["conditions"] = [
                {"type": "PodScheduled", "status": "True"},
                {
                    "type": "Ready",
                    "status": "False",
                    "reason": "ContainersNotReady",
                    "lastTransitionTime": started,
                },
            ]
            for status in obj["status"]["containerStatuses"]:
                status["ready"] = False
                status["state"] = {"running": {"startedAt": started}}
    return objects if event is None else [*objects, event(mysql)]


def _refresh_event(reason: str, now: datetime) -> Callable[[Obj], Obj]:
    """The Event `truegreen refresh` writes on a workload, made by refresh's own code
    (truegreen.refresh.events `event_object`), half a minute old."""
    from truegreen.refresh.annotations import EventReason
    from truegreen.refresh.events import event_object

    return lambda workload: event_object(
        EventReason(reason),
        REFRESH_WARNINGS[reason],
        workload,
        now=now - timedelta(seconds=30),
        sequence=1,
        instance="truegreen-refresh-29012345-abcde",
    )


def test_the_reasons_here_are_every_warning_refresh_writes() -> None:
    """The table below covers refresh's every Warning reason, as docs/refresh.md lists them."""
    from truegreen.refresh.annotations import EventReason

    assert {r.value for r in EventReason if r.warning} == set(REFRESH_WARNINGS)


@pytest.mark.parametrize("reason", list(REFRESH_WARNINGS))
def test_refresh_s_own_warning_events_are_no_evidence_the_freshness_check_says_them(
    doctor: Doctor, reason: str
) -> None:
    """refresh's Warning Events stand for the API server's event TTL (an hour by default:
    cmd/kube-apiserver/app/options `EventTTL`); what each says is refresh's record on the
    workload (its annotations), which the freshness check reads (docs/evidence.md). Quoted
    again as unexplained evidence, one would make a rollout under way NOT READY, exit 2, with
    "doctor has no plainer words for this one" about truegreen's own note."""
    doctor.load(lambda now: _mid_rollout(now, _refresh_event(reason, now)))
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    evidence = [(f["code"], f["headline"]) for f in report["findings"] if f["check"] == "evidence"]
    assert evidence == [("evidence.ok", evidence[0][1])], evidence
    # What stands is the rollout under way and its copy starting, each a warning.
    not_ok = [(f["code"], f["status"]) for f in report["findings"] if f["status"] != "ok"]
    assert not_ok == [("workloads.updating", "warn"), ("workloads.starting", "warn")], not_ok
    assert (result.exit_code, report["verdict"]) == (0, "ready"), report["headline"]


def test_another_component_s_event_of_the_same_reason_is_still_evidence(doctor: Doctor) -> None:
    """The ruling is for truegreen refresh's Events alone: the same reason from another
    component is that component's word, quoted (a control for the test above)."""

    def other(workload: Obj) -> Obj:
        written = _refresh_event("RefreshRolloutFailed", doctor.now)(workload)
        written["source"] = {"component": "acme-refresher"}
        written["reportingComponent"] = "acme-refresher"
        return written

    doctor.load(lambda now: _mid_rollout(now, other))
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    assert report["headline"]["code"] == "evidence.cluster-reported", report["headline"]
    assert "“acme-refresher” says “RefreshRolloutFailed: " in report["headline"]["text"]
    assert result.exit_code == 2


@pytest.mark.parametrize(
    ("component", "exit_code"), [("truegreen-monitor", 0), ("acme-operator", 2)]
)
def test_the_monitor_s_own_verdict_events_are_never_the_cluster_s_word(
    doctor: Doctor, component: str, exit_code: int
) -> None:
    """truegreen monitor writes a Warning `TrainingUnknown` (or `TrainingNotReady`) Event on the
    namespace when its verdict changes (monitor/events.py): truegreen's own output, never a
    problem the cluster reported. Read as one, a could-not-check became NOT READY, and each
    verdict Event quoted the one before. The same Event from another component is its word."""
    message = (
        "Couldn't check whether training images can be downloaded: the cluster did not answer "
        "in time when reading the workloads."
    )

    def build(now: datetime) -> list[Obj]:
        objects = held_by_running_job(now)
        space = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        return [*objects, event(now, space, "TrainingUnknown", message, component, count=1)]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    reported = [f["code"] for f in report["findings"] if f["code"] == "evidence.cluster-reported"]
    assert (result.exit_code, reported) == (
        (0, []) if exit_code == 0 else (2, ["evidence.cluster-reported"])
    ), report["headline"]


NAMED_IN_PLAIN_WORDS = {
    "horizontal-pod-autoscaler FailedGetResourceMetric": "the autoscaling rule 'jobs-manager'",
    "volcano PodGroup Unschedulable": "the group 'train-002' that a training job starts as",
    "kai-scheduler PodGroup Unschedulable": (
        "the group 'pg-train-002' that a training job starts as"
    ),
    "endpoint-controller FailedToCreateEndpoint": "the network service 'train-002-master-0'",
    "made up: QuantumFlux on a Widget": "the Widget 'flux-capacitor'",
}
"""What a report is about, as its headline names it: in plain words for the kinds an
operator meets, and by the cluster's own kind for one doctor knows nothing of."""


@pytest.mark.parametrize("row_id", sorted(NAMED_IN_PLAIN_WORDS))
def test_the_object_a_report_is_about_is_named_in_plain_words(doctor: Doctor, row_id: str) -> None:
    row = next(r for r in ROWS if r.id == row_id)
    doctor.load(row.build)
    report: dict[str, Any] = doctor.live("-o", "json").json()
    headlines = [f["headline"] for f in report["findings"] if row.quote in f["headline"]]
    assert headlines, f"precondition: a finding quotes {row.quote!r}"
    assert headlines[0].startswith(
        f"The cluster reports a problem with {NAMED_IN_PLAIN_WORDS[row_id]}: "
    ), headlines[0]
