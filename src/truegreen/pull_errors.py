"""Why the kubelet could not pull an image, read from its own words.

The kubelet reports a failed pull as the container's waiting reason `ErrImagePull` (then
`ImagePullBackOff`, whose message carries the last error: pkg/kubelet/images/image_manager.go)
with the container runtime's error as the message. The runtime's words follow the registry's
answer (distribution-spec error codes, containerd's and CRI-O's resolver): a missing image or
tag (`not found`, `manifest unknown`), a refused login (`401 Unauthorized`, `403 Forbidden`,
`denied`), a registry that wants a login the pull did not send (containerd's `failed to fetch
anonymous token`, refused), the registry's pull limit (`429 Too Many Requests`,
`toomanyrequests`), a registry the machine cannot reach (`no such host`, `i/o timeout`,
`connection refused`, and Go's other network words), a registry that answers with a server
error (`503 Service Unavailable`), a certificate the machine does not trust (`x509: `), an
image with no build for the machine's processor (the runtime found
the image's index but no entry for the machine's platform; its words end `not found` too, so
this is read before a missing image), a piece missing from the machine's own copy
(containerd's `content digest …: not found`, or its snapshot store's `parent snapshot …
does not exist: not found`, read before a missing image too). Docker Hub's
`pull access denied, repository does not exist or may require authorization` says either a
missing image or a refused login, so it is read as neither. A message that says none of these
is left to the generic finding, quoted.

Two of the runtime's errors the kubelet names itself (image_manager.go `evalCRIPullErr`): a
container waiting in `RegistryUnavailable` could not reach the registry, one in
`SignatureValidationFailed` was refused by the machine's signature policy, whatever the words
after (`failed_pull`); the back-off after either carries the kubelet's words for it
(`Back-off pulling image %q: RegistryUnavailable: image pull failed for %s because the registry
is unavailable: …`), read first.

The message is read as doctor reads everything, redacted (cluster/redact.py), as a snapshot
saves it: the redaction keeps a runtime's error chain word for word (`oauth token: unexpected
status from POST request to https://ghcr.io/token: 403 Forbidden`: redaction/text.py), so what
is read here is what the kubelet said, live and offline alike.

One reading for doctor (the workloads check's finding) and refresh (whether a new pod's failed
pull is one the kubelet's retries cannot heal).

The words are read with the image references taken out: a repository, tag or registry named
`unauthorized-apps`, `toomanyrequests` or `denied` is the image's name, not the registry's
answer. What is taken out: every URL (Go's url.Error `Head "https://…"`, containerd's
`unexpected status from HEAD request to https://…`, CRI-O's `docker://REF`), every quoted word
(the kubelet's `Failed to pull image %q` and `Back-off pulling image %q`, containerd's
`failed to pull and unpack image %q` and `failed to resolve reference %q`), every bare reference
that starts with a registry (containerd's resolver `%s: not found` with the normalised
`docker.io/library/x:tag`; CRI-O's `reading manifest %s in %s`, whose tag is taken out too),
and the pod's own images as written and normalised, and their registries' names.
"""

import re
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

from truegreen import kubeobjects as o
from truegreen.images import DOCKER_HUB, ImageReferenceError, parse_image
from truegreen.patterns import LazyPattern
from truegreen.pull_reasons import REGISTRY_UNAVAILABLE, SIGNATURE_VALIDATION_FAILED


class PullError(StrEnum):
    """What stopped the pull, as the kubelet's message says it."""

    NOT_FOUND = "not-found"
    LOGIN_REFUSED = "login-refused"
    LOGIN_NEEDED = "login-needed"
    PULL_LIMIT = "pull-limit"
    UNREACHABLE = "unreachable"
    REGISTRY_FAILING = "registry-failing"
    UNTRUSTED = "untrusted"
    WRONG_PLATFORM = "wrong-platform"
    SIGNATURE_REFUSED = "signature-refused"
    COPY_DAMAGED = "copy-damaged"


