"""What one workload's tick does next, decided from what the tick has read. Pure: `tick` makes
the reads and the writes these decisions ask for, in the order they give (see tick.py).

The decision itself is one table, TICK_TABLE: what the Deployment records, what its pods run,
how healthy they are, the pending marker and the attempts left give exactly one action. `look`
reads those inputs from the Deployment and its pods, `decide` finds the row; the other
functions here build the writes and the ending each action asks for.

One module past 600 lines: the table, the looks that fill in its inputs and the endings its
actions ask for are one contract, read together.
"""

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Final

from msgspec import Struct
from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.images import ImageReference, ImageReferenceError
from truegreen.pull_errors import PullError, failed_pull, pod_images
from truegreen.pull_policy import PULL_ALWAYS, pull_policy
from truegreen.pull_reasons import FAILED_PULL_REASONS
from truegreen.refresh.annotations import (
    ATTEMPTS,
    LATCHED,
    PENDING,
    RECORDED_DIGEST,
    RESTARTED,
    AttemptCounter,
    PendingRestart,
    container_key,
    latest_restart,
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
from truegreen.refresh.updates import failed_create, own_update, update_pods, updating
from truegreen.rollout import rollout_status

_STUCK_REASONS = {
    "CrashLoopBackOff": "keeps crashing",
    # image_manager.go `EnsureImageExists`: an image that does not parse, or one absent with
    # pull policy Never, is refused before any pull, at every sync alike.
    "InvalidImageName": "names an image that is not valid",
    "ErrImageNeverPull": (
        "needs an image its machine does not have, and imagePullPolicy Never forbids pulling it"
    ),
}
"""The waiting states a new pod does not leave by itself, in plain words."""
_PULL_REASONS = FAILED_PULL_REASONS
"""A failed pull (image_manager.go `EnsureImageExists`, truegreen/pull_reasons.py): the
kubelet records it in its back-off (`backOff.Next`), says ImagePullBackOff until the back-off
ends, then pulls again, and starts the container once a pull succeeds. A registry that
answered 503 or 429, or could not be reached (`RegistryUnavailable` too), heals by itself:
such a pod is still starting, bounded by the wait's timeout and the stopped rule, as any pod
not Ready yet."""
_REFUSED_PULLS = {
    PullError.NOT_FOUND: "cannot pull its image: the registry says it does not exist",
    PullError.LOGIN_REFUSED: "cannot pull its image: the registry refused the login",
    PullError.LOGIN_NEEDED: "cannot pull its image: the registry wants a login and none was sent",
    PullError.WRONG_PLATFORM: "cannot pull its image: it has no build for its machine's platform",
    PullError.SIGNATURE_REFUSED: (
        "cannot pull its image: its machine's signature policy refuses it"
    ),
}
"""The pull failures every retry meets again until someone changes the registry, the login, the
image or the machines' signature policy, read from the kubelet's reason and message
(truegreen/pull_errors.py), in plain words."""
_MOVING = (Decision.RESTART, Decision.RECORD_RUNNING)
"""The decisions of containers whose newest digest is not recorded yet."""


# The table -----------------------------------------------------------------------------------


class Recorded(StrEnum):
    """What the Deployment records for its tracked containers, against their newest digests."""

    NEWEST = "newest"
    """Every tracked container has its newest digest recorded."""
    UNVERIFIED = "unverified"
    """Not recorded, and a restart would change nothing: the pods already run the newest digest
    while nothing, or another digest, is recorded, or refresh's own pin (--mode pin) already
    names it."""
    BEHIND = "behind"
    """A restart is due: nothing or another digest is recorded and some pod runs another, or
    refresh's own pin names another."""


class Running(StrEnum):
    """What the pods that stay (not terminating, not finished) run."""

    NEWEST = "newest"
    """Each of them reports the newest digest for every container not recorded at it."""
    OTHER = "other"
    """One of them runs another digest, or there is no pod (a workload with no copy at all is
    left alone before any verdict on its pods: `idle`)."""


class Health(StrEnum):
    """How the Deployment's rollout stands, by kubectl's rules and the pods' readiness."""

    HEALTHY = "healthy"
    """Complete by kubectl's rules, and every pod that stays Ready for minReadySeconds."""
    STARTING = "starting"
    """Not yet, and nothing says it never will."""
    FAILING = "failing"
    """Past its progress deadline, or a pod of the rollout waits where it will not leave by
    itself (crash loop, an image the registry refuses)."""


class Marker(StrEnum):
    """The pending marker, against the digests the tick would restart toward."""

    NONE = "none"
    """No restart toward these digests is under way (no marker, or one toward others)."""
    UNDER_WAY = "under-way"
    """A restart toward these very digests: this tick's, or one a tick that stopped left."""


class Attempts(StrEnum):
    """The attempt counter at these digests against --max-attempts."""

    LEFT = "left"
    SPENT = "spent"


class Action(StrEnum):
    """What the tick does."""

    NOTHING = "nothing"
    """Converged: clear leftover bookkeeping, if any."""
    RECORD = "record"
    """Record the newest digests (and clear the counter, latch and marker)."""
    RESTART = "restart"
    """Count an attempt, leave the marker and restart, in one write; then wait."""
    WAIT = "wait"
    """Look again after the poll interval."""
    FAIL = "fail"
    """rollout-failed: clear the marker; the restart already counted this attempt."""
    FAIL_AND_COUNT = "fail-and-count"
    """rollout-failed: count an attempt (no restart of refresh's counted it)."""
    STOP_WAITING = "stop-waiting"
    """rollout-failed (timed out): the marker stays, so the next tick resumes the wait."""
    LATCH = "latch"
    """Set the latch: the attempts at these digests are spent."""


class Situation(Struct, frozen=True):
    """The table's inputs."""

    recorded: Recorded
    running: Running
    health: Health
    marker: Marker
    attempts: Attempts
    timed_out: bool = False
    """The wait has run for --rollout-timeout (never at the tick's first look)."""


class Row(Struct, frozen=True):
    """One row of the table: the values of each input it covers, and its action."""

    action: Action
    recorded: frozenset[Recorded]
    running: frozenset[Running]
    health: frozenset[Health]
    marker: frozenset[Marker]
    attempts: frozenset[Attempts]
    timed_out: frozenset[bool]

    def covers(self, situation: Situation) -> bool:
        """Every input of `situation` is among the row's values."""
        return (
            situation.recorded in self.recorded
            and situation.running in self.running
            and situation.health in self.health
            and situation.marker in self.marker
            and situation.attempts in self.attempts
            and situation.timed_out in self.timed_out
        )


def _row(
    action: Action,
    *,
    recorded: Iterable[Recorded] = Recorded,
    running: Iterable[Running] = Running,
    health: Iterable[Health] = Health,
    marker: Iterable[Marker] = Marker,
    attempts: Iterable[Attempts] = Attempts,
    timed_out: Iterable[bool] = (False, True),
) -> Row:
    """A row; an input left out covers all its values."""
    return Row(
        action,
        frozenset(recorded),
        frozenset(running),
        frozenset(health),
        frozenset(marker),
        frozenset(attempts),
        frozenset(timed_out),
    )


_NOT_RECORDED = (Recorded.UNVERIFIED, Recorded.BEHIND)
_UNDER_WAY, _NO_MARKER = (Marker.UNDER_WAY,), (Marker.NONE,)
_LEFT, _SPENT = (Attempts.LEFT,), (Attempts.SPENT,)

TICK_TABLE: tuple[Row, ...] = (
    # 1. Every newest digest is recorded: a verified rollout happened; nothing to do.
    _row(Action.NOTHING, recorded=(Recorded.NEWEST,)),
    # 2-6. A restart toward these digests is under way: watch it to its end.
    _row(
        Action.RECORD,
        recorded=_NOT_RECORDED,
        running=(Running.NEWEST,),
        health=(Health.HEALTHY,),
        marker=_UNDER_WAY,
    ),
    _row(
        Action.FAIL,
        recorded=_NOT_RECORDED,
        running=(Running.OTHER,),
        health=(Health.HEALTHY,),
        marker=_UNDER_WAY,
    ),
    _row(
        Action.WAIT,
        recorded=_NOT_RECORDED,
        health=(Health.STARTING,),
        marker=_UNDER_WAY,
        timed_out=(False,),
    ),
    _row(
        Action.STOP_WAITING,
        recorded=_NOT_RECORDED,
        health=(Health.STARTING,),
        marker=_UNDER_WAY,
        timed_out=(True,),
    ),
    _row(Action.FAIL, recorded=_NOT_RECORDED, health=(Health.FAILING,), marker=_UNDER_WAY),
    # 7-8. A restart is due, whatever the pods run now: make it while attempts are left.
    _row(Action.RESTART, recorded=(Recorded.BEHIND,), marker=_NO_MARKER, attempts=_LEFT),
    _row(Action.LATCH, recorded=(Recorded.BEHIND,), marker=_NO_MARKER, attempts=_SPENT),
    # 9-15. Nothing to restart (the pods, or refresh's own pin, already have the newest
    # digest) but nothing verified it: recorded only once the pods run it and are healthy.
    _row(
        Action.RECORD,
        recorded=(Recorded.UNVERIFIED,),
        running=(Running.NEWEST,),
        health=(Health.HEALTHY,),
        marker=_NO_MARKER,
    ),
    _row(
        Action.FAIL_AND_COUNT,
        recorded=(Recorded.UNVERIFIED,),
        running=(Running.OTHER,),
        health=(Health.HEALTHY,),
        marker=_NO_MARKER,
        attempts=_LEFT,
    ),
    _row(
        Action.WAIT,
        recorded=(Recorded.UNVERIFIED,),
        health=(Health.STARTING,),
        marker=_NO_MARKER,
        attempts=_LEFT,
        timed_out=(False,),
    ),
    _row(
        Action.FAIL_AND_COUNT,
        recorded=(Recorded.UNVERIFIED,),
        health=(Health.STARTING,),
        marker=_NO_MARKER,
        attempts=_LEFT,
        timed_out=(True,),
    ),
    _row(
        Action.FAIL_AND_COUNT,
        recorded=(Recorded.UNVERIFIED,),
        health=(Health.FAILING,),
        marker=_NO_MARKER,
        attempts=_LEFT,
    ),
    _row(
        Action.LATCH,
        recorded=(Recorded.UNVERIFIED,),
        running=(Running.OTHER,),
        health=(Health.HEALTHY,),
        marker=_NO_MARKER,
        attempts=_SPENT,
    ),
    _row(
        Action.LATCH,
        recorded=(Recorded.UNVERIFIED,),
        health=(Health.STARTING, Health.FAILING),
        marker=_NO_MARKER,
        attempts=_SPENT,
    ),
)
"""The tick's decision. Every situation is covered by exactly one row (a unit test walks them
all), so the order of the rows decides nothing; docs/refresh.md shows the same table (a unit
test holds the two together)."""


def row_for(situation: Situation) -> int:
    """The number (from 1) of the row covering `situation`."""
    return next(n for n, row in enumerate(TICK_TABLE, 1) if row.covers(situation))


def decide(situation: Situation) -> Action:
    """The action of the row covering `situation`."""
    return TICK_TABLE[row_for(situation) - 1].action


# The table's inputs --------------------------------------------------------------------------


class RestartCounts(Struct, frozen=True):
    """Each listed pod's containers' restart counts (core/v1 ContainerStatus `restartCount`)
    when a wait began, by pod uid and container name: a StatefulSet's pod made again under the
    same name is another pod, counted from 0."""

    counts: Mapping[tuple[str, str], int]


class Observation(Struct, frozen=True):
    """What the Deployment and its pods show at one look, and why it is not healthy."""

    running: Running
    health: Health
    detail: str = ""
    """What keeps it from healthy, in plain words; "" when healthy."""
    unproven: tuple[str, ...] = ()
    """The containers whose newest digest some pod that stays does not run."""


class Look(Struct, frozen=True):
    """One look: the table's inputs, and what the ending's words need."""

    situation: Situation
    observation: Observation
    target: Mapping[str, str]
    """The containers a restart (or a count, or the latch) concerns, with their newest digests."""
    marker: PendingRestart | None
    """The marker under way, when there is one toward `target`."""


def target_of(plans: Sequence[ContainerPlan]) -> dict[str, str]:
    """The containers a restart would move, with their newest digests: those decided restart,
    else those whose newest digest already runs but is not recorded."""
    restart = [p for p in plans if p.decision is Decision.RESTART]
    chosen = restart or [p for p in plans if p.decision is Decision.RECORD_RUNNING]
    return {p.container: p.newest or "" for p in chosen}


def look(
    deployment: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    plans: Sequence[ContainerPlan],
    *,
    max_attempts: int,
    now: datetime,
) -> Look:
    """The tick's first look: every input read from the Deployment and its pods."""
    annotations = o.annotations_of(deployment)
    decisions = {p.decision for p in plans}
    if Decision.RESTART in decisions:
        recorded = Recorded.BEHIND
    elif Decision.RECORD_RUNNING in decisions:
        recorded = Recorded.UNVERIFIED
    else:
        recorded = Recorded.NEWEST
    target = target_of(plans)
    pending = PendingRestart.read(annotations)
    marker = pending if pending is not None and target and dict(pending.target) == target else None
    spent = (
        AttemptCounter.read(annotations).at(target_id(target)) >= max_attempts if target else False
    )
    observation = observe(deployment, pods, plans, marker, now)
    situation = Situation(
        recorded,
        observation.running,
        observation.health,
        Marker.NONE if marker is None else Marker.UNDER_WAY,
        Attempts.SPENT if spent else Attempts.LEFT,
    )
    return Look(situation, observation, target, marker)


_NO_DEADLINE: Final = 2**31 - 1
"""progressDeadlineSeconds MaxInt32: no deadline (deployment_util.go `HasProgressDeadline`)."""


def stops_unsaid(workload: Mapping[str, Any]) -> bool:
    """Its controller never says that its update stopped: a StatefulSet's or DaemonSet's stops
    at a new pod that is not healthy and has no deadline (stateful_set_control.go
    `updateStatefulSet`, daemon/update.go `rollingUpdate`), nor has a Deployment whose
    progressDeadlineSeconds is MaxInt32. A Deployment with a deadline says it itself
    (ProgressDeadlineExceeded); an absent deadline is the API server's default, 600 seconds
    (apps/v1 defaults.go `SetDefaults_Deployment`)."""
    spec = o.mapping(workload.get("spec"))
    if kind_of(workload) != "Deployment":
        return True
    return o.integer(spec.get("progressDeadlineSeconds"), 600) == _NO_DEADLINE


class UpdatePosition(Struct, frozen=True):
    """Where a restart's update stands, by what only the update moves: never the controller's
    counts, which move as machines join and leave (daemon_controller.go
    `updateDaemonSetStatus` counts per machine, and a machine that joins gets its copy from
    the current template) or as an autoscaler scales (a Deployment's `status.replicas`, and
    sync.go `scale` resizes its old and new ReplicaSets alike)."""

    by_place: bool
    """A StatefulSet or DaemonSet: each copy has a place, a pod name (stateful_set_utils.go
    `getPodName`) or a machine (daemon/update.go replaces the copy of one machine)."""
    old: frozenset[tuple[str, str]]
    """By place: (place, pod uid) of each copy the restart did not make."""
    new: frozenset[str]
    """By place: the places holding a copy the restart made (not terminating). A Deployment:
    the uids of the restart's copies that are available, as the controller counts one
    (pkg/api/v1/pod/util.go `IsPodAvailable`)."""

    @property
    def stood(self) -> str:
        """What did not happen while the update stood, in plain words."""
        if self.by_place:
            return "no old copy was replaced"
        return "no new copy became available"

    def moved(self, later: "UpdatePosition | None") -> bool:
        """The update went on between this position and `later`. A StatefulSet or DaemonSet:
        an old copy is gone from a place that now holds the restart's (daemon/update.go
        deletes a machine's old pod, `syncNodes` makes its new one; stateful_set_control.go
        deletes an ordinal's old pod and makes it again at the update revision), not a copy
        that comes or goes with its machine or ordinal. A Deployment's copies have no place,
        and an autoscaler resizes its old and new ReplicaSets together: a copy of the restart
        that became available (rolling.go scales the old ReplicaSets down as the new one's
        copies become available)."""
        if later is None:
            return True
        if not self.by_place:
            return bool(later.new - self.new)
        still_old = {uid for _, uid in later.old}
        return any(place in later.new and uid not in still_old for place, uid in self.old)


def update_position(
    workload: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    marker: PendingRestart | None,
    now: datetime,
) -> UpdatePosition | None:
    """Where the update of refresh's restart (`marker`) stands, or None where nothing is
    compared: no restart under way, or a controller that says itself when its update stopped
    (`stops_unsaid`)."""
    if marker is None or not stops_unsaid(workload):
        return None
    kind = kind_of(workload)
    if kind == "Deployment":
        wait = o.integer(o.mapping(workload.get("spec")).get("minReadySeconds"))
        available = frozenset(
            o.uid_of(pod)
            for pod in o.remaining(pods)
            if _made_by(pod, marker) and not _not_available(pod, wait, now)
        )
        return UpdatePosition(False, frozenset(), available)
    place = _machine_of if kind == "DaemonSet" else o.name_of
    old = frozenset((place(pod), o.uid_of(pod)) for pod in pods if not _made_by(pod, marker))
    new = frozenset(place(pod) for pod in o.remaining(pods) if _made_by(pod, marker))
    return UpdatePosition(True, old, new)


def _machine_of(pod: Mapping[str, Any]) -> str:
    """The machine a DaemonSet's pod is for: its nodeName once bound, else the one its node
    affinity names (daemon/util/daemonset_util.go `GetTargetNodeName`: the `metadata.name`
    match field the controller writes into each pod it makes)."""
    spec = o.pod_spec(pod)
    bound = spec.get("nodeName")
    if isinstance(bound, str) and bound:
        return bound
    affinity = o.mapping(o.mapping(spec.get("affinity")).get("nodeAffinity"))
    required = o.mapping(affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
    for term in o.sequence(required.get("nodeSelectorTerms")):
        for field in o.sequence(o.mapping(term).get("matchFields")):
            match = o.mapping(field)
            values = o.sequence(match.get("values"))
            if match.get("key") == "metadata.name" and len(values) == 1:
                return str(values[0])
    return ""


def look_again(
    first: Look,
    deployment: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    plans: Sequence[ContainerPlan],
    *,
    now: datetime,
    timed_out: bool,
    marker: PendingRestart | None,
    since: UpdatePosition | None = None,
    restarts: RestartCounts | None = None,
) -> Look:
    """A look while waiting: what is recorded and the attempts stay as the first look found
    them, the marker is the one waited on (None: waiting for pods already on the newest
    digest); the pods and the Deployment are read again. `since`: where the restart's update
    stood when the wait began (`update_position`); a restart of a StatefulSet, a DaemonSet or
    a Deployment with no progress deadline that did not move in the whole wait has stopped
    (without a restart, the timeout alone ends the wait counted). `restarts`: the pods'
    restart counts when the wait began (`crashed_new_pod`)."""
    observation = observe(deployment, pods, plans, marker, now, restarts)
    if (
        timed_out
        and marker is not None
        and observation.health is Health.STARTING
        and since is not None
        and not since.moved(update_position(deployment, pods, marker, now))
    ):
        detail = (
            f"the update stopped: {since.stood} in a whole --rollout-timeout ({observation.detail})"
        )
        observation = replace(observation, health=Health.FAILING, detail=detail)
    situation = replace(
        first.situation,
        running=observation.running,
        health=observation.health,
        marker=Marker.NONE if marker is None else Marker.UNDER_WAY,
        timed_out=timed_out,
    )
    return Look(situation, observation, first.target, marker)


def observe(
    deployment: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    plans: Sequence[ContainerPlan],
    marker: PendingRestart | None,
    now: datetime,
    restarts: RestartCounts | None = None,
) -> Observation:
    """What the pods that stay run (by their imageIDs) and how healthy the rollout is. Pods on
    their way out (terminating, or finished) still report the old image and prove nothing:
    only the pods that stay are judged. `marker`: the restart waited on, whose new pods alone
    can make it fail (None: every pod counts). `restarts`: the restart counts when the wait
    began; the pods of refresh's latest restart that no record closed, read from the
    workload's annotations, count from 0 (`crashed_new_pod`)."""
    staying = o.remaining(pods)
    unproven = tuple(
        p.container
        for p in plans
        if p.decision in _MOVING and not pods_run(staying, p.container, p.newest_digests)
    )
    running = Running.OTHER if unproven else Running.NEWEST
    health, detail = _health(deployment, pods, marker, now, restarts)
    return Observation(running, health, detail, unproven)


def _health(
    deployment: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    marker: PendingRestart | None,
    now: datetime,
    restarts: RestartCounts | None,
) -> tuple[Health, str]:
    """The rollout's health and, when it is not healthy, why. The old pods may still be
    terminating when the status reports complete (kubectl#1628): they are on their way out and
    are not waited for, unless no pod that stays is listed yet."""
    staying = o.remaining(pods)
    status = rollout_status(deployment, kind_of(deployment))
    # The controller's own words for a copy it could not make (a quota reached): quoted, so
    # the operator reads why the rollout does not end without asking the cluster.
    cause = failed_create(deployment)
    said = f"; the cluster says {cause}" if cause else ""
    if status.stuck:
        return Health.FAILING, f"the rollout {status.progress}{said}"
    latest = latest_restart(o.annotations_of(deployment))
    stuck = stuck_new_pod(staying, marker) or crashed_new_pod(staying, marker, restarts, latest)
    if stuck:
        return Health.FAILING, stuck
    if not status.done:
        return Health.STARTING, f"{status.progress}{said}"
    if not staying and any(o.is_terminating(p) for p in pods):
        return Health.STARTING, "only copies on their way out are listed yet"
    wait = o.integer(o.mapping(deployment.get("spec")).get("minReadySeconds"))
    for pod in staying:
        unready = _not_available(pod, wait, now)
        if unready:
            return Health.STARTING, unready
    return Health.HEALTHY, ""


def _not_available(pod: Mapping[str, Any], min_ready_seconds: int, now: datetime) -> str:
    """Why the pod is not available yet (pkg/api/v1/pod/util.go IsPodAvailable: Ready, and
    for minReadySeconds since its Ready condition last changed), or ""."""
    name = o.name_of(pod)
    ready = o.condition(pod, "Ready")
    if ready is None or ready.get("status") != "True":
        return f"pod {name} is not ready"
    if min_ready_seconds == 0:
        return ""
    since = o.parse_time(ready.get("lastTransitionTime"))
    if since is None or since + timedelta(seconds=min_ready_seconds) > now:
        return f"pod {name} has been ready for less than the {min_ready_seconds}s asked"
    return ""


def _of_rollout(pod: Mapping[str, Any], marker: PendingRestart | None) -> bool:
    """The pod belongs to the rollout judged: with a marker, one the restart made
    (`_made_by`); without one, every pod does."""
    return marker is None or _made_by(pod, marker)


def _made_by(pod: Mapping[str, Any], restart: PendingRestart) -> bool:
    """The pod was made by refresh's `restart`: it carries the restart's template stamp, or
    under --mode pin its pinned digest."""
    return o.annotations_of(pod).get(RESTARTED_AT) == restart.stamp or any(
        image.endswith(digest)
        for image in o.all_images(o.pod_spec(pod))
        for digest in restart.target.values()
    )


def stuck_new_pod(pods: Sequence[Mapping[str, Any]], marker: PendingRestart | None) -> str:
    """A pod of this rollout that waits in a state it will not leave by itself, named, or "".
    With a marker, only the restart's new pods count; without one, every pod does. A failed
    pull counts only where the kubelet's message says the registry refused the image
    (`_REFUSED_PULLS`); any other the kubelet pulls again after its back-off (`_PULL_REASONS`)."""
    for pod in pods:
        if not _of_rollout(pod, marker):
            continue
        for status in o.container_statuses(pod):
            waiting = o.mapping(o.mapping(status.get("state")).get("waiting"))
            reason = str(waiting.get("reason") or "")
            words = _STUCK_REASONS.get(reason)
            if reason in _PULL_REASONS:
                message = str(waiting.get("message") or "")
                refused = failed_pull(reason, message, pod_images(pod))
                words = _REFUSED_PULLS.get(refused) if refused is not None else None
            if words:
                which = "new pod" if marker is not None else "pod"
                return f"{which} {o.name_of(pod)} {words} ({reason})"
    return ""


def restart_counts(pods: Sequence[Mapping[str, Any]]) -> RestartCounts:
    """The restart counts of `pods`, taken when a wait begins."""
    return RestartCounts(
        {
            (o.uid_of(pod), str(status.get("name"))): o.integer(status.get("restartCount"))
            for pod in pods
            for status in o.container_statuses(pod)
        }
    )


def crashed_new_pod(
    pods: Sequence[Mapping[str, Any]],
    marker: PendingRestart | None,
    restarts: RestartCounts | None,
    latest: PendingRestart | None = None,
) -> str:
    """A pod of this rollout whose container exited and was started again since refresh's
    restart made it or refresh began watching it, named, or "". The kubelet counts each start
    of a container after the first in core/v1 ContainerStatus `restartCount` and keeps the
    previous run's end in `lastState` (`terminated`: exit code, finishedAt),
    pkg/kubelet/kuberuntime/kuberuntime_container.go `getPodContainerStatuses`/kubelet_pods.go
    `convertToAPIContainerStatuses`; it counts on from the count it last reported. Between two
    crashes of a crash loop the container is running, even Ready, and its waiting reason
    (`stuck_new_pod`) is gone: kubectl's `rollout status`, which only compares counts, calls
    it done, but a rollout is verified only healthy. Counted from 0: a pod the restart made
    (`marker`), and with no marker a pod made by refresh's latest restart that no verified
    record has closed (`latest`, `annotations.latest_restart`: a restart that failed leaves
    its record when its marker is cleared), since each of its restarts came after that
    restart. Any other pod: only while a wait with no marker runs, from its count when the
    wait began (`restarts`; 0 for a pod not listed then, made during the wait). A pod neither
    made by refresh's restart nor watched by a wait is not counted: a count that was there
    before refresh looked says when the pod crashed no more than that it did once. The
    kubelet's finishedAt is not compared with this machine's clock: the two clocks differ,
    and a count that rose is a restart whatever the clocks say."""
    restart = marker if marker is not None else latest
    for pod in pods:
        made = restart is not None and _made_by(pod, restart)
        counted_from: Mapping[tuple[str, str], int] = {}
        if not made:
            if marker is not None or restarts is None:
                continue
            counted_from = restarts.counts
        for status in o.container_statuses(pod):
            name = str(status.get("name"))
            before = counted_from.get((o.uid_of(pod), name), 0)
            count = o.integer(status.get("restartCount"))
            ended = o.mapping(o.mapping(status.get("lastState")).get("terminated"))
            if count > before and ended:
                which = "new pod" if made else "pod"
                code = ended.get("exitCode")
                return (
                    f"{which} {o.name_of(pod)} crashed and was started again while it rolled "
                    f"out (container {name}: restartCount {count}, last exit code {code})"
                )
    return ""


def failure_reason(found: Look, timeout: float) -> str:
    """Why the rollout failed (or has not ended in time), in plain words. Without a restart
    under way the words say what the pods were found doing, since nothing was restarted."""
    observation, health = found.observation, found.situation.health
    restart = found.marker is not None
    if health is Health.HEALTHY:
        copies = "new pods" if restart else "pods"
        return f"the {copies} do not run the newest digest ({', '.join(observation.unproven)})"
    why = f"timed out after {timeout:g}s ({observation.detail})"
    if health is Health.FAILING:
        why = observation.detail
    if restart:
        return why
    if found.situation.running is Running.NEWEST:
        return f"the pods run the newest digest, but {why}"
    return f"the pods are not healthy: {why}"


# The endings and writes each action asks for -------------------------------------------------


class AnnotationWrite(Struct, frozen=True):
    """An annotation patch a decision asks for: its step name and the keys it sets or clears."""

    step: str
    changes: Mapping[str, str | None]


MUST_LAND: Final = frozenset({"record", "latch"})
"""The writes an outcome holds only once they land: a digest record ("recorded if it was not":
one that does not land leaves nothing for the next tick to compare against) and the latch."""


class Ending(Struct, frozen=True):
    """The workload ends the tick with `outcome`, after making `write` (if any)."""

    outcome: Outcome
    reason: str
    write: AnnotationWrite | None = None


class RestartWrite(Struct, frozen=True):
    """Count the attempt, leave the pending marker and restart, all in one conditional write."""

    annotations: Mapping[str, str | None]
    marker: PendingRestart


def kind_of(workload: Mapping[str, Any]) -> str:
    """StatefulSet or DaemonSet as the workload says (every read stamps its kind); else the
    Deployment, the kind refresh reads first."""
    kind = workload.get("kind")
    return kind if kind in ("StatefulSet", "DaemonSet") else "Deployment"


def skip(
    workload: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    marker: PendingRestart | None,
    replica_sets: Sequence[Mapping[str, Any]] = (),
) -> Ending | None:
    """A workload the tick leaves alone (once its stale-pin findings are written): a paused
    Deployment, or one rolling out by another hand than a restart toward these very digests
    (`marker`, the one the tick would wait on); a marker toward other digests is no restart
    under way for this tick to wait on. `replica_sets`: a Deployment's own (`rolling`)."""
    if kind_of(workload) == "Deployment" and o.mapping(workload.get("spec")).get("paused"):
        return Ending(Outcome.PAUSED, "the Deployment is paused")
    if marker is None and rolling(workload, pods, replica_sets):
        return Ending(Outcome.IN_PROGRESS, "a rollout is in progress; not touching it")
    return None


def rolling(
    workload: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    replica_sets: Sequence[Mapping[str, Any]] = (),
) -> bool:
    """Someone else's update under way: generation ahead of observedGeneration, or a rollout
    kubectl's `rollout status` calls unfinished (polymorphichelpers/rollout_status.go) while
    its controller shows an update under way (`updating`). A rollout past its progress deadline
    (kubectl's "exceeded its progress deadline") or with a pod of the update (`update_pods`:
    made from the current template) that waits in a state it will not leave by itself (a
    crash loop, an image the registry refuses) is not under way: it failed, and the tick
    decides, bounded by the flap guard, as after its own failed restart. An old copy's crash
    loop says nothing of the update replacing it, but where an OrderedReady StatefulSet waits
    on it before replacing anything (`update_pods`).
    A Deployment with a progress deadline says itself when its update stopped, so until then
    its update is under way, whoever made it. A StatefulSet, a DaemonSet or a Deployment with
    no deadline never says so (stateful_set_control.go, daemon/update.go, deployment_util.go
    `HasProgressDeadline`): an update that is refresh's own latest restart (`own_update`, read
    from `RESTARTED`), still rolling or stopped, is the table's to decide; any other is someone
    else's. `replica_sets`: a Deployment's own."""
    meta, status = o.mapping(workload.get("metadata")), o.mapping(workload.get("status"))
    if o.integer(meta.get("generation")) > o.integer(status.get("observedGeneration")):
        return True
    kind = kind_of(workload)
    verdict = rollout_status(workload, kind)
    if verdict.done or verdict.stuck or not verdict.ruled:
        return False
    if stuck_new_pod(update_pods(workload, kind, pods, replica_sets), None):
        return False  # the update's own copy will not start: it failed
    if not updating(workload, kind, pods, replica_sets):
        return False
    if not stops_unsaid(workload):
        return True
    latest = latest_restart(o.annotations_of(workload))
    return not own_update(workload, kind, pods, replica_sets, latest)


def registry_hold(lookups: Iterable[DigestLookup], below_reserve: Iterable[str]) -> str:
    """Why every restart waits this tick (a registry at or near its rate limit), or ""."""
    limited = {
        r.reason
        for r in lookups
        if isinstance(r, LookupFailed) and r.failure is LookupFailure.RATE_LIMITED
    }
    reasons = sorted(limited | set(below_reserve))
    return f"holding every restart this tick: {'; '.join(reasons)}" if reasons else ""


_DANGLING = "a pinned image no longer exists in the registry"


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


def undecidable(
    deployment: Mapping[str, Any],
    plans: Sequence[ContainerPlan],
    pin_lookups: Mapping[str, DigestLookup],
    mode: RefreshMode,
) -> Ending | None:
    """A workload the table cannot decide: an image that is not a reference (it can never be
    pulled, so there is no digest to keep it on), or a digest the registry did not give (for
    a tag image, or for the tag an operator pin tracks). A pin the registry says is gone is
    a measured failure, and stays one beside what could not be looked up."""
    invalid = [p for p in plans if p.decision is Decision.INVALID_IMAGE]
    if invalid:
        reason = "; ".join(f"{p.container}: {p.reason}" for p in invalid)
        return Ending(Outcome.INVALID_IMAGE, reason)
    failed = [p for p in plans if p.unchecked]
    if failed and dangling_pins(deployment, pin_lookups, mode):
        return Ending(Outcome.DANGLING_PIN, _DANGLING)
    if failed:
        return Ending(Outcome.COULD_NOT_CHECK, "; ".join(sorted({p.reason for p in failed})))
    return None


def settled(
    deployment: Mapping[str, Any],
    plans: Sequence[ContainerPlan],
    pin_lookups: Mapping[str, DigestLookup],
    mode: RefreshMode,
    *,
    lost_race: bool = False,
) -> Ending:
    """NOTHING, or RECORD with no restart under way: the ending, recording the digests the pods
    are verified to run and clearing leftover bookkeeping. `lost_race`: this tick's restart
    write met a conflict, so nothing left to restart means another tick restarted first."""
    record = record_changes(o.annotations_of(deployment), plans)
    write = AnnotationWrite("record", record) if record else None
    if dangling_pins(deployment, pin_lookups, mode):
        return Ending(Outcome.DANGLING_PIN, _DANGLING, write)
    unknown = sorted(
        f"whether the pinned image {pin} still exists is not known: {found.reason}"
        for pin, found in pin_lookups.items()
        if isinstance(found, LookupFailed) and found.failure is not LookupFailure.NOT_FOUND
    )
    if unknown:
        return Ending(Outcome.COULD_NOT_CHECK, "; ".join(unknown), write)
    # Behind where the tag names neither the pinned image nor an index holding it (a pin of
    # one platform's image is current while the tag's index lists it), as `pin_findings` says.
    behind = [
        p.container
        for p in plans
        if p.decision is Decision.PINNED
        and p.newest
        and p.image.rpartition("@")[2] not in {p.newest, *p.newest_digests}
    ]
    outcome = Outcome.RESTARTED_BY_OTHER if lost_race else Outcome.CONVERGED
    if behind:
        reason = f"pinned, never restarted; behind its tag: {', '.join(behind)}"
    elif lost_race:
        reason = "another tick already rolled out the newest digests"
    else:
        reason = "every tracked image runs its newest digest"
    return Ending(outcome, reason, write)


def restart_refusal(
    deployment: Mapping[str, Any], plans: Sequence[ContainerPlan], mode: RefreshMode, hold: str
) -> Ending | None:
    """Why a restart the table asks for is not made now: a registry near its rate limit holds
    every restart, an update strategy that changes no pod (OnDelete) or only some (a
    StatefulSet's partition), no copy to restart, or the pull policy would keep the old
    image."""
    if hold:
        return Ending(Outcome.COULD_NOT_CHECK, hold)
    update = o.mapping(o.mapping(deployment.get("spec")).get("updateStrategy"))
    strategy = update.get("type")
    if kind_of(deployment) != "Deployment" and strategy == "OnDelete":
        # The controller replaces a pod only when someone deletes it (stateful_set_control.go,
        # daemon_controller.go): a template change would be recorded as a restart that never
        # comes.
        return Ending(Outcome.REFUSED, _on_delete_refusal(deployment, plans, mode))
    partition = o.integer(o.mapping(update.get("rollingUpdate")).get("partition"), 0)
    if kind_of(deployment) == "StatefulSet" and strategy != "OnDelete" and partition > 0:
        # The controller updates only the ordinals at or above the partition
        # (stateful_set_control.go): the rest keep the old digest by design, so no restart
        # could ever be verified on every copy.
        return Ending(
            Outcome.REFUSED,
            f"a restart would replace only the copies numbered {partition} and up "
            f"(updateStrategy.rollingUpdate.partition {partition}), so the newest digest could "
            "never be verified on every copy; set the partition to 0 to refresh it",
        )
    empty = _no_copies(deployment)
    if empty is not None:
        return Ending(Outcome.PAUSED, f"{empty[0]}: nothing to restart {empty[1]}")
    if mode is RefreshMode.RESTART:
        restart = [p for p in plans if p.decision is Decision.RESTART]
        refused = pull_policy_refusals(deployment, restart)
        if refused:
            return Ending(Outcome.REFUSED, refused)
    return None


def _no_copies(workload: Mapping[str, Any]) -> tuple[str, str] | None:
    """Why no pod would take a restart, and until when, or None: scaled to zero copies, or a
    DaemonSet that its controller, at the current generation, schedules on no machine. Nothing
    runs an old digest, and nothing could verify a new one; the copies made when it runs again
    pull the tag then."""
    meta, spec, status = (o.mapping(workload.get(k)) for k in ("metadata", "spec", "status"))
    if kind_of(workload) == "DaemonSet":
        current = o.integer(status.get("observedGeneration")) >= o.integer(meta.get("generation"))
        scheduled = o.integer(status.get("desiredNumberScheduled"), 1)
        if current and "desiredNumberScheduled" in status and scheduled == 0:
            return "no machine runs it (0 scheduled)", "until one does"
        return None
    if o.integer(spec.get("replicas"), 1) == 0:
        return "scaled to zero copies (replicas 0)", "until it runs again"
    return None


_JUDGES_PODS: Final = frozenset(
    {Action.RECORD, Action.FAIL, Action.FAIL_AND_COUNT, Action.WAIT, Action.STOP_WAITING}
)
"""The actions that rest on what the pods were found running and how healthy they are."""


def idle(workload: Mapping[str, Any], action: Action) -> Ending | None:
    """A workload with no copy, left alone (`paused`) where the table's action would judge its
    pods: with none, no pod was looked at, so nothing was measured, neither a verified rollout
    nor a failed one (kubectl calls a rollout of no copies complete, rollout_status.go). A
    marker stays as it is, so a restart made before the scale-down is looked at again once
    the workload runs. RESTART asks `restart_refusal`, LATCH and NOTHING judge no pod."""
    none = _no_copies(workload) if action in _JUDGES_PODS else None
    if none is None:
        return None
    return Ending(Outcome.PAUSED, f"{none[0]}: nothing to verify {none[1]}")


def restart_write(
    annotations: Mapping[str, str], target: Mapping[str, str], stamp: str
) -> RestartWrite:
    """RESTART: the attempt counted and the marker left, in the restart's own write."""
    tid = target_id(target)
    attempts = AttemptCounter.read(annotations).at(tid)
    marker = PendingRestart(target, stamp)
    counted = {
        ATTEMPTS: AttemptCounter(attempts + 1, tid).text(),
        PENDING: marker.text(),
        RESTARTED: marker.text(),
    }
    return RestartWrite(counted, marker)


def latch(annotations: Mapping[str, str], target: Mapping[str, str]) -> Ending:
    """LATCH: the latch annotation, written once."""
    attempts = AttemptCounter.read(annotations).at(target_id(target))
    reason = (
        f"{attempts} tries at the same digests did not roll out healthy; "
        f"stopped until someone looks (clear {LATCHED} and {ATTEMPTS} to retry)"
    )
    latched = None if annotations.get(LATCHED) == reason else {LATCHED: reason}
    return Ending(Outcome.LATCHED, reason, AnnotationWrite("latch", latched) if latched else None)


def count_failure(annotations: Mapping[str, str], target: Mapping[str, str], reason: str) -> Ending:
    """FAIL_AND_COUNT: rollout-failed, and the attempt counted, since no restart of refresh's
    counted it. A marker toward other digests is cleared with it: no restart is under way."""
    tid = target_id(target)
    attempts = AttemptCounter.read(annotations).at(tid)
    changes: dict[str, str | None] = {ATTEMPTS: AttemptCounter(attempts + 1, tid).text()}
    if PENDING in annotations:
        changes |= _clear_marker(annotations)
    return Ending(Outcome.ROLLOUT_FAILED, reason, AnnotationWrite("count", changes))


def _clear_marker(annotations: Mapping[str, str]) -> dict[str, str | None]:
    """The pending marker cleared, once its restart failed or another is due. Where no record
    of refresh's latest restart is kept (`RESTARTED`: a marker left by a truegreen that wrote
    none), the marker becomes it: the template still carries that restart, and without a
    record a later tick takes its stopped update (a StatefulSet's, a DaemonSet's, a Deployment's
    with no progress deadline: none says that its update stopped) for someone else's, in
    progress forever."""
    changes: dict[str, str | None] = {PENDING: None}
    marker = PendingRestart.read(annotations)
    if marker is not None and PendingRestart.read(annotations, RESTARTED) is None:
        changes[RESTARTED] = marker.text()
    return changes


def after_wait(
    action: Action,
    reason: str,
    annotations: Mapping[str, str],
    plans: Sequence[ContainerPlan],
    marker: PendingRestart,
    *,
    ours: bool,
) -> Ending:
    """How a wait on a restart ends (RECORD, FAIL or STOP_WAITING): record only what the table
    verified; a failure records nothing. `annotations` are read after the wait: a write is asked
    for only while the pending marker is still the one waited on, so a tick never clears or
    records over another tick's restart. `ours`: this tick made the restart (else it resumed
    one another tick made)."""
    done = Outcome.RESTARTED if ours else Outcome.RESTARTED_BY_OTHER
    still_ours = PendingRestart.read(annotations) == marker
    if action is Action.STOP_WAITING:
        return Ending(Outcome.ROLLOUT_FAILED, reason)
    if action is not Action.RECORD:
        clear = AnnotationWrite("clear-pending", _clear_marker(annotations)) if still_ours else None
        return Ending(Outcome.ROLLOUT_FAILED, reason, clear)
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
    )


def _recorded(annotations: Mapping[str, str], target: Mapping[str, str]) -> bool:
    """Every container of `target` has its digest recorded."""
    return all(annotations.get(container_key(RECORDED_DIGEST, c)) == d for c, d in target.items())


def record_changes(
    annotations: Mapping[str, str], plans: Sequence[ContainerPlan], *, force: bool = False
) -> dict[str, str | None]:
    """Record the newest digests and clear the counter, latch, marker and the latest restart's
    record (only what changes): the rollout is verified, so an update under way later is not
    refresh's. `force`: the restarted containers are verified, so their digests are recorded
    too."""
    recordable = {Decision.RECORD_RUNNING, Decision.UP_TO_DATE} | (
        {Decision.RESTART} if force else set()
    )
    desired: dict[str, str | None] = {
        ATTEMPTS: None,
        LATCHED: None,
        PENDING: None,
        RESTARTED: None,
    }
    for plan in plans:
        if plan.decision in recordable and plan.newest:
            desired[container_key(RECORDED_DIGEST, plan.container)] = plan.newest
    return {k: v for k, v in desired.items() if annotations.get(k) != v}


def pull_policy_refusals(deployment: Mapping[str, Any], restart: Sequence[ContainerPlan]) -> str:
    """Why a restart cannot change the image (the kubelet keeps a cached one), or ""."""
    refused = _cached(deployment, restart)
    if not refused:
        return ""
    return (
        "a restart would keep the old image: imagePullPolicy is not Always for "
        + ", ".join(refused)
        + "; set imagePullPolicy: Always or use --mode pin"
    )


def _cached(deployment: Mapping[str, Any], restart: Sequence[ContainerPlan]) -> list[str]:
    """The containers of `restart` whose pull policy keeps an image the machine already has
    for the tag (image_manager.go `shouldPullImage`: IfNotPresent pulls only an absent image),
    each with its policy: `runner (IfNotPresent)`."""
    # Unset only where no API server stored the object (it stores its default): doctor's rule.
    policies = {str(c.get("name")): pull_policy(c) for c in containers_of(deployment)}
    return [
        f"{plan.container} ({policies[plan.container]})"
        for plan in restart
        if policies[plan.container] != PULL_ALWAYS
    ]


def _on_delete_refusal(
    workload: Mapping[str, Any], plans: Sequence[ContainerPlan], mode: RefreshMode
) -> str:
    """Why an OnDelete workload's restart is refused, and what takes the newest digest. A copy
    deleted by hand comes back from the template as it is, a DaemonSet's on the same machine
    (a StatefulSet's most often too, its volume there), whose kubelet keeps the image it has
    for the tag unless the pull policy is Always; a rolling update in pin mode takes the
    pinned digest whatever the policy."""
    said = "a restart would change nothing: its pods take a new version only when deleted "
    said += "(updateStrategy OnDelete)"
    cached = _cached(workload, [p for p in plans if p.decision is Decision.RESTART])
    if not cached:
        return f"{said}; delete them to take it, or set updateStrategy RollingUpdate"
    said += ", and a deleted copy made again on a machine that has the old image keeps it "
    said += f"while imagePullPolicy is not Always for {', '.join(cached)}"
    if mode is RefreshMode.PIN:
        return (
            f"{said}; set updateStrategy RollingUpdate, or set imagePullPolicy: Always and "
            "delete them"
        )
    return (
        f"{said}; set imagePullPolicy: Always, then delete them or set updateStrategy "
        "RollingUpdate; or set updateStrategy RollingUpdate and use --mode pin"
    )
