"""Why the kubelet could not pull an image, read from its own words.

The kubelet reports a failed pull as the container's waiting reason `ErrImagePull` (then
`ImagePullBackOff`, whose message carries the last error: pkg/kubelet/images/image_manager.go)
with the container runtime's error as the message. The runtime's words follow the registry's
answer (distribution-spec error codes, containerd's and CRI-O's resolver): a missing image or
tag (`not found`, `manifest unknown`), a refused login (`401 Unauthorized`, `403 Forbidden`,
`denied`), the registry's pull limit (`429 Too Many Requests`, `toomanyrequests`), a registry
the machine cannot reach (`no such host`, `i/o timeout`, `connection refused`), an image with
no build for the machine's processor (the runtime found the image's index but no entry for the
machine's platform; its words end `not found` too, so this is read before a missing image).
Docker Hub's
`pull access denied, repository does not exist or may require authorization` says either of
the first two, so it is read as neither. A message that says none of these is left to the
generic finding, quoted.
"""

import re
from collections.abc import Iterable
from enum import StrEnum

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.doctor.knowledge.reports import event_time, names_an_earlier_pod, quoted
from truegreen.patterns import LazyPattern


class PullError(StrEnum):
    """What stopped the pull, as the kubelet's message says it."""

    NOT_FOUND = "not-found"
    LOGIN_REFUSED = "login-refused"
    PULL_LIMIT = "pull-limit"
    UNREACHABLE = "unreachable"
    WRONG_PLATFORM = "wrong-platform"


# Checked in this order: a pull limit's message also names the manifest it could not fetch.
_PATTERNS = (
    (PullError.PULL_LIMIT, LazyPattern(r"toomanyrequests|429 too many requests|rate limit", re.I)),
    (
        PullError.UNREACHABLE,
        LazyPattern(
            r"no such host|i/o timeout|connection refused|network is unreachable"
            r"|tls handshake timeout|no route to host",
            re.I,
        ),
    ),
    (
        PullError.LOGIN_REFUSED,
        LazyPattern(
            r"401 unauthorized|403 forbidden|\bunauthorized\b|\bdenied: |authentication required",
            re.I,
        ),
    ),
    # containerd: `no match for platform in manifest: not found` (core/images/image.go);
    # CRI-O (containers/image): `no image found in image index for architecture "arm64", …`
    # (`manifest list` before image-spec indexes); Docker: `no matching manifest for
    # linux/arm64/v8 in the manifest list entries` (distribution/pull_v2.go).
    (
        PullError.WRONG_PLATFORM,
        LazyPattern(
            r"no match for platform in manifest|no image found in (?:image index|manifest list) "
            r"for architecture|no matching manifest for \S+ in the manifest list entries",
            re.I,
        ),
    ),
    (PullError.NOT_FOUND, LazyPattern(r"\bnot found\b|manifest unknown|name unknown", re.I)),
)
_EITHER = LazyPattern(r"repository does not exist or may require authorization", re.I)


def pull_error(message: str) -> PullError | None:
    """What the kubelet's message says stopped the pull; None when it says none of them."""
    for error, pattern in _PATTERNS:
        if error is not PullError.PULL_LIMIT and _EITHER.search(message):
            return None  # Docker Hub's answer for a missing image and a refused login alike
        if pattern.search(message):
            return error
    return None


FAILED_TO_PULL = "Failed to pull image "
"""How the kubelet's `Failed` Warning about a pull begins (pkg/kubelet/images/image_manager.go:
`Failed to pull image %q: %v`, reason `events.FailedToPullImage`); the runtime's error follows."""


def last_pull_failure(
    pod: KubeObject, events: Iterable[KubeObject]
) -> tuple[PullError, str] | None:
    """What the kubelet's newest `Failed to pull image` Warning about `pod` says stopped the
    pull, with its words: for a container in `ImagePullBackOff` whose message is only
    `Back-off pulling image "…"` (kubelets before 1.30 keep the error in the Event alone)."""
    said = []
    for event in events:
        involved = o.mapping(event.get("involvedObject") or event.get("regarding"))
        message = str(event.get("message") or event.get("note") or "")
        seen = event_time(event)
        if (
            event.get("type") != "Warning"
            or event.get("reason") != "Failed"
            or involved.get("kind") != "Pod"
            or involved.get("name") != o.name_of(pod)
            or names_an_earlier_pod(str(involved.get("uid") or ""), seen, pod)
            or not message.startswith(FAILED_TO_PULL)
        ):
            continue
        said.append((seen, message))
    said.sort(key=lambda pair: pair[0].timestamp() if pair[0] is not None else 0.0, reverse=True)
    for _, message in said:
        error = pull_error(message)
        if error is not None:
            return error, quoted(message)
    return None
