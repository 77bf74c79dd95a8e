"""What the runtime's words say stopped a pull (truegreen/pull_errors.py), and which of those
refresh counts as a pull no retry heals (refresh/steps.py `_REFUSED_PULLS`), value by value.

Messages as containerd writes them: pull.go `failed to pull and unpack image %q`, `failed to
resolve reference %q`; remotes/docker resolver.go `failed to authorize: %w`; authorizer.go
`doBearerAuth`, `failed to fetch anonymous token: %w` (no login for the registry: the token
asked for by GET without one) or `failed to fetch oauth token: %w` (a login, POSTed);
core/remotes/errors `unexpected status from %s request to %s: %s`.
"""

import pytest

from truegreen.doctor.knowledge.pull_errors import error_words, last_pull_failure
from truegreen.pull_errors import PullError, pull_error
from truegreen.refresh.annotations import PendingRestart
from truegreen.refresh.steps import stuck_new_pod
from truegreen.refresh.template import RESTARTED_AT

IMAGE = "registry.example.com/team/runner:stable"
PULL = f'failed to pull and unpack image "{IMAGE}": failed to resolve reference "{IMAGE}":'
TOKEN = "https://registry.example.com/token?scope=repository%3Ateam%2Frunner%3Apull"
STAMP = "2026-11-30T12:00:00.000001Z"
MARKER = PendingRestart({"runner": f"sha256:{'1' * 64}"}, STAMP)


def _anonymous(status: str) -> str:
    return (
        f"{PULL} failed to authorize: failed to fetch anonymous token: unexpected status from "
        f"GET request to {TOKEN}: {status}"
    )


@pytest.mark.parametrize(
    ("message", "said"),
    [
        (_anonymous("401 Unauthorized"), PullError.LOGIN_NEEDED),
        (_anonymous("403 Forbidden"), PullError.LOGIN_NEEDED),
        # The token service out of reach or limiting: what stopped it is that, not the login.
        (
            f'{PULL} failed to authorize: failed to fetch anonymous token: Get "{TOKEN}": '
            "dial tcp 10.0.0.7:443: i/o timeout",
            PullError.UNREACHABLE,
        ),
        (_anonymous("429 Too Many Requests"), PullError.PULL_LIMIT),
        (
            f"{PULL} failed to authorize: failed to fetch oauth token: unexpected status from "
            "POST request to https://registry.example.com/token: 401 Unauthorized",
            PullError.LOGIN_REFUSED,
        ),
    ],
)
def test_a_token_refused_to_no_login_is_a_login_needed(message: str, said: PullError) -> None:
    assert pull_error(message, [IMAGE]) is said


def _new_pod(message: str) -> dict[str, object]:
    """refresh's new pod (its restart stamp), its runner waiting in ErrImagePull."""
    waiting = {"reason": "ErrImagePull", "message": message}
    return {
        "metadata": {"name": "new", "annotations": {RESTARTED_AT: STAMP}},
        "spec": {"containers": [{"name": "runner", "image": IMAGE}]},
        "status": {
            "phase": "Pending",
            "containerStatuses": [{"name": "runner", "state": {"waiting": waiting}}],
        },
    }


def test_refresh_counts_a_login_needed_as_a_pull_no_retry_heals() -> None:
    """Every retry asks without a login again until someone names one."""
    assert stuck_new_pod([_new_pod(_anonymous("401 Unauthorized"))], MARKER) == (
        "new pod new cannot pull its image: the registry wants a login and none was sent "
        "(ErrImagePull)"
    )


DIGEST = "sha256:" + "0123456789abcdef" * 4
UNPACK = (
    f"{PULL} failed to unpack image on snapshotter overlayfs: content digest {DIGEST}: not found"
)
"""containerd's metadata store lacking a piece it recorded (metadata/content.go `content digest
%v: %w`, containerd#3604)."""
PREPARE = f'{PULL} failed to prepare extraction snapshot "extract-795119289-7389 {DIGEST}"'
SNAPSHOT = f"{PREPARE}: parent snapshot {DIGEST} does not exist: not found"
"""containerd's snapshot store lacking the parent layer it had recorded, as containerd#2382
and PR #8173's CI log quote it."""


