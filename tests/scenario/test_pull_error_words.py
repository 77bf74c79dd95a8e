"""The runtime's verdict on a failed pull, not the image's own name, says what stopped it.

A repository named `unauthorized-apps` or `toomanyrequests`, or a registry host of that name, is
part of every message about its image: the kubelet quotes it (pkg/kubelet/images/
image_manager.go `Failed to pull image %q: %v`, `Back-off pulling image %q`), containerd prints
it quoted and normalised (pull.go `failed to pull and unpack image %q`, `failed to resolve
reference %q`; remotes/docker/resolver.go Resolve `%s: not found`), CRI-O (containers/image
docker_image_src.go) by transport and registry host (`initializing source docker://%s`,
`pinging container registry %s`).
"""

from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor, without_connection_flags
from tests.scenario.test_cluster_reports import event
from tests.support.scenarios import Obj, find, healthy


def _containerd_not_found(ref: str) -> str:
    return (
        f'failed to pull and unpack image "{ref}": failed to resolve reference "{ref}": '
        f"{ref}: not found"
    )


def _crio_unreachable(host: str, ref: str) -> str:
    return (
        f"initializing source docker://{ref}: pinging container registry {host}: Get "
        f'"https://{host}/v2/": dial tcp: lookup {host} on 10.96.0.10:53: no such host'
    )


