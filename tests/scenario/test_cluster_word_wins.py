"""The cluster's word beats doctor's arithmetic where both speak: a machine the autoscaler is
adding stays a wait however often the scheduler retries since, and a job whose only GPU machines
are down is told to bring them back, not to remove a reservation or a taint."""

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.scenario.test_autoscaler import _scaler_event, _waiting
from tests.scenario.test_cluster_reports import event
from tests.support.fake_apiserver import Fault
from tests.support.scenarios import Obj, healthy, job_pod, node, training_job, ts


def _down_gpu_machine(now: datetime) -> list[Obj]:
    """The only GPU machine unreachable for 20 minutes: the node lifecycle controller's taints
    (pkg/controller/nodelifecycle: `node.kubernetes.io/unreachable` NoSchedule and NoExecute,
    the kubelet's conditions set to Unknown, "Kubelet stopped posting node status."); the other
    machine is the control plane, reserved by kubeadm's taint, with no GPU."""
    since = ts(now - timedelta(minutes=20))
    control = node(
        "control-plane-1",
        "4",
        "16Gi",
        taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}],
    )
    gpu = node(
        "gke-a100-pool-1",
        "16",
        "64Gi",
        gpus=8,
        taints=[
            {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule", "timeAdded": since},
            {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": since},
        ],
    )
    gpu["status"]["conditions"] = [
        {
            "type": kind,
            "status": "Unknown",
            "reason": "NodeStatusUnknown",
            "message": "Kubelet stopped posting node status.",
            "lastTransitionTime": since,
        }
        for kind in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
    ]
    objects = [o for o in healthy(now) if o["kind"] != "Node"]
    job = training_job("train-002", now, gpus=1, finished=False, age=timedelta(minutes=3))
    pod = job_pod(job, now, suffix="w0", node_name=None, phase="Pending", age=timedelta(minutes=3))
    pod["status"]["conditions"][0]["message"] = (
        "0/2 nodes are available: 1 node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }, 1 node(s) had untolerated taint "
        "{node.kubernetes.io/unreachable: }. preemption: 0/2 nodes are available: 2 Preemption "
        "is not helpful for scheduling."
    )
    # The workloads' pods ran on machines now gone from the list: keep them on the GPU machine.
    return [control, gpu, *objects, job, pod]


def test_a_job_whose_only_gpu_machine_is_down_is_told_to_bring_it_back(doctor: Doctor) -> None:
    doctor.load(_down_gpu_machine)
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    assert report["headline"]["code"] == "capacity.machines-down"
    assert (report["headline"]["status"], result.exit_code) == ("fail", 2)
    assert report["headline"]["text"] == (
        "The training job 'train-002' needs nvidia.com/gpu, and every machine that has it is "
        "down: gke-a100-pool-1."
    )
    remedy = report["headline"]["remedy"]
    assert remedy.startswith("Look at gke-a100-pool-1 (`kubectl ")
    assert remedy.endswith(
        " describe node gke-a100-pool-1` shows why) and bring it back or replace it; the cluster "
        "lets work onto a machine again by itself once it is ready. No setting of the job "
        "changes this."
    )
    texts = " ".join(f["headline"] + " " + f["remedy"] for f in report["findings"])
    assert "reserved" not in texts
    assert "taint" not in texts
    machines_down = next(f for f in report["findings"] if f["code"] == "capacity.machines-down")
    assert machines_down["details"][0] == (
        "gke-a100-pool-1: Ready=Unknown: Kubelet stopped posting node status."
    )


def test_a_machine_the_autoscaler_adds_is_a_wait_while_the_gpu_machines_are_down(
    doctor: Doctor,
) -> None:
    """The only GPU machine is unreachable, and cluster-autoscaler has just triggered a scale-up
    of the GPU group for the pending pod (processors/status/eventing_scale_up_processor.go:
    TriggeredScaleUp on each pod of PodsTriggeredScaleUp). The new machine is capacity on its
    way: a measured wait, with the machine that is down said beside it."""

    def build(now: datetime) -> list[Obj]:
        objects = _down_gpu_machine(now)
        pod = objects[-1]
        added = _scaler_event(
            now,
            pod,
            "TriggeredScaleUp",
            "pod triggered scale-up: [{eks-gpu-ng 1->2 (max: 4)}]",
            source="cluster-autoscaler",
            age=timedelta(minutes=1),
        )
        return [*objects, added]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    capacity = [f for f in report["findings"] if f["check"] == "capacity"]
    assert [(f["code"], f["status"], f["basis"]) for f in capacity] == [
        ("capacity.machine-coming", "warn", "measured")
    ], "a measured scale-up is dropped behind the machine that is down"
    assert report["headline"]["text"] == (
        "A machine is being added for the training job 'train-002': the machine group "
        "eks-gpu-ng goes from 1 to 2 machines."
    )
    assert capacity[0]["details"][-2:] == [
        "every machine that has nvidia.com/gpu is down now: gke-a100-pool-1",
        "gke-a100-pool-1: Ready=Unknown: Kubelet stopped posting node status.",
    ]
    assert result.exit_code == 0


def test_a_scale_up_stands_for_its_provision_time_whatever_the_scheduler_posted_since(
    doctor: Doctor,
) -> None:
    """cluster-autoscaler posted TriggeredScaleUp once, four minutes ago; kube-scheduler has
    posted FailedScheduling on every retry since, the last ten seconds ago (its backoff:
    pkg/scheduler/internal/queue, up to --pod-max-backoff-seconds). The machine on its way is
    the answer until max-node-provision-time (15 minutes by default) has passed."""

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        added = _scaler_event(
            now,
            pod,
            "TriggeredScaleUp",
            "pod triggered scale-up: [{eks-gpu-g5-12xlarge-4ac2 0->1 (max: 4)}]",
            source="cluster-autoscaler",
            age=timedelta(minutes=4),
        )
        retried = _scaler_event(
            now,
            pod,
            "FailedScheduling",
            "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are "
            "available: 2 No preemption victims found for incoming pod.",
            source="default-scheduler",
            age=timedelta(seconds=10),
        )
        retried.update(
            {
                "type": "Warning",
                "count": 23,
                "firstTimestamp": ts(now - timedelta(minutes=4)),
            }
        )
        return [*objects, pod, added, retried]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    assert report["headline"]["code"] == "capacity.machine-coming"
    assert report["headline"]["text"] == (
        "A machine is being added for the training job 'big': the machine group "
        "eks-gpu-g5-12xlarge-4ac2 goes from 0 to 1 machines."
    )
    codes = {f["code"] for f in report["findings"] if f["status"] != "ok"}
    assert "evidence.cluster-reported" not in codes, "the scheduler's retries are ruled"
    assert not codes & {"capacity.unschedulable", "capacity.too-large"}, codes
    assert result.exit_code == 0


def _nodeclaim(name: str, launched: dict[str, str]) -> Obj:
    """A NodeClaim as Karpenter writes it (karpenter.sh/v1, pkg/apis/v1/nodeclaim_status.go);
    its `Launched` condition as lifecycle/launch.go sets it when the cloud provider's create
    fails (the provider's CreateError reason and message)."""
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": "gpu-pool"}},
        "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
            "requirements": [
                {
                    "key": "node.kubernetes.io/instance-type",
                    "operator": "In",
                    "values": ["p5.48xlarge"],
                }
            ],
            "resources": {"requests": {"nvidia.com/gpu": "8"}},
        },
        "status": {"conditions": [{"type": "Launched", **launched}]},
    }