@pytest.mark.parametrize(
    ("message", "said"),
    [
        (UNPACK, PullError.COPY_DAMAGED),
        (
            f"{PULL} failed to extract layer {DIGEST}: failed to get reader from content store: "
            f"content digest {DIGEST}: not found",
            PullError.COPY_DAMAGED,
        ),
        # content/local/store.go ReaderAt and OpenReader: the blob file itself gone from the
        # machine (`blob %s expected at %s: %w` around `blob not found: %w`).
        (
            f"{PULL} failed to extract layer {DIGEST}: failed to get reader from content store: "
            f"blob {DIGEST} expected at /var/lib/containerd/io.containerd.content.v1.content/"
            f"blobs/sha256/{DIGEST[7:]}: blob not found: not found",
            PullError.COPY_DAMAGED,
        ),
        # containerd's snapshot store on the machine lacks the parent layer it had recorded
        # (containerd#2382, #3787, #10835): core/unpack/unpacker.go `failed to prepare
        # extraction snapshot %q: %w` around core/metadata/snapshot.go `parent snapshot %v
        # does not exist: %w` (errdefs.ErrNotFound).
        (SNAPSHOT, PullError.COPY_DAMAGED),
        # unpacker.go `failed to commit snapshot %s: %w` around metadata/snapshot.go `snapshot
        # %v does not exist: %w`, the key being the extraction's (`extract-%s %s`).
        (
            f"{PULL} failed to commit snapshot extract-1 {DIGEST}: snapshot extract-1 {DIGEST} "
            "does not exist: not found",
            PullError.COPY_DAMAGED,
        ),
        # The snapshotter's own store beneath (core/snapshots/storage/bolt.go `CreateSnapshot`
        # `parent does not exist: %w`, `CommitActive` `failed to get active snapshot %q: %w`
        # and `missing parent %q of snapshot %q: %w`).
        (f"{PREPARE}: parent does not exist: not found", PullError.COPY_DAMAGED),
        (
            f"{PULL} failed to commit snapshot extract-1 {DIGEST}: failed to get active "
            f'snapshot "extract-1 {DIGEST}": not found',
            PullError.COPY_DAMAGED,
        ),
        (
            f'{PULL} failed to commit snapshot extract-1 {DIGEST}: missing parent "{DIGEST}" of '
            f'snapshot "extract-1 {DIGEST}": not found',
            PullError.COPY_DAMAGED,
        ),
        # The registry's own 404 for a blob (remotes/docker/fetcher.go `content at %v not
        # found: %w`) is still the registry's answer.
        (
            f"{PULL} failed to copy: httpReadSeeker: failed open: content at https://registry"
            f".example.com/v2/team/runner/blobs/{DIGEST} not found: not found",
            PullError.NOT_FOUND,
        ),
    ],
)
def test_a_piece_missing_from_the_machine_s_copy_is_told_from_the_registry_s_404(
    message: str, said: PullError
) -> None:
    assert pull_error(message, [IMAGE]) is said


def test_refresh_waits_out_a_piece_missing_from_the_machine_s_copy() -> None:
    """No registry said the image is missing: still starting, bounded by the wait."""
    assert stuck_new_pod([_new_pod(UNPACK)], MARKER) == ""


def test_refresh_waits_out_a_layer_missing_from_the_machine_s_snapshot_store() -> None:
    """The snapshot store's `not found` is the machine's, not the registry's: the next pull
    may complete it (containerd#3787), so still starting."""
    assert stuck_new_pod([_new_pod(SNAPSHOT)], MARKER) == ""


HEAD = 'failed to do request: Head "https://registry.example.com/v2/team/runner/manifests/stable"'


