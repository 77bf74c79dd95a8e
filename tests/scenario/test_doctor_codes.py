"""Every finding doctor can report, produced by a real scenario over the fake API server.

Each variant changes the healthy namespace in one way and pins the exact code, status and basis
that change must produce. A meta-test checks that every code in the wording catalogue is
produced somewhere in the test suite.
"""

import base64
import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.scenario.test_admission import PINNED_HERE as ADMISSION_CODES
from tests.scenario.test_pull_logins import PINNED_HERE as PULL_LOGIN_CODES
from tests.scenario.test_runtime_class import PINNED_HERE as RUNTIME_CLASS_CODES
from tests.scenario.test_stored_pod import PINNED_HERE as STORED_POD_CODES
from tests.support.cli import run_cli
from tests.support.scenarios import b64, healthy, ts
from truegreen.doctor.catalogue import WORDING

Obj = dict[str, Any]
Change = Callable[[list[Obj], datetime], None]


def find(objects: list[Obj], kind: str, name: str) -> Obj:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def manager_pod(objects: list[Obj]) -> Obj:
    return find(objects, "Pod", "jobs-manager-abc12")


def manager_container(objects: list[Obj]) -> Obj:
    containers: list[Obj] = find(objects, "Deployment", "jobs-manager")["spec"]["template"]["spec"][
        "containers"
    ]
    return containers[0]


def _wait(reason: str, last: str | None = None, message: str = "detail") -> Change:
    def change(objects: list[Obj], now: datetime) -> None:
        status = manager_pod(objects)["status"]
        status["conditions"][1]["status"] = "False"
        status["containerStatuses"][0].update(
            {"ready": False, "state": {"waiting": {"reason": reason, "message": message}}}
        )
        if last:
            status["containerStatuses"][0]["lastState"] = {"terminated": {"reason": last}}

    return change


def _pulling(image: str, message: str) -> Change:
    """The manager's copy waits in ErrImagePull on `image` with the kubelet's `message`."""

    def change(objects: list[Obj], now: datetime) -> None:
        _wait("ErrImagePull", message=message)(objects, now)
        pod = manager_pod(objects)
        pod["spec"]["containers"][0]["image"] = image
        pod["status"]["containerStatuses"][0]["image"] = image

    return change


def _pulling_with_empty_login() -> Change:
    """The manager's copy is refused an anonymous token for its image while the login it names,
    regcred, holds an empty entry for that image's registry."""

    def change(objects: list[Obj], now: datetime) -> None:
        _wait(
            "ErrImagePull",
            message=f"{_PULL} failed to authorize: failed to fetch anonymous token: unexpected "
            "status from GET request to https://registry.example.com/token: 401 Unauthorized",
        )(objects, now)
        config = {"auths": {"registry.example.com": {}}, "credsStore": "desktop"}
        secret = next(
            o for o in objects if o["kind"] == "Secret" and o["metadata"]["name"] == "regcred"
        )
        secret["data"] = {".dockerconfigjson": b64(json.dumps(config))}

    return change


def _pending(age: timedelta) -> Change:
    def change(objects: list[Obj], now: datetime) -> None:
        pod = manager_pod(objects)
        pod["metadata"]["creationTimestamp"] = ts(now - age)
        pod["spec"].pop("nodeName")
        # No scheduler has looked at it yet (only a scheduler writes PodScheduled): the wait
        # alone, which the workloads check judges. kube-scheduler's Unschedulable on such a
        # pod is evidence (test_cluster_reports.py).
        pod["status"] = {"phase": "Pending", "conditions": []}

    return change


def _unready(age: timedelta) -> Change:
    def change(objects: list[Obj], now: datetime) -> None:
        ready = manager_pod(objects)["status"]["conditions"][1]
        ready.update({"status": "False", "lastTransitionTime": ts(now - age)})

    return change


def _rollout(**status: Any) -> Change:
    def change(objects: list[Obj], now: datetime) -> None:
        find(objects, "Deployment", "jobs-manager")["status"].update(status)

    return change


