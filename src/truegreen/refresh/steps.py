"""What one workload's tick does next, decided from what the tick has read. Pure: `tick` makes
the reads and the writes these decisions ask for, in the order they give (see tick.py)."""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.images import ImageReference, ImageReferenceError, parse_image
from truegreen.refresh.annotations import (
    ATTEMPTS,
    LATCHED,
    PENDING,
    RECORDED_DIGEST,
    AttemptCounter,
    PendingRestart,
    container_key,
)
from truegreen.refresh.plan import (
    ContainerPlan,
    Decision,
    RefreshMode,
    containers_of,
    pods_run,
    target_id,
    tracked_reference,
)
from truegreen.refresh.registry import DigestLookup, LookupFailed, LookupFailure
from truegreen.refresh.report import Outcome
from truegreen.refresh.template import RESTARTED_AT
from truegreen.rollout import rollout_status

_STUCK_REASONS = {
    "CrashLoopBackOff": "keeps crashing",
    "ImagePullBackOff": "cannot pull its image",
    "ErrImagePull": "cannot pull its image",
    "InvalidImageName": "names an image that is not valid",
}
"""The waiting states a new pod does not leave by itself, in plain words."""


class AnnotationWrite(Struct, frozen=True):
    """An annotation patch a decision asks for: its step name and the keys it sets or clears."""

    step: str
    changes: Mapping[str, str | None]


class Ending(Struct, frozen=True):
    """The workload ends the tick with `outcome`, after making `write` (if any)."""

    outcome: Outcome
    reason: str
    write: AnnotationWrite | None = None
    write_must_land: bool = False
    """The outcome holds only if the write lands (the digest record after a verified rollout)."""


class Resume(Struct, frozen=True):
    """A restart toward these very digests is already under way (a tick died): wait for it."""

    marker: PendingRestart


class RestartWrite(Struct, frozen=True):
    """Count the attempt, leave the pending marker and restart, all in one conditional write."""

    annotations: Mapping[str, str | None]
    marker: PendingRestart


class RolloutEnd(Struct, frozen=True):
    """How the wait for a restart's rollout ended."""

    rolled_out: bool
    reason: str
    timed_out: bool = False
    """The rollout may still finish: the marker stays so the next tick resumes, not restarts."""


def skip(deployment: Mapping[str, Any]) -> Ending | None:
    """A Deployment the tick leaves alone: paused, or rolling out by someone else's hand."""
    if o.mapping(deployment.get("spec")).get("paused"):
        return Ending(Outcome.PAUSED, "the Deployment is paused")
    if PendingRestart.read(o.annotations_of(deployment)) is None and rolling(deployment):
        return Ending(Outcome.IN_PROGRESS, "a rollout is in progress; not touching it")
    return None


def rolling(deployment: Mapping[str, Any]) -> bool:
    """Generation ahead of observedGeneration, or fewer updated replicas than desired. A rollout
    whose new pods crash is not "in progress": it failed, and the next tick may retry it."""
    meta, spec, status = (o.mapping(deployment.get(k)) for k in ("metadata", "spec", "status"))
    if o.integer(meta.get("generation")) > o.integer(status.get("observedGeneration")):
        return True
    return o.integer(status.get("updatedReplicas")) < o.integer(spec.get("replicas"), 1)


def registry_hold(lookups: Iterable[DigestLookup], below_reserve: Iterable[str]) -> str:
    """Why every restart waits this tick (a registry at or near its rate limit), or ""."""
    limited = {
        r.reason
        for r in lookups
        if isinstance(r, LookupFailed) and r.failure is LookupFailure.RATE_LIMITED
    }
    reasons = sorted(limited | set(below_reserve))
    return f"holding every restart this tick: {'; '.join(reasons)}" if reasons else ""


def dangling_pins(
    deployment: Mapping[str, Any], pin_lookups: Mapping[str, DigestLookup], mode: RefreshMode
) -> list[str]:
    """The operator pins the registry says no longer exist."""
    pins: list[ImageReference] = []
    for container in containers_of(deployment):
        try:
            _, pinned = tracked_reference(container, o.annotations_of(deployment), mode)
        except ImageReferenceError:
            continue
        if pinned is not None:
            pins.append(pinned)
    return [
        str(pin)
        for pin in pins
        if isinstance(found := pin_lookups.get(str(pin)), LookupFailed)
        and found.failure is LookupFailure.NOT_FOUND
    ]


