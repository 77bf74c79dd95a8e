"""The kubelet's admission of a pod set that names its machine (kubernetes
pkg/kubelet/lifecycle/predicate.go `Admit`, `generalFilter`, `removeMissingExtendedResources`),
on machines shaped as `kubectl get node -o yaml` shows them."""

from typing import Any

from msgspec.structs import replace

from tests.support.scenarios import node
from truegreen.cluster import Kind
from truegreen.doctor.checks.capacity.filters.node_ports import HostPort
from truegreen.doctor.checks.capacity.kubelet_admission import (
    Outcome,
    admit,
    admitted,
    bound_ports,
    kubelet_refusal,
    refused,
)
from truegreen.doctor.checks.capacity.shape import Group
from truegreen.doctor.knowledge.fit import machine_room
from truegreen.doctor.knowledge.training import PodSet, TrainingJob
from truegreen.quantity import Resources


def _group(machine: str, count: int = 1, **spec: Any) -> Group:
    requests = Resources.parse({"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"})
    return Group("worker", count, requests, {"nodeName": machine, **spec})


def test_a_machine_the_cluster_does_not_list_runs_nothing() -> None:
    """No kubelet is that machine; the pod garbage collector deletes its pods
    (pkg/controller/podgc/gc_controller.go `gcOrphaned`)."""
    answer = admit(_group("gone"), None, None)
    assert (answer.machine, answer.outcome) == ("gone", Outcome.NO_SUCH_MACHINE)


def test_a_machine_that_is_down_runs_nothing() -> None:
    gpu = node("gpu-1", "16", "64Gi", gpus=2)
    ready = {"type": "Ready", "status": "False", "reason": "KubeletNotReady"}
    gpu["status"]["conditions"] = [ready]
    answer = admit(_group("gpu-1"), gpu, machine_room(gpu))
    assert answer.outcome is Outcome.DOWN
    assert answer.detail == "gpu-1: Ready=False: KubeletNotReady"


def test_no_schedule_marks_are_the_scheduler_s_alone() -> None:
    """ "Kubelet is only interested in the NoExecute taint" (`generalFilter`)."""
    gpu = node("gpu-1", "16", "64Gi", gpus=2, taints=[{"key": "a", "effect": "NoSchedule"}])
    answer = admit(_group("gpu-1"), gpu, machine_room(gpu))
    assert answer.outcome is Outcome.ADMITTED
    assert answer.room is not None
    assert (answer.room.requested.get("cpu"), answer.room.pod_count) == (4000, 1)


def test_an_untolerated_no_execute_mark_turns_it_away_and_a_tolerated_one_not() -> None:
    taint = {"key": "dedicated", "value": "x", "effect": "NoExecute"}
    gpu = node("gpu-1", "16", "64Gi", gpus=2, taints=[taint])
    refused = admit(_group("gpu-1"), gpu, machine_room(gpu))
    assert refused.outcome is Outcome.TURNED_AWAY
    assert refused.detail == (
        "the kubelet on gpu-1 refuses it: TaintToleration (dedicated=x:NoExecute not tolerated)"
    )
    tolerating = _group("gpu-1", tolerations=[{"key": "dedicated", "operator": "Exists"}])
    assert admit(tolerating, gpu, machine_room(gpu)).outcome is Outcome.ADMITTED


def test_the_job_s_own_machine_rules_still_apply() -> None:
    """The kubelet runs NodeAffinity too (pkg/scheduler `AdmissionCheck`)."""
    gpu = node("gpu-1", "16", "64Gi", gpus=2)
    answer = admit(_group("gpu-1", nodeSelector={"pool": "other"}), gpu, machine_room(gpu))
    assert (answer.outcome, answer.detail) == (
        Outcome.TURNED_AWAY,
        "the kubelet on gpu-1 refuses it: NodeAffinity",
    )


