"""Snapshots: written whole or not at all, read back honestly, damaged parts never read as ok."""

import json
import os
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.scenario.conftest import REGISTRY_NOT_ASKED, Doctor, without_connection_flags
from tests.support.cli import run_cli
from tests.support.fake_apiserver import Fault
from tests.support.scenarios import Obj, healthy, held_by_running_job, job_pod, training_job
from truegreen.cluster import Kind


def test_snapshot_refuses_an_existing_folder_and_writes_nothing(
    doctor: Doctor, tmp_path: Path
) -> None:
    doctor.load("healthy")
    target = tmp_path / "taken"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    result = run_cli(
        "snapshot", "--kubeconfig", str(doctor.kubeconfig), "--output-directory", str(target)
    )
    assert result.exit_code == 64
    assert result.stderr.strip().startswith(f"truegreen: cannot write the snapshot to {target}")
    assert len(result.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in target.iterdir()) == ["keep.txt"]


def test_a_file_where_the_folder_should_be_is_named_as_such(doctor: Doctor, tmp_path: Path) -> None:
    """`--archive job.yaml/x.tar.gz` beside an existing job.yaml: the file is not a folder (it
    does exist), said before any read is made."""
    doctor.load("healthy")
    (tmp_path / "job.yaml").write_text("kind: Job\n")
    target = tmp_path / "job.yaml" / "x.tar.gz"
    result = run_cli("snapshot", "--kubeconfig", str(doctor.kubeconfig), "--archive", str(target))
    assert (result.exit_code, result.stderr) == (
        64,
        f"truegreen: cannot write the snapshot to {target}: {tmp_path / 'job.yaml'} is a file, "
        "not a folder. choose a place in a folder with --archive\n",
    )
    assert not doctor.server.requests("GET", "/pods"), "refused before any read"


@pytest.mark.parametrize("flag", ["--output-directory", "--archive"])
def test_a_place_the_file_system_refuses_is_one_line_exit_3_and_nothing_left(
    doctor: Doctor, flag: str
) -> None:
    """The writes fail after every read (sysfs refuses new files even to root, as a read-only
    or full disk refuses them): one plain line naming the place and the system's reason,
    exit 3 and the failure document under -o json, and nothing written, not "a bug"."""
    place = Path("/sys/kernel")
    assert os.access(place, os.W_OK), "precondition: the early check lets it through"
    doctor.load("healthy")
    target = place / ("truegreen-snapshot" if flag == "--output-directory" else "snap.tar.gz")
    result = run_cli(
        "snapshot", "--kubeconfig", str(doctor.kubeconfig), flag, str(target), "-o", "json"
    )
    assert result.exit_code == 3, result.stderr
    reason = "(Permission denied|Operation not permitted)"  # the system's words, as it gave them
    assert re.fullmatch(
        rf"truegreen: cannot write the snapshot to {re.escape(str(target))}: no permission to "
        rf"write in {place} \({reason}\)\. choose a folder you may write in with {flag}\n",
        result.stderr,
    ), result.stderr
    document = json.loads(result.stdout)
    assert (document["exit_code"], document["headline"]["code"]) == (3, "write-failed")
    assert not [p for p in place.iterdir() if "snap" in p.name]


