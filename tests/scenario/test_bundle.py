"""`truegreen snapshot` as a support bundle: redacted by policy, private, whole or absent.

The redaction test seeds every shape docs/snapshot.md lists into the fake cluster (objects,
Events, container logs) and scans every byte the snapshot writes, folder and archive alike."""

import base64
import copy
import gzip
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.scenario.conftest import CREDENTIALS, REGISTRY_NOT_ASKED, Doctor, _verdict
from tests.support.cli import CliResult, run_cli
from tests.support.fake_apiserver import FakeApiServer, Fault
from tests.support.make_examples import EXAMPLES
from tests.support.scenarios import (
    BACKEND_SECRET_VALUE,
    NAMESPACE,
    PULL_SECRET_VALUE,
    Obj,
    b64,
    container_id,
    crash_looping_manager,
    ts,
)
from truegreen.doctor.command.request import default_archive_name

# Every value below must never be written; each stands for one rule of the policy.
SEEDED_ENV = {
    "PASSWORD": "seed-env-password-a1",
    "DB_PASSWD": "seed-env-passwd-a2",
    "APP_SECRET": "seed-env-secret-a3",
    "GITHUB_TOKEN": "seed-env-token-a4",
    "SIGNING_KEY": "seed-env-key-a5",
    "AWS_CREDENTIALS": "seed-env-credential-a6",
    "BASIC_AUTH": "seed-env-auth-a7",
    "PRIVATE_PEM": "seed-env-private-a8",
    "X_API_KEY": "seed-env-api-key-a9",
    "S3_ACCESS_KEY": "seed-env-access-key-b1",
    "DATABASE_URL": "seed-env-database-url-b2",
    "CONNECTION_STRING": "seed-env-connection-string-b3",
}
DSN_PASSWORD = "seed-dsn-pass-b4"
AWS_KEY_ID = "AKIAIOSFODNN7SEEDED1"
AWS_SESSION_KEY_ID = "ASIAIOSFODNN7SEEDED2"
AWS_SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYSEEDEDKEY1"
URL_PASSWORD = "seed-url-pass-b5"
ARG_EQUALS = "seed-arg-equals-b6"
ARG_SEPARATE = "seed-arg-separate-b7"
ARG_IN_SHELL = "seed-arg-shell-b8"
LAST_APPLIED_VALUE = "seed-last-applied-b9"
MANAGED_FIELDS_VALUE = "seed-managed-fields-c1"
SECRET_ANNOTATION = "seed-secret-annotation-c2"
STRING_DATA = "seed-string-data-c3"
EVENT_PASSWORD = "seed-event-password-c4"
EVENT_DSN = "seed-event-dsn-c5"
LOG_TOKEN = "seed-log-token-c6"
LOG_DSN = "seed-log-dsn-c7"
LOGIN_PASSWORD = "seed-login-password-c8"
"""A registry login's `password`, beside an `auth` that wins over it (config.go)."""
LOGIN_AUTH = "seed-login-auth-c9"
LOGIN_UNDECODABLE = "%%%seed-login-undecodable-c10"
LOGIN_NO_COLON = "seed-login-no-colon-c11"
LOGIN_UNPADDED = "seed-login-unpadded-c12"
SEEDED = (
    *SEEDED_ENV.values(),
    DSN_PASSWORD,
    AWS_KEY_ID,
    AWS_SESSION_KEY_ID,
    AWS_SECRET_KEY,
    URL_PASSWORD,
    ARG_EQUALS,
    ARG_SEPARATE,
    ARG_IN_SHELL,
    LAST_APPLIED_VALUE,
    MANAGED_FIELDS_VALUE,
    SECRET_ANNOTATION,
    STRING_DATA,
    EVENT_PASSWORD,
    EVENT_DSN,
    LOG_TOKEN,
    LOG_DSN,
    BACKEND_SECRET_VALUE,
    PULL_SECRET_VALUE,
    LOGIN_PASSWORD,
    LOGIN_AUTH,
    b64(f"robot:{LOGIN_AUTH}"),
    LOGIN_UNDECODABLE,
    LOGIN_NO_COLON,
    b64(LOGIN_NO_COLON),
    LOGIN_UNPADDED,
    b64(f"robot:{LOGIN_UNPADDED}").rstrip("="),
)
PREVIOUS_INSTANCE = container_id("jobs-manager-abc12", "api", restart=7)


def _event(name: str, message: str, seen: datetime) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "involvedObject": {"kind": "Pod", "name": "jobs-manager-abc12", "namespace": NAMESPACE},
        "type": "Warning",
        "reason": "BackOff",
        "message": message,
        "count": 3,
        "lastTimestamp": ts(seen),
    }


def seeded_cluster(now: datetime) -> list[Obj]:
    """The crash-looping scenario with a secret in every place the policy covers."""
    objects = crash_looping_manager(now)
    env = [{"name": name, "value": value} for name, value in SEEDED_ENV.items()]
    env += [
        {"name": "BACKEND", "value": f"postgres://trainer:{DSN_PASSWORD}@db:5432/jobs"},
        {"name": "NOTE", "value": f"ids {AWS_KEY_ID} and {AWS_SESSION_KEY_ID}"},
        {"name": "BLOB", "value": AWS_SECRET_KEY},
        {"name": "EMPTY_PASSWORD", "value": ""},
    ]
    seeds: dict[str, Any] = {
        "env": env,
        "command": ["/bin/manager", f"--password={ARG_EQUALS}", "--api-key", ARG_SEPARATE],
        "args": ["sh", "-c", f"exec manager --db-token {ARG_IN_SHELL}"],
    }
    for obj in objects:
        if obj["kind"] not in ("Deployment", "Pod") or not obj["metadata"]["name"].startswith(
            "jobs-manager"
        ):
            continue
        spec = obj["spec"]["template"]["spec"] if obj["kind"] == "Deployment" else obj["spec"]
        spec["containers"][0].update(seeds)
        metadata = obj["metadata"]
        metadata.setdefault("annotations", {}).update(
            {
                "kubectl.kubernetes.io/last-applied-configuration": json.dumps(
                    {"metadata": {"labels": {"note": LAST_APPLIED_VALUE}}}
                ),
                "example.com/source": f"https://deploy:{URL_PASSWORD}@git.example.com/jobs.git",
            }
        )
        metadata["managedFields"] = [{"manager": MANAGED_FIELDS_VALUE, "operation": "Apply"}]
    backend = next(o for o in objects if o["metadata"]["name"] == "backend-credentials")
    backend["metadata"]["annotations"] = {"note": SECRET_ANNOTATION}
    backend["stringData"] = {"extra": STRING_DATA}
    backend["data"]["token"] = b64(STRING_DATA)
    login = next(o for o in objects if o["metadata"]["name"] == "regcred")
    auths = json.loads(base64.b64decode(login["data"][".dockerconfigjson"]))["auths"]
    auths |= {  # every shape of entry the kubelet reads (docker_config.py), and those it cannot
        "wins.example.com": {
            "username": "robot",
            "password": LOGIN_PASSWORD,
            "auth": b64(f"robot:{LOGIN_AUTH}"),
        },
        "unpadded.example.com": {"auth": b64(f"robot:{LOGIN_UNPADDED}").rstrip("=")},
        "undecodable.example.com": {"auth": LOGIN_UNDECODABLE},
        "no-colon.example.com": {"auth": b64(LOGIN_NO_COLON)},
    }
    login["data"][".dockerconfigjson"] = b64(json.dumps({"auths": auths}))
    objects += [
        _event("a-login", f"login failed: password={EVENT_PASSWORD}", now),
        _event("b-dsn", f"cannot reach mysql://root:{EVENT_DSN}@mysql:3306", now),
    ]
    return objects


def _seed_logs(doctor: Doctor) -> None:
    doctor.server.container_logs[PREVIOUS_INSTANCE] = (
        "starting\n"
        f"connecting to postgres://trainer:{LOG_DSN}@db:5432/jobs\n"
        f'config: {{"token": "{LOG_TOKEN}", "key_id": "{AWS_KEY_ID}"}}\n'
        "panic: cannot reach the database\n"
    )


def _snapshot(doctor: Doctor, *args: str) -> CliResult:
    return run_cli(
        "snapshot",
        "--kubeconfig",
        str(doctor.kubeconfig),
        "--request-timeout",
        "2",
        *doctor.registry_flags(),
        *args,
    )


def _leaked(data: bytes) -> list[str]:
    return [value for value in SEEDED if value.encode() in data]


def _archive_members(path: Path) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(path, "r:gz") as tar:
        return {member.name: member for member in tar.getmembers()}


def test_no_seeded_secret_is_written_anywhere_folder_or_archive(doctor: Doctor) -> None:
    """Every shape of docs/snapshot.md's policy, seeded where doctor reads it, in Events and in
    a failing container's log: not one seeded value in any byte written or printed."""
    doctor.load(seeded_cluster)
    _seed_logs(doctor)
    folder = doctor.tmp_path / "bundle"
    archive = doctor.tmp_path / "bundle.tar.gz"
    by_folder = _snapshot(doctor, *CREDENTIALS, "--output-directory", str(folder))
    by_archive = _snapshot(doctor, *CREDENTIALS, "--archive", str(archive))
    assert (by_folder.exit_code, by_archive.exit_code) == (0, 0), by_folder.stderr
    written = {path: path.read_bytes() for path in folder.rglob("*") if path.is_file()}
    # Preconditions: the seeds were read, so a leak would have been written.
    everything = b"".join(written.values())
    assert b"panic: cannot reach the database" in everything, "precondition: the log was saved"
    assert b"login failed: password=<redacted>" in everything, "precondition: events saved"
    assert b"EMPTY_PASSWORD" in everything, "precondition: the env was saved"
    assert b'"value": ""' in everything, "an empty value stays empty: emptiness is measured"
    leaks = {str(path): _leaked(data) for path, data in written.items() if _leaked(data)}
    assert leaks == {}
    unpacked = gzip.decompress(archive.read_bytes())
    assert b"panic: cannot reach the database" in unpacked, "precondition: archive has the log"
    assert _leaked(unpacked) == []
    assert _leaked(archive.read_bytes()) == []
    printed = by_folder.stdout + by_folder.stderr + by_archive.stdout + by_archive.stderr
    assert _leaked(printed.encode()) == []


