"""Container image references, normalised the way docker and the kubelet normalise them."""

import re

from msgspec import Struct

DOCKER_HUB = "docker.io"
_DIGEST = re.compile(r"^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-fA-F0-9]{32,}$")
_TAG = re.compile(r"^[\w][\w.-]{0,127}$")
_PATH_COMPONENT = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$")


class ImageReferenceError(ValueError):
    """A string that is not a valid image reference."""


class ImageReference(Struct, frozen=True):
    """`registry/repository[:tag][@digest]`, with docker's defaults filled in."""

    registry: str
    repository: str
    tag: str | None
    digest: str | None

    @property
    def name(self) -> str:
        """`registry/repository`, the part credentials and the registry API are keyed by."""
        return f"{self.registry}/{self.repository}"

    def __str__(self) -> str:
        text = self.name
        if self.tag:
            text += f":{self.tag}"
        if self.digest:
            text += f"@{self.digest}"
        return text


def parse_image(text: str) -> ImageReference:
    """Parse and normalise an image reference; ImageReferenceError when it is not one."""
    if not isinstance(text, str) or not text or text != text.strip() or len(text) > 4096:
        raise ImageReferenceError(f"{text!r} is not an image reference")
    rest, _, digest = text.partition("@")
    if digest and not _DIGEST.match(digest):
        raise ImageReferenceError(f"{text!r} has an invalid digest")
    first, slash, remainder = rest.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost" or first != first.lower()):
        registry, path = first, remainder
    else:
        registry, path = DOCKER_HUB, rest
    if registry in ("index.docker.io", "registry-1.docker.io"):
        registry = DOCKER_HUB
    tag: str | None = None
    last_slash = path.rfind("/")
    colon = path.rfind(":")
    if colon > last_slash:
        path, tag = path[:colon], path[colon + 1 :]
        if not _TAG.match(tag):
            raise ImageReferenceError(f"{text!r} has an invalid tag")
    if not path or not all(_PATH_COMPONENT.match(c) for c in path.split("/")):
        raise ImageReferenceError(f"{text!r} has an invalid repository name")
    if registry == DOCKER_HUB and "/" not in path:
        path = f"library/{path}"
    if tag is None and not digest:
        tag = "latest"
    return ImageReference(registry, path, tag, digest or None)


def registry_key(server: str) -> str:
    """The registry host a docker-config `auths` key refers to (`https://index.docker.io/v1/`)."""
    host = re.sub(r"^[a-z]+://", "", server.strip()).split("/")[0].lower()
    return DOCKER_HUB if host in ("index.docker.io", "registry-1.docker.io", "docker.io") else host
