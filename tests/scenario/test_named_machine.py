"""A training job whose program template names its machine (`spec.nodeName`) is never seen by
kube-scheduler: the kubelet on that machine admits it or turns it away
(kubernetes pkg/kubelet/lifecycle/predicate.go `Admit`, `generalFilter`; the scheduler queues
only pods without a machine, pkg/scheduler/eventhandlers.go `assignedPod`)."""

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from tests.scenario.conftest import Doctor
from tests.support.filter_objects import running_pod
from tests.support.scenarios import (
    REGISTRY,
    Obj,
    container,
    deployment,
    find,
    healthy,
    job_pod,
    pod_for,
    training_job,
)
from tests.support.training_kinds import pytorch_job


def _capacity(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == "capacity"]


def _without_job(now: datetime) -> list[Obj]:
    return [o for o in healthy(now) if o["kind"] != "Job"]


def _job_file(doctor: Doctor, machine: str, *, cpu: str = "4", gpus: int = 1) -> str:
    """A Job not yet submitted whose template names `machine`, as `kubectl apply` would send
    it."""
    job = training_job("planned", datetime.now(UTC), gpus=gpus, cpu=cpu, finished=False)
    job["metadata"].pop("creationTimestamp")
    job.pop("status")
    job["spec"]["template"]["spec"]["nodeName"] = machine
    path = doctor.tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    return str(path)


def _judged(doctor: Doctor, path: str) -> tuple[int, list[dict[str, Any]]]:
    result = doctor.live("-o", "json", "--job-file", path)
    return result.exit_code, _capacity(result.json())


def test_a_named_machine_reserved_by_a_no_schedule_mark_still_runs_it(doctor: Doctor) -> None:
    """gpu-1 carries an untolerated NoSchedule taint: only the scheduler honours it. The
    kubelet looks at NoExecute taints alone ("Kubelet is only interested in the NoExecute
    taint", predicate.go `generalFilter`), so the pod runs there."""

    def build(now: datetime) -> list[Obj]:
        objects = _without_job(now)
        gpu = find(objects, "Node", "gpu-1")
        gpu["spec"]["taints"] = [{"key": "dedicated", "value": "team-a", "effect": "NoSchedule"}]
        return objects

    doctor.load(build)
    code, findings = _judged(doctor, _job_file(doctor, "gpu-1"))
    ((found, status, basis, headline),) = [
        (f["code"], f["status"], f["basis"], f["headline"]) for f in findings
    ]
    assert (found, status, basis) == ("capacity.fits", "ok", "measured")
    assert headline == "A training job of 4 CPUs, 16 GiB memory, 1 nvidia.com/gpu fits now."
    assert code == 0


def test_a_named_machine_without_room_turns_the_job_away(doctor: Doctor) -> None:
    """12 CPUs on cpu-1, which has 8 allocatable of which the manager and the database bound
    there hold 1.5: the kubelet's resource fit fails and the pod is Failed with reason
    `OutOfcpu` (predicate.go `Admit`, `InsufficientResourceError`); no other machine is
    tried."""
    doctor.load(_without_job)
    code, findings = _judged(doctor, _job_file(doctor, "cpu-1", cpu="12", gpus=0))
    ((found,),) = [(f,) for f in findings]
    assert (found["code"], found["status"], found["basis"]) == (
        "capacity.named-machine-unfit",
        "fail",
        "measured",
    )
    assert found["headline"] == (
        "The training job names the machine cpu-1 to run on, and that machine turns it away: "
        "it is 5.5 CPUs short."
    )
    assert "the kubelet on cpu-1 refuses it: OutOfcpu" in found["details"]
    assert code == 2


def test_a_named_machine_the_cluster_does_not_have_runs_nothing(doctor: Doctor) -> None:
    """No kubelet is `no-such-machine`: nothing runs the pod, and the pod garbage collector
    deletes pods bound to a machine the cluster does not list (pkg/controller/podgc/
    gc_controller.go `gcOrphaned`)."""
    doctor.load(_without_job)
    code, findings = _judged(doctor, _job_file(doctor, "no-such-machine"))
    ((found,),) = [(f,) for f in findings]
    assert (found["code"], found["status"], found["basis"]) == (
        "capacity.no-eligible-machine",
        "fail",
        "measured",
    )
    assert found["headline"] == (
        "No machine may run a training job: it names the machine 'no-such-machine', which the "
        "cluster doesn't have."
    )
    assert code == 2


