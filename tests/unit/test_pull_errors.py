"""The kubelet's words for a failed pull, read as what stopped it (truegreen/pull_errors.py).

Messages as the container runtime writes them (containerd's resolver and authorizer,
pkg/remotes/docker; CRI-O's, containers/image) with the registry's own text inside."""

import pytest

from truegreen.pull_errors import PullError, pod_images, pull_error
from truegreen.redaction.text import redact_text

REF = "registry.example.com/trainer:2.1"
PULL = f'failed to pull and unpack image "{REF}": failed to resolve reference "{REF}":'


@pytest.mark.parametrize(
    ("message", "said"),
    [
        (f"{PULL} {REF}: not found", PullError.NOT_FOUND),
        (
            "reading manifest 2.1 in registry.example.com/trainer: manifest unknown",
            PullError.NOT_FOUND,
        ),
        (
            f"{PULL} failed to authorize: failed to fetch oauth token: unexpected status from POST "
            "request to https://registry.example.com/token: 401 Unauthorized",
            PullError.LOGIN_REFUSED,
        ),
        ("unexpected status code 403 Forbidden", PullError.LOGIN_REFUSED),
        (
            f"{PULL} unexpected status code: 429 Too Many Requests - Server message: "
            "toomanyrequests: You have reached your pull rate limit.",
            PullError.PULL_LIMIT,
        ),
        (
            f'{PULL} failed to do request: Head "https://registry.example.com/v2/trainer/manifests'
            '/2.1": dial tcp: lookup registry.example.com on 10.96.0.10:53: no such host',
            PullError.UNREACHABLE,
        ),
        ("dial tcp 10.0.0.5:443: i/o timeout", PullError.UNREACHABLE),
        # Docker Hub says this of a missing repository and of a refused login alike.
        (
            "pull access denied for trainer, repository does not exist or may require "
            "authorization: server message: insufficient_scope: authorization failed",
            None,
        ),
        ('Back-off pulling image "x"', None),
        ("", None),
    ],
)
def test_the_kubelet_s_message_says_what_stopped_the_pull(
    message: str, said: PullError | None
) -> None:
    assert pull_error(message) is said


DIGEST = "sha256:" + "0123456789abcdef" * 4


def _containerd_not_found(ref: str) -> str:
    """containerd's words for a reference its registry does not have: pull.go `failed to pull
    and unpack image %q`, `failed to resolve reference %q`, resolver.go Resolve `%s: not found`
    (errdefs.ErrNotFound), the reference as containerd normalised it."""
    return (
        f'failed to pull and unpack image "{ref}": failed to resolve reference "{ref}": '
        f"{ref}: not found"
    )


@pytest.mark.parametrize(
    ("image", "message", "said"),
    [
        pytest.param(
            "registry.example.com/unauthorized-apps/trainer:2.1",
            _containerd_not_found("registry.example.com/unauthorized-apps/trainer:2.1"),
            PullError.NOT_FOUND,
            id="containerd-not-found-unauthorized-repository",
        ),
        pytest.param(
            "registry.example.com/toomanyrequests/trainer:2.1",
            _containerd_not_found("registry.example.com/toomanyrequests/trainer:2.1"),
            PullError.NOT_FOUND,
            id="containerd-not-found-toomanyrequests-repository",
        ),
        pytest.param(
            "registry.example.com/unauthorized/trainer@" + DIGEST,
            _containerd_not_found("registry.example.com/unauthorized/trainer@" + DIGEST),
            PullError.NOT_FOUND,
            id="containerd-not-found-by-digest",
        ),
        # A one-name Docker Hub image: containerd prints it normalised (normalize.go).
        pytest.param(
            "unauthorized:2.1",
            _containerd_not_found("docker.io/library/unauthorized:2.1"),
            PullError.NOT_FOUND,
            id="docker-hub-library-name",
        ),
        # The kubelet's Event wraps the runtime's words (image_manager.go `Failed to pull
        # image %q: %v`); its gRPC status code `NotFound` is no verdict word of its own.
        pytest.param(
            "registry.example.com/toomanyrequests/trainer:2.1",
            'Failed to pull image "registry.example.com/toomanyrequests/trainer:2.1": rpc error: '
            "code = NotFound desc = "
            + _containerd_not_found("registry.example.com/toomanyrequests/trainer:2.1"),
            PullError.NOT_FOUND,
            id="kubelet-event",
        ),
        # image_manager.go: the back-off names the image and nothing else.
        pytest.param(
            "registry.example.com/unauthorized-apps/trainer:2.1",
            'Back-off pulling image "registry.example.com/unauthorized-apps/trainer:2.1"',
            None,
            id="back-off-names-only-the-image",
        ),
        # containers/image (CRI-O) docker_image_src.go: `reading manifest %s in %s`, the tag
        # and the repository's name apart, after `initializing source docker://REF`.
        pytest.param(
            "registry.example.com/unauthorized-apps/trainer:toomanyrequests",
            "initializing source docker://registry.example.com/unauthorized-apps/trainer:"
            "toomanyrequests: reading manifest toomanyrequests in "
            "registry.example.com/unauthorized-apps/trainer: manifest unknown",
            PullError.NOT_FOUND,
            id="cri-o-manifest-unknown",
        ),
        # Go's url.Error (`Head "URL": …`) inside containerd's `failed to do request`.
        pytest.param(
            "registry.example.com/toomanyrequests/trainer:2.1",
            'failed to resolve reference "registry.example.com/toomanyrequests/trainer:2.1": '
            'failed to do request: Head "https://registry.example.com/v2/toomanyrequests/trainer/'
            'manifests/2.1": dial tcp: lookup registry.example.com on 10.96.0.10:53: no such host',
            PullError.UNREACHABLE,
            id="url-path",
        ),
        # containers/image: `pinging container registry %s`, the registry as written; Go's
        # resolver: `lookup %s`, its host alone.
        pytest.param(
            "toomanyrequests.example.com:5000/ml/trainer:2.1",
            "initializing source docker://toomanyrequests.example.com:5000/ml/trainer:2.1: "
            "pinging container registry toomanyrequests.example.com:5000: Get "
            '"https://toomanyrequests.example.com:5000/v2/": dial tcp: lookup '
            "toomanyrequests.example.com on 10.96.0.10:53: no such host",
            PullError.UNREACHABLE,
            id="registry-host",
        ),
        # Docker (cri-dockerd): `manifest for %s not found` with the name as written.
        pytest.param(
            "unauthorized:2.1",
            "Error response from daemon: manifest for unauthorized:2.1 not found: manifest "
            "unknown: manifest unknown",
            PullError.NOT_FOUND,
            id="docker-as-written",
        ),
        # Docker fills in the default tag (`latest`) of a name written without one.
        pytest.param(
            "unauthorized",
            "Error response from daemon: manifest for unauthorized:latest not found: manifest "
            "unknown: manifest unknown",
            PullError.NOT_FOUND,
            id="docker-default-tag",
        ),
        # A one-word name is left in: it may be the registry's own word (containers/image
        # docker/errors.go prints the registry's `denied: …`).
        pytest.param(
            "denied",
            "initializing source docker://denied:latest: reading manifest latest in "
            "docker.io/library/denied: denied: requested access to the resource is denied",
            PullError.LOGIN_REFUSED,
            id="plain-word-image",
        ),
        # The registry's own refusal is still read when the image's name holds a word too.
        pytest.param(
            "registry.example.com/toomanyrequests/trainer:2.1",
            'failed to pull and unpack image "registry.example.com/toomanyrequests/trainer:2.1":'
            ' failed to resolve reference "registry.example.com/toomanyrequests/trainer:2.1": '
            "unexpected status from HEAD request to https://registry.example.com/v2/"
            "toomanyrequests/trainer/manifests/2.1: 401 Unauthorized",
            PullError.LOGIN_REFUSED,
            id="its-own-refusal",
        ),
    ],
)
def test_the_image_s_own_name_is_not_what_the_runtime_said(
    image: str, message: str, said: PullError | None
) -> None:
    assert pull_error(message, (image,)) is said


