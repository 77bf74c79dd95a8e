"""The keyless taint reason of kube-scheduler 1.35 (`N node(s) had untolerated taint(s)`,
tainttoleration/taint_toleration.go `Filter`) told apart by the machines' own taints."""

from tests.support.scenarios import node
from truegreen.cluster import KubeObject
from truegreen.doctor.checks.capacity.scheduler_reasons import plain_reasons, with_taint_keys
from truegreen.doctor.knowledge.evidence import SchedulerVerdict, parse_scheduler_message

CONTROL_PLANE = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
UNREACHABLE = {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}
UNSAID = "node(s) had untolerated taint(s)"
NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}


def _verdict(message: str) -> SchedulerVerdict:
    machines, reasons = parse_scheduler_message(message)
    return SchedulerVerdict("train-0", message, machines, reasons)


def _machines() -> list[KubeObject]:
    return [
        node("cp-1", "8", "32Gi", taints=[CONTROL_PLANE]),
        node("gpu-1", "16", "64Gi", gpus=2, taints=[UNREACHABLE, NOT_READY]),
        node("gpu-2", "16", "64Gi", gpus=2, taints=[UNREACHABLE]),
        node("cpu-1", "8", "32Gi"),
    ]


def test_each_taint_key_gets_the_count_of_the_machines_it_keeps_the_job_off() -> None:
    """Three machines tainted, two of them down: the first untolerated taint of each machine
    (kube-scheduler's order of a node's taints) names it, as the keyed reason would."""
    verdict = _verdict(f"0/4 nodes are available: 3 {UNSAID}, 1 Insufficient nvidia.com/gpu.")
    told = with_taint_keys(verdict, {"containers": [{"name": "c"}]}, _machines())
    assert [(r.machines, r.detail) for r in told.reasons] == [
        (1, "node-role.kubernetes.io/control-plane"),
        (2, "node.kubernetes.io/unreachable"),
        (1, "nvidia.com/gpu"),
    ]
    assert plain_reasons(told) == (
        "of 4 machines, 1 is reserved for other work, 2 can't be reached and 1 lacks nvidia.com/gpu"
    )


def test_counts_that_differ_from_the_scheduler_s_leave_its_reason_as_it_is() -> None:
    """The machines changed since the scheduler wrote its message (two tainted now, three
    then): which machine it meant is not known, so its keyless reason stands."""
    verdict = _verdict(f"0/4 nodes are available: 3 {UNSAID}, 1 Insufficient nvidia.com/gpu.")
    assert with_taint_keys(verdict, {"containers": [{"name": "c"}]}, _machines()[1:]) == verdict
    assert with_taint_keys(verdict, {"containers": [{"name": "c"}]}, None) == verdict


def test_a_tolerated_taint_is_not_counted() -> None:
    """A job that tolerates the control plane's taint: only the down machines keep it off."""
    verdict = _verdict(f"0/4 nodes are available: 2 {UNSAID}, 2 Insufficient nvidia.com/gpu.")
    spec = {
        "containers": [{"name": "c"}],
        "tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}],
    }
    told = with_taint_keys(verdict, spec, _machines())
    assert [(r.machines, r.detail) for r in told.reasons] == [
        (2, "node.kubernetes.io/unreachable"),
        (2, "nvidia.com/gpu"),
    ]