def _nominated(now: datetime, launched: dict[str, str]) -> list[Obj]:
    objects, pod = _waiting(now)
    nominated = _scaler_event(
        now,
        pod,
        "Nominated",
        "Pod should schedule on: nodeclaim/gpu-pool-8xk2q",
        source="karpenter",
        age=timedelta(seconds=40),
    )
    return [*objects, pod, nominated, _nodeclaim("gpu-pool-8xk2q", launched)]


def test_a_machine_karpenter_could_not_launch_is_no_machine_on_its_way(doctor: Doctor) -> None:
    """Karpenter nominated the pod for a NodeClaim, then the cloud refused the launch (AWS's
    InsufficientInstanceCapacity, as the AWS provider's CreateError carries it): the machine
    is not coming, and the NodeClaim's condition says why."""
    doctor.server.install("karpenter.sh")
    doctor.load(
        lambda now: _nominated(
            now,
            {
                "status": "Unknown",
                "reason": "InsufficientCapacityError",
                "message": "creating instance, insufficient capacity, with fleet error(s), "
                "InsufficientInstanceCapacity: We currently do not have sufficient "
                "p5.48xlarge capacity in the Availability Zone you requested (us-east-1a).",
                "lastTransitionTime": ts(datetime.now(UTC) - timedelta(seconds=20)),
            },
        )
    )
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    assert report["headline"]["code"] == "capacity.no-machine-can-be-added"
    assert "the cloud has no machine of that kind to give right now" in report["headline"]["text"]
    finding = next(f for f in report["findings"] if f["code"] == "capacity.no-machine-can-be-added")
    assert any(
        "nodeclaim/gpu-pool-8xk2q did not launch: InsufficientCapacityError: creating instance"
        in line
        for line in finding["details"]
    ), finding["details"]
    assert result.exit_code == 2


