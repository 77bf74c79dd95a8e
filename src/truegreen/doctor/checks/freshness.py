"""Image freshness: what refresh has recorded on the workloads, so that doctor and refresh tell
the same story: stale or dangling pins, a refresh stopped by its flap guard, a failed attempt
it will retry, and a restart that never finished (its pending marker outlived the rollout
timeout)."""

from collections.abc import Mapping
from datetime import datetime, timedelta

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject, Listed
from truegreen.doctor.checks.base import finding, format_age, ok, workloads_of
from truegreen.doctor.environment import Environment, owner_words
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.kubectl import truegreen_command
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
ROLLOUT_TIMEOUT = timedelta(seconds=600)
"""refresh's default `--rollout-timeout`: a restart pending longer than this never finished."""


def check(env: Environment) -> list[Finding]:
    """Findings from refresh's annotations (and its failure Events) on the workloads."""
    items, findings = workloads_of(env, CHECK)
    failures = _last_failures(env)
    for workload in items:
        findings += _pin_findings(workload)
        state = _refresh_state(env, workload, failures.get(o.name_of(workload)))
        if state is not None:
            findings.append(state)
    return findings or [ok(CHECK)]


def _pin_findings(workload: KubeObject) -> list[Finding]:
    annotations = o.annotations_of(workload)
    spec = o.pod_spec(o.pod_template(workload))
    findings = []
    for container in [*o.init_containers(spec), *o.containers(spec)]:
        cname = str(container.get("name", ""))
        for marker, code, status in (
            (DANGLING_PIN, "freshness.dangling-pin", Status.FAIL),
            (STALE_PIN, "freshness.stale-pin", Status.WARN),
        ):
            value = annotations.get(container_key(marker, cname))
            if value:
                findings.append(
                    finding(
                        CHECK,
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
        return finding(
            CHECK,
            Status.WARN,
            Basis.MEASURED,
            "freshness.refresh-stopped",
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
        return finding(
            CHECK,
            Status.WARN,
            Basis.MEASURED,
            "freshness.refresh-unfinished",
            details=[*details, f"{ref} restart pending since {pending.stamp}"],
            objects=(ref,),
            workload=owner_words(workload),
            age=format_age(env.now - started),
            refresh=truegreen_command("refresh", *kubectl.flags()),
            command=kubectl.cluster("get", "cronjobs", "--all-namespaces"),
        )
    if attempts:
        return finding(
            CHECK,
            Status.WARN,
            Basis.MEASURED,
            "freshness.refresh-failed",
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


def _last_failures(env: Environment) -> Mapping[str, tuple[datetime | None, str]]:
    """The newest failed-rollout Event refresh left per Deployment name: when, and its words."""
    read = env.refresh_failures
    if not isinstance(read, Listed):
        return {}
    newest: dict[str, tuple[datetime | None, str]] = {}
    for event in read.items:
        involved = o.mapping(event.get("involvedObject"))
        if involved.get("kind") != "Deployment":
            continue
        when = o.parse_time(event.get("lastTimestamp")) or o.parse_time(event.get("eventTime"))
        name = str(involved.get("name", ""))
        before = newest.get(name)
        if before is None or (when is not None and (before[0] is None or when > before[0])):
            newest[name] = (when, str(event.get("message", "")))
    return newest
