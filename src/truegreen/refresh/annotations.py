"""The marks refresh leaves on a workload: its annotation keys (valid Kubernetes keys for any
container name) and the reasons of the Events it writes.

An annotation key is `prefix/name` where the name part is at most 63 characters. Container
names may themselves be 63 characters long, so a per-container key that would be too long keeps
a readable head of the container name and adds a short hash of the whole name.
"""

import json
import re
from collections.abc import Mapping
from enum import StrEnum

from msgspec import Struct

from truegreen.apinames import NAME_LIMIT, is_name_part, qualified_name_problem
from truegreen.cluster.kinds import Kind

PREFIX = "truegreen.io"
OPT_IN_LABEL = f"{PREFIX}/refresh"
REFRESHED_KINDS = (Kind.DEPLOYMENT, Kind.STATEFUL_SET, Kind.DAEMON_SET)
"""The kinds refresh keeps on the newest image, in the order a tick lists them: opted in by the
same label, restarted by the same template change, marked by the same annotations."""
TRACK_TAG = "track-tag"
STALE_PIN = "stale-pin"
DANGLING_PIN = "dangling-pin"
RECORDED_DIGEST = "digest"
LATCHED = f"{PREFIX}/refresh-latched"
ATTEMPTS = f"{PREFIX}/refresh-attempts"
PENDING = f"{PREFIX}/refresh-pending"
RESTARTED = f"{PREFIX}/refresh-restarted"
"""Refresh's latest restart (its target and stamp, as the marker holds them), written with each
restart and cleared only by a verified record: the marker goes when a restart fails, but the
template still carries that restart, and a later tick must tell it from someone else's."""
EVENT_COMPONENT = "truegreen-refresh"
"""Who refresh's Events say wrote them (`source.component` and `reportingComponent`): doctor
knows its own tool's Events by it."""

_COUNT_DIGITS = 9
"""The most digits an attempt count is read with: any flap guard's bound fits."""


def key_prefix(kind: str) -> str:
    """What every per-container key of `kind` starts with: `truegreen.io/<kind>.`."""
    return f"{PREFIX}/{kind}."


def container_key(kind: str, container: str) -> str:
    """`truegreen.io/<kind>.<container>`, shortened with a hash when the name part is too long."""
    name = f"{kind}.{container}"
    if not is_name_part(name):
        import hashlib  # only for a long name: doctor's start does not pay for it

        digest = hashlib.sha256(container.encode()).hexdigest()[:10]
        room = NAME_LIMIT - len(kind) - len(digest) - 2
        head = re.sub(r"[^-A-Za-z0-9_.]", "-", container)[:room]
        name = f"{kind}.{head}-{digest}"
    return f"{PREFIX}/{name}"


def is_valid_key(key: str) -> bool:
    """Whether `key` is a valid annotation key (truegreen.apinames: apimachinery's rule)."""
    return qualified_name_problem(key) is None


class EventReason(StrEnum):
    """The Kubernetes Event reasons refresh writes on a Deployment it acted on."""

    IMAGE_REFRESHED = "ImageRefreshed"
    ROLLOUT_FAILED = "RefreshRolloutFailed"
    LATCHED = "RefreshLatched"
    STALE_PIN = "StalePin"
    DANGLING_PIN = "DanglingPin"

    @property
    def warning(self) -> bool:
        """Warning events call for a look; only a verified refresh is Normal."""
        return self is not EventReason.IMAGE_REFRESHED


class AttemptCounter(Struct, frozen=True):
    """Consecutive restart attempts at one target (a set of container digests)."""

    count: int
    target: str

    @classmethod
    def read(cls, annotations: Mapping[str, str]) -> "AttemptCounter":
        """The counter from its annotation (`<count> <target id>`); zero when absent or bad
        (digits beyond ASCII, such as `²`, which `int` refuses, or more than a count needs)."""
        count, _, target = annotations.get(ATTEMPTS, "").partition(" ")
        readable = count.isascii() and count.isdigit() and len(count) <= _COUNT_DIGITS
        return cls(int(count), target) if readable else cls(0, "")

    def at(self, target: str) -> int:
        """Attempts so far at `target`; a moved tag starts counting again."""
        return self.count if self.target == target else 0

    def text(self) -> str:
        """The annotation value."""
        return f"{self.count} {self.target}"


class PendingRestart(Struct, frozen=True):
    """Written with the restart: what it aims at, so a tick that died can be resumed."""

    target: Mapping[str, str]
    stamp: str

    @classmethod
    def read(cls, annotations: Mapping[str, str], key: str = PENDING) -> "PendingRestart | None":
        """The marker (or, with `key` RESTARTED, the latest restart's record), or None when
        absent or unreadable."""
        try:
            value = json.loads(annotations.get(key, ""))
            target = {str(k): str(v) for k, v in dict(value["target"]).items()}
            return cls(target, str(value["stamp"]))
        except (ValueError, KeyError, TypeError, RecursionError):  # nested past the stack
            return None

    def text(self) -> str:
        """The annotation value."""
        return json.dumps({"target": dict(sorted(self.target.items())), "stamp": self.stamp})


def latest_restart(annotations: Mapping[str, str]) -> PendingRestart | None:
    """The latest restart refresh made that no verified record has closed: its record, else a
    pending marker (one left before the record was written with each restart)."""
    return PendingRestart.read(annotations, RESTARTED) or PendingRestart.read(annotations)