@pytest.mark.parametrize(
    ("message", "said"),
    [
        (
            f"{PULL} {HEAD}: dial tcp 10.0.0.7:443: connect: connection timed out",
            PullError.UNREACHABLE,
        ),
        (
            f"{PULL} {HEAD}: dial tcp: lookup registry.example.com on 10.96.0.10:53: server "
            "misbehaving",
            PullError.UNREACHABLE,
        ),
        (
            'pinging container registry registry.example.com: Get "https://registry.example.com'
            '/v2/": dial tcp: lookup registry.example.com: Temporary failure in name resolution',
            PullError.UNREACHABLE,
        ),
        (
            f"{PULL} failed to copy: read tcp 10.0.0.5:41234->10.0.0.7:443: read: connection "
            "reset by peer",
            PullError.UNREACHABLE,
        ),
        (
            f"{PULL} unexpected status from HEAD request to https://registry.example.com/v2/team/"
            "runner/manifests/stable: 500 Internal Server Error",
            PullError.REGISTRY_FAILING,
        ),
        (f"{PULL} unexpected status code: 502 Bad Gateway", PullError.REGISTRY_FAILING),
        (
            "reading manifest stable in registry.example.com/team/runner: received unexpected "
            "HTTP status: 503 Service Unavailable",
            PullError.REGISTRY_FAILING,
        ),
        (f"{PULL} unexpected status code: 504 Gateway Timeout", PullError.REGISTRY_FAILING),
        (
            f"{PULL} {HEAD}: tls: failed to verify certificate: x509: certificate signed by "
            "unknown authority",
            PullError.UNTRUSTED,
        ),
        (
            f"{PULL} {HEAD}: x509: certificate is valid for other.example.com, not "
            "registry.example.com",
            PullError.UNTRUSTED,
        ),
        # A handshake that never finished is the network's, not the certificate's.
        (f"{PULL} {HEAD}: net/http: TLS handshake timeout", PullError.UNREACHABLE),
    ],
)
def test_the_network_s_words_say_how_the_registry_was_not_reached(
    message: str, said: PullError
) -> None:
    assert pull_error(message, [IMAGE]) is said


@pytest.mark.parametrize(
    "message",
    [
        f"{PULL} {HEAD}: dial tcp 10.0.0.7:443: connect: connection timed out",
        f"{PULL} unexpected status code: 502 Bad Gateway",
        f"{PULL} {HEAD}: tls: failed to verify certificate: x509: certificate signed by unknown "
        "authority",
    ],
    ids=["timed-out", "bad-gateway", "x509"],
)
def test_refresh_waits_out_a_registry_not_reached(message: str) -> None:
    """None of these is the registry's refusal of the image: still starting, bounded by the
    wait's timeout."""
    assert stuck_new_pod([_new_pod(message)], MARKER) == ""


@pytest.mark.parametrize(
    ("message", "words"),
    [
        # image_manager.go before 1.30: the back-off names the image alone.
        (f'Back-off pulling image "{IMAGE}"', ""),
        # From 1.30: `%s: %s`, the last pull's reason and message after it.
        (f'Back-off pulling image "{IMAGE}": ErrImagePull: boom', "ErrImagePull: boom"),
        # The `Failed` Event: `Failed to pull image %q: %v`.
        (f'Failed to pull image "{IMAGE}": rpc error: boom', "rpc error: boom"),
        # ErrImagePull's message is the runtime's error itself.
        (f"{PULL} boom", f"{PULL} boom"),
        ("", ""),
    ],
)
def test_the_error_words_leave_out_what_only_names_the_image(message: str, words: str) -> None:
    assert error_words(message) == words


def _failed_event(message: str, field_path: str | None = None) -> dict[str, object]:
    involved: dict[str, object] = {"kind": "Pod", "name": "new", "uid": ""}
    if field_path is not None:
        involved["fieldPath"] = field_path
    return {"type": "Warning", "reason": "Failed", "involvedObject": involved, "message": message}


@pytest.mark.parametrize(
    ("event", "read"),
    [
        # The kubelet quotes the image as the pod spec writes it; the runtime's status may
        # carry it normalised (kuberuntime): the same image.
        (_failed_event('Failed to pull image "python:3.12": x: not found'), True),
        (
            _failed_event(
                'Failed to pull image "python:3.12": x: not found', "spec.containers{runner}"
            ),
            True,
        ),
        (
            _failed_event(
                'Failed to pull image "python:3.12": x: not found', "spec.containers{side}"
            ),
            False,
        ),
        (
            _failed_event(
                'Failed to pull image "python:3.12": x: not found', "spec.initContainers{runner}"
            ),
            True,
        ),
        (_failed_event('Failed to pull image "ghcr.io/acme/side:1": x: not found'), False),
    ],
    ids=["normalised", "its-path", "another-path", "init-path", "another-image"],
)
def test_a_failed_event_is_read_for_its_own_container_s_pull(
    event: dict[str, object], read: bool
) -> None:
    """pkg/kubelet/container/ref.go `GenerateContainerRef` names the container in the Event's
    field path; image_manager.go quotes the container's image."""
    pod = {"metadata": {"name": "new"}}
    found = last_pull_failure(pod, "runner", "docker.io/library/python:3.12", [event])
    assert (found is not None) is read