def test_the_bundle_is_private_folder_0700_files_0600_archive_0600(doctor: Doctor) -> None:
    doctor.load("healthy")
    folder = doctor.tmp_path / "bundle"
    archive = doctor.tmp_path / "bundle.tar.gz"
    assert _snapshot(doctor, "--output-directory", str(folder)).exit_code == 0
    assert _snapshot(doctor, "--archive", str(archive)).exit_code == 0
    modes = {
        str(path.relative_to(folder)): stat.S_IMODE(path.stat().st_mode)
        for path in [folder, *folder.rglob("*")]
    }
    assert len(modes) > 5, "precondition: reads were saved"
    assert {name: mode for name, mode in modes.items() if Path(name).suffix != ".yaml"} == {
        ".": 0o700,
        "reads": 0o700,
    }
    assert {mode for name, mode in modes.items() if name.endswith(".yaml")} == {0o600}
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600
    members = _archive_members(archive)
    assert {member.mode for member in members.values() if member.isfile()} == {0o600}
    assert {member.mode for member in members.values() if member.isdir()} == {0o700}


def _as_ordinary_user(drop: tuple[str, ...] = ()) -> list[str]:
    """How a command is run as an ordinary user would run it: unchanged, unless this is root,
    whom file modes do not stop; then root without CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and
    the capabilities in `drop` (util-linux's setpriv, essential on Debian), whom modes stop
    as they stop a file's owner."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    assert setpriv is not None, "util-linux's setpriv is a real part of the tests"
    dropped = ",".join(f"-{name}" for name in ("dac_override", "dac_read_search", *drop))
    return [setpriv, "--bounding-set", dropped]


def _snapshot_process(
    doctor: Doctor, *args: str, umask: int = 0o022, drop: tuple[str, ...] = ()
) -> "subprocess.CompletedProcess[str]":
    """`truegreen snapshot` as its own process under `umask`, as an ordinary user runs it
    (without the capabilities in `drop` too, where it is root)."""
    command = [
        sys.executable,
        "-m",
        "truegreen",
        "snapshot",
        "--kubeconfig",
        str(doctor.kubeconfig),
    ]
    return subprocess.run(
        [
            *_as_ordinary_user(drop),
            *command,
            "--request-timeout",
            "2",
            *doctor.registry_flags(),
            *args,
        ],
        capture_output=True,
        text=True,
        umask=umask,
        check=False,
    )


@pytest.mark.parametrize("umask", [0o177, 0o277], ids=["umask-0177", "umask-0277"])
def test_the_folder_is_0700_whatever_the_umask(doctor: Doctor, umask: int) -> None:
    """mkdir(2)'s mode is masked by the umask: under 0177 the folders were 0600, which their
    own owner may not enter, so an ordinary user's snapshot failed after every read."""
    doctor.load("healthy")
    folder = doctor.tmp_path / "bundle"
    done = _snapshot_process(doctor, "--output-directory", str(folder), umask=umask)
    assert (done.returncode, done.stderr) == (0, "")
    modes = {
        str(path.relative_to(folder)): stat.S_IMODE(path.stat().st_mode)
        for path in [folder, *folder.rglob("*")]
    }
    assert {name: mode for name, mode in modes.items() if Path(name).suffix != ".yaml"} == {
        ".": 0o700,
        "reads": 0o700,
    }
    assert {mode for name, mode in modes.items() if name.endswith(".yaml")} == {0o600}


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a folder another owner")
def test_a_permission_refused_says_so_and_never_asks_for_room(doctor: Doctor) -> None:
    """A shared folder like /tmp (sticky, writable by all) where another user made the empty
    folder asked for: the check passes (an empty folder, a parent open to all), and its
    removal is refused (EPERM: only its owner may remove it, fs/namei.c `__check_sticky`).
    The error says it is a permission and names the folder, never a full disk."""
    doctor.load("healthy")
    shared = doctor.tmp_path / "shared"
    target = shared / "bundle"
    target.mkdir(parents=True)
    for path in (shared, target):
        os.chown(path, 65534, 65534)
    shared.chmod(0o1777)
    done = _snapshot_process(doctor, "--output-directory", str(target), drop=("fowner",))
    assert done.returncode == 3, done.stderr
    assert done.stderr.splitlines() == [
        f"truegreen: cannot write the snapshot to {target}: no permission to write in "
        f"{shared} (Operation not permitted). choose a folder you may write in with "
        "--output-directory"
    ]
    assert list(shared.iterdir()) == [target]
    assert list(target.iterdir()) == []


