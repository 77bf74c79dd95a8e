"""What stopped a machine's pull, read as the kubelet and the container runtime mean it.

Each message is written as the runtime and the kubelet write it: the kubelet's waiting reason
and message (pkg/kubelet/images/image_manager.go `EnsureImageExists`, `evalCRIPullErr`; from
1.30 the back-off repeats the last error: `Back-off pulling image %q: %s`), the runtime's error
inside (containerd pull.go, remotes/docker resolver.go and authorizer.go; CRI-O
server/image_pull.go over containers/image).
"""

import base64
import json
from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.scenario.test_cluster_reports import event
from tests.support.scenarios import Obj, find, healthy

REF = "registry.example.com/ml/jobs-manager:1.5"


def _failing(
    reason: str,
    message: str,
    *,
    events: tuple[tuple[str, timedelta], ...] = (),
    image: str = REF,
) -> Any:
    """The jobs-manager's copy waits in `reason` pulling `image` with the kubelet's `message`,
    and the kubelet's `Failed` Warning Events about it: (message, age) each."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        pod = find(objects, "Pod", "jobs-manager-abc12")
        pod["spec"]["containers"][0]["image"] = image
        pod["status"]["phase"] = "Pending"
        pod["status"]["containerStatuses"][0].update(
            {
                "image": image,
                "imageID": "",
                "ready": False,
                "state": {"waiting": {"reason": reason, "message": message}},
            }
        )
        said = [event(now, pod, "Failed", words, "kubelet", age=age) for words, age in events]
        return [*objects, *said]

    return build


def _pull_finding(doctor: Doctor, *args: str) -> tuple[dict[str, Any], int]:
    result = doctor.live("--no-registry", "-o", "json", *args)
    finding = next(
        f for f in result.json()["findings"] if f["check"] == "workloads" and f["status"] == "fail"
    )
    return finding, result.exit_code


CRIO_REFUSED = (
    f"initializing source docker://{REF}: pinging container registry registry.example.com: "
    'Get "https://registry.example.com/v2/": dial tcp 10.0.0.7:443: connect: connection refused'
)
"""containers/image's words for a registry that refused the connection (docker_client.go
`pinging container registry %s: %w`), which CRI-O wraps as RegistryUnavailable."""
UNAVAILABLE = f"image pull failed for {REF} because the registry is unavailable: {CRIO_REFUSED}"
"""The kubelet's message for it (image_manager.go `evalCRIPullErr`)."""
UNSIGNED = (
    f"image pull failed for {REF} because the signature validation failed: Source image "
    "rejected: A signature was required, but no signature exists"
)
"""The kubelet's message for an image CRI-O's signature policy refused (`evalCRIPullErr`
around containers/image signature/policy_eval_signedby.go)."""


@pytest.mark.parametrize(
    ("reason", "message", "code"),
    [
        # cri-o server/image_pull.go `PullImage`: a refused connection becomes
        # `crierrors.ErrRegistryUnavailable`, the kubelet's waiting reason.
        pytest.param(
            "RegistryUnavailable", UNAVAILABLE, "workloads.registry-unreachable", id="unavailable"
        ),
        # The same with the runtime's words cut short: the reason alone says it.
        pytest.param(
            "RegistryUnavailable",
            f"image pull failed for {REF} because the registry is unavailable",
            "workloads.registry-unreachable",
            id="unavailable-reason-alone",
        ),
        pytest.param(
            "SignatureValidationFailed",
            UNSIGNED,
            "workloads.image-signature-refused",
            id="signature",
        ),
        # From 1.30 the back-off repeats the reason and message of the pull before it.
        pytest.param(
            "ImagePullBackOff",
            f'Back-off pulling image "{REF}": SignatureValidationFailed: {UNSIGNED}',
            "workloads.image-signature-refused",
            id="signature-back-off",
        ),
    ],
)
def test_the_kubelet_s_own_pull_reasons_are_failed_pulls(
    doctor: Doctor, reason: str, message: str, code: str
) -> None:
    """Not a program that can't start: the pull failed, and its remedy is the registry's or
    the signature's, never the image's command."""
    doctor.load(_failing(reason, message))
    finding, exit_code = _pull_finding(doctor)
    assert (finding["code"], finding["basis"]) == (code, "measured"), finding["headline"]
    assert "the image's command" not in finding["remedy"], finding["remedy"]
    assert any(d.endswith(f"{reason}: {message}") for d in finding["details"]), finding["details"]
    assert exit_code == 2


