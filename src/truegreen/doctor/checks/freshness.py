"""Image freshness: what refresh has recorded on the workloads, so that doctor and refresh tell
the same story: stale or dangling pins, a refresh stopped by its flap guard, a failed attempt
it will retry, and a restart that never finished (its pending marker outlived the rollout
timeout)."""

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Final

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject, Listed
from truegreen.doctor.checks.base import Words, format_age, workloads_of
from truegreen.doctor.environment import Environment, owner_words
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.kubectl import truegreen_command
from truegreen.plain_words import Wording
from truegreen.refresh.annotations import (
    ATTEMPTS,
    DANGLING_PIN,
    LATCHED,
    STALE_PIN,
    AttemptCounter,
    PendingRestart,
    container_key,
)

CHECK = CheckId.FRESHNESS

OK: Final = "freshness.ok"
PIN_STALE: Final = "freshness.stale-pin"
PIN_DANGLING: Final = "freshness.dangling-pin"
REFRESH_STOPPED: Final = "freshness.refresh-stopped"
REFRESH_FAILED: Final = "freshness.refresh-failed"
REFRESH_UNFINISHED: Final = "freshness.refresh-unfinished"
CANT_READ: Final = "freshness.cant-read"

WORDS: Final[dict[str, Wording]] = {
    OK: Wording("Automatic image refresh has nothing to report.", ""),
    PIN_STALE: Wording(
        "{workload} runs a pinned image of '{container}' that is behind the tag {tag}.",
        "Move the pin to the newest image, or stop following {tag}.",
    ),
    PIN_DANGLING: Wording(
        "{workload} is pinned to an image of '{container}' that the registry no longer has; "
        "it can't start again.",
        "Pin '{container}' to an image that exists.",
    ),
    REFRESH_STOPPED: Wording(
        "Automatic image refresh of {workload} has stopped after {tries} to update it.",
        "See why with {describe}; once that is fixed, let refresh try again with {command}.",
    ),
    REFRESH_FAILED: Wording(
        "Automatic image refresh of {workload} could not update it ({tries} so far); the next "
        "run tries again.",
        "See why its new copies did not become ready with {command}.",
    ),
    REFRESH_UNFINISHED: Wording(
        "An automatic image refresh of {workload} started {age} ago and has not finished.",
        "Run {refresh} to finish it, and check that the scheduled refresh still runs ({command}).",
    ),
    CANT_READ: Wording("Couldn't check image freshness: {why}.", "{remedy}"),
}
"""Every headline and remedy of the check, by code."""

SAY: Final = Words(CHECK, WORDS)
ROLLOUT_TIMEOUT = timedelta(seconds=600)
"""refresh's default `--rollout-timeout`: a restart pending longer than this never finished."""


def check(env: Environment) -> list[Finding]:
    """Findings from refresh's annotations (and its failure Events) on the workloads."""
    items, findings = workloads_of(env, SAY)
    failures = _last_failures(env)
    for workload in items:
        findings += _pin_findings(workload)
        last = failures.get((str(workload.get("kind")), o.name_of(workload)))
        state = _refresh_state(env, workload, last)
        if state is not None:
            findings.append(state)
    return findings or [SAY.ok()]


def _pin_findings(workload: KubeObject) -> list[Finding]:
    annotations = o.annotations_of(workload)
    spec = o.pod_spec(o.pod_template(workload))
    findings = []
    for container in [*o.init_containers(spec), *o.containers(spec)]:
        cname = str(container.get("name", ""))
        for marker, code, status in (
            (DANGLING_PIN, PIN_DANGLING, Status.FAIL),
            (STALE_PIN, PIN_STALE, Status.WARN),
        ):
            value = annotations.get(container_key(marker, cname))
            if value:
                findings.append(
                    SAY.finding(
                        status,
                        Basis.MEASURED,
                        code,
                        details=(f"{o.ref(workload)} {container_key(marker, cname)}: {value}",),
                        objects=(o.ref(workload),),
                        workload=owner_words(workload),
                        container=cname,
                        tag=str(value).split(" ", 1)[0],
                    )
                )
    return findings


def _refresh_state(
    env: Environment, workload: KubeObject, failure: tuple[datetime | None, str] | None
) -> Finding | None:
    """refresh's own state on one workload: stopped, failed and retrying, or unfinished."""
    annotations = o.annotations_of(workload)
    kubectl = env.settings.kubectl
    ref = o.ref(workload)
    target = f"{str(workload.get('kind', '')).lower()}/{o.name_of(workload)}"
    attempts = AttemptCounter.read(annotations).count
    details = [
        f"{ref} {key}: {annotations[key]}" for key in (LATCHED, ATTEMPTS) if key in annotations
    ]
    if failure is not None:
        when, message = failure
        ago = f" {format_age(env.now - when)} ago" if when is not None else ""
        details.append(f"last failed rollout{ago}: {message}")
    describe = kubectl.here("describe", target)
    if annotations.get(LATCHED):
        return SAY.finding(
            Status.WARN,
            Basis.MEASURED,
            REFRESH_STOPPED,
            details=details,
            objects=(ref,),
            workload=owner_words(workload),
            tries=_tries(attempts),
            describe=describe,
            command=kubectl.here("annotate", target, f"{LATCHED}-", f"{ATTEMPTS}-"),
        )
    pending = PendingRestart.read(annotations)
    if pending is not None:
        started = o.parse_time(pending.stamp)
        if started is None or env.now - started <= ROLLOUT_TIMEOUT:
            return None  # a restart under way: the workloads check shows its progress
        return SAY.finding(
            Status.WARN,
            Basis.MEASURED,
            REFRESH_UNFINISHED,
            details=[*details, f"{ref} restart pending since {pending.stamp}"],
            objects=(ref,),
            workload=owner_words(workload),
            age=format_age(env.now - started),
            refresh=truegreen_command("refresh", *kubectl.flags()),
            command=kubectl.cluster("get", "cronjobs", "--all-namespaces"),
        )
    if attempts:
        return SAY.finding(
            Status.WARN,
            Basis.MEASURED,
            REFRESH_FAILED,
            details=details,
            objects=(ref,),
            workload=owner_words(workload),
            tries=_tries(attempts),
            command=describe,
        )
    return None


def _tries(count: int) -> str:
    """`1 failed try`, `3 failed tries`."""
    return f"{count} failed {'try' if count == 1 else 'tries'}"


_REFRESHED = ("Deployment", "StatefulSet", "DaemonSet")
"""The kinds refresh writes its Events on."""


def _last_failures(
    env: Environment,
) -> Mapping[tuple[str, str], tuple[datetime | None, str]]:
    """The newest failed-rollout Event refresh left per workload (kind and name): when, and its
    words. A StatefulSet and a Deployment of the same name each keep their own."""
    read = env.refresh_failures
    if not isinstance(read, Listed):
        return {}
    newest: dict[tuple[str, str], tuple[datetime | None, str]] = {}
    for event in read.items:
        involved = o.mapping(event.get("involvedObject"))
        kind = str(involved.get("kind", ""))
        if kind not in _REFRESHED:
            continue
        when = o.parse_time(event.get("lastTimestamp")) or o.parse_time(event.get("eventTime"))
        key = (kind, str(involved.get("name", "")))
        before = newest.get(key)
        if before is None or (when is not None and (before[0] is None or when > before[0])):
            newest[key] = (when, str(event.get("message", "")))
    return newest
