"""The kubelet's words for a failed pull, read as what stopped it (knowledge/pull_errors.py).

Messages as the container runtime writes them (containerd's resolver and authorizer,
pkg/remotes/docker; CRI-O's, containers/image) with the registry's own text inside."""

import pytest

from truegreen.doctor.knowledge.pull_errors import PullError, pull_error

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
