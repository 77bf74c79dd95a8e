"""When the kubelet pulls a container's image: its imagePullPolicy, or, unset, the one the API
server stores. One rule for doctor (a `--job-file`'s containers were never stored) and refresh.
"""

from collections.abc import Mapping
from typing import Any

from truegreen.images import ImageReferenceError, parse_image

PULL_ALWAYS = "Always"
PULL_IF_NOT_PRESENT = "IfNotPresent"
PULL_NEVER = "Never"
"""A container's imagePullPolicy values (k8s.io/api core/v1 types.go PullPolicy)."""


def pull_policy(container: Mapping[str, Any]) -> str:
    """The container's imagePullPolicy; unset, the one the API server stores
    (pkg/apis/core/v1/defaults.go SetDefaults_Container): Always where the image's tag is
    `latest`, else IfNotPresent (for an image that does not parse too: the default ignores the
    error). The tag is pkg/util/parsers ParseImageName's: the written one, kept beside a digest
    (distribution/reference `getBestReferenceType`: `repo:latest@sha256:…` is both Tagged and
    Digested), `latest` only where the image names neither tag nor digest, as `parse_image`
    fills it in."""
    policy = container.get("imagePullPolicy")
    if isinstance(policy, str) and policy:
        return policy
    try:
        tag = parse_image(str(container.get("image", ""))).tag
    except ImageReferenceError:
        return PULL_IF_NOT_PRESENT
    return PULL_ALWAYS if tag == "latest" else PULL_IF_NOT_PRESENT