def before_restart(
    deployment: Mapping[str, Any],
    plans: Sequence[ContainerPlan],
    pin_lookups: Mapping[str, DigestLookup],
    mode: RefreshMode,
    hold: str,
    *,
    lost_race: bool = False,
) -> Ending | tuple[ContainerPlan, ...]:
    """After the stale-pin findings are written: how the workload ends the tick without a
    restart, or the containers a restart must move. `lost_race`: this tick's restart write met
    a conflict, so nothing left to restart now means another tick restarted first."""
    invalid = [p for p in plans if p.decision is Decision.INVALID_IMAGE]
    if invalid:
        # An image that is not a reference can never be pulled: no digest to keep it on.
        reason = "; ".join(f"{p.container}: {p.reason}" for p in invalid)
        return Ending(Outcome.INVALID_IMAGE, reason)
    failed = [p for p in plans if p.decision is Decision.LOOKUP_FAILED]
    if failed:
        return Ending(Outcome.COULD_NOT_CHECK, "; ".join(sorted({p.reason for p in failed})))
    restart = tuple(p for p in plans if p.decision is Decision.RESTART)
    if restart and hold:
        return Ending(Outcome.COULD_NOT_CHECK, hold)
    if not restart:
        record = record_changes(o.annotations_of(deployment), plans)
        write = AnnotationWrite("record", record) if record else None
        if dangling_pins(deployment, pin_lookups, mode):
            return Ending(
                Outcome.DANGLING_PIN, "a pinned image no longer exists in the registry", write
            )
        behind = [
            p.container
            for p in plans
            if p.decision is Decision.PINNED and p.newest and not p.image.endswith(p.newest)
        ]
        outcome = Outcome.RESTARTED_BY_OTHER if lost_race else Outcome.CONVERGED
        if behind:
            reason = f"pinned, never restarted; behind its tag: {', '.join(behind)}"
            return Ending(outcome, reason, write)
        if lost_race:
            return Ending(outcome, "another tick already rolled out the newest digests", write)
        return Ending(outcome, "every tracked image runs its newest digest", write)
    if mode is RefreshMode.RESTART:
        refused = pull_policy_refusals(deployment, restart)
        if refused:
            return Ending(Outcome.REFUSED, refused)
    return restart


def restart_step(
    annotations: Mapping[str, str],
    restart: Sequence[ContainerPlan],
    max_attempts: int,
    stamp: str,
) -> Ending | Resume | RestartWrite:
    """Steps (2) and (3), decided from the Deployment's current annotations: already done,
    resume a restart under way, the flap guard's latch, or the restart write."""
    target = {p.container: p.newest or "" for p in restart}
    if _recorded(annotations, target):
        # Only a fresh read after a conflict gets here: the restart was another tick's.
        return Ending(
            Outcome.RESTARTED_BY_OTHER, "another tick already rolled out the newest digests"
        )
    pending = PendingRestart.read(annotations)
    if pending is not None and dict(pending.target) == target:
        return Resume(pending)
    tid = target_id(target)
    attempts = AttemptCounter.read(annotations).at(tid)
    if attempts >= max_attempts:
        reason = (
            f"{attempts} restarts toward the same digests did not roll out; "
            f"stopped until someone looks (clear {LATCHED} to retry)"
        )
        latch = None if annotations.get(LATCHED) == reason else {LATCHED: reason}
        return Ending(Outcome.LATCHED, reason, AnnotationWrite("latch", latch) if latch else None)
    marker = PendingRestart(target, stamp)
    counted = {ATTEMPTS: AttemptCounter(attempts + 1, tid).text(), PENDING: marker.text()}
    return RestartWrite(counted, marker)


def poll_rollout(
    deployment: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    marker: PendingRestart,
    *,
    expired: bool,
    timeout: float,
) -> RolloutEnd | None:
    """One look at a restart's rollout: ended (and how), or None to look again. `deployment`
    is read after the restart write (reads are consistent), so kubectl's rule that the
    controller has observed its generation is enough to know it is this restart's rollout.

    The old pods may still be terminating when the status reports complete (kubectl#1628):
    they are on their way out and are not waited for, unless no pod that stays is listed yet;
    then the wait goes on, within the timeout, for the pods the record will be checked on."""
    staying = o.remaining(pods)
    status = rollout_status(deployment, "Deployment")
    if status.done:
        leaving_only = not staying and any(o.is_terminating(p) for p in pods)
        if leaving_only and not expired:
            return None
        return RolloutEnd(True, "rolled out")
    if status.stuck:
        return RolloutEnd(False, f"the rollout {status.progress}")
    stuck = stuck_new_pod(staying, marker)
    if stuck:
        return RolloutEnd(False, stuck)
    if expired:
        return RolloutEnd(False, f"timed out after {timeout:g}s ({status.progress})", True)
    return None