GHCR = "ghcr.io/acme/jobs-manager:1.5"


def test_a_registry_that_wants_a_login_none_was_sent_for_is_told_to_get_one(
    doctor: Doctor,
) -> None:
    """The copy names no registry login, so containerd asks ghcr.io's token service without one
    (remotes/docker/authorizer.go `doBearerAuth`: no secret, `FetchToken` by GET, `failed to
    fetch anonymous token: %w`; core/remotes/errors `unexpected status from %s request to
    %s: %s`): there is no login to check, one is missing."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        deployment = find(objects, "Deployment", "jobs-manager")["spec"]["template"]["spec"]
        pod = find(objects, "Pod", "jobs-manager-abc12")
        for spec in (deployment, pod["spec"]):
            spec.pop("imagePullSecrets", None)
            spec["containers"][0]["image"] = GHCR
        pod["status"]["phase"] = "Pending"
        message = (
            f'failed to pull and unpack image "{GHCR}": failed to resolve reference "{GHCR}": '
            "failed to authorize: failed to fetch anonymous token: unexpected status from GET "
            "request to https://ghcr.io/token?scope=repository%3Aacme%2Fjobs-manager%3Apull"
            "&service=ghcr.io: 401 Unauthorized"
        )
        pod["status"]["containerStatuses"][0].update(
            {
                "image": GHCR,
                "imageID": "",
                "ready": False,
                "state": {"waiting": {"reason": "ErrImagePull", "message": message}},
            }
        )
        return objects

    doctor.load(build)
    finding, exit_code = _pull_finding(doctor)
    assert finding["code"] == "workloads.image-login-needed", finding["headline"]
    assert finding["headline"].endswith("ghcr.io wants a login, and the download sent none.")
    assert "refused the login" not in finding["headline"]
    assert exit_code == 2


GHCR_ANONYMOUS = (
    f'rpc error: code = Unknown desc = failed to pull and unpack image "{GHCR}": failed to '
    f'resolve reference "{GHCR}": failed to authorize: failed to fetch anonymous token: '
    "unexpected status from GET request to https://ghcr.io/token?scope=repository%3Aacme%2F"
    "jobs-manager%3Apull&service=ghcr.io: 401 Unauthorized"
)


def _login_holding(config: dict[str, Any]) -> Any:
    """The jobs-manager's copy, naming the login regcred that holds `config`, waits in
    ErrImagePull on GHCR, refused an anonymous token."""

    def build(now: datetime) -> list[Obj]:
        objects: list[Obj] = _failing("ErrImagePull", GHCR_ANONYMOUS, image=GHCR)(now)
        template = find(objects, "Deployment", "jobs-manager")["spec"]["template"]["spec"]
        template["containers"][0]["image"] = GHCR
        login = json.dumps(config).encode()
        find(objects, "Secret", "regcred")["data"] = {
            ".dockerconfigjson": base64.b64encode(login).decode()
        }
        return objects

    return build


def test_a_login_whose_entry_for_the_registry_is_empty_is_told_apart_from_none(
    doctor: Doctor,
) -> None:
    """regcred is a Docker Desktop config.json made into a registry login: its ghcr.io entry is
    empty, the password kept in the computer's credential store (`credsStore`). The kubelet
    files the entry and sends it (pkg/credentialprovider keyring.go Add; kuberuntime_image.go
    PullImage), containerd's ParseAuth finds no secret in it
    (internal/cri/server/images/image_pull.go) and asks anonymously (authorizer.go
    `doBearerAuth`): the login named for ghcr.io holds nothing, it is not missing."""
    doctor.load(_login_holding({"auths": {"ghcr.io": {}}, "credsStore": "desktop"}))
    finding, exit_code = _pull_finding(doctor)
    assert finding["code"] == "workloads.image-login-empty", finding["headline"]
    assert finding["headline"].endswith(
        "the registry login 'regcred' it names for ghcr.io holds no user name and password, so "
        "the download sent none."
    )
    assert "add ghcr.io to the login it names" not in finding["remedy"], finding["remedy"]
    assert "credential store" in finding["remedy"], finding["remedy"]
    assert exit_code == 2


def test_a_login_with_no_entry_for_the_registry_is_told_to_add_one(doctor: Doctor) -> None:
    """regcred holds a password for another registry alone: nothing was sent for ghcr.io."""
    doctor.load(_login_holding({"auths": {"registry.example.com": {"auth": "cm9ib3Q6cHc="}}}))
    finding, _ = _pull_finding(doctor)
    assert finding["code"] == "workloads.image-login-needed", finding["headline"]
    assert "add ghcr.io to the login it names" in finding["remedy"], finding["remedy"]


ACR = "myacr.azurecr.io/ml/jobs-manager:1.5"
PKG = "us-docker.pkg.dev/acme/ml/jobs-manager:1.5"


@pytest.mark.parametrize(
    ("image", "words"),
    [
        # Microsoft's "Troubleshoot image pull from ACR" (AKS): the 403 an ACR behind a private
        # link answers when the machines' name resolution misses the private zone.
        pytest.param(
            ACR,
            f'failed to pull and unpack image "{ACR}": failed to resolve reference "{ACR}": '
            "failed to authorize: failed to fetch anonymous token: unexpected status: 403 "
            "Forbidden",
            id="acr",
        ),
        # The same refusal as containerd 2.x words it (core/remotes/errors).
        pytest.param(
            PKG,
            f'failed to pull and unpack image "{PKG}": failed to resolve reference "{PKG}": '
            "failed to authorize: failed to fetch anonymous token: unexpected status from GET "
            "request to https://us-docker.pkg.dev/v2/token?scope=repository%3Aacme%2Fml%2F"
            "jobs-manager%3Apull&service=us-docker.pkg.dev: 403 Forbidden",
            id="artifact-registry",
        ),
    ],
)
def test_a_cloud_registry_refusing_the_machines_own_login_is_not_told_to_get_a_pod_login(
    doctor: Doctor, image: str, words: str
) -> None:
    """At a registry whose machines log in by their own means (the cloud's kubelet credential
    provider: pkg/credentialprovider/azure, gcp; amazon-eks-ami's ECR provider), containerd asks
    anonymously because the provider brought no secret (authorizer.go `doBearerAuth`): the
    machines' own login is the one to fix, not a login the workload names."""
    message = f"rpc error: code = Unknown desc = {words}"
    doctor.load(_failing("ErrImagePull", message, image=image))
    finding, exit_code = _pull_finding(doctor)
    registry = image.split("/", 1)[0]
    assert finding["code"] == "workloads.image-machine-login-failed", finding["headline"]
    assert f"the machines log in to {registry} by their own means" in finding["headline"]
    assert "403 Forbidden" in finding["headline"], finding["headline"]
    assert "Create a registry login" not in finding["remedy"], finding["remedy"]
    assert exit_code == 2


def test_a_cloud_registry_refusing_the_machines_own_token_is_not_the_workload_s_login(
    doctor: Doctor,
) -> None:
    """GKE's node service account without `roles/artifactregistry.reader`: the credential
    provider's token is sent and refused, containerd saying `failed to fetch oauth token:
    unexpected status: 403 Forbidden` (authorizer.go `fetchToken` with a secret; GKE's
    "Troubleshoot image pulls": "failed to fetch oauth token ... 403 Forbidden"). The workload
    names no login for the registry, so the refused login is the machines' own."""
    message = (
        f'rpc error: code = Unknown desc = failed to pull and unpack image "{PKG}": failed to '
        f'resolve reference "{PKG}": failed to authorize: failed to fetch oauth token: '
        "unexpected status: 403 Forbidden"
    )
    doctor.load(_failing("ErrImagePull", message, image=PKG))
    finding, exit_code = _pull_finding(doctor)
    assert finding["code"] == "workloads.image-machine-login-failed", finding["headline"]
    assert "the machines log in to us-docker.pkg.dev by their own means" in finding["headline"]
    assert "oauth token: unexpected status: 403 Forbidden" in finding["headline"]
    assert exit_code == 2


LAYER = "sha256:4dcab49015d47e8f300ec33400a02cebc7b54cadd09c37e49eccbc655279da90"
BLOB = "sha256:51f5c6a04d83efd2d45c5fd59537218924bc46705e3de6ffc8bc07b51481610b"


@pytest.mark.parametrize(
    "message",
    [
        # containerd#3604 (unpack.go over metadata/content.go checkAccess `content digest %v:
        # %w`), as the kubelet quotes it with the gRPC code.
        pytest.param(
            f'rpc error: code = NotFound desc = failed to pull and unpack image "{REF}": failed '
            f"to unpack image on snapshotter overlayfs: content digest {BLOB}: not found",
            id="unpack",
        ),
        # containerd#8674: applying a layer (diff/apply), its reader from the content store.
        pytest.param(
            f'failed to pull and unpack image "{REF}": failed to extract layer {LAYER}: failed '
            f"to get reader from content store: content digest {BLOB}: not found",
            id="extract-layer",
        ),
        # containerd#2382, PR #8173's CI log: core/unpack/unpacker.go `failed to prepare
        # extraction snapshot %q: %w` around core/metadata/snapshot.go `parent snapshot %v does
        # not exist: %w` (errdefs.ErrNotFound), as the kubelet quotes it with the gRPC code.
        pytest.param(
            f"rpc error: code = NotFound desc = "
            f'failed to pull and unpack image "{REF}": failed to prepare extraction snapshot '
            f'"extract-795119289-7389 {LAYER}": parent snapshot {BLOB} does not exist: not found',
            id="parent-snapshot",
        ),
    ],
)
def test_a_piece_missing_from_the_machine_s_own_copy_is_not_the_registry_s_answer(
    doctor: Doctor, message: str
) -> None:
    """The registry resolved the image; containerd's store on the machine lacks a piece of
    it. "Push it" would not help: the machine's copy is the one to remove."""
    doctor.load(_failing("ErrImagePull", message))
    finding, exit_code = _pull_finding(doctor)
    assert (finding["code"], finding["basis"]) == ("workloads.image-copy-damaged", "measured"), (
        finding["headline"]
    )
    assert "push" not in finding["remedy"], finding["remedy"]
    assert any(d.endswith(f"ErrImagePull: {message}") for d in finding["details"])
    assert exit_code == 2


RESOLVE = f'failed to pull and unpack image "{REF}": failed to resolve reference "{REF}":'
HEAD = 'failed to do request: Head "https://registry.example.com/v2/ml/jobs-manager/manifests/1.5"'


@pytest.mark.parametrize(
    ("message", "code"),
    [
        # Go's dial, ETIMEDOUT (net/fd_unix.go connect, syscall.Errno's text).
        pytest.param(
            f"{RESOLVE} {HEAD}: dial tcp 10.20.0.7:443: connect: connection timed out",
            "workloads.registry-unreachable",
            id="connect-timed-out",
        ),
        # Go's resolver: a DNS server's SERVFAIL (net/dnsclient_unix.go errServerMisbehaving).
        pytest.param(
            f"{RESOLVE} {HEAD}: dial tcp: lookup registry.example.com on 10.96.0.10:53: server "
            "misbehaving",
            "workloads.registry-unreachable",
            id="dns-server-misbehaving",
        ),
        # CRI-O (containers/image docker_client.go `pinging container registry %s: %w`), the
        # name looked up through glibc (cgo): EAI_AGAIN's text.
        pytest.param(
            f"initializing source docker://{REF}: pinging container registry registry.example."
            'com: Get "https://registry.example.com/v2/": dial tcp: lookup registry.example.com:'
            " Temporary failure in name resolution",
            "workloads.registry-unreachable",
            id="temporary-failure-in-name-resolution",
        ),
        pytest.param(
            f'failed to pull and unpack image "{REF}": failed to copy: read tcp 10.0.0.5:41234->'
            "10.20.0.7:443: read: connection reset by peer",
            "workloads.registry-unreachable",
            id="connection-reset",
        ),
        # containerd core/remotes/errors ErrUnexpectedStatus, the resolver's HEAD.
        pytest.param(
            f"{RESOLVE} unexpected status from HEAD request to https://registry.example.com/v2/"
            "ml/jobs-manager/manifests/1.5: 503 Service Unavailable",
            "workloads.registry-failing",
            id="503",
        ),
        # Go's crypto/tls around crypto/x509 (Go 1.20 and later).
        pytest.param(
            f"{RESOLVE} {HEAD}: tls: failed to verify certificate: x509: certificate signed by "
            "unknown authority",
            "workloads.registry-not-trusted",
            id="x509-unknown-authority",
        ),
        pytest.param(
            f"{RESOLVE} {HEAD}: x509: certificate has expired or is not yet valid: current time "
            "2026-05-01T12:00:00Z is after 2026-04-30T23:59:59Z",
            "workloads.registry-not-trusted",
            id="x509-expired",
        ),
    ],
)
def test_a_network_failure_is_said_as_the_machines_met_it(
    doctor: Doctor, message: str, code: str
) -> None:
    """Not "check the name, tag and login": the machines could not reach the registry, it
    failed them, or they did not trust it. The runtime's words stay in the details."""
    doctor.load(_failing("ErrImagePull", message))
    finding, exit_code = _pull_finding(doctor)
    assert (finding["code"], finding["basis"]) == (code, "measured"), finding["headline"]
    assert "name and tag" not in finding["remedy"], finding["remedy"]
    assert any(d.endswith(f"ErrImagePull: {message}") for d in finding["details"])
    assert exit_code == 2


RATE_LIMITED = (
    f'Failed to pull image "{REF}": rpc error: code = Unknown desc = failed to pull and unpack '
    f'image "{REF}": failed to copy: httpReadSeeker: failed open: unexpected status code '
    "https://registry.example.com/v2/ml/jobs-manager/manifests/sha256:abc: 429 Too Many "
    "Requests - Server message: toomanyrequests: You have reached your pull rate limit."
)
"""The kubelet's `Failed` Event (image_manager.go `Failed to pull image %q: %v`) around
containerd's words for the registry's 429."""
DISK_FULL = (
    f'Failed to pull image "{REF}": rpc error: code = Unknown desc = failed to pull and unpack '
    f'image "{REF}": failed to extract layer sha256:{"4d" * 32}: write /var/lib/containerd/'
    "io.containerd.snapshotter.v1.overlayfs/snapshots/9/fs/x: no space left on device: unknown"
)
"""The same Event around containerd's words for a machine whose disk filled while it unpacked
(no rule reads them)."""
UNTRUSTED = (
    f'Failed to pull image "{REF}": rpc error: code = Unknown desc = failed to pull and unpack '
    f'image "{REF}": failed to resolve reference "{REF}": failed to do request: Head '
    '"https://registry.example.com/v2/ml/jobs-manager/manifests/1.5": tls: failed to verify '
    "certificate: x509: certificate signed by unknown authority"
)
BACK_OFF = f'Back-off pulling image "{REF}"'
"""The back-off message of kubelets before 1.30: the image alone, no error."""


@pytest.mark.parametrize("newest_first", [True, False], ids=["newest-listed-first", "oldest-first"])
def test_the_newest_failed_event_speaks_even_where_no_rule_reads_it(
    doctor: Doctor, newest_first: bool
) -> None:
    """A 40-minute-old 429 is no longer the cause once the kubelet's newest failed pull says
    something else: the newest Event is quoted, and the details call it the newest."""
    events = [(DISK_FULL, timedelta(seconds=30)), (RATE_LIMITED, timedelta(minutes=40))]
    doctor.load(
        _failing(
            "ImagePullBackOff", BACK_OFF, events=tuple(events if newest_first else events[::-1])
        )
    )
    finding, exit_code = _pull_finding(doctor)
    assert finding["code"] == "workloads.image-download-error", finding["headline"]
    assert "no space left on device" in finding["headline"], finding["headline"]
    assert "limit" not in finding["headline"] + finding["remedy"]
    details = " ".join(finding["details"])
    assert f"the kubelet's newest Failed Event 30 seconds ago: {DISK_FULL}" in details, details
    assert "toomanyrequests" not in details, details
    assert "last Event" not in details, details
    assert exit_code == 2


def test_an_older_event_a_rule_reads_does_not_speak_over_a_newer_one(doctor: Doctor) -> None:
    """Docker Hub's limit 40 minutes ago, a mirror with a private authority now. The
    machines' trust is today's cause, not the limit."""
    events = ((RATE_LIMITED, timedelta(minutes=40)), (UNTRUSTED, timedelta(seconds=30)))
    doctor.load(_failing("ImagePullBackOff", BACK_OFF, events=events))
    finding, exit_code = _pull_finding(doctor)
    assert finding["code"] == "workloads.registry-not-trusted", finding["headline"]
    assert exit_code == 2


def test_a_back_off_that_names_its_error_is_read_before_any_event(doctor: Doctor) -> None:
    """From 1.30 the back-off message carries the last pull's error (`prevPullErrMsg`): the
    container's own status is the newest word; an older Event is not read over it."""
    message = f"{BACK_OFF}: ErrImagePull: {DISK_FULL.split(': ', 1)[1]}"
    doctor.load(
        _failing("ImagePullBackOff", message, events=((RATE_LIMITED, timedelta(seconds=30)),))
    )
    finding, _ = _pull_finding(doctor)
    assert finding["code"] == "workloads.image-download-error", finding["headline"]
    assert finding["headline"].endswith("no space left on device: unknown”."), finding["headline"]


SIDECAR = "ghcr.io/acme/metrics-exporter:0.9"
NOT_PUSHED = (
    f'Failed to pull image "{REF}": rpc error: code = NotFound desc = failed to pull and unpack '
    f'image "{REF}": failed to resolve reference "{REF}": {REF}: not found'
)
SIDECAR_REFUSED = (
    f'Failed to pull image "{SIDECAR}": rpc error: code = Unknown desc = failed to pull and '
    f'unpack image "{SIDECAR}": failed to resolve reference "{SIDECAR}": failed to authorize: '
    "failed to fetch anonymous token: unexpected status from GET request to https://ghcr.io/"
    "token?scope=repository%3Aacme%2Fmetrics-exporter%3Apull&service=ghcr.io: 401 Unauthorized"
)


@pytest.mark.parametrize("field_paths", [True, False], ids=["field-path", "image-alone"])
def test_another_container_s_newer_event_is_not_this_container_s_cause(
    doctor: Doctor, field_paths: bool
) -> None:
    """Both containers back off with no error named (kubelets before 1.30). The kubelet writes
    one Failed Event per container's pull (pkg/kubelet/images/image_manager.go
    `EnsureImageExists`, `Failed to pull image %q: %v`), about the container
    (`involvedObject.fieldPath` `spec.containers{NAME}`: pkg/kubelet/container/ref.go
    `GenerateContainerRef`): the sidecar's newer refusal is not the api container's cause, by
    its field path, or, where an Event carries none, by the image it quotes."""

    def build(now: datetime) -> list[Obj]:
        objects = _failing("ImagePullBackOff", f'Back-off pulling image "{REF}"')(now)
        pod = find(objects, "Pod", "jobs-manager-abc12")
        pod["spec"]["containers"].append({"name": "metrics", "image": SIDECAR})
        pod["status"]["containerStatuses"].append(
            {
                "name": "metrics",
                "image": SIDECAR,
                "imageID": "",
                "ready": False,
                "restartCount": 0,
                "state": {
                    "waiting": {
                        "reason": "ImagePullBackOff",
                        "message": f'Back-off pulling image "{SIDECAR}"',
                    }
                },
            }
        )
        said = []
        for words, age, container in (
            (NOT_PUSHED, timedelta(seconds=40), "api"),
            (SIDECAR_REFUSED, timedelta(seconds=10), "metrics"),
        ):
            failed = event(now, pod, "Failed", words, "kubelet", age=age)
            if field_paths:
                failed["involvedObject"]["fieldPath"] = f"spec.containers{{{container}}}"
            said.append(failed)
        return [*objects, *said]

    doctor.load(build)
    finding, exit_code = _pull_finding(doctor)
    assert finding["code"] == "workloads.image-not-in-registry", finding["headline"]
    assert not any(SIDECAR in d for d in finding["details"]), finding["details"]
    assert exit_code == 2
