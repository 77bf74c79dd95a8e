"""Rendering a tick: one line per workload for people, the documented JSON for machines."""

from typing import Any

from truegreen.refresh.report import Outcome, TickReport


def _escape(text: str) -> str:
    """Rich markup escaped; rich is imported only when text is rendered (not for JSON)."""
    from rich.markup import escape

    return escape(text)


SCHEMA_VERSION = 1
_STYLES = {
    Outcome.CONVERGED: "green",
    Outcome.RESTARTED: "green",
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


def to_text(report: TickReport, *, verbose: bool) -> list[str]:
    """Rich markup lines: one per workload, writes when verbose, a summary line."""
    lines = [f"[magenta]could not read:[/] {_escape(r)}" for r in report.cant_read]
    for w in report.workloads:
        style = _STYLES[w.outcome]
        lines.append(
            f"[{style}]{w.outcome.value:<15}[/] "
            f"{_escape(w.namespace)}/{_escape(w.name)}: {_escape(w.reason)}"
        )
        if verbose:
            for c in w.containers:
                lines.append(
                    f"    {_escape(c.container)}: {_escape(c.image)} → {c.decision.value}"
                    + (f" (newest {c.newest})" if c.newest else "")
                )
            for write in w.writes:
                state = (
                    "written"
                    if write.applied
                    else ("FAILED: " + write.error if write.error else "not written")
                )
                lines.append(
                    f"    write {write.step}: {_escape(state)} "
                    f"{_escape(str(dict(write.annotations)))}"
                )
    lines.append(
        f"{len(report.workloads)} workloads, {report.distinct_references} distinct images, "
        f"{report.registry_requests} registry requests."
    )
    return lines
