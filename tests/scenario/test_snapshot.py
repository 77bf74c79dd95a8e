"""Snapshots: written whole or not at all, read back honestly, damaged parts never read as ok."""

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


def test_cluster_wide_pods_are_folded_to_what_the_fit_needs(doctor: Doctor) -> None:
    """Each page of the cluster's pods is reduced as it arrives: no images, env or labels kept."""
    import yaml

    from truegreen.doctor.fit import fit_view

    doctor.load("held-by-running-job")
    directory = doctor.snapshot()
    cluster_pods = [
        p
        for p in (directory / "reads").glob("*-list-pods.yaml")
        if yaml.safe_load(p.read_text())["read"]["namespace"] is None
    ]
    assert len(cluster_pods) == 1, "precondition: one cluster-wide pod list"
    items = yaml.safe_load(cluster_pods[0].read_text())["result"]["items"]
    assert items, "precondition: the list holds pods"
    text = cluster_pods[0].read_text()
    for dropped in ("image:", "env:", "labels:", "imagePullSecrets", "containerStatuses"):
        assert dropped not in text
    assert all(fit_view(item) == item for item in items)  # folding is idempotent
    assert any(item["spec"]["containers"][0]["resources"]["requests"] for item in items)
