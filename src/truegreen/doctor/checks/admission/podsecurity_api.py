"""The level a namespace's Pod Security admission enforces, from its labels.

Ground truth, kubernetes/kubernetes staging/src/k8s.io/pod-security-admission api/helpers.go
(PolicyToEvaluate, ParseLevel, ParseVersion): the `enforce` and `enforce-version` labels; a
value that does not parse is enforced as `restricted:latest`. What the level refuses is
podsecurity.py, which only a namespace that enforces more than privileged needs.
"""

import re
from collections.abc import Mapping
from enum import StrEnum

from msgspec import Struct

ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"
VERSION_LABEL = "pod-security.kubernetes.io/enforce-version"
_VERSION = re.compile(r"^v1\.(0|[1-9][0-9]*)$")


class Level(StrEnum):
    """The Pod Security Standards levels, least to most strict."""

    PRIVILEGED = "privileged"
    BASELINE = "baseline"
    RESTRICTED = "restricted"


Version = tuple[int, int] | None
"""(1, minor), or None for `latest`."""


class Policy(Struct, frozen=True):
    """The level a namespace enforces, at a version of the standards."""

    level: Level
    version: Version = None
    unparsed: tuple[str, ...] = ()
    """Labels whose value did not parse (the server then enforces restricted:latest)."""

    def __str__(self) -> str:
        version = "latest" if self.version is None else f"v{self.version[0]}.{self.version[1]}"
        return f"{self.level}:{version}"


def enforced_policy(labels: Mapping[str, str]) -> Policy:
    """The enforced policy from a namespace's labels; privileged when none is set."""
    unparsed = []
    level = Level.PRIVILEGED
    if ENFORCE_LABEL in labels:
        text = labels[ENFORCE_LABEL]
        if text in tuple(Level):
            level = Level(text)
        else:
            level = Level.RESTRICTED
            unparsed.append(f"{ENFORCE_LABEL}={text}")
    version: Version = None
    text = labels.get(VERSION_LABEL, "latest")
    match = _VERSION.match(text)
    if match:
        version = (1, int(match[1]))
    elif text != "latest":
        unparsed.append(f"{VERSION_LABEL}={text}")
    return Policy(level, version, tuple(unparsed))