def _secret(name: str, **fields: Any) -> Change:
    def change(objects: list[Obj], now: datetime) -> None:
        find(objects, "Secret", name).update(fields)

    return change


def _claim(**fields: Any) -> Change:
    def change(objects: list[Obj], now: datetime) -> None:
        claim = find(objects, "PersistentVolumeClaim", "datasets")
        for key, value in fields.items():
            claim.setdefault(key, {}).update(value)

    return change


def _drop(kind: str, name: str) -> Change:
    def change(objects: list[Obj], now: datetime) -> None:
        objects.remove(find(objects, kind, name))

    return change


def _only_kinds(*kinds: str) -> Change:
    def change(objects: list[Obj], now: datetime) -> None:
        objects[:] = [o for o in objects if o["kind"] in kinds]

    return change


def _container(**fields: Any) -> Change:
    def change(objects: list[Obj], now: datetime) -> None:
        manager_container(objects).update(fields)

    return change


def _annotate(**annotations: str) -> Change:
    def change(objects: list[Obj], now: datetime) -> None:
        find(objects, "Deployment", "jobs-manager")["metadata"]["annotations"].update(annotations)

    return change


def _job_size(**requests: str) -> Change:
    def change(objects: list[Obj], now: datetime) -> None:
        container = find(objects, "Job", "train-001")["spec"]["template"]["spec"]["containers"][0]
        container["resources"]["requests"].update(requests)

    return change


def _image(image: str) -> Change:
    def change(objects: list[Obj], now: datetime) -> None:
        manager_container(objects)["image"] = image

    return change


def _unbound_without_storage_type(objects: list[Obj], now: datetime) -> None:
    _drop("StorageClass", "standard")(objects, now)
    _claim(status={"phase": "Pending"})(objects, now)


def _disabled_server(objects: list[Obj], now: datetime) -> None:
    _annotate(**{"truegreen.io/disabled-by": "8080=HTTP_OFF"})(objects, now)
    _container(env=[{"name": "HTTP_OFF", "value": "1"}])(objects, now)


_REF = "registry.example.com/jobs-manager:1.4"
_PULL = f'failed to pull and unpack image "{_REF}": failed to resolve reference "{_REF}":'

