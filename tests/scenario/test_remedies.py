"""Remedies an operator can act on: a command that, pasted, does the step (kubectl is the
judge: each command is run against the fake and the finding must go away), a login failure
said once with what to do, the holders of capacity named, and JSON on every run."""

import base64
import shlex
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.scenario.conftest import Doctor
from tests.support.auth_echo import make_pki, write_plugin
from tests.support.cli import run_cli
from tests.support.fake_apiserver import FakeApiServer, Fault
from tests.support.plain_words import jargon_in
from tests.support.scenarios import crash_looping_manager, healthy

KUBECTL = "kubectl"


def _commands(text: str) -> list[list[str]]:
    """The backticked commands in a remedy, as argument lists."""
    return [shlex.split(part) for part in text.split("`")[1::2]]


def _paste(command: list[str]) -> subprocess.CompletedProcess[str]:
    """Run a remedy's kubectl command exactly as an operator would paste it."""
    assert command[0] == KUBECTL, command
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def _finding(report: dict[str, Any], code: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [f for f in report["findings"] if f["code"] == code]
    assert len(found) == 1, [f["code"] for f in report["findings"]]
    return found[0]


def _kubeconfig_without_namespace(server: FakeApiServer, tmp_path: Path) -> Path:
    return server.write_kubeconfig(tmp_path / "no-namespace-kubeconfig")


# -- commands that, pasted, do the step --------------------------------------------------------


def test_cordoned_machines_name_the_uncordon_command_and_pasting_it_opens_them(
    doctor: Doctor,
) -> None:
    doctor.load("cordoned-machines")
    report = doctor.live("-o", "json").json()
    assert report["headline"]["code"] == "capacity.no-eligible-machine"
    assert report["headline"]["text"] == (
        "No machine may run a training job: 2 machines are closed to new work."
    )
    uncordon = f"`kubectl --kubeconfig {doctor.kubeconfig} uncordon cpu-1 gpu-1`"
    # An administrator may have closed them for maintenance: the remedy says to check first.
    assert report["headline"]["remedy"] == (
        f"If the maintenance on cpu-1 and gpu-1 is done, open them to new work again with "
        f"{uncordon} (an administrator may have closed them on purpose)."
    )
    (command,) = _commands(report["headline"]["remedy"])
    pasted = _paste(command)
    assert pasted.returncode == 0, pasted.stderr
    after = doctor.live("-o", "json").json()
    assert "capacity.no-eligible-machine" not in {f["code"] for f in after["findings"]}
    assert after["exit_code"] == 0


def test_a_crash_loop_names_the_logs_command_with_the_namespace_doctor_was_given(
    fake_api: FakeApiServer, tmp_path: Path
) -> None:
    """The issue's case: a context without a namespace and `doctor -n train`. The command
    must carry `-n train`, or pasted it looks in `default`."""
    fake_api.add(*crash_looping_manager(datetime.now(UTC)))
    kubeconfig = _kubeconfig_without_namespace(fake_api, tmp_path)
    result = run_cli("doctor", "--kubeconfig", str(kubeconfig), "-n", "train", "-o", "json")
    remedy = result.json()["headline"]["remedy"]
    assert remedy == (
        f"Read its error output with `kubectl --kubeconfig {kubeconfig} -n train logs --previous "
        "jobs-manager-abc12 -c api` and fix what it reports."
    )


def test_without_flags_the_command_has_none_and_kubectl_falls_back_as_doctor_did(
    fake_api: FakeApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_api.add(*crash_looping_manager(datetime.now(UTC)))
    kubeconfig = fake_api.write_kubeconfig(tmp_path / "config", namespace="train")
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    remedy = run_cli("doctor", "-o", "json").json()["headline"]["remedy"]
    assert "`kubectl logs --previous jobs-manager-abc12 -c api`" in remedy


def test_a_pasted_command_skips_verification_and_acts_as_whom_doctor_did(
    tmp_path: Path,
) -> None:
    """doctor told `--insecure-skip-tls-verify --as bob --as-group team --as-group ops --as-uid
    42` against a server whose certificate the kubeconfig cannot verify: the command it prints
    carries the same flags, so pasted it reaches the server and its request carries the same
    impersonation headers doctor's did. kubectl takes these flags (k8s.io/cli-runtime
    pkg/genericclioptions/config_flags.go: `flagInsecure`, `flagImpersonate`,
    `flagImpersonateUID`, `flagImpersonateGroup`) and sends them as client-go
    transport/round_trippers.go `impersonatingRoundTripper.RoundTrip` does (`Impersonate-User`,
    `Impersonate-Uid`, one `Impersonate-Group` line per group)."""
    pki = make_pki(tmp_path / "pki")
    server = FakeApiServer().start(tls=(pki.server_cert, pki.server_key))
    try:
        server.add(*crash_looping_manager(datetime.now(UTC)))
        kubeconfig = server.write_kubeconfig(tmp_path / "kc", namespace="train")
        acting = ("--as", "bob", "--as-group", "team", "--as-group", "ops", "--as-uid", "42")
        result = run_cli(
            "doctor", "--kubeconfig", str(kubeconfig), "--insecure-skip-tls-verify", *acting,
            "--no-registry", "-o", "json",
        )  # fmt: skip
        remedy = result.json()["headline"]["remedy"]
        logs = (
            f"`kubectl --kubeconfig {kubeconfig} --insecure-skip-tls-verify --as bob "
            "--as-group team --as-group ops --as-uid 42 logs --previous jobs-manager-abc12 -c api`"
        )
        assert remedy == f"Read its error output with {logs} and fix what it reports."
        doctor_read = next(r for r in server.heard if r.path == "/api/v1/namespaces/train/pods")
        (command,) = _commands(remedy)
        pasted = _paste(command)
        assert pasted.returncode == 0, pasted.stderr
        (kubectl_read,) = [r for r in server.heard if r.path.endswith("/log")]
        for header in ("impersonate-user", "impersonate-uid", "impersonate-group"):
            assert kubectl_read.all(header) == doctor_read.all(header), header
        assert kubectl_read.all("impersonate-user") == ["bob"]
        assert kubectl_read.all("impersonate-uid") == ["42"]
        assert kubectl_read.all("impersonate-group") == ["team", "ops"]
    finally:
        server.stop()


def test_a_stopped_refresh_names_the_command_that_lets_it_try_again(doctor: Doctor) -> None:
    def latched(now: Any) -> list[dict[str, Any]]:
        objects = healthy(now)
        manager = next(o for o in objects if o["metadata"]["name"] == "jobs-manager")
        manager["metadata"]["annotations"].update(
            {
                "truegreen.io/refresh-latched": "3 restarts did not roll out",
                "truegreen.io/refresh-attempts": "3 0123456789ab",
            }
        )
        return objects

    doctor.load(latched)
    report = doctor.live("-o", "json").json()
    stopped = _finding(report, "freshness.refresh-stopped")
    assert stopped["headline"] == (
        "Automatic image refresh of the workload 'jobs-manager' has stopped after 3 failed "
        "tries to update it."
    )
    _describe, clear = _commands(stopped["remedy"])
    assert clear[-3:] == [
        "deployment/jobs-manager",
        "truegreen.io/refresh-latched-",
        "truegreen.io/refresh-attempts-",
    ]
    pasted = _paste(clear)
    assert pasted.returncode == 0, pasted.stderr
    after = doctor.live("-o", "json").json()
    assert [f["code"] for f in after["findings"] if f["check"] == "freshness"] == ["freshness.ok"]


def test_missing_backend_keys_are_set_by_the_pasted_command(doctor: Doctor) -> None:
    def without_password(now: datetime) -> list[dict[str, Any]]:
        objects = healthy(now)
        secret = next(o for o in objects if o["metadata"]["name"] == "backend-credentials")
        del secret["data"]["password"]
        return objects

    doctor.load(without_password)
    missing = _finding(doctor.live("-o", "json").json(), "credentials.keys-missing")
    (patch,) = _commands(missing["remedy"])
    assert patch == [
        *("kubectl", "--kubeconfig", str(doctor.kubeconfig)),
        *("patch", "secret", "backend-credentials", "--type", "merge"),
        *("-p", '{"stringData": {"password": "VALUE"}}'),
    ]
    pasted = _paste(patch)
    assert pasted.returncode == 0, pasted.stderr
    after = doctor.live("-o", "json").json()
    assert [f["code"] for f in after["findings"] if f["check"] == "credentials"] == [
        "credentials.ok"
    ]


def test_an_immutable_login_is_created_again_not_patched(doctor: Doctor) -> None:
    """A Secret of `immutable: true` takes no change to its data (pkg/apis/core/validation
    ValidateSecretUpdate: "field is immutable when `immutable` is set"): a patch of its
    stringData is refused, so the remedy deletes it and creates it with every key, those it
    has and those it lacks, each value to fill in."""

    def locked(now: datetime) -> list[dict[str, Any]]:
        objects = healthy(now)
        secret = next(o for o in objects if o["metadata"]["name"] == "backend-credentials")
        secret["immutable"] = True
        secret["data"] = {"username": "", "region": base64.b64encode(b"eu").decode()}
        return objects

    doctor.load(locked)
    report = doctor.live("-o", "json").json()
    said = [(f["code"], f["status"], f["basis"]) for f in report["findings"]]
    assert [s for s in said if s[0].startswith("credentials.")] == [
        ("credentials.immutable", "fail", "measured")
    ]
    found = _finding(report, "credentials.immutable")
    assert found["headline"] == (
        "Training can't reach its backend: the stored login 'backend-credentials' lacks "
        "password and has empty username, and it can't be changed (it is immutable)."
    )
    kubectl = [KUBECTL, "--kubeconfig", str(doctor.kubeconfig)]
    assert _commands(found["remedy"]) == [
        [*kubectl, "delete", "secret", "backend-credentials"],
        [
            *kubectl,
            *("create", "secret", "generic", "backend-credentials"),
            "--from-literal=username=VALUE",
            "--from-literal=password=VALUE",
            "--from-literal=region=VALUE",
        ],
    ]


def test_a_missing_registry_login_names_the_create_command_with_its_registry(
    doctor: Doctor,
) -> None:
    doctor.load("missing-pull-credentials")
    remedy = doctor.live("-o", "json").json()["headline"]["remedy"]
    assert remedy == (
        "Create it for registry.example.com with "
        f"`kubectl --kubeconfig {doctor.kubeconfig} create secret docker-registry regcred "
        "--docker-server=registry.example.com --docker-username=USER "
        "--docker-password=PASSWORD`, or stop referring to it."
    )


# -- unknown findings say which read failed and what fixes it ----------------------------------


def test_a_refused_read_names_the_permission_and_the_can_i_that_proves_it(
    doctor: Doctor,
) -> None:
    doctor.load("healthy")
    doctor.server.inject(Fault.FORBIDDEN, r"^/api/v1/nodes$")
    report = doctor.live("-o", "json").json()
    unknown = _finding(report, "capacity.cant-read")
    assert unknown["headline"] == (
        "Couldn't check whether there is room for a training job: no permission to read the "
        "machines."
    )
    assert unknown["remedy"] == (
        "Ask your cluster admin to let you read the machines; "
        f"`kubectl --kubeconfig {doctor.kubeconfig} auth can-i list nodes` answers yes once "
        "you may."
    )
    every_remedy = [report["headline"]["remedy"], *(f["remedy"] for f in report["findings"])]
    assert not [r for r in every_remedy if "--verbose" in r]


# -- a login is one headline --------------------------------------------------------------------


@pytest.fixture
def tls_fake(tmp_path: Path) -> Iterator[tuple[FakeApiServer, Path]]:
    """The fake over TLS, with a healthy namespace: client-go sends a login only over HTTPS
    (clientcmd's ClientConfig reads the user's credentials only for a TLS transport)."""
    pki = make_pki(tmp_path / "pki")
    server = FakeApiServer().start(tls=(pki.server_cert, pki.server_key))
    server.add(*healthy(datetime.now(UTC)))
    kubeconfig = server.write_kubeconfig(
        tmp_path / "kc", namespace="train", certificate_authority=pki.ca
    )
    try:
        yield server, kubeconfig
    finally:
        server.stop()


def test_a_refused_request_over_plain_http_says_no_login_was_sent(tmp_path: Path) -> None:
    """Over plain http client-go merges no user credentials into the request
    (client_config.go ClientConfig: only where IsConfigTransportTLS), so a 401 there refuses a
    request that carried no login: the remedy is the https address, not the login's details."""
    with FakeApiServer() as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        assert server.url.startswith("http://"), "precondition: the server is plain http"
        server.inject(Fault.UNAUTHORIZED, r".")
        report = run_cli("doctor", "--kubeconfig", str(kubeconfig), "-o", "json").json()
    assert report["headline"]["code"] == "cluster-login-refused"
    assert report["headline"]["text"] == (
        f"The cluster at {server.url} did not accept a request without a login: Unauthorized."
    )
    assert report["headline"]["remedy"] == (
        f"Use the cluster's https address in {kubeconfig}: over plain http no login is sent "
        "(kubectl sends none either), then run again; "
        f"`kubectl --kubeconfig {kubeconfig} auth whoami` shows whether the login works."
    )


def test_a_refused_login_is_one_headline_naming_server_and_login(
    tls_fake: tuple[FakeApiServer, Path],
) -> None:
    server, kubeconfig = tls_fake
    server.inject(Fault.UNAUTHORIZED, r".")
    json_run = run_cli("doctor", "--kubeconfig", str(kubeconfig), "-o", "json")
    assert len(server.log) == 1, "one refused read ends the run"
    report = json_run.json()
    assert json_run.exit_code == 3
    assert report["verdict"] == "unknown"
    assert report["headline"]["code"] == "cluster-login-refused"
    assert report["headline"]["rule"] == "nothing-read", "no read could be made"
    assert report["headline"]["text"] == (
        f"The cluster at {server.url} did not accept the login of user 'fake': Unauthorized."
    )
    assert report["headline"]["remedy"] == (
        f"Check the login details of user 'fake' in {kubeconfig}: they may have expired "
        "or been revoked, then run again; "
        f"`kubectl --kubeconfig {kubeconfig} auth whoami` shows whether the login works."
    )
    text = run_cli("doctor", "--kubeconfig", str(kubeconfig), "--no-color").stdout.splitlines()
    assert text[0].startswith("? COULD NOT CHECK  The cluster at ")
    assert "Also:" not in text, "one cause, said once"
    assert sum("Couldn't check" in line for line in text) == 0
    assert text[-1] == (
        "0 checks measured, 9 could not be checked (image-pull, storage, queue, admission, "
        "workloads, evidence, capacity, probes, freshness: as said above). Not asked for: "
        "credentials "
        "(name the backend login with `--credentials-secret NAME:KEY1,KEY2` to check it)."
    ), "the coverage line does not repeat the headline's reason"


@pytest.fixture
def plugin_kubeconfig(tls_fake: tuple[FakeApiServer, Path], tmp_path: Path) -> tuple[Path, Any]:
    plugin = write_plugin(tmp_path / "bin", name="aws")
    config = yaml.safe_load(tls_fake[1].read_text())
    config["users"] = [
        {
            "name": "eks",
            "user": {
                "exec": {
                    "apiVersion": "client.authentication.k8s.io/v1",
                    "command": str(plugin.path),
                    "args": ["eks", "get-token", "--cluster-name", "train"],
                    "interactiveMode": "Never",
                }
            },
        }
    ]
    config["contexts"][0]["context"]["user"] = "eks"
    path = tmp_path / "kubeconfig-eks"
    path.write_text(yaml.safe_dump(config))
    return path, plugin


def test_a_failing_login_plugin_is_one_headline_with_its_own_words_and_the_cloud_login(
    tls_fake: tuple[FakeApiServer, Path], plugin_kubeconfig: tuple[Path, Any]
) -> None:
    fake_api = tls_fake[0]
    kubeconfig, plugin = plugin_kubeconfig
    plugin.plan(
        {
            "stderr": "Error when retrieving token from sso: Token has expired and refresh "
            "failed\n",
            "exit": 255,
        }
    )
    result = run_cli("doctor", "--kubeconfig", str(kubeconfig), "-o", "json")
    assert result.exit_code == 3
    report = result.json()
    assert report["headline"]["code"] == "cluster-login-failed"
    assert report["headline"]["rule"] == "nothing-read", "no read could be made"
    text = report["headline"]["text"]
    assert text.startswith(
        f"Couldn't log in to the cluster at {fake_api.url}: cannot log in as user 'eks'"
    )
    assert (
        "saying: Error when retrieving token from sso: Token has expired and refresh failed" in text
    )
    assert "then retry" not in text, "the plugin's advice is the remedy, not part of the headline"
    assert report["headline"]["remedy"] == (
        "Log in again with `aws sso login`, then run again; "
        f"`kubectl --kubeconfig {kubeconfig} auth whoami` shows whether the login works."
    )
    assert fake_api.requests() == [], "no login, so nothing was sent"


# -- JSON on every run ---------------------------------------------------------------------------


def test_a_kubeconfig_error_with_json_is_still_one_document(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("clusters: [unclosed")
    result = run_cli("doctor", "--kubeconfig", str(kubeconfig), "-o", "json")
    assert result.exit_code == 3
    report = result.json()
    assert report == {
        "schema_version": 1,
        "verdict": "unknown",
        "exit_code": 3,
        "headline": {
            "check": None,
            "code": "setup-failed",
            "status": "unknown",
            "rule": "setup-failed",
            "text": f"kubeconfig {kubeconfig} is not valid YAML at line 1: did not find "
            "expected ',' or ']'",
            "remedy": "fix the file, or pass another with --kubeconfig",
        },
        "findings": [],
        "job": None,
        "coverage": {"checked": [], "not_checked": []},
    }
    assert len(result.stderr.splitlines()) == 1


def test_a_bad_setting_with_json_is_one_document_exit_64(tmp_path: Path) -> None:
    result = run_cli("doctor", "--job-requests", "cpu=lots", "-o", "json")
    assert result.exit_code == 64
    assert result.json()["headline"]["code"] == "bad-usage"
    assert result.json()["exit_code"] == 64


def test_refresh_with_a_broken_kubeconfig_and_json_is_one_document(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("clusters: [unclosed")
    result = run_cli("refresh", "--kubeconfig", str(kubeconfig), "-o", "json")
    assert result.exit_code == 3
    document = result.json()
    assert document["exit_code"] == 3
    assert document["headline"]["text"] == (
        f"kubeconfig {kubeconfig} is not valid YAML at line 1: did not find expected ',' or ']'"
    )
    assert document["workloads"] == []


# -- capacity names what holds it ----------------------------------------------------------------


def test_a_blocked_job_names_the_notebook_that_holds_the_gpus(doctor: Doctor) -> None:
    doctor.load("gpu-held-by-notebook")
    report = doctor.live("-o", "json", "--job-requests", "cpu=1,nvidia.com/gpu=1").json()
    assert report["headline"]["code"] == "capacity.blocked-by-other-work"
    assert report["headline"]["text"] == (
        "A training job of 1 CPU, 1 nvidia.com/gpu can't start: the room it needs on gpu-1 is "
        "held by the workload 'notebook-alice' in 'research' (2 nvidia.com/gpu)."
    )
    assert not jargon_in(report["headline"]["text"])


# -- the config file takes the flags' names -----------------------------------------------------


@pytest.mark.parametrize("key", ["job-requests", "job_requests"])
def test_config_keys_take_the_flag_name_or_underscores(
    doctor: Doctor, tmp_path: Path, key: str
) -> None:
    doctor.load("healthy")
    config = tmp_path / "doctor.yaml"
    config.write_text(f"{key}: cpu=3\n")
    report = doctor.live("-o", "json", "--config", str(config)).json()
    (capacity,) = [f for f in report["findings"] if f["check"] == "capacity"]
    assert capacity["details"][0] == "job size 3 CPUs (from --job-requests)"


def test_a_config_key_given_both_ways_is_refused(doctor: Doctor, tmp_path: Path) -> None:
    config = tmp_path / "doctor.yaml"
    config.write_text("job-requests: cpu=3\njob_requests: cpu=4\n")
    result = run_cli("doctor", "--kubeconfig", str(doctor.kubeconfig), "--config", str(config))
    assert result.exit_code == 64
    assert result.stderr.strip() == f"truegreen: config {config} sets job-requests twice"


def test_a_snapshot_that_read_nothing_saves_nothing_and_says_why_as_doctor_does(
    doctor: Doctor, tmp_path: Path
) -> None:
    """A refused login refuses every read: there is nothing to save, so no folder is made and
    the run is a setup failure (exit 3) with doctor's headline and remedy for that login."""
    doctor.load("healthy")
    doctor.server.inject(Fault.UNAUTHORIZED, r".")
    folder = tmp_path / "bundle"
    result = run_cli(
        "snapshot", "--kubeconfig", str(doctor.kubeconfig), "--output-directory", str(folder)
    )
    assert result.exit_code == 3
    assert result.stdout == ""
    assert not folder.exists()
    live = doctor.live("-o", "json").json()["headline"]
    assert live["code"] == "cluster-login-refused"
    said = f"{live['text'].removesuffix('.')}. {live['remedy']}"
    assert result.stderr == f"truegreen: {said}\n"
