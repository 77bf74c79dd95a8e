"""A snapshot whose capacity fold keeps no other namespaces' pods (`rule_pods`, which snapshots
made before truegreen kept them lack): the rules those pods decide are unchecked, and the
remedy is a new snapshot or the live cluster, never a permission to ask for."""

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from tests.scenario.conftest import Doctor
from tests.support.filter_objects import ranks_job, running_pod
from tests.support.scenarios import Obj, healthy


def _without_rule_pods(snapshot: Path) -> None:
    """The capacity fold as a snapshot older than `rule_pods` saved it."""
    (fold,) = snapshot.glob("reads/*-fold-pods-capacity.yaml")
    saved = yaml.safe_load(fold.read_text())
    summary = saved["result"]["summary"]
    assert "rule_pods" in summary, "precondition: the fold keeps rule_pods today"
    del summary["rule_pods"]
    fold.write_text(json.dumps(saved))


def _capacity(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == "capacity"]


def test_a_host_port_job_on_an_old_snapshot_asks_for_a_new_snapshot(doctor: Doctor) -> None:
    """The job asks for host port 9100; live, doctor reads every namespace's pods and the job
    fits (no pod holds the port). Offline, the old snapshot holds none of the other
    namespaces' pods: the port rule and the running programs' anti-affinity are unchecked
    (exit 3), and what to do is take a new snapshot or check the live cluster."""

    def objects(now: datetime) -> list[Obj]:
        job = ranks_job("solo", now, ranks=1, gpus=1)
        job["spec"]["template"]["spec"]["containers"][0]["ports"] = [
            {"containerPort": 9100, "hostPort": 9100}
        ]
        return [*healthy(now), running_pod("other-0", "cpu-1", now, namespace="batch"), job]

    doctor.load(objects)
    assert doctor.live("-o", "json").exit_code == 0, "precondition: live, the job fits"
    snapshot = doctor.snapshot()
    _without_rule_pods(snapshot)
    result = doctor.offline(snapshot, "-o", "json", "-v")
    unchecked = [f for f in _capacity(result.json()) if f["code"] == "capacity.rule-unchecked"]
    # The port rule, and the running programs' own rules about which programs may run together.
    assert len(unchecked) == 2, [f["code"] for f in _capacity(result.json())]
    for found in unchecked:
        text = f"{found['headline']} {found['remedy']}"
        assert "could not be read" not in text, text
        assert "Let doctor read" not in text, text
        assert found["remedy"].startswith("Take a new snapshot"), found["remedy"]
    assert result.exit_code == 3
