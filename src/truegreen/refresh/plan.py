"""Deciding, per container, what one tick should do. Pure: no reads, no writes."""

import json
import re
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster.redact import redact_image
from truegreen.images import ImageReference, ImageReferenceError, is_tag, parse_image
from truegreen.redaction.text import redact_text
from truegreen.refresh.annotations import (
    DANGLING_PIN,
    RECORDED_DIGEST,
    STALE_PIN,
    TRACK_TAG,
    container_key,
    key_prefix,
    latest_restart,
)
from truegreen.refresh.registry import (
    DIGEST_TEXT,
    DigestLookup,
    LookupFailed,
    LookupFailure,
    Resolved,
)

_SHA = re.compile(DIGEST_TEXT)


class RefreshMode(StrEnum):
    """How a restart makes pods take the newest image."""

    RESTART = "restart"
    """Like `kubectl rollout restart`: new pods pull the tag again."""
    PIN = "pin"
    """Set the template image to `repo:tag@digest`: every pod runs exactly that digest."""


class Decision(StrEnum):
    """What the tick decided for one container."""

    UP_TO_DATE = "up-to-date"
    RECORD_RUNNING = "record-running"
    """The newest digest is not recorded, and the pods already run it: record, don't restart."""
    RESTART = "restart"
    PINNED = "pinned"
    """Digest-pinned by the operator: never restarted; stale-pin findings only."""
    LOOKUP_FAILED = "lookup-failed"
    INVALID_IMAGE = "invalid-image"


class ContainerPlan(Struct, frozen=True):
    """One container's image, what the registry and the pods say, and the decision."""

    container: str
    image: str
    tracked_tag: str | None
    newest: str | None
    recorded: str | None
    running: tuple[str, ...]
    decision: Decision
    reason: str = ""
    reference: ImageReference | None = None
    newest_digests: frozenset[str] = frozenset()

    @property
    def unchecked(self) -> bool:
        """The registry gave no newest digest for the tag this container tracks: a tag image
        (LOOKUP_FAILED), or an operator pin whose tag could not be looked up, so whether the
        pin is behind is not known."""
        return self.decision is Decision.LOOKUP_FAILED or (
            self.decision is Decision.PINNED and self.tracked_tag is not None and not self.newest
        )