def test_gpus_asked_of_a_named_machine_without_them_are_dropped(doctor: Doctor) -> None:
    """cpu-1 reports no `nvidia.com/gpu` at all: the kubelet drops that request before its fit
    check (predicate.go `removeMissingExtendedResources`) and admits the pod, which runs
    without its GPU. A failure, said plainly."""
    doctor.load(_without_job)
    code, findings = _judged(doctor, _job_file(doctor, "cpu-1"))
    ((found,),) = [(f,) for f in findings]
    assert (found["code"], found["status"], found["basis"]) == (
        "capacity.named-machine-unfit",
        "fail",
        "measured",
    )
    assert found["headline"] == (
        "The training job names the machine cpu-1 to run on, and that machine has no "
        "nvidia.com/gpu: the job would run there without the GPUs it asks for."
    )
    assert code == 2


def test_a_named_machine_with_an_untolerated_no_execute_mark_turns_it_away(
    doctor: Doctor,
) -> None:
    """A NoExecute taint the pod does not tolerate: the kubelet rejects it (predicate.go
    `generalFilter`, reason TaintToleration)."""

    def build(now: datetime) -> list[Obj]:
        objects = _without_job(now)
        gpu = find(objects, "Node", "gpu-1")
        gpu["spec"]["taints"] = [{"key": "dedicated", "value": "team-a", "effect": "NoExecute"}]
        return objects

    doctor.load(build)
    code, findings = _judged(doctor, _job_file(doctor, "gpu-1"))
    ((found,),) = [(f,) for f in findings]
    assert (found["code"], found["status"]) == ("capacity.named-machine-unfit", "fail")
    assert found["headline"] == (
        "The training job names the machine gpu-1 to run on, and that machine turns it away: "
        "it is reserved for other work."
    )
    assert code == 2