def test_failed_reads_are_saved_and_read_back_as_failed(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.server.inject(Fault.FORBIDDEN, r"^/api/v1/nodes$")
    directory = doctor.snapshot(exit_code=3)
    saved = _reads(directory, "*-list-nodes.yaml")["result"]
    assert saved["cant_read"]["failure"] == "forbidden"
    live = doctor.live("-o", "json")
    offline = doctor.offline(directory, "-o", "json")
    assert without_connection_flags(offline.json()) == without_connection_flags(live.json())
    assert offline.exit_code == 3


@pytest.mark.parametrize("written_as", [json.dumps, yaml.safe_dump])
def test_damaged_read_file_is_unknown_not_ok(
    doctor: Doctor, written_as: Callable[[Any], str]
) -> None:
    """As truegreen writes a read (JSON) or as it wrote them before (YAML): both decoders."""
    doctor.load("healthy")
    directory = doctor.snapshot()
    nodes = next((directory / "reads").glob("*-list-nodes.yaml"))
    document = yaml.safe_load(nodes.read_text())
    document["result"] = {"items": 7, "was": document["result"]["items"]}
    nodes.write_text(written_as(document))
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
        REGISTRY_NOT_ASKED,
        {"check": "image-pull", "reason": "the snapshot doesn't include the stored logins"},
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
    names = _keys(summary)
    assert {"metadata", "spec", "containers", "resources"} <= names, "precondition: keys seen"
    # Labels stay (a training controller's pods are known by them); the rest of a pod goes.
    assert "labels" in names
    for dropped in ("image", "env", "imagePullSecrets", "containerStatuses"):
        assert dropped not in names
    # The snapshot answers doctor exactly as the live cluster did.
    live = doctor.live("--output", "json")
    offline = doctor.offline(directory, "--output", "json")
    assert json.loads(offline.stdout)["findings"] == json.loads(live.stdout)["findings"]


@pytest.mark.parametrize("fault", list(Fault), ids=[f.name for f in Fault])
def test_every_failed_read_class_reads_back_as_live_saw_it(doctor: Doctor, fault: Fault) -> None:
    """The fault matrix's classes, once each, through the scenario fixture's snapshot round
    trip (same verdict, exit code, headline and per-check statuses as live)."""
    doctor.load("healthy")
    doctor.server.inject(fault, r"^/api/v1/nodes$", delay=3)
    result = doctor.live("-o", "json", "--request-timeout", "0.5")
    capacity = {f["status"] for f in result.json()["findings"] if f["check"] == "capacity"}
    assert capacity == {"unknown"}, "precondition: the read failed"
    assert doctor.round_trips == 1


def _stuck(now: datetime) -> list[Obj]:
    """The healthy namespace, with the manager's rollout past its progress deadline."""
    objects = healthy(now)
    manager = next(o for o in objects if o["metadata"]["name"] == "jobs-manager")
    manager["status"]["conditions"][1].update(status="False", reason="ProgressDeadlineExceeded")
    return objects


def _keys(value: Any) -> set[str]:
    """Every mapping key anywhere in `value`."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def _reads(directory: Path, pattern: str) -> dict[str, Any]:
    (path,) = (directory / "reads").glob(pattern)
    document: dict[str, Any] = yaml.safe_load(path.read_text())
    return document


def test_list_items_are_saved_as_the_server_sent_them_and_read_back_with_their_kind(
    doctor: Doctor,
) -> None:
    doctor.load(_stuck)
    directory = doctor.snapshot()
    items = _reads(directory, "*-list-deployments.yaml")["result"]["items"]
    assert sorted(i["metadata"]["name"] for i in items) == ["jobs-manager", "mysql"]
    assert [sorted(i.keys() & {"kind", "apiVersion"}) for i in items] == [[], []]
    # A single object is sent with its kind, and kept so.
    secret = _reads(directory, "*-get-secrets-regcred.yaml")["result"]["object"]
    assert (secret["kind"], secret["apiVersion"]) == ("Secret", "v1")
    report = doctor.offline(directory, "-o", "json").json()
    stuck = [f for f in report["findings"] if f["code"] == "workloads.update-stuck"]
    assert [f["objects"] for f in stuck] == [["Deployment/jobs-manager"]]
    assert report["exit_code"] == 2


def _job_stuck(now: datetime) -> list[Obj]:
    """A training job pod unscheduled past the grace period although the job fits."""
    job = training_job("train-009", now, gpus=1, finished=False, age=timedelta(minutes=15))
    pod = job_pod(
        job,
        now,
        suffix="z",
        node_name=None,
        phase="Pending",
        age=timedelta(minutes=15),
        scheduler_said=False,
    )
    return [*healthy(now), job, pod]


def test_a_snapshot_written_with_kinds_on_its_items_reads_the_same(doctor: Doctor) -> None:
    """Snapshots taken before list items were stored as sent carry a kind on every item; the
    capacity fold's pods never carried one: both read as a new snapshot does."""
    doctor.load(_job_stuck)
    directory = doctor.snapshot()
    before = doctor.offline(directory, "-o", "json").json()
    stuck = [f["objects"] for f in before["findings"] if f["code"] == "capacity.job-stuck"]
    assert stuck == [["Pod/train-009-z"]], "the fold's pods are named as pods"
    fold = _reads(directory, "*-fold-pods-capacity.yaml")["result"]["summary"]["pods_here"]
    assert not any("kind" in pod for pod in fold), "precondition: fit views carry no kind"
    for path in (directory / "reads").glob("*-list-*.yaml"):
        document = yaml.safe_load(path.read_text())
        kind = Kind.from_plural(document["read"]["resource"]).spec
        for item in document["result"].get("items", []):
            item.update(kind=kind.name, apiVersion=kind.api_version)
        path.write_text(yaml.safe_dump(document))
    deployments = _reads(directory, "*-list-deployments.yaml")["result"]["items"]
    assert {i["kind"] for i in deployments} == {"Deployment"}, "precondition: the old form"
    assert doctor.offline(directory, "-o", "json").json() == before


MANAGED = [{"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:spec": {"f:x": {}}}}]