def test_a_name_that_is_no_reference_is_taken_out_as_written() -> None:
    """Another container's image the kubelet refused (InvalidImageName) is still no verdict."""
    image = "Unauthorized:2.1"
    message = f"{image}: not found"
    assert pull_error(message, (image,)) is PullError.NOT_FOUND


def test_a_quoted_reference_is_taken_out_without_the_pod_s_images() -> None:
    """The kubelet quotes the name as written (image_manager.go `Failed to pull image %q`),
    containerd prints it normalised after (resolver.go `%s: not found`)."""
    message = 'Failed to pull image "unauthorized/trainer:2.1": ' + _containerd_not_found(
        "docker.io/unauthorized/trainer:2.1"
    )
    assert pull_error(message) is PullError.NOT_FOUND


def test_a_pod_s_images_are_its_spec_s_and_its_statuses() -> None:
    """Spec images as written, init containers first (kubeobjects.all_images); statuses'
    images as the kubelet reports them (kuberuntime_container.go toKubeContainerStatus: the
    runtime's normalised name), one not yet known (`""`) left out."""
    pod = {
        "spec": {
            "initContainers": [{"name": "fetch", "image": "busybox"}],
            "containers": [{"name": "trainer", "image": "unauthorized:2.1"}],
        },
        "status": {
            "initContainerStatuses": [
                {"name": "fetch", "image": "docker.io/library/busybox:latest"}
            ],
            "containerStatuses": [{"name": "trainer", "image": ""}],
        },
    }
    assert pod_images(pod) == ("busybox", "unauthorized:2.1", "docker.io/library/busybox:latest")


@pytest.mark.parametrize(
    ("message", "said"),
    [
        # containerd authorizer.go doBearerAuth and ErrUnexpectedStatus.Error: GHCR's token
        # service refusing the login (POST to the realm, which has no query).
        pytest.param(
            f"{PULL} failed to authorize: failed to fetch oauth token: unexpected status from "
            "POST request to https://ghcr.io/token: 403 Forbidden",
            PullError.LOGIN_REFUSED,
            id="containerd-oauth-403",
        ),
        pytest.param(
            f"{PULL} failed to authorize: failed to fetch anonymous token: unexpected status "
            "from GET request to https://auth.docker.io/token?scope=repository%3Alibrary%2F"
            "mysql%3Apull&service=registry.docker.io: 401 Unauthorized",
            PullError.LOGIN_NEEDED,
            id="containerd-anonymous-401",
        ),
        pytest.param(
            "initializing source docker://mysql:8.0: reading manifest 8.0 in "
            "docker.io/library/mysql: unauthorized: authentication required",
            PullError.LOGIN_REFUSED,
            id="crio-unauthorized",
        ),
        pytest.param(
            f"{PULL} pull access denied, repository does not exist or may require "
            "authorization: server message: insufficient_scope: authorization failed",
            None,
            id="containerd-insufficient-scope",
        ),
    ],
)
def test_what_doctor_reads_says_what_the_kubelet_said(message: str, said: PullError | None) -> None:
    """doctor reads the kubelet's words redacted (cluster/redact.py RedactingReader), and a
    snapshot saves them so: the redaction keeps every word the verdict is read from."""
    assert redact_text(message) == message
    assert pull_error(redact_text(message)) is pull_error(message) is said