def test_a_named_machine_that_is_down_runs_nothing(doctor: Doctor) -> None:
    """gpu-1's kubelet stopped reporting (Ready Unknown, the node lifecycle controller's
    unreachable taints): nothing runs the pod bound there while it is down."""

    def build(now: datetime) -> list[Obj]:
        objects = _without_job(now)
        gpu = find(objects, "Node", "gpu-1")
        gpu["spec"]["taints"] = [
            {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"},
            {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"},
        ]
        gpu["status"]["conditions"] = [
            {
                "type": "Ready",
                "status": "Unknown",
                "reason": "NodeStatusUnknown",
                "message": "Kubelet stopped posting node status.",
            }
        ]
        return objects

    doctor.load(build)
    code, findings = _judged(doctor, _job_file(doctor, "gpu-1"))
    ((found,),) = [(f,) for f in findings]
    assert (found["code"], found["status"], found["basis"]) == (
        "capacity.named-machine-unfit",
        "fail",
        "measured",
    )
    assert found["headline"] == (
        "The training job names the machine gpu-1 to run on, and that machine is down: "
        "nothing runs the job there until it is back."
    )
    assert "gpu-1: Ready=Unknown: Kubelet stopped posting node status." in found["details"]
    assert code == 2


def test_pods_the_scheduler_bound_leave_the_job_to_the_scheduler(doctor: Doctor) -> None:
    """A job under way whose pod the scheduler bound to gpu-1 before it was reserved (the
    binding writes the pod's `spec.nodeName`, pkg/registry/core/pod/storage
    `setPodNodeAndMetadata`) has a template that names no machine: its next pod is the
    scheduler's, and the NoSchedule taint on gpu-1 keeps it out."""

    def build(now: datetime) -> list[Obj]:
        objects = _without_job(now)
        gpu = find(objects, "Node", "gpu-1")
        gpu["spec"]["taints"] = [{"key": "dedicated", "value": "team-a", "effect": "NoSchedule"}]
        job = training_job("live", now, finished=False)
        job["spec"]["parallelism"] = 2
        job["spec"]["completions"] = 2
        job["spec"]["completionMode"] = "Indexed"
        return [*objects, job, job_pod(job, now, suffix="0", node_name="gpu-1")]

    doctor.load(build)
    result = doctor.live("-o", "json")
    codes = [f["code"] for f in _capacity(result.json())]
    assert "capacity.named-machine-unfit" not in codes
    assert codes[0] == "capacity.machine-kept-out", codes


def test_a_set_that_names_its_machine_holds_its_room_for_the_rest(doctor: Doctor) -> None:
    """A PyTorchJob whose Master names gpu-1 and whose Worker is the scheduler's, 2 GPUs each:
    the kubelet admits the Master there, and the Worker then finds gpu-1's 2 GPUs taken and no
    other machine with any. The whole job asks 4 GPUs of a cluster of 2."""
    manifest = pytorch_job("planned", datetime.now(UTC), workers=1, gpus=2, age=timedelta(0))
    manifest["metadata"].pop("creationTimestamp")
    manifest.pop("status")
    master = manifest["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
    master["nodeName"] = "gpu-1"
    doctor.load(_without_job)
    path = doctor.tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(manifest))
    code, findings = _judged(doctor, str(path))
    assert [(f["code"], f["status"]) for f in findings] == [("capacity.too-large", "fail")]
    assert "Master names gpu-1: admitted by its kubelet" in findings[0]["details"]
    assert code == 2


def _running_named(now: datetime) -> list[Obj]:
    """Job train-a names gpu-1 and asks both its GPUs; its one pod runs there."""
    objects = [
        o
        for o in healthy(now)
        if o["kind"] != "Job" and not o["metadata"].get("labels", {}).get("job-name")
    ]
    job = training_job("train-a", now, gpus=2, cpu="4", finished=False)
    job["spec"]["template"]["spec"]["nodeName"] = "gpu-1"
    return [*objects, job, job_pod(job, now, suffix="abc", node_name="gpu-1")]


def test_a_running_job_on_its_named_machine_is_not_admitted_against_itself(
    doctor: Doctor,
) -> None:
    """train-a's pod was admitted and runs on gpu-1 (the kubelet's `canAdmitPod` counts the
    other admitted pods, never the pod itself, pkg/kubelet/kubelet.go): nothing of the job
    waits for a kubelet. As for a job the scheduler places, a next run finds the room held by
    train-a itself."""
    doctor.load(_running_named)
    result = doctor.live("-o", "json")
    ((found,),) = [(f,) for f in _capacity(result.json())]
    assert (found["code"], found["status"], found["basis"]) == (
        "capacity.held-by-running-job",
        "warn",
        "inferred",
    )
    assert "held by training job pods on gpu-1: train-a-abc" in found["details"]
    assert result.exit_code == 0


def test_a_pod_the_named_machine_turned_away_is_the_kubelet_s_answer(doctor: Doctor) -> None:
    """train-a's first pod was turned away by gpu-1's kubelet while another namespace's work
    held its GPUs: `rejectPod` (pkg/kubelet/kubelet.go) set phase Failed, the reason
    `OutOfnvidia.com/gpu` and the message "Pod was rejected: " + the predicate's
    (pkg/kubelet/lifecycle/predicate.go `Admit`). Its replacement waits, bound there. The
    kubelet's word is the answer, whatever the room looks like now."""

    def build(now: datetime) -> list[Obj]:
        objects = _running_named(now)
        job = find(objects, "Job", "train-a")
        first = find(objects, "Pod", "train-a-abc")
        first["status"] = {
            "phase": "Failed",
            "reason": "OutOfnvidia.com/gpu",
            "message": (
                "Pod was rejected: Node didn't have enough resource: nvidia.com/gpu, "
                "requested: 2, used: 2, capacity: 2"
            ),
        }
        later = job_pod(job, now, suffix="def", node_name="gpu-1", phase="Pending")
        later["metadata"]["creationTimestamp"] = now.isoformat()
        return [*objects, later]

    doctor.load(build)
    result = doctor.live("-o", "json")
    ((found,),) = [(f,) for f in _capacity(result.json())]
    assert (found["code"], found["status"], found["basis"]) == (
        "capacity.named-machine-unfit",
        "fail",
        "measured",
    )
    assert found["headline"] == (
        "The training job names the machine gpu-1 to run on, and that machine turned the "
        "job's program train-a-abc away: it had too little nvidia.com/gpu left for it."
    )
    assert (
        "the kubelet on gpu-1 refused pod train-a-abc: OutOfnvidia.com/gpu: Pod was rejected: "
        "Node didn't have enough resource: nvidia.com/gpu, requested: 2, used: 2, capacity: 2"
    ) in found["details"]
    assert result.exit_code == 2


def test_a_named_machine_short_of_disk_space_turns_the_job_away(doctor: Doctor) -> None:
    """gpu-1 reports DiskPressure=True (and the node lifecycle controller's disk-pressure
    NoSchedule taint, which the kubelet ignores). The eviction manager's admit handler, which
    runs before the predicates, turns every non-critical pod away: reason `Evicted`, "The node
    had condition: [DiskPressure]." (pkg/kubelet/eviction/eviction_manager.go
    `(*managerImpl).Admit`, helpers.go `nodeConditionMessageFmt`)."""

    def build(now: datetime) -> list[Obj]:
        objects = _without_job(now)
        gpu = find(objects, "Node", "gpu-1")
        gpu["status"]["conditions"] = [
            {"type": "Ready", "status": "True", "reason": "KubeletReady"},
            {"type": "DiskPressure", "status": "True", "reason": "KubeletHasDiskPressure"},
        ]
        gpu["spec"]["taints"] = [
            {"key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule"}
        ]
        return objects

    doctor.load(build)
    code, findings = _judged(doctor, _job_file(doctor, "gpu-1"))
    ((found,),) = [(f,) for f in findings]
    assert (found["code"], found["status"], found["basis"]) == (
        "capacity.named-machine-unfit",
        "fail",
        "measured",
    )
    assert found["headline"] == (
        "The training job names the machine gpu-1 to run on, and that machine turns it away: "
        "it is short of disk space."
    )
    assert (
        "the kubelet on gpu-1 refuses it: Evicted: The node had condition: [DiskPressure]."
    ) in found["details"]
    assert code == 2


def test_a_port_a_program_running_there_holds_turns_the_job_away(doctor: Doctor) -> None:
    """A GPU metrics exporter of the namespace runs on gpu-1 holding hostPort 9400 (as
    dcgm-exporter's chart asks); the planned job names gpu-1 and asks for the same port. The
    kubelet's admission runs NodePorts against the pods active on the machine
    (pkg/kubelet/lifecycle/predicate.go `Admit` → `generalFilter` over `nodeInfo` built from
    `GetActivePods`), so the pod is Failed with reason `NodePorts`. A finished exporter pod
    there holds nothing."""

    def build(now: datetime) -> list[Obj]:
        objects = _without_job(now)
        exporter = deployment(
            "gpu-metrics", [container("exporter", f"{REGISTRY}/dcgm:3", port=9400)]
        )
        exporter["spec"]["template"]["spec"]["containers"][0]["ports"][0]["hostPort"] = 9400
        running = pod_for(exporter, now, suffix="a1", node_name="gpu-1")
        finished = pod_for(exporter, now, suffix="f0", node_name="cpu-1")
        finished["status"]["phase"] = "Succeeded"
        return [*objects, exporter, running, finished]

    doctor.load(build)
    path = _job_file(doctor, "gpu-1")
    job = yaml.safe_load(Path(path).read_text())
    job["spec"]["template"]["spec"]["containers"][0]["ports"] = [
        {"containerPort": 9400, "hostPort": 9400}
    ]
    Path(path).write_text(yaml.safe_dump(job))
    code, findings = _judged(doctor, path)
    ((found,),) = [(f,) for f in findings]
    assert (found["code"], found["status"], found["basis"]) == (
        "capacity.named-machine-unfit",
        "fail",
        "measured",
    )
    assert found["headline"] == (
        "The training job names the machine gpu-1 to run on, and that machine turns it away: "
        "a program running there already holds port 9400/TCP."
    )
    assert "the kubelet on gpu-1 refuses it: NodePorts" in found["details"]
    assert code == 2
    job["spec"]["template"]["spec"]["nodeName"] = "cpu-1"
    job["spec"]["template"]["spec"]["containers"][0]["resources"] = {}
    Path(path).write_text(yaml.safe_dump(job))
    again = doctor.live("-o", "json", "--job-file", path)
    assert again.exit_code == 0, again.json()["headline"]


def test_a_port_another_space_s_program_holds_turns_the_job_away(doctor: Doctor) -> None:
    """A node exporter of the `monitoring` namespace runs on gpu-1 on the host's network, its
    port 9100 stored with hostPort 9100 (pkg/apis/core/v1/defaults.go
    `defaultHostNetworkPorts`); the planned job names gpu-1 and asks for hostPort 9100. The
    kubelet's NodePorts admission counts every active pod on the machine whatever its
    namespace (predicate.go `Admit` over `GetActivePods`), so the pod is Failed with reason
    `NodePorts`."""

    def build(now: datetime) -> list[Obj]:
        exporter = running_pod("node-exporter-0", "gpu-1", now, namespace="monitoring")
        exporter["spec"]["hostNetwork"] = True
        exporter["spec"]["containers"][0]["ports"] = [
            {"containerPort": 9100, "hostPort": 9100, "protocol": "TCP"}
        ]
        return [*_without_job(now), exporter]

    doctor.load(build)
    path = _job_file(doctor, "gpu-1")
    job = yaml.safe_load(Path(path).read_text())
    job["spec"]["template"]["spec"]["containers"][0]["ports"] = [
        {"containerPort": 9100, "hostPort": 9100}
    ]
    Path(path).write_text(yaml.safe_dump(job))
    code, findings = _judged(doctor, path)
    ((found,),) = [(f,) for f in findings]
    assert (found["code"], found["status"], found["basis"]) == (
        "capacity.named-machine-unfit",
        "fail",
        "measured",
    ), found["headline"]
    assert found["headline"] == (
        "The training job names the machine gpu-1 to run on, and that machine turns it away: "
        "a program running there already holds port 9100/TCP."
    )
    assert code == 2