VARIANTS: list[tuple[str, Change, tuple[str, str, str]]] = [
    (
        "crash loop",
        _wait("CrashLoopBackOff", "Error"),
        ("workloads.crash-loop", "fail", "measured"),
    ),
    (
        "out of memory",
        _wait("CrashLoopBackOff", "OOMKilled"),
        ("workloads.out-of-memory", "fail", "measured"),
    ),
    (
        # pkg/kubelet/images/image_manager.go: a back-off that names no error (before 1.30),
        # and no Failed Event of the kubelet's about it.
        "image pull",
        _wait("ImagePullBackOff", message=f'Back-off pulling image "{_REF}"'),
        ("workloads.image-download-failing", "fail", "measured"),
    ),
    (
        # The runtime's words, which no rule reads: quoted.
        "image pull error quoted",
        _wait(
            "ErrImagePull",
            message=f"{_PULL} failed to extract layer sha256:0c18b88b8db3c193eefeede31a80d5d0c8"
            "50306076b7166910ed239685dd20b0: write /var/lib/containerd/io.containerd.snapshotter"
            ".v1.overlayfs/snapshots/9/fs/x: no space left on device: unknown",
        ),
        ("workloads.image-download-error", "fail", "measured"),
    ),
    # The kubelet's ErrImagePull message is the container runtime's error (containerd's
    # resolver and authorizer, pkg/remotes/docker; the registry's own 429 text).
    (
        "image not in its registry",
        _wait("ErrImagePull", message=f"{_PULL} {_REF}: not found"),
        ("workloads.image-not-in-registry", "fail", "measured"),
    ),
    (
        # containerd core/images/image.go, as a kubelet on an arm64 machine quotes it for an
        # image built for amd64 alone.
        "image without a build for the machine's processor",
        _wait(
            "ErrImagePull",
            message=f'rpc error: code = NotFound desc = failed to pull and unpack image "{_REF}": '
            "no match for platform in manifest: not found",
        ),
        ("workloads.image-wrong-platform", "fail", "measured"),
    ),
    (
        # containerd#3604: containerd's own store lacks a piece (metadata/content.go).
        "image copy damaged on the machine",
        _wait(
            "ErrImagePull",
            message=f'failed to pull and unpack image "{_REF}": failed to unpack image on '
            "snapshotter overlayfs: content digest sha256:0c18b88b8db3c193eefeede31a80d5d0c85030"
            "6076b7166910ed239685dd20b0: not found",
        ),
        ("workloads.image-copy-damaged", "fail", "measured"),
    ),
    (
        "image login refused",
        _wait(
            "ErrImagePull",
            message=f"{_PULL} failed to authorize: failed to fetch oauth token: unexpected "
            "status from POST request to https://registry.example.com/token: 401 Unauthorized",
        ),
        ("workloads.image-login-refused", "fail", "measured"),
    ),
    (
        # containerd remotes/docker/authorizer.go doBearerAuth: no login for the registry, the
        # token asked for anonymously, and refused.
        "image login needed",
        _wait(
            "ErrImagePull",
            message=f"{_PULL} failed to authorize: failed to fetch anonymous token: unexpected "
            "status from GET request to https://registry.example.com/token?scope=repository"
            "%3Ajobs-manager%3Apull&service=registry.example.com: 401 Unauthorized",
        ),
        ("workloads.image-login-needed", "fail", "measured"),
    ),
    (
        # The same refusal at a registry whose machines log in by their own means (the
        # cloud's kubelet credential provider brought no secret).
        "image machine login failed",
        _pulling(
            "team.azurecr.io/jobs-manager:1.4",
            'failed to pull and unpack image "team.azurecr.io/jobs-manager:1.4": failed to '
            "authorize: failed to fetch anonymous token: unexpected status: 403 Forbidden",
        ),
        ("workloads.image-machine-login-failed", "fail", "measured"),
    ),
    (
        # The same refusal where the login the copy names holds an empty entry for the
        # registry (a Docker Desktop config.json made into a login: `credsStore`).
        "image login empty",
        _pulling_with_empty_login(),
        ("workloads.image-login-empty", "fail", "measured"),
    ),
    (
        "image pull limit",
        _wait(
            "ImagePullBackOff",
            message=f'Back-off pulling image "{_REF}": ErrImagePull: {_PULL} unexpected status '
            "code: 429 Too Many Requests - Server message: toomanyrequests: You have reached "
            "your pull rate limit.",
        ),
        ("workloads.image-pull-limit", "fail", "measured"),
    ),
    (
        "registry unreachable",
        _wait(
            "ErrImagePull",
            message=f'{_PULL} failed to do request: Head "https://registry.example.com/v2/'
            'jobs-manager/manifests/1.4": dial tcp: lookup registry.example.com on '
            "10.96.0.10:53: no such host",
        ),
        ("workloads.registry-unreachable", "fail", "measured"),
    ),
    (
        # containerd core/remotes/errors ErrUnexpectedStatus: the registry's server error.
        "registry failing",
        _wait(
            "ErrImagePull",
            message=f"{_PULL} unexpected status from HEAD request to https://registry.example."
            "com/v2/jobs-manager/manifests/1.4: 503 Service Unavailable",
        ),
        ("workloads.registry-failing", "fail", "measured"),
    ),
    (
        # Go's crypto/tls around crypto/x509: a certificate the machine does not trust.
        "registry not trusted",
        _wait(
            "ErrImagePull",
            message=f'{_PULL} failed to do request: Head "https://registry.example.com/v2/'
            'jobs-manager/manifests/1.4": tls: failed to verify certificate: x509: certificate '
            "signed by unknown authority",
        ),
        ("workloads.registry-not-trusted", "fail", "measured"),
    ),
    (
        # pkg/kubelet/images/image_manager.go evalCRIPullErr: CRI-O's signature policy refused
        # the image (cri-o server/image_pull.go, crierrors.ErrSignatureValidationFailed).
        "image signature refused",
        _wait(
            "SignatureValidationFailed",
            message=f"image pull failed for {_REF} because the signature validation failed: "
            "Source image rejected: A signature was required, but no signature exists",
        ),
        ("workloads.image-signature-refused", "fail", "measured"),
    ),
    (
        "config error",
        # the reason without the kubelet's message: nothing to quote, the reason's usual cause
        _wait("CreateContainerConfigError", message=""),
        ("workloads.setting-missing", "fail", "measured"),
    ),
    (
        "pending past grace",
        _pending(timedelta(minutes=30)),
        ("workloads.waiting-too-long", "fail", "inferred"),
    ),
    (
        "pending in grace",
        _pending(timedelta(seconds=30)),
        ("workloads.starting", "warn", "measured"),
    ),
    (
        "unready past grace",
        _unready(timedelta(minutes=30)),
        ("workloads.not-ready", "fail", "measured"),
    ),
    (
        "unready in grace",
        _unready(timedelta(seconds=30)),
        ("workloads.starting", "warn", "measured"),
    ),
    ("rollout updating", _rollout(updatedReplicas=0), ("workloads.updating", "warn", "measured")),
    (
        "rollout deadline",
        _rollout(
            conditions=[
                {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}
            ]
        ),
        ("workloads.update-stuck", "fail", "measured"),
    ),
    ("nothing installed", _only_kinds("Node"), ("workloads.none-found", "fail", "measured")),
    (
        # The kubelet skips it and pulls without a login; the registry not asked, that is a
        # warning (a failure where the registry wants a login: test_pull_logins.py).
        "login of the wrong type",
        _secret("regcred", type="Opaque"),
        ("image-pull.login-wrong-type-skipped", "warn", "measured"),
    ),
    (
        "damaged login",
        _secret("regcred", data={".dockerconfigjson": base64.b64encode(b"{not json").decode()}),
        ("image-pull.login-damaged", "fail", "measured"),
    ),
    (
        "no login for a registry not asked",
        _image("other-registry.example.com/jobs-manager:1.4"),
        ("image-pull.no-login-not-asked", "warn", "inferred"),
    ),
    (
        "claim missing",
        _drop("PersistentVolumeClaim", "datasets"),
        ("storage.volume-missing", "fail", "measured"),
    ),
    ("claim lost", _claim(status={"phase": "Lost"}), ("storage.volume-lost", "fail", "measured")),
    (
        "claim of no storage type waiting",
        _claim(spec={"storageClassName": ""}, status={"phase": "Pending"}),
        ("storage.volume-no-match", "fail", "measured"),
    ),
    (
        "claim being deleted",
        _claim(
            metadata={
                "deletionTimestamp": "2026-01-01T00:00:00Z",
                "finalizers": ["kubernetes.io/pvc-protection"],
            }
        ),
        ("storage.volume-being-deleted", "fail", "measured"),
    ),
    (
        "storage type missing for a waiting claim",
        _unbound_without_storage_type,
        ("storage.type-missing", "fail", "measured"),
    ),
    (
        "backend key missing",
        _secret("backend-credentials", data={"username": base64.b64encode(b"u").decode()}),
        ("credentials.keys-missing", "fail", "measured"),
    ),
    (
        "backend key empty",
        _secret(
            "backend-credentials",
            data={"username": "", "password": base64.b64encode(b"p").decode()},
        ),
        ("credentials.keys-empty", "fail", "measured"),
    ),
    (
        "backend login missing",
        _drop("Secret", "backend-credentials"),
        ("credentials.missing", "fail", "measured"),
    ),
    (
        "no readiness probe",
        _container(readinessProbe=None),
        ("probes.no-readiness", "warn", "measured"),
    ),
    (
        "liveness on keep-running",
        _container(livenessProbe={"httpGet": {"port": 8080, "path": "/alive"}}),
        ("probes.restarts-training", "warn", "measured"),
    ),
    (
        "probe on undeclared port",
        _container(readinessProbe={"tcpSocket": {"port": 9999}}),
        ("probes.wrong-port", "warn", "measured"),
    ),
    (
        "probe on disabled server",
        _disabled_server,
        ("probes.checks-disabled-server", "warn", "measured"),
    ),
    (
        "liveness same as readiness",
        lambda objects, now: find(objects, "Deployment", "mysql")["spec"]["template"]["spec"][
            "containers"
        ][0].update(livenessProbe={"tcpSocket": {"port": 3306}}),
        ("probes.liveness-same-as-readiness", "warn", "measured"),
    ),
    (
        "probe that cannot fail",
        _container(readinessProbe={"exec": {"command": ["true"]}}),
        ("probes.cannot-fail", "warn", "measured"),
    ),
    (
        # the kubelet runs it without a shell, and no program is named `exit`
        "probe that cannot pass",
        _container(readinessProbe={"exec": {"command": ["exit", "0"]}}),
        ("probes.cannot-pass", "warn", "measured"),
    ),
    (
        "stale pin",
        _annotate(**{"truegreen.io/stale-pin.api": "1.5 sha256:" + "a" * 64}),
        ("freshness.stale-pin", "warn", "measured"),
    ),
    (
        "dangling pin",
        _annotate(**{"truegreen.io/dangling-pin.api": "sha256:" + "b" * 64 + " no longer exists"}),
        ("freshness.dangling-pin", "fail", "measured"),
    ),
    (
        "refresh latched",
        _annotate(**{"truegreen.io/refresh-latched": "3 restarts did not roll out"}),
        ("freshness.refresh-stopped", "warn", "measured"),
    ),
    (
        "refresh failed once, will retry",
        _annotate(**{"truegreen.io/refresh-attempts": "1 0123456789ab"}),
        ("freshness.refresh-failed", "warn", "measured"),
    ),
    (
        "refresh restart pending past the rollout timeout",
        lambda objects, now: _annotate(
            **{
                "truegreen.io/refresh-attempts": "1 0123456789ab",
                "truegreen.io/refresh-pending": json.dumps(
                    {"target": {"api": "sha256:" + "c" * 64}, "stamp": ts(now - timedelta(hours=2))}
                ),
            }
        )(objects, now),
        ("freshness.refresh-unfinished", "warn", "measured"),
    ),
    ("bad job size", _job_size(cpu="lots"), ("capacity.bad-job-size", "fail", "measured")),
    (
        "no machines at all, no job size",
        lambda objects, now: objects.__setitem__(
            slice(None), [o for o in objects if o["kind"] not in ("Node", "Job")]
        ),
        ("capacity.no-eligible-machine", "fail", "measured"),
    ),
]