def _with_unread_fields(item: dict[str, Any]) -> dict[str, Any]:
    """`item` as a newer server (or a hand-made snapshot) might send it: managedFields, and
    fields at the top and in metadata that no reader knows."""
    item["metadata"]["managedFields"] = MANAGED
    item["metadata"]["futureMetadata"] = "x"
    item["futureField"] = {"nested": [1, 2]}
    return item


@pytest.mark.parametrize("written_as", [json.dumps, yaml.safe_dump], ids=["json", "yaml"])
def test_saved_items_with_unread_fields_read_back_as_the_live_cluster_reads_them(
    doctor: Doctor, written_as: Callable[[Any], str]
) -> None:
    """The snapshot decodes saved list items through the live path's views: managedFields and
    unknown fields are dropped whichever form the file is in, and doctor's findings match."""
    from truegreen.cluster.live import LiveCluster
    from truegreen.cluster.redact import RedactingReader
    from truegreen.cluster.settings import ConnectionSettings
    from truegreen.cluster.snapshot import SnapshotReader

    objects = [
        _with_unread_fields(o) if o["kind"] in ("Pod", "Node") else o
        for o in held_by_running_job(doctor.now)
    ]
    doctor.server.add(*objects)
    live = doctor.live("-o", "json")
    directory = doctor.snapshot()
    for pattern in ("*-list-pods.yaml", "*-list-nodes.yaml"):
        (path,) = (directory / "reads").glob(pattern)
        document = yaml.safe_load(path.read_text())
        assert document["result"]["items"], "precondition: objects were saved"
        for item in document["result"]["items"]:
            assert "managedFields" not in item["metadata"], "precondition: the writer drops it"
            _with_unread_fields(item)
        path.write_text(written_as(document))
    offline = doctor.offline(directory, "-o", "json")
    assert without_connection_flags(offline.json()) == without_connection_flags(live.json())
    snapshot = RedactingReader(SnapshotReader.open(directory))
    settings = ConnectionSettings(kubeconfig=doctor.kubeconfig, request_timeout=10.0)
    with LiveCluster.connect(settings) as cluster:
        cluster_reader = RedactingReader(cluster)
        for kind, namespace in ((Kind.POD, "train"), (Kind.NODE, None)):
            saved = snapshot.list(kind, namespace=namespace)
            read_live = cluster_reader.list(kind, namespace=namespace)
            assert saved == read_live
            assert saved.items, "precondition: objects compared"  # type: ignore[union-attr]
            for item in saved.items:  # type: ignore[union-attr]
                assert "futureField" not in item
                assert set(item["metadata"]).isdisjoint({"managedFields", "futureMetadata"})


def test_read_files_are_written_as_json_which_any_yaml_reader_reads_the_same(
    doctor: Doctor,
) -> None:
    """JSON decodes at the live path's speed; it is YAML too, so people's tools (and older
    truegreen) read the same values."""
    doctor.load("healthy")
    directory = doctor.snapshot()
    reads = sorted((directory / "reads").glob("*-list-*.yaml"))
    reads += sorted((directory / "reads").glob("*-get-*.yaml"))
    reads += sorted((directory / "reads").glob("*-fold-*.yaml"))
    assert len(reads) >= 10, "precondition: lists, gets and folds were saved"
    for path in reads:
        text = path.read_text()
        assert json.loads(text) == yaml.safe_load(text), path.name


