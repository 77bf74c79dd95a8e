"""Container image references, parsed and normalised as containerd and the kubelet parse them.

The grammar is distribution/reference's (regexp.go, the one containerd and the kubelet use
through `ParseNormalizedNamed`): an optional domain (host components, or an IPv6 address in
brackets, then an optional `:port`) and `/`, path components, an optional `:tag`, an optional
`@digest`. normalize.go's `splitDockerDomain` decides whether the first component is a domain
(it holds `.` or `:`, is `localhost`, or is not lower case) and turns `index.docker.io` into
`docker.io` and a one-component Docker Hub name into `library/NAME`. Anything else is not an
image reference: the kubelet refuses it (`InvalidImageName`), so it is never looked up.

Which registry login the kubelet sends for an image is its keyring's choice
(kubernetes/kubernetes pkg/credentialprovider/keyring.go), modelled here once for doctor and
refresh: `keyring_key` files a login, `keyring_lookup` finds the logins for an image's name.
"""

import re
from collections.abc import Iterable
from typing import TypeVar
from urllib.parse import unquote

from msgspec import Struct

from truegreen.http.gourl import url_fault

_T = TypeVar("_T")
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
        fault = _digest_fault(digest)
        if fault:
            raise ImageReferenceError(text, fault)
    if tag is None and digest is None:
        tag = "latest"
    return ImageReference(registry, path, tag, digest)


def _digest_fault(digest: str) -> str:
    """Why go-digest refuses a digest the reference grammar took ("" when it accepts it), in
    its order (opencontainers/go-digest digest.go `Digest.Validate`, algorithm.go
    `Algorithm.Validate`, run by distribution/reference `Parse`): an algorithm it does not
    register; then a hex part of the wrong length for the algorithm; then one that is not
    lower-case hex. (An algorithm not in lower case never gets here: normalize.go refuses
    the repository name it ends, `app@SHA256`, as not lower case.)"""
    algorithm, _, encoded = digest.partition(":")
    if algorithm not in _DIGEST_LENGTHS:
        return "unsupported digest algorithm"
    if len(encoded) != _DIGEST_LENGTHS[algorithm]:
        return "invalid checksum digest length"
    if encoded != encoded.lower():
        return "invalid checksum digest format"
    return ""


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


DEFAULT_REGISTRY_KEY = "index.docker.io"
"""keyring.go defaultRegistryHost: the one key Lookup falls back to for a Docker Hub image that
no key matched (`https://index.docker.io/v1/` is filed under it)."""


def keyring_key(server: str) -> str | None:
    """The key the kubelet's keyring files a docker-config `auths` entry under
    (pkg/credentialprovider/keyring.go BasicDockerKeyring.Add): `https://` put before a key
    that starts with neither `https://` nor `http://`, url.Parse, a `/v1/` or `/v2/` dropped
    from the path, then Host + path, the host's case and the path's trailing `/` kept
    (`https://index.docker.io/v1/` → `index.docker.io`, `Quay.io/team/` → `Quay.io/team/`).
    None where url.Parse refuses it: the kubelet then ignores the entry."""
    value = server if server.startswith(("https://", "http://")) else f"https://{server}"
    parsed = _go_url(value)
    if parsed is None:
        return None
    host, path = parsed
    if path.startswith(("/v2/", "/v1/")):
        path = path[3:]
    return host + path if path and path != "/" else host


def is_default_registry_match(image_name: str) -> bool:
    """Whether the keyring takes `image_name` (`registry/repository`) for a Docker Hub image,
    whose pull may use the `index.docker.io` key's login (keyring.go isDefaultRegistryMatch):
    `docker.io` or `index.docker.io`, or a first part without `.` or `:` (`localhost` too)."""
    first, slash, _ = image_name.partition("/")
    if not first:
        return False
    if not slash or first in (DOCKER_HUB, _LEGACY_DOCKER_HUB):
        return True
    return not any(c in first for c in ".:")