@pytest.mark.parametrize(
    ("change", "expected"), [(c, e) for _, c, e in VARIANTS], ids=[n for n, _, _ in VARIANTS]
)
def test_variant_produces_its_finding(
    doctor: Doctor, change: Change, expected: tuple[str, str, str]
) -> None:
    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        change(objects, now)
        return objects

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    found = {(f["code"], f["status"], f["basis"]) for f in report["findings"]}
    assert expected in found, sorted(found)
    statuses = {f["status"] for f in report["findings"]}
    assert result.exit_code == (2 if "fail" in statuses else 3 if "unknown" in statuses else 0)


def test_wait_for_first_use_storage_is_not_unbound(doctor: Doctor) -> None:
    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        find(objects, "PersistentVolumeClaim", "datasets")["status"] = {"phase": "Pending"}
        find(objects, "StorageClass", "standard")["volumeBindingMode"] = "WaitForFirstConsumer"
        return objects

    doctor.load(build)
    storage = [f for f in doctor.live("-o", "json").json()["findings"] if f["check"] == "storage"]
    assert [(f["code"], f["status"]) for f in storage] == [("storage.ok", "ok")]


def test_a_readiness_script_that_exits_1_when_its_check_fails_is_a_check(doctor: Doctor) -> None:
    """`CHECK || exit 1` then `echo ready` ends the shell with status 1 when the check fails
    (POSIX Shell Command Language 2.14 `exit`), which the kubelet counts as a failed probe
    (kubernetes pkg/probe/exec/exec.go, execProber.Probe): not a check that always passes."""
    script = "pg_isready -h 127.0.0.1 -U postgres || exit 1\necho ready"

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        manager_container(objects)["readinessProbe"] = {"exec": {"command": ["sh", "-c", script]}}
        return objects

    doctor.load(build)
    report = doctor.live("-o", "json").json()
    probes = [(f["code"], f["status"]) for f in report["findings"] if f["check"] == "probes"]
    assert probes == [("probes.ok", "ok")]