def _failing(ref: str, reason: str, message: str, failed_event: str | None) -> Any:
    """The jobs-manager's copy waits in `reason` pulling `ref`, with the kubelet's `message`
    and, when given, its `Failed` Warning Event."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        pod = find(objects, "Pod", "jobs-manager-abc12")
        pod["spec"]["containers"][0]["image"] = ref
        pod["status"]["phase"] = "Pending"
        pod["status"]["containerStatuses"][0].update(
            {
                "image": ref,
                "imageID": "",
                "ready": False,
                "state": {"waiting": {"reason": reason, "message": message}},
            }
        )
        if failed_event is None:
            return objects
        failed = event(now, pod, "Failed", failed_event, "kubelet", age=timedelta(seconds=40))
        return [*objects, failed]

    return build


UNAUTHORIZED = "registry.example.com/unauthorized-apps/jobs-manager:1.5"
TOO_MANY = "registry.example.com/toomanyrequests/jobs-manager:1.5"
HOST = "toomanyrequests.example.com"
ON_HOST = f"{HOST}/ml/jobs-manager:1.5"


@pytest.mark.parametrize(
    ("ref", "reason", "message", "failed_event", "code"),
    [
        pytest.param(
            UNAUTHORIZED,
            "ErrImagePull",
            _containerd_not_found(UNAUTHORIZED),
            None,
            "workloads.image-not-in-registry",
            id="unauthorized-repository",
        ),
        pytest.param(
            TOO_MANY,
            "ErrImagePull",
            _containerd_not_found(TOO_MANY),
            None,
            "workloads.image-not-in-registry",
            id="toomanyrequests-repository",
        ),
        pytest.param(
            ON_HOST,
            "ErrImagePull",
            _crio_unreachable(HOST, ON_HOST),
            None,
            "workloads.registry-unreachable",
            id="toomanyrequests-host",
        ),
        pytest.param(
            TOO_MANY,
            "ImagePullBackOff",
            f'Back-off pulling image "{TOO_MANY}"',
            f'Failed to pull image "{TOO_MANY}": rpc error: code = NotFound desc = '
            + _containerd_not_found(TOO_MANY),
            "workloads.image-not-in-registry",
            id="back-off-and-its-event",
        ),
        pytest.param(
            ON_HOST,
            "ImagePullBackOff",
            f'Back-off pulling image "{ON_HOST}"',
            f'Failed to pull image "{ON_HOST}": rpc error: code = Unknown desc = '
            + _crio_unreachable(HOST, ON_HOST),
            "workloads.registry-unreachable",
            id="back-off-and-its-event-toomanyrequests-host",
        ),
    ],
)
def test_the_image_s_own_name_is_not_the_registry_s_answer(
    doctor: Doctor, ref: str, reason: str, message: str, failed_event: str | None, code: str
) -> None:
    doctor.load(_failing(ref, reason, message, failed_event))
    result = doctor.live("-o", "json")
    finding = next(
        f for f in result.json()["findings"] if f["check"] == "workloads" and f["status"] == "fail"
    )
    assert (finding["code"], finding["basis"]) == (code, "measured"), finding["headline"]
    assert result.exit_code == 2


def _containerd_token(ref: str, method: str, realm: str, status: str, kind: str) -> str:
    """containerd's words for a token service that refused the login: pull.go `failed to pull
    and unpack image %q`, `failed to resolve reference %q`; remotes/docker resolver.go
    request.do `failed to authorize: %w`; authorizer.go doBearerAuth `failed to fetch oauth
    token: %w` (a login: POST to the realm) or `failed to fetch anonymous token: %w` (none: GET
    with the service and scope); core/remotes/errors ErrUnexpectedStatus.Error `unexpected
    status from %s request to %s: %s`, the response's Status last."""
    return (
        f'failed to pull and unpack image "{ref}": failed to resolve reference "{ref}": '
        f"failed to authorize: failed to fetch {kind} token: unexpected status from {method} "
        f"request to {realm}: {status}"
    )


GHCR = "ghcr.io/acme/trainer:2.1"
HUB = "docker.io/library/mysql:8.0"
HUB_SCOPE = "scope=repository%3Alibrary%2Fmysql%3Apull&service=registry.docker.io"


@pytest.mark.parametrize(
    ("ref", "message", "code"),
    [
        pytest.param(
            GHCR,
            _containerd_token(GHCR, "POST", "https://ghcr.io/token", "403 Forbidden", "oauth"),
            "workloads.image-login-refused",
            id="containerd-oauth-403",
        ),
        pytest.param(
            "harbor.example.com/ml/trainer:2.1",
            _containerd_token(
                "harbor.example.com/ml/trainer:2.1",
                "POST",
                "https://harbor.example.com/service/token",
                "401 Unauthorized",
                "oauth",
            ),
            "workloads.image-login-refused",
            id="containerd-oauth-401",
        ),
        pytest.param(
            HUB,
            _containerd_token(
                HUB,
                "GET",
                f"https://auth.docker.io/token?{HUB_SCOPE}",
                "401 Unauthorized",
                "anonymous",
            ),
            "workloads.image-login-needed",
            id="containerd-anonymous-401",
        ),
        # CRI-O (containers/image docker_client.go `reading manifest %s in %s: %w`) quoting
        # distribution's errcode.Error `%s: %s` for UNAUTHORIZED, `authentication required`.
        pytest.param(
            HUB,
            "initializing source docker://mysql:8.0: reading manifest 8.0 in "
            "docker.io/library/mysql: unauthorized: authentication required",
            "workloads.image-login-refused",
            id="crio-unauthorized",
        ),
        # containerd resolver.go Resolve `pull access denied, repository does not exist or may
        # require authorization: %w` around authorizer.go invalidAuthorization `server message:
        # %s: %w` and ErrInvalidAuthorization `authorization failed`: Docker Hub's answer for a
        # missing repository and a refused scope alike.
        pytest.param(
            HUB,
            f'failed to pull and unpack image "{HUB}": failed to resolve reference "{HUB}": '
            "pull access denied, repository does not exist or may require authorization: "
            "server message: insufficient_scope: authorization failed",
            "workloads.image-download-error",
            id="containerd-insufficient-scope",
        ),
    ],
)
def test_the_runtime_s_error_chain_is_read_and_quoted_as_written(
    doctor: Doctor, ref: str, message: str, code: str
) -> None:
    """A Go error chain names a login step before each `: ` (`failed to authorize:`, `oauth
    token:`, `…/token:`, `unauthorized:`, `authorization:`): none is a setting, and what follows
    is the runtime's and the registry's words, the HTTP status and `insufficient_scope` too.
    Live and from a snapshot, the same code and the same quoted words."""
    doctor.load(_failing(ref, "ErrImagePull", message, None))
    result = doctor.live("-o", "json")
    finding = next(
        f for f in result.json()["findings"] if f["check"] == "workloads" and f["status"] == "fail"
    )
    assert (finding["code"], finding["basis"]) == (code, "measured"), finding["headline"]
    assert any(detail.endswith(f"ErrImagePull: {message}") for detail in finding["details"]), (
        finding["details"]
    )
    assert "<redacted>" not in result.stdout
    offline = doctor.offline(doctor.snapshot(), "-o", "json").json()
    workloads = [f for f in offline["findings"] if f["check"] == "workloads"]
    assert without_connection_flags(workloads) == without_connection_flags([finding])


def test_a_secret_among_the_runtime_s_words_is_still_redacted(doctor: Doctor) -> None:
    """A value after `token: ` that is no error's opening word loses it, even made of plain
    lower-case words, next to a chain whose words are kept (redaction/text.py `_ERROR_CHAIN`)."""
    message = (
        _containerd_token(GHCR, "POST", "https://ghcr.io/token", "403 Forbidden", "oauth")
        + " (refresh_token: hunterpass two words)"
    )
    doctor.load(_failing(GHCR, "ErrImagePull", message, None))
    result = doctor.live("-o", "json")
    finding = next(
        f for f in result.json()["findings"] if f["check"] == "workloads" and f["status"] == "fail"
    )
    assert finding["code"] == "workloads.image-login-refused", finding["headline"]
    shown = message.replace("hunterpass", "<redacted>")
    assert any(detail.endswith(shown) for detail in finding["details"]), finding["details"]
    saved = doctor.snapshot()
    assert "hunterpass" not in result.stdout + result.stderr
    for path in saved.rglob("*"):
        assert not path.is_file() or "hunterpass" not in path.read_text(encoding="utf-8"), path
