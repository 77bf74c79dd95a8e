"""Container image references, parsed and normalised as containerd and the kubelet parse them.

The grammar is distribution/reference's (regexp.go, the one containerd and the kubelet use
through `ParseNormalizedNamed`): an optional domain (host components, or an IPv6 address in
brackets, then an optional `:port`) and `/`, path components, an optional `:tag`, an optional
`@digest`. normalize.go's `splitDockerDomain` decides whether the first component is a domain
(it holds `.` or `:`, is `localhost`, or is not lower case) and turns `index.docker.io` into
`docker.io` and a one-component Docker Hub name into `library/NAME`. Anything else is not an
image reference: the kubelet refuses it (`InvalidImageName`), so it is never looked up.
"""

import re

from msgspec import Struct

DOCKER_HUB = "docker.io"
_LEGACY_DOCKER_HUB = "index.docker.io"
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])"
_DOMAIN_AND_PORT = rf"{_HOST}(?::[0-9]+)?"
_REMOTE_NAME = rf"{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_TAG_TEXT = r"[\w][\w.-]{0,127}"
_DIGEST_TEXT = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
# re.ASCII: Go's \w is [0-9A-Za-z_]. fullmatch: Go's `$` never matches before a newline.
_REFERENCE = re.compile(
    rf"((?:{_DOMAIN_AND_PORT}/)?{_REMOTE_NAME})(?::({_TAG_TEXT}))?(?:@({_DIGEST_TEXT}))?",
    re.ASCII,
)
_NAME = re.compile(rf"(?:({_DOMAIN_AND_PORT})/)?({_REMOTE_NAME})", re.ASCII)
_IDENTIFIER = re.compile(r"[a-f0-9]{64}")
_TAG = re.compile(_TAG_TEXT, re.ASCII)
_DOMAIN = re.compile(rf"({_HOST})(?::([0-9]+))?", re.ASCII)
_DIGEST_LENGTHS = {"sha256": 64, "sha384": 96, "sha512": 128}
"""The algorithms opencontainers/go-digest registers, and the hex length of each."""
MAX_PATH = 255
"""reference.go RepositoryNameTotalLengthMax: the longest repository path."""
_MAX_TEXT = 4096
"""Longer text is not parsed at all: no reference within the limits above is this long."""


class ImageReferenceError(ValueError):
    """A string that is not a valid image reference. `str()` is the kubelet's words
    (pkg/kubelet/images/image_manager.go applyDefaultImageTag: `couldn't parse image
    reference "TEXT": REASON`, REASON as distribution/reference words it)."""

    def __init__(self, text: str, reason: str) -> None:
        super().__init__(f"couldn't parse image reference {_quoted(text)}: {reason}")
        self.text = text
        self.reason = reason


def is_tag(text: str) -> bool:
    """Whether `text` is a tag as distribution/reference's grammar has it (`[\\w][\\w.-]{0,127}`):
    a tag held apart from its image, such as the one an annotation names, is checked here."""
    return _TAG.fullmatch(text) is not None


class ImageReference(Struct, frozen=True):
    """`registry/repository[:tag][@digest]`, with docker's defaults filled in."""

    registry: str
    """The domain as written (`registry.example.com:5000`, `[::1]:5000`), `docker.io` for
    Docker Hub."""
    repository: str
    tag: str | None
    digest: str | None

    @property
    def name(self) -> str:
        """`registry/repository`, the part credentials and the registry API are keyed by."""
        return f"{self.registry}/{self.repository}"

    @property
    def host(self) -> str:
        """The registry's host, lower case, an IPv6 address without its brackets."""
        return split_domain(self.registry)[0]

    @property
    def port(self) -> int | None:
        """The registry's port, when the reference names one."""
        return split_domain(self.registry)[1]

    def __str__(self) -> str:
        text = self.name
        if self.tag:
            text += f":{self.tag}"
        if self.digest:
            text += f"@{self.digest}"
        return text


def split_domain(domain: str) -> tuple[str, int | None]:
    """(host, port) of a reference's domain (`[::1]:5000` → (`::1`, 5000)); the domain must
    be one the grammar accepts (`parse_image` made it)."""
    match = _DOMAIN.fullmatch(domain)
    if match is None:
        raise ImageReferenceError(domain, "invalid reference format")
    host, port = match.group(1), match.group(2)
    return host.strip("[]").lower(), None if port is None else int(port)


def kubelet_message(error: ImageReferenceError) -> str:
    """What the kubelet says of a container whose image does not parse, with the waiting
    reason InvalidImageName (pkg/kubelet/images/image_manager.go EnsureImageExists)."""
    return f"Failed to apply default image tag {_quoted(error.text)}: {error}"


def _printable(text: str) -> str:
    """`text`, a character that is not printable escaped: a message stays one line."""
    return text if text.isprintable() else repr(text)[1:-1]


def _quoted(text: str) -> str:
    """Go's %q of printable ASCII: in double quotes, `"` and `\\` escaped; other characters
    as Python escapes them (a control character is never printed raw)."""
    inner = repr(text)[1:-1].replace('"', '\\"') if text.isprintable() else repr(text)[1:-1]
    return f'"{inner}"'