# The manager serves a port: its only readiness probe cannot fail, so it also has no readiness
# check that can fail (pkg/kubelet/prober/worker.go doProbe: Ready at the first success).
_GATES_NOTHING = [("probes.no-readiness", "warn"), ("probes.cannot-fail", "warn")]


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        # nested past what the reading follows: not followed, and no crash
        ("if " * 1000 + "true" + "; then true; fi" * 1000, [("probes.ok", "ok")]),
        # `${x:=word}` assigns, it does not end the shell (POSIX 2.6.2)
        ("echo ready ${READY:=yes}", _GATES_NOTHING),
        # echo's status, whatever the command whose output it prints (2.9.1)
        ('echo "alive at $(date)"', _GATES_NOTHING),
    ],
    ids=["a thousand nested ifs", "a default assigned", "a command's output echoed"],
)
def test_a_readiness_script_s_shape_decides_whether_it_can_fail(
    doctor: Doctor, script: str, expected: list[tuple[str, str]]
) -> None:
    """The doctor reads a live pod's probe script as lint does (lint/commands.py); dash and
    bash run each of these scripts to 0 (tests/unit/test_lint_commands.py); the thousand
    nested `if`s never end the doctor run with an internal error (exit 1)."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        manager_container(objects)["readinessProbe"] = {"exec": {"command": ["sh", "-c", script]}}
        return objects

    doctor.load(build)
    result = doctor.live("-o", "json")
    probes = [(f["code"], f["status"]) for f in result.json()["findings"] if f["check"] == "probes"]
    assert probes == expected
    assert result.exit_code == 0


def _probe_with_header(value: str) -> Obj:
    """An HTTP probe sending `Authorization: VALUE` (core/v1 HTTPGetAction.httpHeaders)."""
    return {
        "httpGet": {
            "port": 3306,
            "path": "/health",
            "httpHeaders": [{"name": "Authorization", "value": value}],
        }
    }


@pytest.mark.parametrize(
    ("readiness", "liveness", "lint_rules", "doctor_probes"),
    [
        # the kubelet sends each probe's own header values (kubernetes
        # pkg/probe/http/request.go NewRequestForHTTPGetAction, v1HeaderToHTTPHeader), so
        # these are two different checks: lint says nothing, and neither may doctor.
        ("Bearer ready-token-BBBB", "Bearer live-token-AAAA", [], ("probes.ok", "ok")),
        # The same secret value in both: lint reads it and warns; doctor reads it redacted
        # (cluster/redact.py) and cannot tell, so it does not claim the two are the same.
        (
            "Bearer same-token-CCCC",
            "Bearer same-token-CCCC",
            ["liveness-same-as-readiness"],
            ("probes.ok", "ok"),
        ),
    ],
    ids=["different secret headers", "the same secret header"],
)
def test_probes_differing_only_in_a_secret_header_are_never_judged_the_same(
    doctor: Doctor,
    tmp_path: Path,
    readiness: str,
    liveness: str,
    lint_rules: list[str],
    doctor_probes: tuple[str, str],
) -> None:
    """A header value doctor reads redacted is unknown: two probes are never judged to check
    the same thing on it, where before both read `<redacted>` and compared equal."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        mysql = find(objects, "Deployment", "mysql")["spec"]["template"]["spec"]["containers"][0]
        mysql.update(
            readinessProbe=_probe_with_header(readiness), livenessProbe=_probe_with_header(liveness)
        )
        manifest.write_text(json.dumps(find(objects, "Deployment", "mysql")))
        return objects

    manifest = tmp_path / "mysql.json"
    doctor.load(build)
    report = doctor.live("-o", "json").json()
    probes = [(f["code"], f["status"]) for f in report["findings"] if f["check"] == "probes"]
    assert probes == [doctor_probes]
    linted = run_cli("lint", str(manifest), "-o", "json").json()
    assert [f["rule"] for f in linted["findings"]] == lint_rules