def stuck_new_pod(pods: Sequence[Mapping[str, Any]], marker: PendingRestart) -> str:
    """A pod of this restart that waits in a state it will not leave by itself, named, or ""."""
    for pod in pods:
        is_new = o.annotations_of(pod).get(RESTARTED_AT) == marker.stamp or any(
            image.endswith(digest)
            for image in o.all_images(o.pod_spec(pod))
            for digest in marker.target.values()
        )
        if not is_new:
            continue
        for status in o.container_statuses(pod):
            reason = o.mapping(o.mapping(status.get("state")).get("waiting")).get("reason")
            if isinstance(reason, str) and reason in _STUCK_REASONS:
                return f"new pod {o.name_of(pod)} {_STUCK_REASONS[reason]} ({reason})"
    return ""


def after_rollout(
    end: RolloutEnd,
    annotations: Mapping[str, str],
    plans: Sequence[ContainerPlan],
    pods: Sequence[Mapping[str, Any]],
    marker: PendingRestart,
    *,
    ours: bool,
) -> Ending:
    """Step (4): record only what the new pods are proven to run; a failure records nothing.
    Pods on their way out (terminating, or finished) still report the old image and prove
    nothing either way: only the pods that stay are checked.
    `annotations` are read after the wait: a write is asked for only while the pending marker
    is still the one waited on, so a tick never clears or records over another tick's restart.
    `ours`: this tick made the restart (else it resumed one another tick made)."""
    done = Outcome.RESTARTED if ours else Outcome.RESTARTED_BY_OTHER
    still_ours = PendingRestart.read(annotations) == marker
    if end.timed_out:
        return Ending(Outcome.ROLLOUT_FAILED, end.reason)
    clear_marker = AnnotationWrite("clear-pending", {PENDING: None}) if still_ours else None
    if not end.rolled_out:
        return Ending(Outcome.ROLLOUT_FAILED, end.reason, clear_marker)
    staying = o.remaining(pods)
    unproven = [
        p.container
        for p in plans
        if p.container in marker.target and not pods_run(staying, p.container, p.newest_digests)
    ]
    if unproven:
        reason = f"the new pods do not run the newest digest ({', '.join(unproven)})"
        return Ending(Outcome.ROLLOUT_FAILED, reason, clear_marker)
    if not still_ours:
        if _recorded(annotations, marker.target):
            return Ending(done, "rolled out and verified; another tick recorded it")
        return Ending(
            done, "rolled out and verified; not recorded: another tick has restarted since"
        )
    # Every restarted container is proven: record it (an operator pin never is).
    record = record_changes(annotations, plans, force=True)
    return Ending(
        done,
        "rolled out and verified: the pods run the newest digest",
        AnnotationWrite("record", record),
        write_must_land=True,
    )


def _recorded(annotations: Mapping[str, str], target: Mapping[str, str]) -> bool:
    """Every container of `target` has its digest recorded."""
    return all(annotations.get(container_key(RECORDED_DIGEST, c)) == d for c, d in target.items())


def record_changes(
    annotations: Mapping[str, str], plans: Sequence[ContainerPlan], *, force: bool = False
) -> dict[str, str | None]:
    """Record the newest digests and clear the counter, latch and marker (only what changes).
    `force`: the restarted containers are verified, so their digests are recorded too."""
    recordable = {Decision.RECORD_RUNNING, Decision.UP_TO_DATE} | (
        {Decision.RESTART} if force else set()
    )
    desired: dict[str, str | None] = {ATTEMPTS: None, LATCHED: None, PENDING: None}
    for plan in plans:
        if plan.decision in recordable and plan.newest:
            desired[container_key(RECORDED_DIGEST, plan.container)] = plan.newest
    return {k: v for k, v in desired.items() if annotations.get(k) != v}


def pull_policy_refusals(deployment: Mapping[str, Any], restart: Sequence[ContainerPlan]) -> str:
    """Why a restart cannot change the image (the kubelet keeps a cached one), or ""."""
    policies = {str(c.get("name")): c.get("imagePullPolicy") for c in containers_of(deployment)}
    refused = []
    for plan in restart:
        reference = parse_image(plan.image)
        # The API server's default: Always for :latest (or no tag), else IfNotPresent.
        default = "Always" if reference.tag == "latest" and not reference.digest else "IfNotPresent"
        policy = policies[plan.container] or default
        if policy != "Always":
            refused.append(f"{plan.container} ({policy})")
    if not refused:
        return ""
    return (
        "a restart would keep the old image: imagePullPolicy is not Always for "
        + ", ".join(refused)
        + "; set imagePullPolicy: Always or use --mode pin"
    )