_REASONS = {
    REGISTRY_UNAVAILABLE: PullError.UNREACHABLE,
    SIGNATURE_VALIDATION_FAILED: PullError.SIGNATURE_REFUSED,
}
"""The waiting reasons that say what stopped the pull by themselves (pull_reasons.py)."""

# Checked in this order: the kubelet's own words for the reasons above (image_manager.go
# `evalCRIPullErr`), which a back-off message repeats; then a pull limit, whose message also
# names the manifest it could not fetch.
_PATTERNS = (
    (PullError.UNREACHABLE, LazyPattern(r"because the registry is unavailable", re.I)),
    (PullError.SIGNATURE_REFUSED, LazyPattern(r"because the signature validation failed", re.I)),
    (PullError.PULL_LIMIT, LazyPattern(r"toomanyrequests|429 too many requests|rate limit", re.I)),
    # Go's net errors as the runtimes wrap them: the resolver (`no such host`, `server
    # misbehaving` for a DNS server's SERVFAIL, net/dnsclient_unix.go; glibc's `Temporary
    # failure in name resolution` through cgo), the dial (`connection refused`, `connection
    # timed out`, `i/o timeout`, `no route to host`, `network is unreachable`) and a
    # connection cut (`connection reset by peer`).
    (
        PullError.UNREACHABLE,
        LazyPattern(
            r"no such host|i/o timeout|connection refused|network is unreachable"
            r"|tls handshake timeout|no route to host|connection timed out|server misbehaving"
            r"|temporary failure in name resolution|connection reset by peer",
            re.I,
        ),
    ),
    # The registry (or a proxy in front of it) answered with a server error: containerd's
    # `unexpected status from %s request to %s: 503 Service Unavailable` (core/remotes/errors),
    # CRI-O's `received unexpected HTTP status: 503 Service Unavailable` (containers/image).
    (
        PullError.REGISTRY_FAILING,
        LazyPattern(
            r"\b(?:500 internal server error|502 bad gateway|503 service unavailable"
            r"|504 gateway time-?out)\b",
            re.I,
        ),
    ),
    # Go's crypto/x509 refusing the registry's certificate (`x509: certificate signed by
    # unknown authority`, `… has expired or is not yet valid`, `… is valid for …, not …`),
    # behind crypto/tls's `tls: failed to verify certificate: %w` since Go 1.20.
    (PullError.UNTRUSTED, LazyPattern(r"\bx509: |tls: failed to verify certificate", re.I)),
    # containerd remotes/docker/authorizer.go `doBearerAuth`: with no login for the registry
    # (no secret) it asks the token service anonymously, `failed to fetch anonymous token: %w`;
    # refused, the registry wants a login the pull never sent. A refused login is `oauth token`.
    (
        PullError.LOGIN_NEEDED,
        LazyPattern(r"fetch anonymous token: .*\b(?:401 unauthorized|403 forbidden)\b", re.I),
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
    # containerd's own store on the machine lacks a piece of the image it had recorded: its
    # metadata store's `content digest %v: %w` (metadata/content.go, errdefs.ErrNotFound) or
    # its blob store's `blob %s expected at %s: %w` around `blob not found: %w`
    # (content/local/store.go ReaderAt, OpenReader), while unpacking
    # or extracting a layer (containerd#3604, #3937, #8674); or its snapshot store lacks a
    # layer it had recorded: the metadata store's `parent snapshot %v does not exist: %w` and
    # `snapshot %v does not exist: %w` (core/metadata/snapshot.go), the snapshotter's own
    # `parent does not exist: %w`, `failed to get active snapshot %q: %w` and `missing parent
    # %q of snapshot %q: %w` (core/snapshots/storage/bolt.go), all errdefs.ErrNotFound, under
    # core/unpack/unpacker.go's `failed to prepare extraction snapshot %q: %w` or `failed to
    # commit snapshot %s: %w` (containerd#2382, #3787, #10835). The registry resolved the
    # image; its `not found` is not the registry's, so this is read before a missing image.
    (
        PullError.COPY_DAMAGED,
        LazyPattern(
            r"content digest \S+: not found|blob \S+ expected at \S+: blob not found"
            r"|\bsnapshot\b.*\bdoes not exist: not found|\bparent does not exist: not found"
            r"|\b(?:active|of) snapshot\b.*: not found",
            re.I,
        ),
    ),
    (PullError.NOT_FOUND, LazyPattern(r"\bnot found\b|manifest unknown|name unknown", re.I)),
)
_EITHER = LazyPattern(r"repository does not exist or may require authorization", re.I)

_URL = LazyPattern(r"\b[a-z][a-z0-9+.-]*://[^\s\"]+", re.I)
_QUOTED_WORD = LazyPattern(r'"[^"\s]*"')
# A reference's characters: what may stand right before or after one that is whole.
_BEFORE = r"(?<![\w./:@-])"
_AFTER = r"(?![\w./@-]|:\w)"
# distribution/reference's domain: dotted host, `localhost` or `host:port`, then a path. A
# word with a slash and no domain (`i/o timeout`, `linux/arm64`) is left.
_REGISTRY_REFERENCE = LazyPattern(
    rf"{_BEFORE}(?:localhost|[\w-]+(?:\.[\w-]+)+|[\w-]+:\d+)(?::\d+)?/[\w./:@-]*\w{_AFTER}"
)
# containers/image docker_image_src.go: `reading manifest %s in %s`, tag or digest first.
_CRIO_MANIFEST_TAG = LazyPattern(r"(?<=reading manifest )\S+(?= in )")


def _spellings(image: str) -> set[str]:
    """How the runtimes print `image` beyond what `_REGISTRY_REFERENCE` takes out: as written
    (Docker's `manifest for %s not found`), familiar with its tag (`x:latest` for `x`), and its
    registry's name alone (CRI-O's `pinging container registry %s`, the resolver's `lookup %s`).
    A plain word (`x` alone) is not among them: it may be one of the runtime's own words."""
    said = {image}
    try:
        ref = parse_image(image)
    except ImageReferenceError:
        ref = None  # another container's name the kubelet refused: nothing to normalise
    if ref is not None:
        said |= {ref.registry, ref.host}
        if ref.registry == DOCKER_HUB and ref.tag:
            said.add(f"{ref.repository.removeprefix('library/')}:{ref.tag}")
    return {s for s in said if any(c in s for c in "./:@")}


def _without_references(message: str, images: Iterable[str]) -> str:
    """`message` with the image references, URLs and registry names taken out."""
    text = _QUOTED_WORD.sub(" ", _URL.sub(" ", message))
    spellings = sorted({s for image in images for s in _spellings(image)}, key=len, reverse=True)
    if spellings:
        names = "|".join(re.escape(s) for s in spellings)
        text = re.sub(rf"{_BEFORE}(?:{names}){_AFTER}", " ", text, flags=re.I)
    return _CRIO_MANIFEST_TAG.sub(" ", _REGISTRY_REFERENCE.sub(" ", text))


def pull_error(message: str, images: Iterable[str] = ()) -> PullError | None:
    """What the kubelet's message says stopped the pull, read with the references to `images`
    (the pod's own) and every other image reference taken out; None when it says none."""
    words = _without_references(message, images)
    for error, pattern in _PATTERNS:
        if error is not PullError.PULL_LIMIT and _EITHER.search(words):
            return None  # Docker Hub's answer for a missing image and a refused login alike
        if pattern.search(words):
            return error
    return None


def failed_pull(reason: str, message: str, images: Iterable[str] = ()) -> PullError | None:
    """What stopped the pull of a container waiting in `reason` (pull_reasons.py) with the
    kubelet's `message`: the reason itself where the kubelet named the cause, else the
    message's words (`pull_error`)."""
    return _REASONS.get(reason) or pull_error(message, images)


def pod_images(pod: Mapping[str, Any]) -> tuple[str, ...]:
    """The images `pod` names: its spec's as written, its containers' statuses' as the
    runtime reports them (kuberuntime: the normalised name when it differs)."""
    statuses = (str(s.get("image") or "") for s in o.container_statuses(pod))
    return (*o.all_images(o.pod_spec(pod)), *(image for image in statuses if image))