def containers_of(workload: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Init containers and main containers of a workload's pod template."""
    spec = o.pod_spec(o.pod_template(workload))
    return [*o.init_containers(spec), *o.containers(spec)]


def tracked_reference(
    container: Mapping[str, Any], annotations: Mapping[str, str], mode: RefreshMode
) -> tuple[ImageReference | None, ImageReference | None]:
    """(reference to look up for the newest digest, operator pin to check), either may be None.

    `repo:tag` tracks the tag. `repo:tag@digest` is an operator pin tracking `tag`, except in
    pin mode where the digest is refresh's own (`_pinned_by_refresh`): that pin tracks `tag`
    like a tag image. A digest-only image tracks the tag named by the `track-tag.<container>`
    annotation, if any.
    """
    reference = parse_image(str(container.get("image", "")))
    name = str(container.get("name", ""))
    if reference.digest is None:
        return reference, None
    annotated = annotations.get(container_key(TRACK_TAG, name))
    if reference.tag is None and annotated and not is_tag(annotated):
        # Not a tag: built into the look-up's path, `../../other/manifests/v1` would ask for
        # another repository's manifest and `stable?x=1` for `stable`.
        raise ImageReferenceError(
            annotated, f"the annotation {container_key(TRACK_TAG, name)} names no valid tag"
        )
    tag = reference.tag or annotated
    tracked = ImageReference(reference.registry, reference.repository, tag, None) if tag else None
    if (
        mode is RefreshMode.PIN
        and reference.tag
        and _pinned_by_refresh(reference, name, annotations)
    ):
        return tracked, None
    return tracked, reference


def _pinned_by_refresh(
    reference: ImageReference, container: str, annotations: Mapping[str, str]
) -> bool:
    """Whether the pin's digest is one refresh wrote: the digest it recorded for `container`,
    or the one its latest restart, which no verified record closed yet, aimed it at. Any other
    `repo:tag@digest` is the operator's (DESIGN: a digest-pinned image is never restarted), so
    an operator's pin stays one when the workload opts into pin mode."""
    if reference.digest == annotations.get(container_key(RECORDED_DIGEST, container)):
        return True
    restart = latest_restart(annotations)
    return restart is not None and restart.target.get(container) == reference.digest


def running_digests(pods: Sequence[Mapping[str, Any]], container: str) -> tuple[str, ...]:
    """The digests the pods report running for `container` (from containerStatuses imageID)."""
    found: list[str] = []
    for pod in pods:
        if o.is_terminated(pod):
            continue
        for status in o.container_statuses(pod):
            if status.get("name") == container:
                found += _SHA.findall(str(status.get("imageID", "")))
    return tuple(dict.fromkeys(found))


def pods_run(pods: Sequence[Mapping[str, Any]], container: str, digests: frozenset[str]) -> bool:
    """Every live pod reports running one of `digests` for `container` (and there is a pod)."""
    live = [p for p in pods if not o.is_terminated(p)]
    if not live:
        return False
    for pod in live:
        statuses = [s for s in o.container_statuses(pod) if s.get("name") == container]
        ids = [_SHA.findall(str(s.get("imageID", ""))) for s in statuses]
        if not statuses or not all(found and found[-1] in digests for found in ids):
            return False
    return True


def settled_digest(
    container: Mapping[str, Any],
    annotations: Mapping[str, str],
    mode: RefreshMode,
    *,
    aimed: str | None = None,
) -> str | None:
    """The newest digest of the tag `container` tracks at which its decision reads nothing of
    the tag's index but its digest, so the index's platform manifests need not be read (a
    GET, which Docker Hub counts as a pull: registry.py `RegistryClient.lookup`). An operator
    pin's digest: the pin is stale only where the tag names another image. Else the recorded
    digest, where the image refresh keeps (its own pin, in pin mode) is that one and no
    restart of refresh's own (`aimed`, as `plan_container` takes it) stands unverified: the
    tag has not moved, and nothing is asked of the pods. None where the platform manifests
    may decide: nothing recorded (the pods may run one of them), another digest in the
    template, or a restart of refresh's own unverified (whether every copy runs the tag's
    image is then asked of the pods)."""
    try:
        _, pinned = tracked_reference(container, annotations, mode)
    except ImageReferenceError:
        return None
    if pinned is not None:
        return pinned.digest
    recorded = annotations.get(container_key(RECORDED_DIGEST, str(container.get("name", ""))))
    return _settled_at(recorded, _kept(container, recorded, mode), aimed)


def _kept(container: Mapping[str, Any], recorded: str | None, mode: RefreshMode) -> str | None:
    """The digest the container is kept on: the recorded one, or in pin mode the digest of
    refresh's own pin, which is what the pods run."""
    pin = parse_image(str(container.get("image", ""))).digest
    return pin if mode is RefreshMode.PIN and pin else recorded


def _settled_at(recorded: str | None, current: str | None, aimed: str | None) -> str | None:
    """`settled_digest` for a tracked tag: the recorded digest where the kept one is it and no
    restart of refresh's own stands unverified."""
    if recorded is None or current != recorded or aimed is not None:
        # A restart of refresh's own that no verified record closed, whatever it aimed at: the
        # decision asks whether every copy runs the tag's image, a platform manifest included.
        return None
    return recorded


def plan_container(
    container: Mapping[str, Any],
    annotations: Mapping[str, str],
    lookups: Mapping[str, DigestLookup],
    pods: Sequence[Mapping[str, Any]],
    mode: RefreshMode,
    *,
    aimed: str | None = None,
) -> ContainerPlan:
    """The decision for one container. `aimed`: the digest refresh's own restart, which the
    template still carries and no verified record has closed (`updates.carried_restart`),
    aimed this container at."""
    name, image = str(container.get("name", "")), str(container.get("image", ""))
    try:
        tracked, pinned = tracked_reference(container, annotations, mode)
    except ImageReferenceError as error:
        # refresh reads its workloads unredacted (it writes them back), so the text that is no
        # reference, the image's or the track-tag annotation's, is redacted here as doctor's
        # reads redact it (docs/snapshot.md: "an `image` that is no reference is redacted as
        # any text"): `https://user:pass@host/app:1` and `app:1 --password=…` are no image.
        shown = ImageReferenceError(redact_text(error.text), error.reason)
        return ContainerPlan(
            name, redact_image(image), None, None, None, (), Decision.INVALID_IMAGE, str(shown)
        )
    running = running_digests(pods, name)
    recorded = annotations.get(container_key(RECORDED_DIGEST, name))
    tag = tracked.tag if tracked else None
    lookup = lookups.get(str(tracked)) if tracked else None
    if pinned is not None:
        resolved = lookup if isinstance(lookup, Resolved) else None
        reason = ""
        if tracked is not None and resolved is None:
            reason = lookup.reason if isinstance(lookup, LookupFailed) else "not looked up"
        return ContainerPlan(
            name,
            image,
            tag,
            resolved.digest if resolved else None,
            recorded,
            running,
            Decision.PINNED,
            reason,
            tracked,
            resolved.all_digests if resolved else frozenset(),
        )
    assert tracked is not None
    if isinstance(lookup, LookupFailed) or lookup is None:
        reason = lookup.reason if lookup else "not looked up"
        return ContainerPlan(
            name, image, tag, None, recorded, running, Decision.LOOKUP_FAILED, reason, tracked
        )
    newest = lookup.digest
    current = _kept(container, recorded, mode)
    own_pin = mode is RefreshMode.PIN and parse_image(image).digest is not None
    if lookup.children is None and _settled_at(recorded, current, aimed) != newest:
        # The look-up left the index's platform manifests unread for the workload as first
        # read; read again after a conflict, it needs them: not known, never guessed.
        reason = (
            f"the workload changed while the tick ran, and the per-platform images of {tracked} "
            "were not read this tick; the next tick reads them"
        )
        return ContainerPlan(
            name, image, tag, None, recorded, running, Decision.LOOKUP_FAILED, reason, tracked
        )
    plan = ContainerPlan(
        name,
        image,
        tag,
        newest,
        recorded,
        running,
        Decision.UP_TO_DATE,
        "",
        tracked,
        lookup.all_digests,
    )
    if current is not None and current in lookup.all_digests:
        if recorded is None or recorded not in lookup.all_digests:
            return replace(
                plan, decision=Decision.RECORD_RUNNING, reason="the pods run the newest digest"
            )
        if aimed is None:
            return plan
        if not pods_run(pods, name, lookup.all_digests):
            return _unfinished(plan, aimed, recorded, own_pin=own_pin)
        # Every copy runs the tag's digest, but the update of refresh's own restart, which no
        # verified record closed, may stand unfinished: a copy that never became Ready keeps a
        # StatefulSet's currentRevision behind (stateful_set_utils.go `completeRollingUpdate`),
        # a Deployment's old ReplicaSet up (rolling.go). Nothing to restart; recorded, and the
        # restart closed, only once the table finds the rollout healthy.
        why = (
            f"the pods run the newest digest, but its last restart, toward {aimed[:19]}…, was "
            "never verified: recorded once they are healthy"
        )
        return replace(plan, decision=Decision.RECORD_RUNNING, reason=why)
    if not own_pin and pods_run(pods, name, lookup.all_digests):
        # Every copy already runs the tag's newest digest, whatever is recorded: nothing
        # recorded yet (a fresh install), or another digest (an operator who moved the
        # workload to another tag, deleted an OnDelete workload's pods, or ran `kubectl rollout
        # restart` after the tag moved). A restart would replace them with the same image, or
        # be refused (OnDelete, a pull policy that is not Always) for ever: recorded instead,
        # once the table finds the rollout healthy. Refresh's own pin is what the template's
        # copies run, so a pin behind the tag is pinned again whatever the pods run now.
        reason = (
            "first run: the pods already run the newest digest"
            if current is None
            else f"the pods already run the newest digest, not the recorded {current[:19]}…"
        )
        return replace(plan, decision=Decision.RECORD_RUNNING, reason=reason)
    kept_as = "recorded" if current == recorded else "pinned"
    why = (
        "nothing recorded yet"
        if current is None
        else f"{kept_as} {current[:19]}… is not the newest"
    )
    return replace(plan, decision=Decision.RESTART, reason=why)


def _unfinished(plan: ContainerPlan, aimed: str, recorded: str, *, own_pin: bool) -> ContainerPlan:
    """The decision where the tag names the recorded digest, refresh's own restart (toward
    `aimed`), which no verified record closed, stands in the template, and some copy does not
    run the tag's digest: whatever that restart aimed at, its update stopped or still runs, and
    a StatefulSet's, a DaemonSet's or a Deployment's with no progress deadline never says that
    it stopped (stateful_set_control.go `processReplica`, daemon/update.go `rollingUpdate`,
    deployment_util.go `HasProgressDeadline`). A restart (a new restartedAt stamp, a new
    template) replaces the copies again, counted toward the latch as any restart of refresh's;
    never "nothing to do". Where that restart's own pin (--mode pin) already names the tag's
    digest, a restart would write the same template and replace nothing: the copies are left
    to run it, waited for, counted and latched as after a failed pin toward a newer digest."""
    if aimed not in plan.newest_digests:
        # The tag moved back to the recorded digest while the restart toward another one
        # stands: its copies run, or wait to run, that other one.
        why = (
            f"its last restart, toward {aimed[:19]}…, never finished; the tag is back on the "
            f"recorded {recorded[:19]}…"
        )
        return replace(plan, decision=Decision.RESTART, reason=why)
    why = f"its last restart, toward {aimed[:19]}…, which the tag names, never finished: a copy"
    if own_pin:
        why += " does not run it, and the template already pins it"
        return replace(plan, decision=Decision.RECORD_RUNNING, reason=why)
    return replace(plan, decision=Decision.RESTART, reason=f"{why} does not run it")


def pin_findings(
    workload: Mapping[str, Any],
    lookups: Mapping[str, DigestLookup],
    pin_lookups: Mapping[str, DigestLookup],
    mode: RefreshMode,
) -> dict[str, str | None]:
    """The stale-pin and dangling-pin annotation changes: set, clear, or leave alone.

    The four clear/set paths: set when the tracked tag moved past the pin; clear when the pin
    is current; clear when no tag is known (pin checking disabled); clear when the container is
    no longer pinned (or no longer exists). Only keys whose value changes are returned.
    """
    annotations = o.annotations_of(workload)
    desired: dict[str, str | None] = {}
    unknown: set[str] = set()  # could not look: leave these findings as they are
    for container in containers_of(workload):
        name = str(container.get("name", ""))
        stale_key, dangling_key = container_key(STALE_PIN, name), container_key(DANGLING_PIN, name)
        desired[stale_key] = desired[dangling_key] = None
        try:
            tracked, pinned = tracked_reference(container, annotations, mode)
        except ImageReferenceError:
            continue
        if pinned is None:
            continue
        exists = pin_lookups.get(str(pinned))
        if isinstance(exists, LookupFailed) and exists.failure is LookupFailure.NOT_FOUND:
            desired[dangling_key] = f"{pinned.digest} no longer exists in {pinned.registry}"
        elif isinstance(exists, LookupFailed):
            unknown.add(dangling_key)
        if tracked is None:
            continue  # pin tracking disabled: clear
        newest = lookups.get(str(tracked))
        unread = isinstance(newest, Resolved) and newest.children is None
        if not isinstance(newest, Resolved) or (unread and pinned.digest != newest.digest):
            # Not looked up, or the index left unread for the pin as first read: not known.
            unknown.add(stale_key)
        elif pinned.digest not in newest.all_digests:
            desired[stale_key] = f"{tracked.tag} {newest.digest}"
    prefixes = (key_prefix(STALE_PIN), key_prefix(DANGLING_PIN))
    for key in annotations:
        if key.startswith(prefixes) and key not in desired:
            desired[key] = None  # a container that no longer exists
    return {k: v for k, v in desired.items() if k not in unknown and annotations.get(k) != v}


def target_id(target: Mapping[str, str]) -> str:
    """A short, stable id for a set of container -> digest targets."""
    import hashlib  # only with a target: a tick with nothing to do never loads it

    canonical = json.dumps(dict(sorted(target.items())), separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]