def test_pods_past_the_room_are_turned_away_one_by_one() -> None:
    """Three pods of 4 CPUs on 10 free CPUs: two are admitted, the third is `OutOfcpu`."""
    cpu = node("cpu-1", "10", "64Gi", gpus=4)
    answer = admit(_group("cpu-1", count=3), cpu, machine_room(cpu))
    assert answer.outcome is Outcome.TURNED_AWAY
    assert answer.words == "takes 2 of its 3 programs and turns the others away: it is 2 CPUs short"
    assert answer.detail == "the kubelet on cpu-1 refuses it: OutOfcpu"


def test_a_full_pod_list_is_out_of_pods() -> None:
    cpu = node("cpu-1", "16", "64Gi", gpus=2)
    room = replace(machine_room(cpu), pod_count=110)
    answer = admit(_group("cpu-1"), cpu, room)
    assert answer.detail == "the kubelet on cpu-1 refuses it: OutOfpods"


def test_gpus_a_machine_does_not_report_are_dropped_and_zero_reported_is_short() -> None:
    """`removeMissingExtendedResources` drops a request the machine does not report at all;
    one it reports as 0 stays, and the fit fails (`OutOfnvidia.com/gpu`)."""
    plain = node("cpu-1", "16", "64Gi")
    dropped = admit(_group("cpu-1"), plain, machine_room(plain))
    assert dropped.outcome is Outcome.WITHOUT_DEVICES
    assert dropped.words == (
        "has no nvidia.com/gpu: the job would run there without the GPUs it asks for"
    )
    assert dropped.room is not None
    assert dropped.room.requested.get("nvidia.com/gpu") == 0
    zero = node("cpu-1", "16", "64Gi")
    zero["status"]["allocatable"]["nvidia.com/gpu"] = "0"
    short = admit(_group("cpu-1"), zero, machine_room(zero))
    assert short.detail == "the kubelet on cpu-1 refuses it: OutOfnvidia.com/gpu"


def test_sets_named_onto_one_machine_share_its_room() -> None:
    """The first set's pods are counted before the second's (the kubelet admits in turn)."""
    gpu = node("gpu-1", "6", "64Gi", gpus=2)
    first, second = _group("gpu-1"), replace(_group("gpu-1"), name="second")
    answers = admitted([first, second], [gpu], {"gpu-1": machine_room(gpu)})
    assert [a.outcome for a in answers] == [Outcome.ADMITTED, Outcome.TURNED_AWAY]


def _refused_pod(name: str, created: str, phase: str = "Failed") -> dict[str, Any]:
    """A pod the kubelet turned away as pkg/kubelet/kubelet.go `rejectPod` leaves it."""
    status: dict[str, Any] = {"phase": phase}
    if phase == "Failed":
        status |= {"reason": "OutOfcpu", "message": "Pod was rejected: Node didn't have enough"}
    return {
        "metadata": {"name": name, "creationTimestamp": created, "labels": {"job-name": "t"}},
        "spec": {"nodeName": "gpu-1"},
        "status": status,
    }


def test_the_newest_refusal_is_the_kubelet_s_answer_until_the_set_runs() -> None:
    job = TrainingJob(Kind.JOB, "t", None, (PodSet("worker", 1, {}),), together=False)
    older = _refused_pod("t-a", "2025-01-01T00:00:00Z")
    newer = _refused_pod("t-b", "2025-01-01T00:05:00Z")
    failed_otherwise = {**older, "status": {"phase": "Failed", "reason": "Error"}}
    group = _group("gpu-1")
    assert kubelet_refusal(job, [older, newer, failed_otherwise], group) is newer
    answer = refused(group, newer)
    assert (answer.outcome, answer.words) == (
        Outcome.TURNED_AWAY,
        "turned the job's program t-b away: it had too little cpu left for it",
    )
    running = _refused_pod("t-c", "2025-01-01T00:09:00Z", phase="Running")
    assert kubelet_refusal(job, [older, newer, running], group) is None
    assert kubelet_refusal(job, [failed_otherwise], group) is None


def _pressed(*conditions: str) -> dict[str, Any]:
    gpu = node("gpu-1", "16", "64Gi", gpus=2)
    gpu["status"]["conditions"] = [{"type": "Ready", "status": "True"}] + [
        {"type": c, "status": "True", "reason": f"Kubelet{c}"} for c in conditions
    ]
    return gpu


def test_disk_and_process_pressure_turn_every_pod_away_but_a_critical_one() -> None:
    """pkg/kubelet/eviction/eviction_manager.go `(*managerImpl).Admit`: "Conditions other than
    memory pressure reject all pods", reason `Evicted`; critical pods (priority of at least
    SystemCriticalPriority, pkg/kubelet/types `IsCriticalPod`) are admitted."""
    gpu = _pressed("DiskPressure", "PIDPressure")
    answer = admit(_group("gpu-1"), gpu, machine_room(gpu))
    assert (answer.outcome, answer.words, answer.detail) == (
        Outcome.TURNED_AWAY,
        "turns it away: it is short of disk space and is running out of process slots",
        "the kubelet on gpu-1 refuses it: Evicted: The node had condition: "
        "[DiskPressure PIDPressure].",
    )
    critical = _group("gpu-1", priority=2_000_000_000)
    assert admit(critical, gpu, machine_room(gpu)).outcome is Outcome.ADMITTED
    below = _group("gpu-1", priority=1_999_999_999)
    assert admit(below, gpu, machine_room(gpu)).outcome is Outcome.TURNED_AWAY


def test_memory_pressure_alone_turns_away_only_best_effort_pods_not_tolerating_it() -> None:
    """Under MemoryPressure alone `Admit` admits a pod that is not BestEffort
    (pkg/apis/core/v1/helper/qos `GetPodQOS`: no CPU or memory requested or limited), and a
    BestEffort one that tolerates node.kubernetes.io/memory-pressure:NoSchedule."""
    gpu = _pressed("MemoryPressure")
    gpus_only = {"resources": {"limits": {"nvidia.com/gpu": "1"}}}
    best_effort = _group("gpu-1", containers=[{"name": "t", **gpus_only}])
    answer = admit(best_effort, gpu, machine_room(gpu))
    assert (answer.outcome, answer.words) == (
        Outcome.TURNED_AWAY,
        "turns it away: it is short of memory",
    )
    burstable = {"resources": {"limits": {"memory": "1Gi"}}}
    assert (
        admit(_group("gpu-1", containers=[{"name": "t", **burstable}]), gpu, machine_room(gpu))
    ).outcome is Outcome.ADMITTED
    tolerant = replace(
        best_effort,
        spec={
            **best_effort.spec,
            "tolerations": [{"key": "node.kubernetes.io/memory-pressure", "operator": "Exists"}],
        },
    )
    assert admit(tolerant, gpu, machine_room(gpu)).outcome is Outcome.ADMITTED


def test_a_pod_turned_away_for_pressure_says_so_in_plain_words() -> None:
    pod = _refused_pod("t-a", "2025-01-01T00:00:00Z")
    pod["status"] |= {"reason": "Evicted", "message": "The node had condition: [DiskPressure]. "}
    pod["status"]["message"] = "Pod was rejected: " + pod["status"]["message"]
    assert refused(_group("gpu-1"), pod).words == (
        "turned the job's program t-a away: it was short of disk space"
    )


def _ported(name: str, machine: str, count: int, port: int, **spec: Any) -> Group:
    containers = [{"name": "t", "ports": [{"containerPort": port, "hostPort": port}]}]
    group = _group(machine, count, containers=containers, **spec)
    return replace(group, name=name)