# Codes other tests pin (scenario, capacity, fault matrix and examples tests).
COVERED_ELSEWHERE = (
    {
        "ready",
        "cluster-unreachable",
        "cluster-login-failed",  # test_remedies.py
        "cluster-login-no-answer",  # test_login_plugin_blame.py
        "cluster-login-refused",  # test_remedies.py
        "image-pull.login-missing",  # test_pull_logins.py (the registry wants a login)
        "image-pull.login-wrong-type",  # test_pull_logins.py (the registry wants a login)
        "image-pull.no-login-for-registry",  # test_pull_logins.py, test_image_presence.py
        "storage.volume-unbound",
        "capacity.fits",
        "capacity.free-only",
        "capacity.held-by-running-job",
        "capacity.blocked-by-other-work",
        "capacity.too-large",
        "capacity.no-eligible-machine",
        "capacity.job-stuck",
        "capacity.partly-fits",  # test_training_jobs.py
        "capacity.job-unshaped",  # test_training_jobs.py
        "capacity.machine-kept-out",  # test_system_taints.py
        "capacity.named-machine-unfit",  # test_named_machine.py
        "capacity.unschedulable",  # test_evidence.py
        "capacity.rules-block",  # test_scheduling_filters.py
        "capacity.rule-unchecked",  # test_scheduling_filters.py
        "capacity.volume-held-by-running-job",  # test_scheduling_filters.py
        "admission.pods-refused",  # test_evidence.py
        "admission.operator-container-refused",  # test_admission_pod_sets.py
        "admission.operator-container-unverified",  # test_admission_pod_sets.py
        "admission.operator-not-seen",  # test_admission_pod_sets.py
        "admission.trial-offline",  # test_snapshot.py
        "storage.attached-elsewhere",  # test_evidence.py
        "storage.volume-not-its-own",  # test_storage_sources.py
        "storage.no-free-volume",  # test_storage.py
        "workloads.last-job-out-of-memory",  # test_evidence.py
        "workloads.try-out-of-memory",  # test_out_of_memory.py
        "workloads.out-of-memory-once",  # test_out_of_memory.py
        "workloads.job-paused",  # test_evidence.py
        "workloads.schedule-paused",  # test_evidence.py
        "credentials.immutable",  # test_remedies.py
        "workloads.job-empty",  # test_training_jobs.py
        "workloads.kind-not-installed",  # test_training_jobs.py: a --job-file's kind not served
        "workloads.kind-version-not-served",  # test_training_jobs.py: served at another version
        "workloads.job-queued",  # test_queue.py (Kueue's objects unreadable)
        "workloads.last-job-evicted",  # test_evidence.py
        "workloads.last-job-over-disk-limit",  # test_evidence.py
        "workloads.last-job-failed",  # test_evidence.py
        "workloads.last-job-refused",  # test_training_jobs.py
        "workloads.last-job-not-placed",  # test_evidence.py
        "workloads.last-job-group-no-room",  # test_evidence.py
        "workloads.last-job-machine-refused",  # test_evidence.py
        "workloads.last-job-image",  # test_evidence.py
        "workloads.last-job-deadline",  # test_evidence.py
        "storage.attach-failed",  # test_evidence.py
        "capacity.gpu-software-down",  # test_gpu_supply.py
        "capacity.gpu-software-starting",  # test_gpu_supply.py
        "capacity.gpus-unhealthy",  # test_gpu_supply.py
        "capacity.no-such-gpu",  # test_gpu_supply.py
        "workloads.no-shared-memory",  # test_gpu_supply.py
        "capacity.machine-coming",  # test_autoscaler.py
        "capacity.no-machine-can-be-added",  # test_autoscaler.py
        "capacity.machine-pools-not-ready",  # test_autoscaler.py
        "capacity.autoscaler-unhealthy",  # test_autoscaler.py
        "evidence.cluster-reported",  # test_cluster_reports.py
        "capacity.machines-down",  # test_cluster_word_wins.py
        "workloads.named-setting-missing",  # test_container_start.py
        "workloads.container-wont-start",  # test_container_start.py
        "workloads.stuck-on-machine",  # test_cluster_reports.py
        "workloads.preparing",  # test_setup_steps.py
        # test_queue.py
        "queue.not-used",
        "queue.admitted",
        "queue.fits",
        "queue.fits-borrowing",
        "queue.missing",
        "queue.none-named",
        "queue.inactive",
        "queue.stopped",
        "queue.not-allowed",
        "queue.never-fits",
        "queue.held",
        "queue.check-pending",
        "queue.check-rejected",
        "queue.deactivated",
        "queue.kueue-reported",
        "queue.default-unconfirmed",
        "queue.not-taken",
        # test_gangs.py
        "queue.scheduler-missing",
        "queue.scheduler-unconfirmed",
        "queue.scheduler-down",
        "queue.gang-refused",
        "queue.gang-too-few-pods",
        "queue.gang-missing",
        # test_volcano_no_group.py
        "queue.gang-no-group",
        "queue.gang-queue-missing",
        "queue.gang-queue-closed",
        "queue.gang-never-fits",
        "queue.gang-placed",
        "queue.gang-queue-parent-missing",
        "queue.gang-queue-not-leaf",
        "queue.gang-queue-full",
        # test_yunikorn.py
        "queue.gang-queue-no-room",
        "queue.gang-user-quota-no-room",
        "queue.gang-user-limit-never-fits",
        "image-pull.image-missing",  # test_image_presence.py
        "image-pull.no-build-for-platform",  # test_image_presence.py
        "image-pull.login-refused",  # test_image_presence.py
        "image-pull.repository-not-allowed",  # test_image_presence.py
        "image-pull.login-needed",  # test_image_presence.py
        "image-pull.image-unchecked",  # test_image_presence.py
        "image-pull.invalid-name",  # test_hostile_image_names.py
        "monitor-stale",  # the monitor's aged-out checks: test_watch.py, test_monitor_rules.py
        "watch-stale",  # doctor --watch's aged-out checks: test_watch.py
        # a listed name no namespace can have: test_fleet_namespace_names.py, test_fleet_monitor.py
        "namespace-name-impossible",
    }
    | {code for code in WORDING if code.endswith((".ok", ".cant-read"))}
    # Every trial code from its read-back: tests/unit/test_trial_check.py (which holds the set
    # equal to the catalogue's and to docs/trial.md's findings table); end to end:
    # tests/scenario/test_trial*.py.
    | {code for code in WORDING if code.startswith("trial.")}
    | ADMISSION_CODES
    | PULL_LOGIN_CODES
    | STORED_POD_CODES
    | RUNTIME_CLASS_CODES
)


def test_every_code_in_the_catalogue_is_tested() -> None:
    tested = {expected[0] for _, _, expected in VARIANTS} | COVERED_ELSEWHERE
    assert set(WORDING) - tested == set()