def parse_image(text: str) -> ImageReference:
    """Parse and normalise an image reference as `ParseNormalizedNamed` does (normalize.go);
    ImageReferenceError, worded as the kubelet words it, when it is not one."""
    if not isinstance(text, str) or not text:
        raise ImageReferenceError(str(text), "repository name must have at least one component")
    if len(text) > _MAX_TEXT:
        raise ImageReferenceError(text, "invalid reference format")
    if _IDENTIFIER.fullmatch(text):
        raise ImageReferenceError(
            text, f"invalid repository name ({text}), cannot specify 64-byte hexadecimal strings"
        )
    domain, remainder = _split_docker_domain(text)
    remote = remainder.partition(":")[0]
    if remote.lower() != remote:
        raise ImageReferenceError(
            text,
            f"invalid reference format: repository name ({_printable(remote)}) must be lowercase",
        )
    match = _REFERENCE.fullmatch(f"{domain}/{remainder}")
    if match is None:
        raise ImageReferenceError(text, "invalid reference format")
    name, tag, digest = match.group(1), match.group(2), match.group(3)
    parts = _NAME.fullmatch(name)
    if parts is None or parts.group(1) is None:
        # `a_b.example/x`: no domain (reference.go then leaves it empty), so no registry
        # to ask; the kubelet's pull of it fails too.
        raise ImageReferenceError(text, "invalid reference format")
    registry, path = parts.group(1), parts.group(2)
    if len(path) > MAX_PATH:
        raise ImageReferenceError(
            text, f"repository name must not be more than {MAX_PATH} characters"
        )
    if digest is not None:
        algorithm, _, encoded = digest.partition(":")
        if algorithm not in _DIGEST_LENGTHS:
            raise ImageReferenceError(text, "unsupported digest algorithm")
        if len(encoded) != _DIGEST_LENGTHS[algorithm] or encoded != encoded.lower():
            raise ImageReferenceError(text, "invalid checksum digest format")
    if tag is None and digest is None:
        tag = "latest"
    return ImageReference(registry, path, tag, digest)


def _split_docker_domain(text: str) -> tuple[str, str]:
    """normalize.go splitDockerDomain: the domain and the rest of a reference."""
    first, slash, rest = text.partition("/")
    if not slash:
        return DOCKER_HUB, f"library/{text}"
    if first == _LEGACY_DOCKER_HUB:
        domain, remote = DOCKER_HUB, rest
    elif first == "localhost" or "." in first or ":" in first or first.lower() != first:
        domain, remote = first, rest
    else:
        domain, remote = DOCKER_HUB, text
    if domain == DOCKER_HUB and "/" not in remote:
        remote = f"library/{remote}"
    return domain, remote


def registry_key(server: str) -> str:
    """The registry a docker-config `auths` key refers to, scheme and trailing `/` dropped,
    host lower case, path kept (`https://index.docker.io/v1/` → `docker.io`,
    `Quay.io/team/` → `quay.io/team`): the keyring matches images against it (keyring.go)."""
    text = re.sub(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", "", server.strip())
    host, slash, path = text.partition("/")
    host = host.lower()
    # keyring.go Add: a `/v1/` or `/v2/` path is the API's, not a repository prefix.
    path = re.sub(r"^v[12](?:/|$)", "", path).strip("/")
    if host in (_LEGACY_DOCKER_HUB, "registry-1.docker.io"):
        host = DOCKER_HUB
    return f"{host}/{path}" if slash and path else host


def login_covers(pattern: str, image_name: str) -> bool:
    """Whether a login keyed `pattern` (`*.corp.example`, `registry.example.com:5000/team`)
    applies to the image `image_name` (`registry/repository`, or a registry alone), by the
    kubelet's rule (pkg/credentialprovider/keyring.go URLsMatchStr/URLsMatch): the same port,
    as many dot-separated host parts, each matched as a glob on its own (filepath.Match: `*`
    never crosses a `.`), and the login's path a prefix of the image's path."""
    glob_host, glob_port, glob_path = _url_parts(pattern)
    host, port, path = _url_parts(image_name)
    if glob_port != port or not path.startswith(glob_path):
        return False
    glob_parts, parts = glob_host.split("."), host.split(".")
    return len(glob_parts) == len(parts) and all(
        _glob_match(g, p) for g, p in zip(glob_parts, parts, strict=True)
    )


def _url_parts(text: str) -> tuple[str, str, str]:
    """keyring.go ParseSchemelessURL and SplitURL: host (an IPv6 address without brackets),
    port (`""` when none) and path; an authority holding anything a host, a glob or a port
    never holds gives a host that matches nothing."""
    authority, slash, path = text.partition("/")
    if not _AUTHORITY.fullmatch(authority):
        return "\0", "\0", "\0"
    host, port = authority, ""
    bracketed = re.fullmatch(r"(\[[^\]]*\])(?::([0-9]*))?", authority)
    if bracketed is not None:
        host, port = bracketed.group(1).strip("[]"), bracketed.group(2) or ""
    elif authority.count(":") == 1:
        host, _, port = authority.partition(":")
    return host.lower(), port, f"/{path}" if slash else ""


_AUTHORITY = re.compile(r"[A-Za-z0-9._*?:\[\]-]+", re.ASCII)


def _glob_match(glob: str, part: str) -> bool:
    """Go's filepath.Match for one host part (neither holds a `/`): `*` any run, `?` one
    character. A character class (`[a-z]`), which no registry login is keyed by, matches
    nothing here: the login is then not sent rather than sent too widely."""
    if "[" in glob or "]" in glob:
        return False
    expression = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob)
    return re.fullmatch(expression, part, re.DOTALL) is not None