def test_doctor_reads_the_archive_as_it_reads_the_live_cluster(doctor: Doctor) -> None:
    """The redacted archive gives the live verdict: redaction keeps what the checks need."""
    doctor.load(seeded_cluster)
    _seed_logs(doctor)
    archive = doctor.tmp_path / "bundle.tar.gz"
    assert _snapshot(doctor, *CREDENTIALS, "--archive", str(archive)).exit_code == 0
    live = doctor.live("-o", "json")
    offline = doctor.offline(archive, "-o", "json")
    assert live.json()["verdict"] != "ok", "precondition: the crash loop is found"
    assert _verdict(offline.json()) == _verdict(live.json())
    assert offline.exit_code == live.exit_code


def test_the_default_archive_is_named_for_the_namespace_and_time(
    doctor: Doctor, monkeypatch: pytest.MonkeyPatch
) -> None:
    doctor.load("healthy")
    monkeypatch.chdir(doctor.tmp_path)
    result = _snapshot(doctor)
    assert result.exit_code == 0, result.stderr
    made = sorted(doctor.tmp_path.glob("truegreen-snapshot-*"))
    assert [path.name[: len("truegreen-snapshot-train-")] for path in made] == [
        "truegreen-snapshot-train-"
    ]
    name = made[0].name
    stamp = name.removeprefix("truegreen-snapshot-train-").removesuffix(".tar.gz")
    assert datetime.strptime(stamp, "%Y%m%dT%H%M%SZ")
    assert result.stdout.splitlines()[0].startswith("Saved ")
    assert f" to {name} (" in result.stdout.splitlines()[0]
    assert {Path(n).parts[0] for n in _archive_members(made[0])} == {name.removesuffix(".tar.gz")}


def test_output_json_is_a_format_not_a_folder(
    doctor: Doctor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`-o json` means the output format, as for every other command (it once made a folder)."""
    doctor.load("healthy")
    monkeypatch.chdir(doctor.tmp_path)
    folder = doctor.tmp_path / "bundle"
    result = _snapshot(doctor, "-o", "json", "--output-directory", str(folder))
    assert result.exit_code == 0, result.stderr
    assert not (doctor.tmp_path / "json").exists()
    document = result.json()
    assert (document["verdict"], document["exit_code"], document["format"]) == (
        "saved",
        0,
        "folder",
    )
    assert document["saved_to"] == str(folder)
    assert document["failed_reads"] == 0
    assert document["reads"] == len(list((folder / "reads").iterdir()))


def test_a_failed_read_exits_3_with_the_count(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.server.inject(Fault.FORBIDDEN, r"^/api/v1/nodes$")
    doctor.server.inject(Fault.FORBIDDEN, r"/events$")
    folder = doctor.tmp_path / "bundle"
    result = _snapshot(doctor, "--output-directory", str(folder))
    assert result.exit_code == 3, result.stderr
    assert result.stdout.splitlines() == [
        f"Saved 18 reads of 'train' to {folder}, 2 could not be read: no permission to read "
        "the machines; no permission to read the activity log.",
        f"Check it with `truegreen doctor --snapshot {folder}`.",
    ]
    assert (folder / "snapshot.yaml").is_file(), "the bundle is saved, incomplete"
    again = doctor.tmp_path / "again"
    verbose = _snapshot(doctor, "-v", "--output-directory", str(again))
    assert verbose.exit_code == 3
    assert verbose.stdout.splitlines()[2:] == [
        "  could not read: list nodes: no permission (403); needs list nodes "
        "(cluster-wide: a ClusterRole)",
        "  could not read: list events: no permission (403); needs list events in namespace train",
    ]


def test_the_bundle_holds_the_events_newest_first_and_the_failing_logs(doctor: Doctor) -> None:
    doctor.load(seeded_cluster)
    _seed_logs(doctor)
    older = _event("0-older", "pulled image", doctor.now - timedelta(hours=1))
    doctor.server.add(older)
    folder = doctor.tmp_path / "bundle"
    result = _snapshot(doctor, *CREDENTIALS, "--output-directory", str(folder))
    assert result.exit_code == 0, result.stderr
    assert "(3 events, 1 log of failing containers)" in result.stdout
    events = yaml.safe_load(next((folder / "reads").glob("*-fold-events-newest.yaml")).read_text())
    summary = events["result"]["summary"]
    assert summary["total"] == 3
    assert [e["message"] for e in summary["events"]][-1] == "pulled image", "oldest last"
    logs = [
        yaml.safe_load(path.read_text()) for path in (folder / "reads").glob("*-log-pods-*.yaml")
    ]
    assert [(log["read"]["name"], log["read"]["previous"]) for log in logs] == [
        ("jobs-manager-abc12", True)
    ]
    assert logs[0]["result"]["log"].splitlines()[-1] == "panic: cannot reach the database"
    asked = [r for r in doctor.server.requests() if r.path.endswith("/log")]
    assert [
        (r.query.get("previous"), r.query.get("tailLines"), r.query.get("limitBytes"))
        for r in asked
    ] == [("true", "200", "65536")]


# A training process's log: JSON metric lines of about 700 bytes, then the crash. The last 200
# lines are about 140 KiB, over the 64 KiB one answer holds.
METRIC_LINES = [
    f'{{"level":"info","step":{step},"metrics":{{'
    + ",".join(f'"m{j}":{j}.{step:04d}' for j in range(50))
    + "}}"
    for step in range(1000)
]
CRASH = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0)"


def _saved_log(doctor: Doctor) -> dict[str, Any]:
    folder = doctor.tmp_path / "bundle"
    result = _snapshot(doctor, *CREDENTIALS, "--output-directory", str(folder))
    assert result.exit_code == 0, result.stderr
    [path] = (folder / "reads").glob("*-log-pods-*.yaml")
    document: dict[str, Any] = yaml.safe_load(path.read_text())["result"]
    return document


def _log_asks(doctor: Doctor) -> list[tuple[str | None, str | None]]:
    asked = [r for r in doctor.server.requests() if r.path.endswith("/log")]
    return [(r.query.get("tailLines"), r.query.get("limitBytes")) for r in asked]


def test_a_log_tail_over_the_byte_limit_keeps_its_newest_lines_and_says_so(
    doctor: Doctor,
) -> None:
    """The kubelet seeks to the first of the last `tailLines` lines and writes forward until
    `limitBytes`, cutting the line it is in (kubernetes pkg/kubelet/kuberuntime/logs/logs.go
    ReadLogs, logWriter.write): the newest bytes, the crash, are the ones a long tail loses.
    Fewer lines are asked for until they fit, and the saved log says it holds fewer."""
    doctor.load(seeded_cluster)
    log = "\n".join([*METRIC_LINES, "Traceback (most recent call last):", CRASH]) + "\n"
    doctor.server.container_logs[PREVIOUS_INSTANCE] = log
    assert len("".join(log.splitlines(keepends=True)[-200:]).encode()) > 65536, (
        "precondition: the last 200 lines are over the limit"
    )
    saved = _saved_log(doctor)
    assert saved["log"].splitlines()[-2:] == ["Traceback (most recent call last):", CRASH]
    assert saved["log"] == "".join(log.splitlines(keepends=True)[-50:])
    assert saved["cut"] == (
        "only the last 50 lines are kept: more would be longer than 65536 bytes"
    )
    assert _log_asks(doctor) == [("200", "65536"), ("100", "65536"), ("50", "65536")]


def test_a_newest_line_over_the_byte_limit_is_kept_cut_and_marked_cut(doctor: Doctor) -> None:
    """A progress bar redrawn with carriage returns is one line: alone over the limit, the
    kubelet sends its first 64 KiB, and the saved log says its end is missing."""
    doctor.load(seeded_cluster)
    bar = "".join(f"\r{step}/100000 [{'#' * 40}]" for step in range(2000))
    doctor.server.container_logs[PREVIOUS_INSTANCE] = f"starting\n{bar}\n"
    saved = _saved_log(doctor)
    assert saved["log"] == bar[:65536]
    assert saved["cut"] == (
        "the newest line is longer than 65536 bytes: only its first 65536 bytes are kept, "
        "its end is not"
    )
    assert _log_asks(doctor)[-1] == ("1", "65536")


def test_a_log_under_the_byte_limit_is_asked_for_once_and_not_marked(doctor: Doctor) -> None:
    doctor.load(seeded_cluster)
    _seed_logs(doctor)
    saved = _saved_log(doctor)
    assert saved["log"].splitlines()[-1] == "panic: cannot reach the database"
    assert "cut" not in saved
    assert _log_asks(doctor) == [("200", "65536")]


def test_the_logs_are_read_together_and_kept_in_the_order_chosen(doctor: Doctor) -> None:
    doctor.load(seeded_cluster)
    _seed_logs(doctor)
    pod = doctor.server.get_object("Pod", "jobs-manager-abc12", NAMESPACE)
    assert pod is not None
    twin = copy.deepcopy(pod)
    twin["metadata"] = {**twin["metadata"], "name": "jobs-manager-def34"}
    for key in ("uid", "resourceVersion", "creationTimestamp"):
        twin["metadata"].pop(key, None)
    doctor.server.add(twin)
    lock, in_flight, most = threading.Lock(), [0], [0]

    def hold_each_log(_: FakeApiServer, method: str, path: str) -> None:
        if not path.endswith("/log"):
            return
        with lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
        time.sleep(0.3)  # long enough that a read sent together is under way meanwhile
        with lock:
            in_flight[0] -= 1

    doctor.server.request_hooks.append(hold_each_log)
    folder = doctor.tmp_path / "bundle"
    result = _snapshot(doctor, *CREDENTIALS, "--output-directory", str(folder))
    assert result.exit_code == 0, result.stderr
    assert len([r for r in doctor.server.requests() if r.path.endswith("/log")]) == 2, (
        "precondition: two failing containers, two logs"
    )
    assert most[0] == 2, "the two logs were read one after the other"
    logs = [
        yaml.safe_load(path.read_text())
        for path in sorted((folder / "reads").glob("*-log-pods-*.yaml"))
    ]
    assert [log["read"]["name"] for log in logs] == ["jobs-manager-abc12", "jobs-manager-def34"]


def test_a_log_the_runtime_already_removed_is_recorded_absent_not_failed(doctor: Doctor) -> None:
    doctor.load(seeded_cluster)
    doctor.server.removed_instances.add(PREVIOUS_INSTANCE)
    folder = doctor.tmp_path / "bundle"
    result = _snapshot(doctor, *CREDENTIALS, "--output-directory", str(folder))
    asked = [r for r in doctor.server.requests() if r.path.endswith("/log")]
    assert [(r.query.get("previous"), r.status) for r in asked] == [("true", 400)], (
        "precondition: the kubelet refused the removed instance's log"
    )
    assert result.exit_code == 0, result.stdout
    assert "could not be read" not in result.stdout
    assert "log of failing containers" not in result.stdout
    (path,) = (folder / "reads").glob("*-log-pods-*.yaml")
    recorded = yaml.safe_load(path.read_text())["result"]
    assert recorded["cant_read"]["failure"] == "not-found"
    assert recorded["cant_read"]["reason"].startswith(
        "read the log of jobs-manager-abc12/api (previous): no such log (failed to get container "
        f'status "{PREVIOUS_INSTANCE}"'
    )


def _hostile(folder: Path, pattern: str, change: Any) -> None:
    path = next((folder / "reads").glob(pattern))
    document = yaml.safe_load(path.read_text())
    change(document)
    path.write_text(yaml.safe_dump(document))


@pytest.mark.parametrize(
    ("change", "exit_code", "findings"),
    [
        (lambda d: d["result"]["object"].update(metadata=["not", "a", "mapping"]), 0, []),
        (
            lambda d: d["result"]["object"].update(data=["x"], metadata={"annotations": ["y"]}),
            2,
            [("credentials.keys-missing", "fail")],
        ),
        (
            lambda d: d["result"]["object"].update(data={"password": {"nested": 1}}),
            2,
            [("credentials.keys-missing", "fail")],
        ),
        (
            lambda d: d["result"].update(object="a string"),
            3,
            [("credentials.cant-read", "unknown")],
        ),
    ],
    ids=["metadata-list", "data-list", "data-nested", "object-string"],
)
def test_a_hostile_secret_in_a_snapshot_never_crashes_doctor(
    doctor: Doctor, change: Any, exit_code: int, findings: list[tuple[str, str]]
) -> None:
    """A Secret whose parts have the wrong shape is judged by what it holds, never a crash."""
    doctor.load("healthy")
    folder = doctor.snapshot()
    _hostile(folder, "*-get-secrets-backend-credentials.yaml", change)
    result = doctor.offline(folder, "-o", "json")
    assert result.exit_code == exit_code, result.stderr
    assert [
        (f["code"], f["status"]) for f in result.json()["findings"] if f["status"] != "ok"
    ] == findings


@pytest.mark.parametrize(
    ("member", "why"),
    [
        ("../escape.yaml", "it holds a member named '../escape.yaml'"),
        ("/etc/passwd", "it holds a member named '/etc/passwd'"),
        ("top/reads/../../x.yaml", "it holds a member named 'top/reads/../../x.yaml'"),
        (
            "top/reads/001-list-pods.yaml",
            "it holds something a snapshot does not: 'top/reads/001-list-pods.yaml'",
        ),
        (
            "top/reads/002-list-jobs.yaml",
            "it holds something a snapshot does not: 'top/reads/002-list-jobs.yaml'",
        ),
    ],
    ids=["dotdot", "absolute", "nested-dotdot", "symlink", "hardlink"],
)
def test_a_hostile_archive_is_one_plain_line_and_nothing_is_extracted(
    doctor: Doctor, member: str, why: str
) -> None:
    archive = doctor.tmp_path / "hostile.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        meta = yaml.safe_dump({"truegreen_snapshot": 1}).encode()
        info = tarfile.TarInfo("top/snapshot.yaml")
        info.size = len(meta)
        tar.addfile(info, io.BytesIO(meta))
        bad = tarfile.TarInfo(member)
        if member.endswith("pods.yaml"):
            bad.type, bad.linkname = tarfile.SYMTYPE, "/etc/passwd"
        elif member.endswith("jobs.yaml"):
            bad.type, bad.linkname = tarfile.LNKTYPE, "top/snapshot.yaml"
        tar.addfile(bad, io.BytesIO(b""))
    result = run_cli("doctor", "--snapshot", str(archive))
    assert result.exit_code == 64
    lines = result.stderr.strip().splitlines()
    assert lines == [
        f"truegreen: snapshot {archive} cannot be read: {why}. "
        "pass a folder or an archive written by `truegreen snapshot`"
    ]
    assert not (doctor.tmp_path.parent / "escape.yaml").exists()


def test_an_archive_that_never_ends_is_refused_early(
    doctor: Doctor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compression bomb: a member larger than the cap, refused as it is decompressed (the
    cap is lowered so that the test writes 4 MiB, not 512)."""
    from truegreen.cluster import archive as archive_module

    monkeypatch.setattr(archive_module, "MAX_CONTENT_BYTES", 1 << 20)
    bomb = doctor.tmp_path / "bomb.tar.gz"
    with gzip.open(bomb, "wb", compresslevel=1) as stream:
        info = tarfile.TarInfo("top/reads/001-list-pods.yaml")
        info.size = 4 << 20
        stream.write(info.tobuf(format=tarfile.PAX_FORMAT))
        stream.write(b"\0" * info.size)
    assert bomb.stat().st_size < 64 << 10, "precondition: small on disk, large unpacked"
    result = run_cli("doctor", "--snapshot", str(bomb))
    assert result.exit_code == 64
    assert result.stderr.strip().splitlines() == [
        f"truegreen: snapshot {bomb} cannot be read: it holds more than 1 MiB. "
        "pass a folder or an archive written by `truegreen snapshot`"
    ]


def test_a_sparse_member_is_refused_before_its_holes_are_made_up(doctor: Doctor) -> None:
    """GNU tar's `--sparse` keeps a file's holes out of the archive: a few kilobytes stand for
    gigabytes, and Python's tarfile makes the zeros up itself, past the count of decompressed
    bytes (its `_FileInFile` fills each hole). A snapshot never holds one."""
    tar = shutil.which("tar")
    assert tar is not None, "GNU tar (Debian's tar) is a real part of the tests"
    snap = doctor.tmp_path / "snap"
    shutil.copytree(EXAMPLES / "healthy", snap)
    hole = snap / "reads" / "999-list-zz.yaml"
    with hole.open("wb") as stream:
        stream.truncate(2 << 30)
    archive = doctor.tmp_path / "sparse.tar.gz"
    subprocess.run(
        [tar, "--sparse", "--format=gnu", "-czf", str(archive), "-C", str(doctor.tmp_path), "snap"],
        check=True,
    )
    assert archive.stat().st_size < 64 << 10, "precondition: small on disk, 2 GiB unpacked"
    result = run_cli("doctor", "--snapshot", str(archive))
    assert result.exit_code == 64
    assert result.stderr.strip().splitlines() == [
        f"truegreen: snapshot {archive} cannot be read: it holds a sparse file, which a "
        "snapshot never does: 'snap/reads/999-list-zz.yaml'. pass a folder or an archive "
        "written by `truegreen snapshot`"
    ]


def test_a_name_of_400_mib_is_refused_from_its_header_in_megabytes(doctor: Doctor) -> None:
    """A sound snapshot plus one member whose GNU long name truly holds 400 MiB (its path,
    then NULs): tarfile read the name whole (`TarInfo._proc_gnulong`) before any cap saw it,
    held 1.3 GB and read the snapshot as READY. The archive is 400 KB: the NULs are one
    gzip member of 1 MiB repeated (a gzip file may be many). Measured by the doctor process
    itself: VmHWM, its peak RSS since its exec."""
    snap = io.BytesIO()
    with tarfile.open(fileobj=snap, mode="w", format=tarfile.GNU_FORMAT) as tar:
        tar.add(EXAMPLES / "healthy", arcname="snap")
    sound = snap.getvalue().rstrip(b"\0")
    sound += bytes(-len(sound) % tarfile.BLOCKSIZE)
    name = b"snap/reads/999-list-zz.yaml"
    long_name = tarfile.TarInfo("././@LongLink")
    long_name.type, long_name.size = tarfile.GNUTYPE_LONGNAME, 400 << 20
    member = tarfile.TarInfo(name.decode())
    member.size = 3
    mib = gzip.compress(bytes(1 << 20), mtime=0)
    archive = doctor.tmp_path / "long-name.tar.gz"
    archive.write_bytes(
        gzip.compress(sound + long_name.tobuf(format=tarfile.GNU_FORMAT), mtime=0)
        + gzip.compress(name.ljust(1 << 20, b"\0"), mtime=0)
        + mib * 399
        + gzip.compress(member.tobuf() + b"{}\n".ljust(1536, b"\0"), mtime=0)
    )
    assert archive.stat().st_size < 1 << 20, "precondition: small on disk, 400 MiB of name"
    program = (
        "import sys; from pathlib import Path; from truegreen.cli import main\n"
        "try:\n    main(['doctor', '--snapshot', sys.argv[1]]); code = 0\n"
        "except SystemExit as done:\n    code = done.code\n"
        "status = Path('/proc/self/status').read_text().splitlines()\n"
        "print(code, next(line.split()[1] for line in status if line.startswith('VmHWM:')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program, str(archive)], capture_output=True, text=True, check=True
    )
    code, peak_kb = done.stdout.splitlines()[-1].split()
    assert code == "64", done.stdout
    assert done.stderr.splitlines() == [
        f"truegreen: snapshot {archive} cannot be read: it holds a name of 419,430,400 bytes, "
        "longer than any path (4,096). pass a folder or an archive written by `truegreen snapshot`"
    ]
    assert int(peak_kb) < 100 * 1024, f"peak {peak_kb} KB"


def test_a_read_file_that_is_a_link_is_not_read(doctor: Doctor) -> None:
    """A link in a snapshot folder could point anywhere: its read is not captured, even when
    it points at a sound copy of the file."""
    doctor.load("healthy")
    folder = doctor.snapshot()
    saved = next((folder / "reads").glob("*-get-secrets-regcred.yaml"))
    elsewhere = doctor.tmp_path / "elsewhere.yaml"
    elsewhere.write_bytes(saved.read_bytes())
    saved.unlink()
    saved.symlink_to(elsewhere)
    report = doctor.offline(folder, "-o", "json").json()
    assert [f["status"] for f in report["findings"] if f["check"] == "image-pull"] == ["unknown"]
    assert report["coverage"]["not_checked"] == [
        REGISTRY_NOT_ASKED,
        {"check": "image-pull", "reason": "the snapshot doesn't include the stored logins"},
    ]


def test_an_existing_archive_is_never_overwritten(doctor: Doctor) -> None:
    doctor.load("healthy")
    archive = doctor.tmp_path / "bundle.tar.gz"
    archive.write_bytes(b"mine")
    result = _snapshot(doctor, "--archive", str(archive))
    assert result.exit_code == 64
    assert result.stderr.splitlines() == [
        f"truegreen: cannot write the snapshot to {archive}: it already exists. "
        "choose a new name with --archive"
    ]
    assert archive.read_bytes() == b"mine"
    assert not [r for r in doctor.server.requests() if "/namespaces/" in r.path], (
        "refused before any read"
    )


_ANOTHER_WRITER = """
import os, sys
from truegreen.cli import main

taken = []

def another_writer(event, args):
    # Another process takes the name the instant before the first archive is published.
    if event in ("os.link", "os.rename") and not taken:
        if os.path.basename(args[1]).startswith(sys.argv[1]):
            taken.append(args[1])
            with open(args[1], "xb") as stream:
                stream.write(b"theirs")

sys.addaudithook(another_writer)
main(sys.argv[2:])
"""


@pytest.mark.parametrize("named", [True, False], ids=["--archive", "default-name"])
def test_a_name_taken_while_the_archive_is_written_is_never_overwritten(
    doctor: Doctor, named: bool
) -> None:
    """Two snapshots to one name (the same `--archive`, or the default name of one second):
    the name was free when checked and taken before the archive was published. CPython's
    audit hook (PEP 578) stands for the other process: it makes the file at the instant the
    archive is linked or renamed into place. rename(2) replaced it, and both said Saved."""
    doctor.load("healthy")
    archive = doctor.tmp_path / "bundle.tar.gz"
    command = [sys.executable, "-c", _ANOTHER_WRITER]
    command += [archive.name if named else "truegreen-snapshot-train-", "snapshot"]
    command += ["--kubeconfig", str(doctor.kubeconfig), *doctor.registry_flags()]
    command += ["--archive", str(archive)] if named else []
    done = subprocess.run(command, capture_output=True, text=True, cwd=doctor.tmp_path, check=False)
    made = sorted(p.name for p in doctor.tmp_path.iterdir() if p.name != "kubeconfig")
    if named:
        assert (done.returncode, done.stdout) == (64, ""), done.stderr
        assert done.stderr.splitlines() == [
            f"truegreen: cannot write the snapshot to {archive}: it already exists. "
            "choose a new name with --archive"
        ]
        assert made == [archive.name]
        assert archive.read_bytes() == b"theirs"
        return
    assert done.returncode == 0, done.stderr
    assert len(made) == 2, made
    theirs, ours = sorted(made, key=len)
    assert ours == theirs.replace(".tar.gz", "-2.tar.gz")
    assert (doctor.tmp_path / theirs).read_bytes() == b"theirs"
    assert f" to {ours} (" in done.stdout.splitlines()[0]
    assert {Path(n).parts[0] for n in _archive_members(doctor.tmp_path / ours)} == {
        ours.removesuffix(".tar.gz")
    }


def test_a_default_name_taken_in_the_same_second_gets_the_next_number(
    doctor: Doctor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cron job's snapshot and an operator's in one second: the second is saved beside
    the first (`…Z-2.tar.gz`), where it was refused after every read was made."""
    doctor.load("healthy")
    monkeypatch.chdir(doctor.tmp_path)
    start = datetime.now(UTC).replace(microsecond=0)
    taken = {default_archive_name(NAMESPACE, start + timedelta(seconds=s)) for s in range(-1, 60)}
    for name in taken:
        (doctor.tmp_path / name).write_bytes(b"theirs")
    result = _snapshot(doctor)
    assert result.exit_code == 0, result.stderr
    made = {p.name for p in doctor.tmp_path.glob("truegreen-snapshot-*")} - taken
    assert [name[-len("Z-2.tar.gz") :] for name in made] == ["Z-2.tar.gz"], made
    assert all((doctor.tmp_path / name).read_bytes() == b"theirs" for name in taken)


def test_an_archive_and_a_folder_at_once_is_bad_usage(doctor: Doctor) -> None:
    doctor.load("healthy")
    result = _snapshot(
        doctor,
        "--archive",
        str(doctor.tmp_path / "a.tar.gz"),
        "--output-directory",
        str(doctor.tmp_path / "b"),
    )
    assert (result.exit_code, result.stdout) == (64, "")
    assert result.stderr.splitlines() == [
        "truegreen: --archive and --output-directory cannot be used together. choose one"
    ]
    assert sorted(p.name for p in doctor.tmp_path.iterdir()) == ["kubeconfig"]