def test_host_ports_admit_one_program_of_a_set_and_none_of_a_set_after_it() -> None:
    """The kubelet's generalFilter runs NodePorts (pkg/kubelet/lifecycle/predicate.go via the
    scheduler's AdmissionCheck): a port held on the machine can't be held twice. Every pod of a
    set asks for the same ports; a set admitted before holds its ports there."""
    gpu = node("gpu-1", "64", "256Gi", gpus=8)
    two = admit(_ported("worker", "gpu-1", 2, 29500), gpu, machine_room(gpu))
    assert (two.outcome, two.words, two.detail) == (
        Outcome.TURNED_AWAY,
        "takes 1 of its 2 programs and turns the others away: each asks for port 29500/TCP "
        "on that machine, which one program holds",
        "the kubelet on gpu-1 refuses it: NodePorts",
    )
    assert admit(_ported("worker", "gpu-1", 1, 29500), gpu, machine_room(gpu)).outcome is (
        Outcome.ADMITTED
    )
    answers = admitted(
        [_ported("master", "gpu-1", 1, 29500), _ported("worker", "gpu-1", 1, 29500)],
        [gpu],
        {"gpu-1": machine_room(gpu)},
    )
    assert [(a.group, a.outcome, a.words) for a in answers] == [
        ("master", Outcome.ADMITTED, ""),
        (
            "worker",
            Outcome.TURNED_AWAY,
            "turns it away: another part of the job already holds port 29500/TCP",
        ),
    ]
    elsewhere = admitted(
        [_ported("master", "gpu-1", 1, 29500), _ported("worker", "gpu-2", 1, 29500)],
        [gpu, node("gpu-2", "64", "256Gi", gpus=8)],
        {"gpu-1": machine_room(gpu), "gpu-2": machine_room(node("gpu-2", "64", "256Gi", gpus=8))},
    )
    assert [a.outcome for a in elsewhere] == [Outcome.ADMITTED, Outcome.ADMITTED]


def _pod_on(machine: str, name: str, port: int, phase: str = "Running") -> dict[str, Any]:
    ports = [{"containerPort": port, "hostPort": port}]
    return {
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"nodeName": machine, "containers": [{"name": "c", "ports": ports}]},
        "status": {"phase": phase},
    }


def test_ports_the_programs_already_there_hold_turn_the_set_away() -> None:
    """The kubelet's NodePorts runs against the pods active on its machine (`GetActivePods`):
    a held port turns the set away, in words that say a running program holds it."""
    gpu = node("gpu-1", "64", "256Gi", gpus=8)
    bound = bound_ports([_pod_on("gpu-1", "exporter", 9400)])
    assert bound == {"gpu-1": [HostPort("0.0.0.0", "TCP", 9400)]}
    answer = admit(_ported("worker", "gpu-1", 1, 9400), gpu, machine_room(gpu), (), bound["gpu-1"])
    assert (answer.outcome, answer.words, answer.detail) == (
        Outcome.TURNED_AWAY,
        "turns it away: a program running there already holds port 9400/TCP",
        "the kubelet on gpu-1 refuses it: NodePorts",
    )
    answers = admitted(
        [_ported("worker", "gpu-1", 1, 9400)], [gpu], {"gpu-1": machine_room(gpu)}, None, bound
    )
    assert [a.outcome for a in answers] == [Outcome.TURNED_AWAY]


def test_finished_unbound_and_the_job_s_own_pods_hold_no_port_against_it() -> None:
    pods = [
        _pod_on("gpu-1", "done", 9400, phase="Succeeded"),
        _pod_on("gpu-1", "failed", 9400, phase="Failed"),
        _pod_on("", "waiting", 9400, phase="Pending"),
        _pod_on("gpu-1", "own-0", 9400),
        _pod_on("gpu-2", "other", 9401, phase="Pending"),
    ]
    assert bound_ports(pods, frozenset({"own-0"})) == {"gpu-2": [HostPort("0.0.0.0", "TCP", 9401)]}
