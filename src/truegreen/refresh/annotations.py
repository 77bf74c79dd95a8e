"""The annotation keys refresh writes, valid Kubernetes keys for any container name.

An annotation key is `prefix/name` where the name part is at most 63 characters. Container
names may themselves be 63 characters long, so a per-container key that would be too long keeps
a readable head of the container name and adds a short hash of the whole name.
"""

import re

PREFIX = "truegreen.io"
OPT_IN_LABEL = f"{PREFIX}/refresh"
TRACK_TAG = "track-tag"
STALE_PIN = "stale-pin"
DANGLING_PIN = "dangling-pin"
RECORDED_DIGEST = "digest"
LATCHED = f"{PREFIX}/refresh-latched"
ATTEMPTS = f"{PREFIX}/refresh-attempts"
PENDING = f"{PREFIX}/refresh-pending"

_NAME_LIMIT = 63
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_VALID_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


def key_prefix(kind: str) -> str:
    """What every per-container key of `kind` starts with: `truegreen.io/<kind>.`."""
    return f"{PREFIX}/{kind}."


def container_key(kind: str, container: str) -> str:
    """`truegreen.io/<kind>.<container>`, shortened with a hash when the name part is too long."""
    name = f"{kind}.{container}"
    if len(name) > _NAME_LIMIT or not _VALID_NAME.match(name):
        import hashlib  # only for a long name: doctor's start does not pay for it

        digest = hashlib.sha256(container.encode()).hexdigest()[:10]
        room = _NAME_LIMIT - len(kind) - len(digest) - 2
        head = re.sub(r"[^-A-Za-z0-9_.]", "-", container)[:room]
        name = f"{kind}.{head}-{digest}"
    return f"{PREFIX}/{name}"


def is_valid_key(key: str) -> bool:
    """Whether `key` is a valid annotation key: an optional DNS-subdomain prefix of at most
    253 characters and `/`, then a name of 1-63 valid characters (apimachinery's rule)."""
    prefix, slash, name = key.rpartition("/")
    return (
        (not slash or (len(prefix) <= 253 and bool(_DNS_SUBDOMAIN.fullmatch(prefix))))
        and len(name) <= _NAME_LIMIT
        and bool(_VALID_NAME.match(name))
    )