def test_a_snapshot_asked_about_another_namespace_says_which_one_it_holds() -> None:
    """A snapshot holds one namespace: `-n other` is one line naming it (64), not a dozen
    could-not-check lines about reads the snapshot never made."""
    healthy_snapshot = Path(__file__).parent.parent.parent / "examples" / "snapshots" / "healthy"
    result = run_cli("doctor", "--snapshot", str(healthy_snapshot), "-n", "other")
    assert (result.exit_code, result.stdout) == (64, "")
    assert result.stderr == (
        f"truegreen: the snapshot {healthy_snapshot} holds the namespace 'train', not 'other'. "
        "drop -n to check 'train', or take a snapshot of 'other' with "
        "`truegreen snapshot -n other`\n"
    )
    assert run_cli("doctor", "--snapshot", str(healthy_snapshot), "-n", "train").exit_code == 0


def test_a_snapshot_asked_about_a_context_says_it_reads_only_the_snapshot() -> None:
    """`--context prod` beside `--snapshot` cannot be honoured (the snapshot holds one
    cluster's answers), and ignoring it would pass the snapshot's verdict off as prod's: one
    line, 64."""
    healthy_snapshot = Path(__file__).parent.parent.parent / "examples" / "snapshots" / "healthy"
    assert run_cli("doctor", "--snapshot", str(healthy_snapshot)).exit_code == 0
    result = run_cli("doctor", "--snapshot", str(healthy_snapshot), "--context", "prod")
    assert (result.exit_code, result.stdout) == (64, "")
    assert result.stderr == (
        f"truegreen: --context 'prod' names a live cluster; doctor --snapshot reads only the "
        f"snapshot {healthy_snapshot}. drop --context to check the snapshot, or drop "
        "--snapshot to check the cluster of context 'prod'\n"
    )


_HEADLINE_WORDS = ("code", "status", "text", "remedy")

DRY_RUN_NOT_CHECKED = {
    "check": "admission",
    "reason": "the trial start of the training job's pod (admission-dry-run) asks the live "
    "cluster; a snapshot cannot answer it",
}


def test_a_config_s_trial_start_is_said_not_checked_offline(doctor: Doctor, tmp_path: Path) -> None:
    """`admission-dry-run: true` in the config: live, the server's webhook refuses the trial
    start (kube-apiserver runs admission on a dry-run create: staging/src/k8s.io/apiserver/
    pkg/endpoints/handlers/create.go `createHandler`) and doctor is not ready; a snapshot holds
    no answer to a create, so offline, with the config or with the snapshot alone (it saves
    the setting), the trial start is an unknown finding: exit 3, could not check (README: 3 is
    "could not check something, and found no failure"), never ✓ READY with exit 0, and the
    remedy is the live run that can answer it."""
    doctor.load("healthy")
    doctor.server.admission.webhook_denial = (
        "gpu-policy.example.com",
        "training jobs must name a priority class",
    )
    config = tmp_path / "config.yaml"
    config.write_text("admission-dry-run: true\nno-registry: true\n")
    kubeconfig = str(doctor.kubeconfig)
    live = run_cli("doctor", "--kubeconfig", kubeconfig, "--config", str(config), "-o", "json")
    assert (live.exit_code, live.json()["headline"]["code"]) == (2, "admission.trial-refused")
    saved = tmp_path / "dry"
    taken = run_cli(
        "snapshot",
        "--kubeconfig",
        kubeconfig,
        "--config",
        str(config),
        "--output-directory",
        str(saved),
    )
    assert taken.exit_code == 0, taken.stderr
    for extra in (("--config", str(config)), ()):
        offline = run_cli("doctor", "--snapshot", str(saved), *extra, "-o", "json")
        report = offline.json()
        assert (offline.exit_code, report["verdict"]) == (3, "unknown"), (extra, report)
        assert report["headline"] == {
            "code": "admission.trial-offline",
            "status": "unknown",
            "text": "Couldn't make a trial start of the training job: a snapshot cannot ask "
            "the cluster.",
            "remedy": "Run `truegreen doctor --admission-dry-run -n train` against the live "
            "cluster: only it can answer.",
        } | {k: v for k, v in report["headline"].items() if k not in _HEADLINE_WORDS}, report
        assert DRY_RUN_NOT_CHECKED in report["coverage"]["not_checked"], (extra, report["coverage"])
        text = run_cli("doctor", "--snapshot", str(saved), *extra, "--no-color")
        assert text.exit_code == 3, text.stdout
        assert text.stdout.startswith(
            "? COULD NOT CHECK  Couldn't make a trial start of the training job: a snapshot "
            "cannot ask the cluster.\n"
        ), text.stdout
        assert "8 checks measured, 1 could not be checked (admission: as said above)." in (
            " ".join(text.stdout.split())
        ), text.stdout


