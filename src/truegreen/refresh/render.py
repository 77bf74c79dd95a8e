"""Rendering a tick: one line per workload for people, the documented JSON for machines.

Names, reasons and images come from the cluster and from registries: in text they are shown
with control characters escaped, so a hostile name cannot recolour, rewrite or hide a line.
JSON needs no such care (its encoder escapes control characters itself).
"""

from typing import Any

from rich.markup import escape

from truegreen.refresh.report import Outcome, TickReport

# C0 controls, DEL and the C1 controls; bidirectional marks, embeddings, overrides, isolates.
_UNSAFE = [*range(0x20), 0x7F, *range(0x80, 0xA0)]
_BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_ESCAPES = {code: f"\\x{code:02x}" for code in _UNSAFE}
_ESCAPES |= {code: f"\\u{code:04x}" for code in _BIDI}
_ESCAPES |= {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"}


def shown(text: str) -> str:
    """`text` safe for a terminal and for rich markup: control characters as visible escapes.
    (The same rule as `truegreen.textsafe.terminal_safe`, which replaces this once merged.)"""
    return escape(text.translate(_ESCAPES))


SCHEMA_VERSION = 1
_STYLES = {
    Outcome.CONVERGED: "green",
    Outcome.RESTARTED: "green",
    Outcome.RESTARTED_BY_OTHER: "green",
    Outcome.LATCHED: "yellow",
    Outcome.PAUSED: "yellow",
    Outcome.IN_PROGRESS: "yellow",
    Outcome.PLANNED: "cyan",
    Outcome.ROLLOUT_FAILED: "red",
    Outcome.REFUSED: "red",
    Outcome.DANGLING_PIN: "red",
    Outcome.INVALID_IMAGE: "red",
    Outcome.COULD_NOT_CHECK: "magenta",
}


def to_json(report: TickReport, *, dry_run: bool) -> dict[str, Any]:
    """Per workload and container: image, tag, digests, decision, and what was written."""
    return {
        "schema_version": SCHEMA_VERSION,
        "exit_code": int(report.exit_code),
        "dry_run": dry_run,
        "cant_read": list(report.cant_read),
        "registry_requests": report.registry_requests,
        "distinct_references": report.distinct_references,
        "workloads": [
            {
                "namespace": w.namespace,
                "name": w.name,
                "outcome": w.outcome.value,
                "reason": w.reason,
                "containers": [
                    {
                        "container": c.container,
                        "image": c.image,
                        "tracked_tag": c.tracked_tag,
                        "newest_digest": c.newest,
                        "recorded_digest": c.recorded,
                        "running_digests": list(c.running),
                        "decision": c.decision.value,
                        "reason": c.reason,
                    }
                    for c in w.containers
                ],
                "events": [
                    {
                        "reason": e.reason.value,
                        "type": "Warning" if e.reason.warning else "Normal",
                        "message": e.message,
                        "written": e.written,
                        "error": e.error,
                    }
                    for e in w.events
                ],
                "writes": [
                    {
                        "step": write.step,
                        "annotations": dict(write.annotations),
                        "template": write.template,
                        "applied": write.applied,
                        "error": write.error,
                    }
                    for write in w.writes
                ],
            }
            for w in report.workloads
        ],
    }


def failure_json(exit_code: int, what: str, todo: str) -> dict[str, Any]:
    """The document of a tick that could not start (a kubeconfig that cannot be used, a bad
    flag, a bug): its exit code, the reason in `error`, nothing read and nothing written."""
    return {
        "schema_version": SCHEMA_VERSION,
        "exit_code": exit_code,
        "dry_run": False,
        "error": {"text": what, "remedy": todo},
        "cant_read": [],
        "registry_requests": 0,
        "distinct_references": 0,
        "workloads": [],
    }


def to_text(report: TickReport, *, verbose: bool) -> list[str]:
    """Rich markup lines: one per workload, writes and Events when verbose, a summary line."""
    lines = [f"[magenta]could not read:[/] {shown(r)}" for r in report.cant_read]
    for w in report.workloads:
        style = _STYLES[w.outcome]
        lines.append(
            f"[{style}]{w.outcome.value:<18}[/] {shown(w.namespace)}/{shown(w.name)}: "
            f"{shown(w.reason)}"
        )
        if verbose:
            for c in w.containers:
                lines.append(
                    f"    {shown(c.container)}: {shown(c.image)} → {c.decision.value}"
                    + (f" (newest {shown(c.newest)})" if c.newest else "")
                )
            for write in w.writes:
                state = (
                    "written"
                    if write.applied
                    else ("FAILED: " + write.error if write.error else "not written")
                )
                lines.append(
                    f"    write {write.step}: {shown(state)} {shown(str(dict(write.annotations)))}"
                )
            for event in w.events:
                state = "written" if event.written else f"FAILED: {event.error}"
                lines.append(f"    event {event.reason.value}: {shown(state)}")
    lines.append(
        f"{len(report.workloads)} workloads, {report.distinct_references} distinct images, "
        f"{report.registry_requests} registry requests."
    )
    return lines
