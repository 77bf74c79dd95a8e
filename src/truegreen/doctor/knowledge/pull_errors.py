"""The kubelet's words for a failed pull: its back-off message, and its `Failed to pull image`
Warning Events, read for what stopped a pull whose back-off message names no error
(truegreen/pull_errors.py reads the words)."""

import sys
from collections.abc import Iterable
from datetime import datetime

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.doctor.knowledge.reports import (
    MESSAGE_CAP,
    event_time,
    names_an_earlier_pod,
    quoted,
)
from truegreen.images import ImageReferenceError, parse_image
from truegreen.patterns import LazyPattern
from truegreen.pull_errors import PullError, pod_images, pull_error

FAILED_TO_PULL = "Failed to pull image "
"""How the kubelet's `Failed` Warning about a pull begins (pkg/kubelet/images/image_manager.go:
`Failed to pull image %q: %v`, reason `events.FailedToPullImage`); the runtime's error follows."""
_SAYS_THE_IMAGE = LazyPattern(r'^(?:Back-off pulling image|Failed to pull image) "[^"]*"(?::\s*)?')
"""image_manager.go's opening words before the error: the back-off's `Back-off pulling image %q`
(from 1.30 followed by `: ` and the last pull's reason and message, `prevPullErrMsg`), and the
`Failed` Event's `Failed to pull image %q: `."""


def error_words(message: str) -> str:
    """The error a kubelet's pull message carries, without the words that only name the image;
    empty for a back-off that names no error (kubelets before 1.30)."""
    return _SAYS_THE_IMAGE.sub("", message.strip()).strip()


def one_line(text: str) -> str:
    """`text` whole, as one line that cannot close the quotes it is shown in (`quoted`)."""
    return quoted(text, sys.maxsize)


def quoted_cause(words: str) -> str:
    """`words` as one line that cannot close its quotes (`quoted`), its end kept where it is
    longer than `MESSAGE_CAP`: a Go error chain names its cause last (`…: no space left on
    device`), after the steps that led to it."""
    line = one_line(words)
    return line if len(line) <= MESSAGE_CAP else "…" + line[-(MESSAGE_CAP - 1) :]


class PullFailure(Struct, frozen=True):
    """The kubelet's newest `Failed to pull image` Warning about a pod."""

    error: PullError | None
    """What its words say stopped the pull; None where no rule reads them."""
    message: str
    """Its message, as the kubelet wrote it."""
    seen: datetime | None
    """When the kubelet last said it."""


_CONTAINER_PATH = LazyPattern(r"^spec\.(?:containers|initContainers|ephemeralContainers)\{(.*)\}$")
"""The field path of an Event about one container (pkg/kubelet/container/ref.go
`GenerateContainerRef`, fieldPath.go `fieldPath`): `spec.containers{NAME}`."""
_QUOTED_IMAGE = LazyPattern(r'^Failed to pull image "([^"]*)"')


def _same_image(said: str, image: str) -> bool:
    """`said` (the Event's quoted image) names `image`, as written or normalised alike (the
    runtime's status may carry `docker.io/library/x:latest` for `x`)."""
    if said == image:
        return True
    try:
        return str(parse_image(said)) == str(parse_image(image))
    except ImageReferenceError:
        return False


def _about(event: KubeObject, message: str, container: str, image: str) -> bool:
    """`event` is about the pull of `container`'s `image`: by its field path where it names a
    container, and by the image its message quotes (image_manager.go writes one Event per
    container's pull, quoting that container's image)."""
    involved = o.mapping(event.get("involvedObject") or event.get("regarding"))
    path = _CONTAINER_PATH.match(str(involved.get("fieldPath") or ""))
    quoted_image = _QUOTED_IMAGE.match(message)
    return (path is None or path.group(1) == container) and (
        quoted_image is None or _same_image(quoted_image.group(1), image)
    )


def last_pull_failure(
    pod: KubeObject, container: str, image: str, events: Iterable[KubeObject]
) -> PullFailure | None:
    """The kubelet's newest `Failed to pull image` Warning about `pod`'s `container` pulling
    `image` and what it says stopped the pull: for a container in `ImagePullBackOff` whose
    message is only `Back-off pulling image "…"` (kubelets before 1.30 keep the error in the
    Event alone). The newest is the kubelet's current word on that container's pull, whether
    or not a rule reads it: an older Event's cause may be gone (image_manager.go writes one on
    every failed pull), and another container's Event is about another pull. None without
    one."""
    said: list[tuple[datetime | None, str]] = []
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
            or not _about(event, message, container, image)
        ):
            continue
        said.append((seen, message))
    if not said:
        return None
    seen, message = max(said, key=lambda pair: pair[0].timestamp() if pair[0] else 0.0)
    return PullFailure(pull_error(message, pod_images(pod)), message, seen)