def keyring_lookup(entries: Iterable[tuple[str, _T]], image_name: str) -> list[_T]:
    """What the kubelet's keyring returns for `image_name` (`registry/repository`, as
    ParseImageName names it) from `entries`, (key, login) pairs in the order they were added
    (keyring.go BasicDockerKeyring.Lookup): the logins of every key that `login_covers`
    the image, over the keys sorted in reverse (`quay.io/team` before `quay.io`), each key's
    logins in the order added; when none matches and the image is Docker Hub's
    (`is_default_registry_match`), the logins of the key `index.docker.io` alone."""
    filed: dict[str, list[_T]] = {}
    for key, login in entries:
        filed.setdefault(key, []).append(login)
    found = [
        login
        for key in sorted(filed, reverse=True)
        if login_covers(key, image_name)
        for login in filed[key]
    ]
    if found or not is_default_registry_match(image_name):
        return found
    return list(filed.get(DEFAULT_REGISTRY_KEY, ()))


def login_covers(pattern: str, image_name: str) -> bool:
    """Whether a login keyed `pattern` (`*.corp.example`, `registry.example.com:5000/team`)
    applies to the image `image_name` (`registry/repository`, or a registry alone), by the
    kubelet's rule (pkg/credentialprovider/keyring.go URLsMatchStr, URLsMatch): both through
    ParseSchemelessURL; the same port, as many dot-separated host parts, each matched as a glob
    on its own (filepath.Match, case-sensitive: `*` never crosses a `.`), and the login's path
    a prefix of the image's path."""
    glob, target = _go_url(f"https://{pattern}"), _go_url(f"https://{image_name}")
    if glob is None or target is None:
        return False
    (glob_host, glob_path), (host, path) = glob, target
    glob_parts, glob_port = _split_url(glob_host)
    parts, port = _split_url(host)
    if glob_port != port or len(glob_parts) != len(parts) or not path.startswith(glob_path):
        return False
    return all(_glob_match(g, p) for g, p in zip(glob_parts, parts, strict=True))


def _go_url(text: str) -> tuple[str, str] | None:
    """(Host, Path) of an `https://` or `http://` URL as Go's net/url.Parse gives them: the
    fragment after `#` and the query after `?` cut off, user information before the last `@`
    dropped, the host's case kept, the path unescaped; None where Parse fails
    (`http.gourl.url_fault`: a control character, a port that is not digits, a character a
    host never holds, a bad `%` escape). A `%` in a host, which Parse takes only for a
    non-ASCII byte or an IPv6 zone, is refused here too: no registry login is keyed by one."""
    if url_fault(text):
        return None
    rest = text.partition("#")[0].partition("://")[2].partition("?")[0]
    authority, slash, path = rest.partition("/")
    host = authority.rpartition("@")[2]
    if "%" in host:
        return None
    return host, unquote(slash + path)


def _split_url(hostport: str) -> tuple[list[str], str]:
    """keyring.go SplitURL: net.SplitHostPort of the host, the whole host and no port where
    that fails; the host's dot-separated parts, and the port."""
    colon = hostport.rfind(":")
    if colon < 0:
        return hostport.split("."), ""
    if hostport.startswith("["):
        end = hostport.find("]")
        if end < 0 or end + 1 != colon:
            return hostport.split("."), ""
        name, opened, closed = hostport[1:end], 1, end + 1
    else:
        name, opened, closed = hostport[:colon], 0, 0
        if ":" in name:
            return hostport.split("."), ""
    if "[" in hostport[opened:] or "]" in hostport[closed:]:
        return hostport.split("."), ""
    return name.split("."), hostport[colon + 1 :]


def _glob_match(glob: str, part: str) -> bool:
    """Go's filepath.Match for one host part (neither holds a `/`), case-sensitive: `*` any
    run, `?` one character. A character class (`[a-z]`), which no registry login is keyed by,
    matches nothing here: the login is then not sent rather than sent too widely."""
    if "[" in glob or "]" in glob:
        return False
    expression = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob)
    return re.fullmatch(expression, part, re.DOTALL) is not None
