"""Rendering a tick: one line per workload for people, the documented JSON for machines.

Names, reasons and images come from the cluster and from registries: in text they are shown
with control characters escaped, so a hostile name cannot recolour, rewrite or hide a line.
JSON needs no such care (its encoder escapes control characters itself).
"""

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from truegreen.kubectl import Kubectl
from truegreen.markup import escape
from truegreen.plain_words import Login
from truegreen.refresh.annotations import OPT_IN_LABEL, STALE_PIN, container_key, key_prefix
from truegreen.refresh.report import Outcome, TickReport, WorkloadReport
from truegreen.wrapping import wrap

if TYPE_CHECKING:
    from truegreen.failure import Failure


OPT_IN = f"{OPT_IN_LABEL}=enabled"
"""The default selector of opted-in workloads."""

# C0 controls, DEL and the C1 controls; bidirectional marks, embeddings, overrides, isolates.
_UNSAFE = [*range(0x20), 0x7F, *range(0x80, 0xA0)]
_BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_ESCAPES = {code: f"\\x{code:02x}" for code in _UNSAFE}
_ESCAPES |= {code: f"\\u{code:04x}" for code in _BIDI}
_ESCAPES |= {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"}


def shown(text: str) -> str:
    """`text` safe for a terminal and as markup: control characters as visible escapes.
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
    Outcome.INTERRUPTED: "yellow",
}


class Cluster(Struct, frozen=True):
    """Which cluster the tick read, for the lines that say it could not: its address, where
    the connection settings came from, the kubectl that reaches it, and how it logs in."""

    server: str
    source: str
    kubectl: Kubectl
    login: Login


def first_read_failure(report: TickReport, cluster: Cluster) -> tuple[str, str, str] | None:
    """When the tick's first read failed (nothing else was read): its code, headline and
    remedy, in the words doctor uses (the address and how to check it for a connection that
    failed, the permission for a refused read)."""
    from truegreen.cluster import Kind, ReadFailure
    from truegreen.plain_words import (
        CLUSTER_WORDING,
        fill,
        no_login,
        plain_connection_why,
        plain_why,
        read_remedy,
    )

    cant = report.first_read
    if cant is None:
        return None
    if (unsent := no_login(cant, cluster.login)) is not None:
        # No login could be made, so nothing was sent: the plugin that did not answer, or
        # failed, is named as doctor names it, never the cluster, which was not asked.
        code, fields = unsent
        headline, remedy = fill(
            CLUSTER_WORDING[code],
            server=cluster.server,
            source=cluster.source,
            check=cluster.kubectl.cluster("auth", "whoami"),
            **fields,
        )
        return code, headline, remedy
    if not cant.reached and cant.failure is not ReadFailure.UNAUTHORIZED:
        headline, remedy = fill(
            CLUSTER_WORDING["cluster-unreachable"],
            server=cluster.server,
            source=cluster.source,
            why=plain_connection_why(cant),
            check=cluster.kubectl.cluster("cluster-info"),
        )
        return "cluster-unreachable", headline, remedy
    headline = f"Couldn't look for the opted-in workloads: {plain_why(Kind.DEPLOYMENT, cant)}."
    return "cant-read", headline, read_remedy(Kind.DEPLOYMENT, cant, cluster.kubectl)


def to_json(report: TickReport, *, dry_run: bool, cluster: Cluster | None = None) -> dict[str, Any]:
    """Per workload and container: image, tag, digests, decision, and what was written; a
    `headline` {code, text, remedy} when the first read failed (else null)."""
    failed = first_read_failure(report, cluster) if cluster is not None else None
    return {
        "schema_version": SCHEMA_VERSION,
        "exit_code": int(report.exit_code),
        "headline": (
            None if failed is None else {"code": failed[0], "text": failed[1], "remedy": failed[2]}
        ),
        "dry_run": dry_run,
        "cant_read": list(report.cant_read),
        "registry_requests": report.registry_requests,
        "distinct_references": report.distinct_references,
        "workloads": [
            {
                "kind": w.kind,
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


class ProgressWords:
    """A tick's progress (`tick.TickProgress`) told in plain words, one line at a time, for a
    terminal's status line: `Looking up image digests: 2 of 5`, `Restarting train/api`,
    `Waiting for train/api: 1 of 3 copies updated`."""

    def __init__(self, told: Callable[[str], None]) -> None:
        self._told = told
        self._lock = threading.Lock()
        self._total = 0
        self._done = 0

    def looking_up(self, total: int) -> None:
        """Look-ups start."""
        with self._lock:
            self._total, self._done = total, 0
            self._told(f"Looking up image digests: 0 of {total}")

    def looked_up(self) -> None:
        """One more look-up done (called from the look-up threads)."""
        with self._lock:
            self._done += 1
            self._told(f"Looking up image digests: {self._done} of {self._total}")

    def restarting(self, workload: str) -> None:
        """A restart write is being made."""
        self._told(f"Restarting {workload}")

    def waiting(self, workload: str, progress: str) -> None:
        """One look at a rollout."""
        self._told(f"Waiting for {workload}: {progress}")


def interrupted_json(report: TickReport, failure: "Failure", *, dry_run: bool) -> dict[str, Any]:
    """The document of a tick a signal stopped after its workloads were read: the tick so far
    (`interrupted` workloads with the writes they made), under the failure's exit code and
    headline."""
    document = to_json(report, dry_run=dry_run)
    document["exit_code"] = int(failure.exit_code)
    document["headline"] = {"code": failure.code, "text": failure.text, "remedy": failure.remedy}
    return document


def failure_json(failure: "Failure") -> dict[str, Any]:
    """The document of a tick that could not start (a kubeconfig that cannot be used, a bad
    flag, a bug): the shared failure document (truegreen.failure) with a tick's fields, nothing
    read and nothing written."""
    from truegreen.failure import failure_document

    return failure_document(
        failure,
        dry_run=False,
        cant_read=[],
        registry_requests=0,
        distinct_references=0,
        workloads=[],
    )


def to_text(
    report: TickReport,
    *,
    verbose: bool,
    width: int | None = None,
    kubectl: Kubectl | None = None,
    selector: str = OPT_IN,
    cluster: Cluster | None = None,
) -> list[str]:
    """Rich markup lines: one per workload (and what to do after a failed rollout), stale pins
    always, writes and Events when verbose, a summary line; wrapped to `width` when given.
    `kubectl` writes the commands (the connection flags refresh was given); `selector` is the
    one the tick used, named when it matched nothing; `cluster` names the cluster when the
    first read failed, with what to do."""
    kubectl = kubectl or Kubectl()
    lines: list[str] = []
    failed = first_read_failure(report, cluster) if cluster is not None else None
    if failed is not None:
        lines += _wrapped("[magenta]?[/] ", 2, failed[1], width, 2)
        lines += _wrapped("  → ", 4, failed[2], width, 4)
        if verbose:
            lines += _wrapped("    ", 4, f"could not read: {report.cant_read[0]}", width, 6)
    for reason in report.cant_read if failed is None else ():
        lines += _wrapped("[magenta]could not read:[/] ", 16, reason, width, 2)
    for w in report.workloads:
        style = _STYLES[w.outcome]
        where = f"{w.namespace}/{w.name}"
        lines += _wrapped(
            f"[{style}]{w.outcome.value:<18}[/] ", 19, f"{where}: {w.reason}", width, 4
        )
        if w.outcome is Outcome.ROLLOUT_FAILED:
            target = f"{w.kind.lower()}/{w.name}"
            remedy = (
                f"See why with {kubectl.elsewhere(w.namespace, 'describe', target)}; the next run "
                "tries again, or go back to the version before with "
                f"{kubectl.elsewhere(w.namespace, 'rollout', 'undo', target)}."
            )
            lines += _wrapped("    → ", 6, remedy, width, 6)
        for pin in _stale_pins(w):
            lines += _wrapped("    [yellow]![/] ", 6, pin, width, 6)
        if verbose:
            lines += _verbose_lines(w, width)
    if not report.workloads and not report.cant_read:
        hint = (
            f"No workload here is opted in to refresh (selector {selector}). Opt one in with "
            f"{kubectl.here('label', 'deployment', 'NAME', selector)}."
        )
        lines += _wrapped("", 0, hint, width, 0)
    summary = (
        f"{_count(len(report.workloads), 'workload')}, "
        f"{_count(report.distinct_references, 'distinct image')}, "
        f"{_count(report.registry_requests, 'registry request')}."
    )
    lines += _wrapped("", 0, summary, width, 0)
    return lines


def _verbose_lines(w: WorkloadReport, width: int | None) -> list[str]:
    """Each container's decision, each write's annotations, each Event: Kubernetes details."""
    lines = []
    for c in w.containers:
        decision = f"{c.container}: {c.image} → {c.decision.value}" + (
            f" (newest {c.newest})" if c.newest else ""
        )
        lines += _wrapped("    ", 4, decision, width, 6)
    for write in w.writes:
        state = (
            "written"
            if write.applied
            else ("FAILED: " + write.error if write.error else "not written")
        )
        lines += _wrapped("    ", 4, f"write {write.step}: {state}", width, 6)
        for key, value in sorted(write.annotations.items()):
            change = f"{key} removed" if value is None else f"{key}={value}"
            lines += _wrapped("      ", 6, change, width, 8)
        if write.template:
            lines += _wrapped("      ", 6, f"template: {write.template}", width, 8)
    for event in w.events:
        state = "written" if event.written else f"FAILED: {event.error}"
        lines += _wrapped("    ", 4, f"event {event.reason.value}: {state}", width, 6)
    return lines


def _stale_pins(w: WorkloadReport) -> list[str]:
    """Plain lines for the stale pins this tick found (written, or planned in a dry run)."""
    found = {}
    for write in w.writes:
        if write.step != "stale-pins" or write.error:
            continue
        for key, value in write.annotations.items():
            if value and key.startswith(key_prefix(STALE_PIN)):
                found[key] = value
    lines = []
    for c in w.containers:
        value = found.get(container_key(STALE_PIN, c.container))
        if value:
            tag, _, newest = value.partition(" ")
            lines.append(
                f"{c.container} stays on its pinned image while its tag {tag} has moved on"
                + (f" to {newest}" if newest else "")
            )
    return lines


def _count(count: int, noun: str) -> str:
    """`1 workload`, `2 workloads`."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _wrapped(prefix: str, taken: int, text: str, width: int | None, indent: int) -> list[str]:
    """`prefix` (markup, `taken` columns wide) then `text`, wrapped and shown safely."""
    first, *rest = wrap(text.translate(_ESCAPES), width, first=taken, indent=indent)
    return [prefix + escape(first), *(escape(line) for line in rest)]
