"""The rules that read other namespaces' pods (NodePorts, InterPodAffinity's existing pods'
anti-affinity) on a snapshot whose capacity fold kept none of them (`rule_pods` None: made
before truegreen kept them): unchecked, in words that send the operator to a new snapshot."""

from typing import Any

from truegreen.cluster import Listed
from truegreen.doctor.checks.capacity.filters.framework import NEW_SNAPSHOT, JobPodSet, Unchecked
from truegreen.doctor.checks.capacity.filters.rules import scheduling_rules
from truegreen.kubectl import Kubectl

HOST = "kubernetes.io/hostname"


def _unchecked(spec: dict[str, Any]) -> tuple[Unchecked, ...]:
    rules = scheduling_rules(
        [JobPodSet("worker", spec, {"job-name": "run"})],
        namespace="train",
        namespace_labels={},
        nodes=[{"kind": "Node", "metadata": {"name": "a", "labels": {HOST: "a"}}, "spec": {}}],
        pods=Listed(()),
        claims={},
        volumes={},
        drivers={},
        devices=None,
        kubectl=Kubectl(),
        rule_pods=None,
    )
    return rules.unchecked


def test_a_host_port_on_an_old_snapshot_is_unchecked_with_a_new_snapshot_to_take() -> None:
    port = {"containerPort": 9100, "hostPort": 9100}
    ports, anti = _unchecked({"containers": [{"name": "c", "ports": [port]}]})
    assert ports == Unchecked(
        "the rule that two programs may not hold one port on a machine",
        "the snapshot holds no programs of other spaces, which may hold the ports it needs (a "
        "snapshot made before truegreen kept them)",
        NEW_SNAPSHOT,
        "NodePorts: worker asks for hostPort 9100/TCP; other namespaces' pods are not in the "
        "snapshot (its capacity fold has no rule_pods)",
    )
    assert anti == Unchecked(
        "the rules of running programs about what may run beside them",
        "the snapshot holds no programs of other spaces, whose rules may keep the job away (a "
        "snapshot made before truegreen kept them)",
        NEW_SNAPSHOT,
        "worker: other namespaces' pods are not in the snapshot (its capacity fold has no "
        "rule_pods) for their required pod anti-affinity",
    )
    assert NEW_SNAPSHOT == (
        "Take a new snapshot of the space (`truegreen snapshot`), or run doctor against the "
        "live cluster"
    )


def test_a_job_without_host_ports_leaves_only_the_running_programs_rules_unchecked() -> None:
    (only,) = _unchecked({"containers": [{"name": "c"}]})
    assert only.rule == "the rules of running programs about what may run beside them"