def test_the_pending_grace_a_snapshot_was_taken_with_is_the_one_it_is_read_with(
    doctor: Doctor, tmp_path: Path
) -> None:
    """`pending-grace-seconds: 60` in the config: a training pod the scheduler has not placed
    for three minutes is stuck, live; the snapshot saves the setting, so doctor --snapshot
    without the config says the same (and a config offline still wins)."""
    now = datetime.now(UTC)
    job = training_job("train-009", now, gpus=1, finished=False, age=timedelta(minutes=3))
    pod = job_pod(
        job,
        now,
        suffix="z",
        node_name=None,
        phase="Pending",
        age=timedelta(minutes=3),
        scheduler_said=False,
    )
    doctor.load(lambda at: [*healthy(at), job, pod])
    config = tmp_path / "config.yaml"
    config.write_text("pending-grace-seconds: 60\nno-registry: true\n")
    kubeconfig = str(doctor.kubeconfig)
    live = run_cli("doctor", "--kubeconfig", kubeconfig, "--config", str(config), "-o", "json")
    stuck = (2, "capacity.job-stuck")
    assert (live.exit_code, live.json()["headline"]["code"]) == stuck
    saved = tmp_path / "graced"
    taken = run_cli(
        "snapshot",
        "--kubeconfig",
        kubeconfig,
        "--config",
        str(config),
        "--output-directory",
        str(saved),
    )
    assert taken.exit_code == 0, taken.stderr
    assert yaml.safe_load((saved / "snapshot.yaml").read_text())["settings"] == {
        "no_registry": "true",
        "pending_grace_seconds": "60",
    }
    offline = run_cli("doctor", "--snapshot", str(saved), "-o", "json")
    assert (offline.exit_code, offline.json()["headline"]["code"]) == stuck
    patient = tmp_path / "patient.yaml"
    patient.write_text("pending-grace-seconds: 600\n")
    offline = run_cli("doctor", "--snapshot", str(saved), "--config", str(patient), "-o", "json")
    assert offline.json()["headline"]["code"] != "capacity.job-stuck", "the config wins"


@pytest.mark.parametrize("saved", ["soon", ".nan", "-1", "1e400"])
def test_a_saved_pending_grace_that_is_no_number_of_seconds_is_refused(
    doctor: Doctor, saved: str
) -> None:
    """A snapshot is hostile input: a grace it saved that the config would refuse is refused
    with one plain line (exit 64), never read as doctor's default."""
    doctor.load("healthy")
    directory = doctor.snapshot()
    info = directory / "snapshot.yaml"
    document = yaml.safe_load(info.read_text())
    document["settings"]["pending_grace_seconds"] = saved
    info.write_text(yaml.safe_dump(document))
    result = run_cli("doctor", "--snapshot", str(directory))
    assert (result.exit_code, result.stderr) == (
        64,
        f"truegreen: the snapshot {directory} saved pending_grace_seconds {saved!r}, not a "
        "number of seconds from 0 to 2592000. fix it in its snapshot.yaml, or name one with "
        "pending-grace-seconds in --config\n",
    )
