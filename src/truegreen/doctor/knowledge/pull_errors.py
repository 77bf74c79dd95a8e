"""The kubelet's `Failed to pull image` Warning Events, read for what stopped a pull whose
back-off message names no error (truegreen/pull_errors.py reads the words)."""

from collections.abc import Iterable

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.doctor.knowledge.reports import event_time, names_an_earlier_pod, quoted
from truegreen.pull_errors import PullError, pod_images, pull_error

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
    images = pod_images(pod)
    for _, message in said:
        error = pull_error(message, images)
        if error is not None:
            return error, quoted(message)
    return None
