"""Snapshots: written whole or not at all, read back honestly, damaged parts never read as ok."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.scenario.conftest import Doctor
from tests.support.cli import run_cli
from tests.support.fake_apiserver import Fault


def test_snapshot_refuses_an_existing_folder_and_writes_nothing(
    doctor: Doctor, tmp_path: Path
) -> None:
    doctor.load("healthy")
    target = tmp_path / "taken"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    result = run_cli("snapshot", "--kubeconfig", str(doctor.kubeconfig), "-o", str(target))
    assert result.exit_code == 64
    assert result.stderr.strip().startswith(f"truegreen: cannot write the snapshot to {target}")
    assert len(result.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in target.iterdir()) == ["keep.txt"]


def test_failed_reads_are_saved_and_read_back_as_failed(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.server.inject(Fault.FORBIDDEN, r"^/api/v1/nodes$")
    directory = doctor.snapshot()
    saved = next((directory / "reads").glob("*-list-nodes.yaml")).read_text()
    assert "failure: forbidden" in saved
    live = doctor.live("-o", "json")
    offline = doctor.offline(directory, "-o", "json")
    assert offline.json() == live.json()
    assert offline.exit_code == 3


def test_damaged_read_file_is_unknown_not_ok(doctor: Doctor) -> None:
    doctor.load("healthy")
    directory = doctor.snapshot()
    nodes = next((directory / "reads").glob("*-list-nodes.yaml"))
    nodes.write_text(nodes.read_text().replace("result:\n  items:", "result:\n  items: 7\n  was:"))
    report = doctor.offline(directory, "-o", "json").json()
    capacity = [f for f in report["findings"] if f["check"] == "capacity"]
    assert [(f["status"], f["basis"]) for f in capacity] == [("unknown", "cant-check")]
    assert report["headline"]["text"] == (
        "Couldn't check whether there is room for a training job: "
        "the cluster's answer about the machines was garbled."
    )


def test_missing_read_is_not_captured(doctor: Doctor) -> None:
    doctor.load("healthy")
    directory = doctor.snapshot()
    next((directory / "reads").glob("*-get-secrets-regcred.yaml")).unlink()
    report = doctor.offline(directory, "-o", "json").json()
    image_pull = [f for f in report["findings"] if f["check"] == "image-pull"]
    assert [f["status"] for f in image_pull] == ["unknown"]
    assert report["coverage"]["not_checked"] == [
        {"check": "image-pull", "reason": "the snapshot doesn't include the stored logins"}
    ]


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: None, "has no snapshot.yaml"),
        (lambda d: (d / "snapshot.yaml").write_text("taken_at: [unclosed"), "is not valid YAML"),
        (
            lambda d: (d / "snapshot.yaml").write_text("kind: Other\n"),
            "is not a truegreen snapshot",
        ),
    ],
)
def test_not_a_snapshot_is_one_clear_line(
    tmp_path: Path, setup: Callable[[Path], object], message: str
) -> None:
    directory = tmp_path / "snap"
    directory.mkdir()
    setup(directory)
    result = run_cli("doctor", "--snapshot", str(directory))
    assert result.exit_code == 64
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert message in lines[0]


def test_cluster_wide_pods_are_summed_per_machine_not_kept(doctor: Doctor) -> None:
    """The cluster's pods are folded into per-machine sums as the pages arrive; only this
    namespace's pods are kept, as fit views (no images, env or labels)."""
    import copy

    import yaml

    objects = doctor.load("held-by-running-job")
    running = next(o for o in objects if o["metadata"]["name"] == "train-002-x1")
    elsewhere = copy.deepcopy(running)
    elsewhere["metadata"].update(name="other-team-1", namespace="other", ownerReferences=[])
    elsewhere["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "1500m"}}
    finished = copy.deepcopy(elsewhere)
    finished["metadata"]["name"] = "other-team-done"
    finished["status"]["phase"] = "Succeeded"
    doctor.server.add(elsewhere, finished)
    directory = doctor.snapshot()
    folds = list((directory / "reads").glob("*-fold-pods-capacity.yaml"))
    assert len(folds) == 1, "precondition: one fold of the cluster's pods"
    document = yaml.safe_load(folds[0].read_text())
    assert document["read"]["namespace"] is None
    assert document["read"]["fields"] == "status.phase!=Failed,status.phase!=Succeeded"
    summary = document["result"]["summary"]
    # A limit without a request counts as the request; the finished pod holds nothing.
    assert summary["machines"] == {
        "cpu-1": {"pods": 2, "requested": {"cpu": 1500, "memory": 3 * 2**30}},
        "gpu-1": {"pods": 2, "requested": {"cpu": 5500, "memory": 16 * 2**30, "nvidia.com/gpu": 2}},
    }
    assert summary["invalid"] == ""
    kept = sorted(p["metadata"]["name"] for p in summary["pods_here"])
    assert kept == ["jobs-manager-abc12", "mysql-def34", "train-002-x1", "train-003-y1"]
    text = folds[0].read_text()
    for dropped in ("image:", "env:", "labels:", "imagePullSecrets", "containerStatuses"):
        assert dropped not in text
    # The snapshot answers doctor exactly as the live cluster did.
    live = doctor.live("--output", "json")
    offline = doctor.offline(directory, "--output", "json")
    assert json.loads(offline.stdout)["findings"] == json.loads(live.stdout)["findings"]