def test_a_machine_whose_claim_is_gone_is_neither_on_its_way_nor_refused(doctor: Doctor) -> None:
    """Karpenter nominated the pod for nodeclaim/gpu-pool-8xk2q 90 s ago, then the cloud had no
    capacity and Karpenter deleted the claim (kubernetes-sigs/karpenter
    pkg/controllers/nodeclaim/lifecycle/launch.go launchNodeClaim: on an
    InsufficientCapacityError it publishes an Event on the NodeClaim and deletes it; its
    provisioner tries again for a pod that still waits). The NodeClaims list reads fine and
    holds another pool's claim only: no machine is on its way for the job, and none is
    measured refused either."""
    doctor.server.install("karpenter.sh")

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        nominated = _scaler_event(
            now,
            pod,
            "Nominated",
            "Pod should schedule on: nodeclaim/gpu-pool-8xk2q",
            source="karpenter",
            age=timedelta(seconds=90),
        )
        other = _nodeclaim("cpu-pool-4mzl2", {"status": "True", "reason": "Launched"})
        return [*objects, pod, nominated, other]

    doctor.load(build)
    result = doctor.live("-o", "json", "--verbose")
    report: dict[str, Any] = result.json()
    capacity = [(f["code"], f["status"], f["basis"]) for f in report["findings"]]
    assert [c for c in capacity if c[0].startswith("capacity.")] == [
        ("capacity.cant-read", "unknown", "cant-check")
    ]
    assert report["headline"]["text"] == (
        "Couldn't check whether there is room for a training job: the machine gpu-pool-8xk2q "
        "that Karpenter was making for the training job 'big' is gone before it started, and "
        "whether another comes is not known."
    )
    remedy = report["headline"]["remedy"]
    assert remedy.startswith(
        "Run this again in a minute: Karpenter tries again for a job that still waits. `kubectl "
    ), remedy
    assert remedy.endswith(
        " get events -A --field-selector "
        "involvedObject.kind=NodeClaim,involvedObject.name=gpu-pool-8xk2q` shows why the "
        "machine ended (the cluster keeps events about an hour)."
    ), remedy
    [found] = [f for f in report["findings"] if f["code"] == "capacity.cant-read"]
    assert (
        "karpenter on big-w1: Pod should schedule on: nodeclaim/gpu-pool-8xk2q; "
        "nodeclaim/gpu-pool-8xk2q no longer exists"
    ) in found["details"]
    assert result.exit_code == 3


def test_a_machine_karpenter_is_still_launching_stays_on_its_way(doctor: Doctor) -> None:
    doctor.server.install("karpenter.sh")
    doctor.load(
        lambda now: _nominated(now, {"status": "Unknown", "reason": "AwaitingReconciliation"})
    )
    report = doctor.live("-o", "json").json()
    assert report["headline"]["code"] == "capacity.machine-coming"


