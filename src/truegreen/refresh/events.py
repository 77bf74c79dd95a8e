"""The Kubernetes Events refresh leaves on each Deployment it acted on, so `kubectl describe
deployment` and every tool that reads Events show what it did. Pure: tick.py writes them.

An Event follows what landed, not what was attempted: a refresh only once its record is
written, a latch or a pin finding only when its annotation was newly set (a pin that stays
stale does not repeat its Event every tick).
"""

from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from truegreen import kubeobjects as o
from truegreen.refresh.annotations import (
    DANGLING_PIN,
    EVENT_COMPONENT,
    STALE_PIN,
    EventReason,
    container_key,
)
from truegreen.refresh.plan import Decision, containers_of
from truegreen.refresh.report import Outcome, WorkloadReport
from truegreen.refresh.steps import kind_of

MESSAGE_LIMIT = 1024
"""events.k8s.io/v1 refuses a note longer than this (its validation's noteLengthLimit)."""
_FIELD_LIMIT = 128
"""reportingComponent and reportingInstance may not be longer (core/v1 Event validation)."""
_NAME_LIMIT = 253
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def planned_events(
    report: WorkloadReport, deployment: Mapping[str, Any]
) -> list[tuple[EventReason, str]]:
    """The Events this workload's tick earned: (reason, plain message), in the order of the
    tick's steps."""
    applied = [w for w in report.writes if w.applied]
    events: list[tuple[EventReason, str]] = []
    pins: dict[str, str | None] = {}
    for write in applied:
        if write.step == "stale-pins":
            pins.update(write.annotations)
    stale = _pin_lines(deployment, pins, STALE_PIN, _stale_line)
    if stale:
        events.append((EventReason.STALE_PIN, stale))
    dangling = _pin_lines(deployment, pins, DANGLING_PIN, _dangling_line)
    if dangling:
        events.append((EventReason.DANGLING_PIN, dangling))
    if any(w.step == "latch" for w in applied):
        events.append((EventReason.LATCHED, report.reason))
    if report.outcome is Outcome.ROLLOUT_FAILED:
        # Counted without a restart, the reason itself says what the pods were found doing.
        counted = any(w.step == "count" for w in report.writes)
        what = "" if counted else "the restart toward the newest image did not complete: "
        events.append(
            (
                EventReason.ROLLOUT_FAILED,
                f"{what}{report.reason}; nothing was recorded, a later run tries again",
            )
        )
    refreshed = report.outcome in (Outcome.RESTARTED, Outcome.RESTARTED_BY_OTHER)
    if refreshed and any(w.step == "record" for w in applied):
        moved = [
            f"{p.container} runs {p.newest}"
            for p in report.containers
            if p.decision is Decision.RESTART and p.newest
        ]
        events.append(
            (
                EventReason.IMAGE_REFRESHED,
                "restarted onto the newest image and checked the new copies run it: "
                + "; ".join(moved),
            )
        )
    return [(reason, _bounded(message)) for reason, message in events]


def _pin_lines(
    deployment: Mapping[str, Any],
    changes: Mapping[str, str | None],
    kind: str,
    line: Callable[[str, str], str],
) -> str:
    lines = []
    for container in containers_of(deployment):
        name = str(container.get("name", ""))
        value = changes.get(container_key(kind, name))
        if value:
            lines.append(line(name, value))
    return "; ".join(lines)


def _stale_line(container: str, value: str) -> str:
    tag, _, newest = value.partition(" ")
    return f"{container} stays on its pinned image while its tag {tag} has moved on to {newest}"


def _dangling_line(container: str, value: str) -> str:
    return f"{container}'s pinned image is gone: {value}"


def _bounded(message: str) -> str:
    return message if len(message) <= MESSAGE_LIMIT else message[: MESSAGE_LIMIT - 1] + "…"


def event_object(
    reason: EventReason,
    message: str,
    deployment: Mapping[str, Any],
    *,
    now: datetime,
    sequence: int,
    instance: str,
) -> dict[str, Any]:
    """A core/v1 Event about `deployment`, as client-go's recorder writes one: named
    `<object>.<hex nanoseconds>`, count 1 with first and last timestamp (what `kubectl
    describe` shows as its age), the writer in `source.component` and `reportingComponent`."""
    meta = o.mapping(deployment.get("metadata"))
    name, namespace = o.name_of(deployment), o.namespace_of(deployment)
    # Integer arithmetic: a float timestamp loses the last microsecond now and then.
    nanoseconds = (now - _EPOCH) // timedelta(microseconds=1) * 1000 + sequence
    suffix = f".{nanoseconds:x}"
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name[: _NAME_LIMIT - len(suffix)] + suffix, "namespace": namespace},
        "involvedObject": {
            "apiVersion": "apps/v1",
            "kind": kind_of(deployment),
            "name": name,
            "namespace": namespace,
            "uid": str(meta.get("uid", "")),
            "resourceVersion": str(meta.get("resourceVersion", "")),
        },
        "reason": reason.value,
        "message": message,
        "type": "Warning" if reason.warning else "Normal",
        "source": {"component": EVENT_COMPONENT},
        "reportingComponent": EVENT_COMPONENT,
        "reportingInstance": instance[:_FIELD_LIMIT],
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }
