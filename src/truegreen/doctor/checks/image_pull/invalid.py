"""Image names the kubelet refuses: a container whose image does not parse as a reference never
starts (reason InvalidImageName, pkg/kubelet/images/image_manager.go EnsureImageExists, before
any pull policy is looked at). doctor never asks a registry about one, nor gives it a login.
Where a pod's status already carries the kubelet's message for the name, that is quoted; else
the message the kubelet would write, as `images.parse_image` words it."""

from truegreen import kubeobjects as o
from truegreen.cluster.reads import Listed, ListRead
from truegreen.doctor.checks.image_pull.words import INVALID_NAME, SAY
from truegreen.doctor.environment import Environment, PodTemplate
from truegreen.doctor.findings import Basis, Finding, Status
from truegreen.doctor.knowledge.reports import MESSAGE_CAP, quoted
from truegreen.images import ImageReferenceError, kubelet_message, parse_image

MAX_SHOWN = 120
"""Characters of an invalid image name a headline shows; the rest is cut (its text is the
cluster's, and may be anything)."""


def invalid_names(env: Environment) -> list[Finding]:
    """A finding per image name of the environment's templates that is not a reference, with
    the kubelet's own words for it."""
    owners: dict[str, list[PodTemplate]] = {}
    refused: dict[str, ImageReferenceError] = {}
    for template in env.templates():
        for image in o.all_images(template.spec):
            try:
                parse_image(image)
            except ImageReferenceError as error:
                refused.setdefault(image, error)
                owners.setdefault(image, []).append(template)
    return [
        SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            INVALID_NAME,
            details=(f"InvalidImageName: {_kubelet_words(env.pods, image, error)}",),
            objects=tuple(dict.fromkeys(t.ref for t in owners[image])),
            image=_shown(image),
            owners=_owners(owners[image]),
        )
        for image, error in refused.items()
    ]


def _kubelet_words(pods: ListRead, image: str, error: ImageReferenceError) -> str:
    """The kubelet's own message for `image`, from the first container of the namespace's
    pods that names it and waits with reason InvalidImageName (pkg/kubelet/kubelet_pods.go
    convertToAPIContainerStatuses writes the reason and message EnsureImageExists returned,
    from the kubelet's reasonCache); else what the kubelet would say (`kubelet_message`).
    Measured beats computed: the kubelet's parser has the last word, and parse_image refuses
    a very long name sooner than it does. The message quotes the name twice, so it is cut
    only past that."""
    for pod in pods.items if isinstance(pods, Listed) else ():
        spec = o.pod_spec(pod)
        named = {
            str(c.get("name"))
            for c in [*o.init_containers(spec), *o.containers(spec)]
            if c.get("image") == image
        }
        for status in o.container_statuses(pod):
            waiting = o.mapping(o.mapping(status.get("state")).get("waiting"))
            message = waiting.get("message")
            if (
                str(status.get("name")) in named
                and waiting.get("reason") == "InvalidImageName"
                and isinstance(message, str)
                and message.strip()
            ):
                return quoted(message, MESSAGE_CAP + 2 * len(image))
    return kubelet_message(error)


def _shown(image: str) -> str:
    """The name as a headline shows it: one line, escaped, and cut at MAX_SHOWN."""
    text = repr(image)[1:-1] if not image.isprintable() else image
    return text if len(text) <= MAX_SHOWN else f"{text[:MAX_SHOWN]}…"


def _owners(templates: list[PodTemplate]) -> str:
    words = list(dict.fromkeys(t.owner for t in templates))
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