def test_a_scheduler_message_with_no_reason_known_is_pointed_at_in_plain_words(
    doctor: Doctor,
) -> None:
    """kube-scheduler's message without a reason doctor classifies (`0/3 nodes are available`
    and nothing after): the remedy points at the cluster's own words, without jargon (the kit
    checks every headline and remedy)."""

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        pod["status"]["conditions"][0]["message"] = "0/3 nodes are available"
        return [*objects, pod]

    doctor.load(build)
    report = doctor.live("-o", "json").json()
    assert report["headline"]["code"] == "capacity.unschedulable"
    assert "read the cluster's own words on it" in report["headline"]["remedy"].lower()


def test_a_nominated_machine_whose_claims_could_not_be_read_says_so(doctor: Doctor) -> None:
    """The NodeClaims refused (403): Karpenter's nomination is still its measured word (a
    wait), and the details say whether the machine launched is not known."""
    doctor.server.install("karpenter.sh")
    doctor.load(
        lambda now: _nominated(now, {"status": "False", "reason": "InsufficientCapacityError"})
    )
    doctor.server.inject(Fault.FORBIDDEN, "^/apis/karpenter.sh/v1/nodeclaims$", method="GET")
    report = doctor.live("-o", "json").json()
    assert report["headline"]["code"] == "capacity.machine-coming"
    [found] = [f for f in report["findings"] if f["code"] == "capacity.machine-coming"]
    assert [d for d in found["details"] if d.startswith("whether")] == [
        "whether Karpenter's machine launched is not known: list nodeclaims: no permission "
        "(403); needs list nodeclaims.karpenter.sh (cluster-wide: a ClusterRole)"
    ]


SCHEDULER_ERROR = (
    'running PreBind plugin "VolumeBinding": binding volumes: timed out waiting for the condition'
)
"""kube-scheduler's words when its volume binding step fails for a pod it had found a machine
for (pkg/scheduler/framework/runtime/framework.go RunPreBindPlugins: `running PreBind plugin
%q: %w`; volumebinding's BindPodVolumes), as `kubectl describe pod` shows them."""


def _scheduler_failed(age: timedelta) -> Callable[[datetime], list[Obj]]:
    """A training pod, made `age` ago, that kube-scheduler found room for but could not bind:
    handleSchedulingFailure (pkg/scheduler/schedule_one.go) writes `PodScheduled=False` with
    reason `SchedulerError` for every status that is not a rejection, and posts
    `FailedScheduling` with the same words. The machines have room for the job (gpu-1 offers
    2 GPUs, it asks for 1)."""

    def build(now: datetime) -> list[Obj]:
        job = training_job("train-002", now, gpus=1, finished=False, age=age)
        pod = job_pod(job, now, suffix="w0", node_name=None, phase="Pending", age=age)
        pod["status"]["conditions"] = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "SchedulerError",
                "message": SCHEDULER_ERROR,
                "lastTransitionTime": ts(now - timedelta(seconds=30)),
            }
        ]
        said = event(now, pod, "FailedScheduling", SCHEDULER_ERROR, "default-scheduler", count=4)
        return [*healthy(now), job, pod, said]

    return build


@pytest.mark.parametrize(
    "age",
    [timedelta(minutes=2), timedelta(minutes=10)],
    ids=["within the grace period", "past the grace period"],
)
def test_a_pod_the_scheduler_failed_on_gets_its_words_and_no_claim_from_placing(
    doctor: Doctor, age: timedelta
) -> None:
    """The scheduler's own failure on the job's pod is measured. Placing the pods on the free
    room would say the job fits, the opposite of what the cluster measured about that pod;
    and past the grace period, that it waits "with no word from the scheduler", which is not
    so: the evidence check's quotation is the one finding about it."""
    doctor.load(_scheduler_failed(age))
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    problems = [(f["code"], f["status"]) for f in report["findings"] if f["status"] != "ok"]
    assert problems == [("evidence.cluster-reported", "fail")], problems
    assert report["headline"]["text"] == (
        "The cluster reports a problem with the training job 'train-002' (its program "
        f"'train-002-w0'): “default-scheduler” says “PodScheduled=False (SchedulerError): "
        f"{SCHEDULER_ERROR}”."
    )
    capacity = [f["code"] for f in report["findings"] if f["check"] == "capacity"]
    assert "capacity.fits" not in capacity, "placing says the job fits beside the failure"
    assert result.exit_code == 2
