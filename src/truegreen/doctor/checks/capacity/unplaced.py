"""What the scheduler and the autoscalers said about the training pods the scheduler could not
place: measured, it wins over what placing the pods shows (capacity/check.py `_with_evidence`).
"""

from collections.abc import Mapping, Sequence

from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Folded, Got, Kind, KubeObject, Listed
from truegreen.doctor.checks.autoscaler_refusals import CannotAdd
from truegreen.doctor.checks.capacity.autoscaler_flags import (
    DEFAULT_PROVISION_TIME,
    ProvisionTime,
    provision_time,
)
from truegreen.doctor.checks.capacity.autoscaler_sources import STATUS_CONFIG_MAP
from truegreen.doctor.checks.capacity.autoscaling import (
    BLOCKED_SCALE_UPS,
    PROVISION_TIME,
    SCALING_UP,
    STATUS_FRESH,
    AutoscalerWord,
    GroupScaleUp,
    UnreadyPool,
    Word,
    autoscaler_health,
    autoscaler_words,
    group_scale_ups,
    latest_status,
    limited_pools,
    nominated_claim,
    plain_adding,
    plain_cannot_add,
    pool_use,
    scale_up_groups,
    status_time,
    triggered_group,
    unready_pools,
)
from truegreen.doctor.checks.capacity.capi_groups import (
    UnreadGroup,
    group_lines,
    group_waits,
    unread_groups,
)
from truegreen.doctor.checks.capacity.karpenter_claims import claim_launches, launched
from truegreen.doctor.checks.capacity.machines_down import DownSupply
from truegreen.doctor.checks.capacity.scheduler_reasons import (
    first_todo,
    plain_reasons,
    with_taint_keys,
)
from truegreen.doctor.checks.capacity.shape import joined_words, training_pods
from truegreen.doctor.checks.capacity.words import (
    AUTOSCALER_UNHEALTHY,
    BLOCKED_BY_OTHER_WORK,
    CANT_READ,
    GPU_SOFTWARE_DOWN,
    GPU_SOFTWARE_STARTING,
    GPUS_UNHEALTHY,
    HELD_BY_RUNNING_JOB,
    MACHINE_COMING,
    MACHINE_KEPT_OUT,
    NO_ELIGIBLE_MACHINE,
    NO_MACHINE_CAN_BE_ADDED,
    NO_SUCH_GPU,
    PARTLY_FITS,
    POOLS_NOT_READY,
    PREEMPTION_UNDER_WAY,
    PREEMPTS,
    SAY,
    TOO_LARGE,
    UNSCHEDULABLE,
)
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Basis, Finding, Status
from truegreen.doctor.knowledge.evidence import SchedulerVerdict
from truegreen.doctor.knowledge.training import training_owner

_EXPLAINS_A_WAIT_FOR_ROOM = frozenset(
    {
        HELD_BY_RUNNING_JOB,
        PARTLY_FITS,
        BLOCKED_BY_OTHER_WORK,
        TOO_LARGE,
        MACHINE_KEPT_OUT,
        NO_ELIGIBLE_MACHINE,
    }
)
"""What placing the pods can say that explains a scheduler that found no room."""
_NO_GPU_OFFERED = frozenset({GPU_SOFTWARE_DOWN, GPU_SOFTWARE_STARTING, GPUS_UNHEALTHY, NO_SUCH_GPU})
"""Why the machines offer fewer of the GPUs asked for than they have: measured (the machine's
capacity, its allocatable, its GPU software's pods), and the cause of the scheduler's
`Insufficient nvidia.com/gpu`, whether or not an autoscaler could add a machine."""


def coming_beside_down(
    env: Environment, verdicts: Sequence[tuple[KubeObject, SchedulerVerdict]], down: DownSupply
) -> Finding | None:
    """A machine an autoscaler measurably adds for the pods the scheduler could not place
    (`verdicts`) is capacity on its way, whatever the machines already there: the wait, with
    those that are down said in its details."""
    lines = _scheduler_lines(env, verdicts)
    words = _autoscaler_words(env, [v.pod for _, v in verdicts], _provision(env))
    coming = _coming(env, verdicts, words, lines)
    if coming is None:
        return None
    said = f"every machine that has {down.resource} is down now: {', '.join(down.machines)}"
    return replace(coming, details=(*coming.details, said, *down.states))


def with_verdicts(
    env: Environment,
    verdicts: Sequence[tuple[KubeObject, SchedulerVerdict]],
    findings: list[Finding],
) -> list[Finding]:
    """The findings with the scheduler's own verdicts on the training pods it could not place
    (`verdicts`, at least one), and with what the autoscalers said about those pods
    (capacity/check.py `_with_evidence`)."""
    if all(v.preempting for _, v in verdicts):
        beside = [f for f in _beside_room(findings) if f.code != PREEMPTS]
        return [_preemption_under_way(env, verdicts), *beside]
    lines = _scheduler_lines(env, verdicts)
    words = _autoscaler_words(env, [v.pod for _, v in verdicts], _provision(env))
    health = _autoscaler_health(env)
    ended = [w for w in words if w.word is Word.LAUNCH_ENDED]
    if ended and not any(w.word is Word.CANNOT_ADD for w in words):
        return [_launch_ended(env, ended, lines), *_beside_room(findings), *health[0]]
    coming = _coming(env, verdicts, words, lines)
    if coming is not None:
        return [coming, *_beside_room(findings)]
    cannot = [w for w in words if w.word is Word.CANNOT_ADD]
    lines += [_said(w) for w in words if w.word is Word.ADDING]
    lines += [_said(w) for w in cannot] + health[1]
    flags = env.autoscaler_flags
    expired = [w for w in words if w.word is Word.EXPIRED]
    # A group that gives its own provision time is judged by it, whatever the flag's read; a
    # group whose get failed may give one longer than the wait that expired its scale-up.
    own = group_waits(env.machine_groups)
    unread = unread_groups(env.machine_groups)
    unsure = [
        w
        for w in expired
        if (group := triggered_group(w) or "") in unread
        or (isinstance(flags, CantRead) and group not in own)
    ]
    lines += [_expired(w, env, known=w not in unsure) for w in expired]
    if unsure and not cannot:
        # Whether a scale-up past that wait still stands depends on the provision time the
        # autoscaler was given, or the group's own, which could not be read: neither a wait nor
        # a failure.
        unknown = (
            SAY.cant_check(env, Kind.POD, flags, everywhere=True, noun=_AUTOSCALER_SETTINGS)
            if isinstance(flags, CantRead)
            # Else each such scale-up's group is one whose get failed.
            else _unread_group(env, unread[triggered_group(unsure[0]) or ""])
        )
        details = (*unknown.details, *lines)
        return [replace(unknown, details=details), *_beside_room(findings), *health[0]]
    down, pool_lines = _pools_down(env, cannot)
    lines += pool_lines
    if all(v.only_room for _, v in verdicts):
        for index, found in enumerate(findings):
            explained_by_wait = found.code == HELD_BY_RUNNING_JOB or not (cannot or down)
            waits = found.code in _EXPLAINS_A_WAIT_FOR_ROOM and explained_by_wait
            # Room alone, where placing could not run (a read it needs failed): whether the
            # room is short for now (a wait) or for ever is not known, so the scheduler's words
            # go with that unknown instead of making a failure of it.
            unplaced = found.code == CANT_READ and not (cannot or down)
            if waits or unplaced or found.code in _NO_GPU_OFFERED:
                explained = replace(found, details=(*found.details, *lines))
                return [*findings[:index], explained, *findings[index + 1 :], *health[0]]
    nodes = env.nodes.items if isinstance(env.nodes, Listed) else None
    pod, newest = max(verdicts, key=lambda pv: (str(o.created_at(pv[0]) or ""), pv[1].pod))
    newest = with_taint_keys(newest, o.pod_spec(pod), nodes)
    job = training_owner(pod)
    of_job = [
        (p, with_taint_keys(v, o.pod_spec(p), nodes))
        for p, v in verdicts
        if training_owner(p) == job
    ]
    count = len(of_job)
    what = f"{count} program{'s' if count != 1 else ''} of the training job '{job}'"
    command = env.settings.kubectl.here("describe", "pod", newest.pod)
    pool_why, pool_lines = _pool_limits(env, cannot)
    lines += pool_lines
    said = plain_cannot_add(cannot[0].message) if cannot else CannotAdd("", "")
    if pool_why:
        said = CannotAdd(pool_why, "Raise the machine pool's limits, or free room")
    measured = (
        SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            NO_MACHINE_CAN_BE_ADDED,
            details=lines,
            objects=[f"Pod/{v.pod}" for _, v in verdicts],
            what=what,
            why=said.why,
            todo=said.todo,
            command=_where_said(env, cannot[0], command),
        )
        if cannot
        else _pools_not_ready(env, down, what, lines, verdicts)
        if down is not None
        else SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            UNSCHEDULABLE,
            details=lines,
            objects=[f"Pod/{v.pod}" for _, v in verdicts],
            what=what,
            reasons=plain_reasons(newest),
            todo=first_todo(of_job, nodes, env.settings.kubectl),
            command=command,
        )
    )
    # A wait placing inferred ("wait for the running job") is no answer to the scheduler's
    # measured reason other than room: it is not said beside it.
    kept = [
        f for f in findings if f.status is Status.FAIL or f.code not in _EXPLAINS_A_WAIT_FOR_ROOM
    ]
    return [measured, *(f for f in kept if f.status is not Status.OK), *health[0]]


_AUTOSCALER_SETTINGS = "cluster-autoscaler's own settings"
_DEFAULT_WAIT = f"{PROVISION_TIME.total_seconds() / 60:g} minutes"
_ROOM_CODES = _EXPLAINS_A_WAIT_FOR_ROOM | {UNSCHEDULABLE}
"""What a machine on its way answers: the room it brings is the room these lack."""


def _autoscaler_words(
    env: Environment, pods: Sequence[str], provision: ProvisionTime
) -> list[AutoscalerWord]:
    """What the autoscalers said about these pods, newest per pod (their Events' reads that
    failed are left out: the scheduler's own verdict still stands)."""
    status = _status(env)
    waits = {group: own.wait for group, own in group_waits(env.machine_groups).items()}
    known = None if isinstance(status, CantRead) else status
    groups = group_scale_ups(known) if known is not None else {}
    written = status_time(known) if known is not None else None
    fresh = written is not None and env.now - written <= STATUS_FRESH
    scaling_up = {
        name: g.since
        for name, g in groups.items()
        if fresh and g.status == SCALING_UP and g.since is not None
    }
    found: dict[str, AutoscalerWord] = {}
    for read in env.autoscaler_events.values():
        if isinstance(read, Listed):
            words = autoscaler_words(read.items, pods, env.now, scaling_up, provision.wait, waits)
            for pod, word in words.items():
                kept = found.get(pod)
                if kept is None or (word.at is not None and (kept.at is None or word.at > kept.at)):
                    found[pod] = word
    claims, pools = env.node_claims, env.node_pools
    launches = (
        claim_launches(claims.items, env.now, pools.items if isinstance(pools, Listed) else ())
        if isinstance(claims, Listed)
        else None
    )
    return sorted(
        (_scaling(launched(w, launches), groups) for w in found.values()), key=lambda w: w.pod
    )


POOLS_SHOWN = 8
"""NodePools described at most: those Karpenter names, or where it names none, every pool."""


def _pool_limits(env: Environment, cannot: Sequence[AutoscalerWord]) -> tuple[str, list[str]]:
    """Where Karpenter says a NodePool's limits stopped it: each named pool's limits against
    what its machines hold (details), and, for the first pool at a limit, plain words for
    the headline ('' when none is)."""
    named = [p for w in cannot if w.source == "karpenter" for p in limited_pools(w.message)]
    read = env.node_pools
    if named and isinstance(read, CantRead):
        return "", [f"Karpenter's NodePools' limits not shown: {read.reason}"]
    if not named or not isinstance(read, Listed):
        return "", []
    pools = {o.name_of(p): p for p in read.items}
    wanted = ([p for p in named if p] or sorted(pools))[:POOLS_SHOWN]
    why, lines = "", []
    for name in wanted:
        pool = pools.get(name)
        if pool is None:
            continue
        uses = pool_use(pool)
        stated = ", ".join(f"{u.resource} {u.used} in use of its limit {u.limit}" for u in uses)
        lines.append(f"NodePool {name}: {stated or 'no limits'}")
        reached = [u for u in uses if u.reached]
        if reached and not why:
            at = " and ".join(f"{u.limit} {u.resource}" for u in reached)
            why = f"the machine pool {name} has reached its limit of {at}"
    return why, lines


def _beside_room(findings: list[Finding]) -> list[Finding]:
    """The problems placing found other than a lack of room, which an autoscaler's answer
    (a machine coming, or not known to be) stands in for."""
    return [f for f in findings if f.status is not Status.OK and f.code not in _ROOM_CODES]


def _pools_down(
    env: Environment, cannot: Sequence[AutoscalerWord]
) -> tuple[UnreadyPool | None, list[str]]:
    """The first NodePool, where Karpenter passes over every one it could use (`unready_pools`)
    and said nothing of the pods itself (`cannot` holds what it said); and the details: each
    pool that is not ready, or that the pools could not be read."""
    read = env.node_pools
    if isinstance(read, CantRead):
        if read.is_measurement or cannot:
            return None, []
        return None, [f"whether Karpenter's machine pools are ready is not known: {read.reason}"]
    unready, none_ready = unready_pools(read.items) if isinstance(read, Listed) else ([], False)
    lines = [f"NodePool {p.name} is not ready: {p.said}" for p in unready[:POOLS_SHOWN]]
    return (unready[0] if none_ready and not cannot else None), lines


def _pools_not_ready(
    env: Environment,
    pool: UnreadyPool,
    what: str,
    lines: Sequence[str],
    verdicts: Sequence[tuple[KubeObject, SchedulerVerdict]],
) -> Finding:
    """No NodePool of Karpenter's is ready, and Karpenter said nothing about the pods: it
    passes over every pool and adds no machine, whatever placing on bigger machines shows."""
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        POOLS_NOT_READY,
        details=lines,
        objects=[*(f"Pod/{v.pod}" for _, v in verdicts), f"NodePool/{pool.name}"],
        what=what,
        pool=pool.name,
        why=pool.plain or pool.said,
        command=env.settings.kubectl.cluster("describe", "nodepool", pool.name),
    )


def _expired(word: AutoscalerWord, env: Environment, *, known: bool) -> str:
    """A scale-up past the provision time, said with its age: no machine is on its way; past
    the wait given for every group only (the default, where the flag could not be read), where
    the time cluster-autoscaler was given for its group is not `known`."""
    age = (
        "" if word.at is None else f", {int((env.now - word.at).total_seconds() // 60)} minutes ago"
    )
    if not known:
        provision = _provision(env)
        wait = (
            f"its default wait of {_DEFAULT_WAIT}"
            if provision == DEFAULT_PROVISION_TIME
            else f"its wait of {provision.wait.total_seconds() / 60:g} minutes for every group"
        )
        return (
            f"{word.source} on {word.pod}{age}, longer ago than {wait} (whether a machine is "
            f"still on its way is not known): {word.message}"
        )
    return (
        f"{word.source} on {word.pod}{age}, longer ago than it waits for a machine "
        f"(no machine is on its way): {word.message}"
    )


def _unread_group(env: Environment, unread: UnreadGroup) -> Finding:
    """Unknown: the get of a scale-up's Cluster API machine group failed, so whether the
    autoscaler still waits for its machine, by a provision time of the group's own, is not
    known; the remedy is that get's."""
    group = unread.group
    return SAY.cant_check(env, unread.kind, unread.cant, namespace=group.namespace, name=group.name)


def _provision(env: Environment) -> ProvisionTime:
    """How long a cluster-autoscaler scale-up stands: what its own pod was given, else the
    default."""
    flags = env.autoscaler_flags
    return provision_time(flags.summary if isinstance(flags, Folded) else None)


def _provision_lines(env: Environment, provision: ProvisionTime) -> list[str]:
    """Where the provision time came from, when an old scale-up made doctor look."""
    flags = env.autoscaler_flags
    if flags is None:
        return []
    if isinstance(flags, CantRead):
        return [f"how long cluster-autoscaler waits for a machine is not known ({flags.reason})"]
    if provision == DEFAULT_PROVISION_TIME:
        return [f"cluster-autoscaler waits {_DEFAULT_WAIT} for a machine (its default)"]
    return [
        f"cluster-autoscaler waits {provision.wait.total_seconds() / 60:g} minutes for a "
        f"machine: {provision.source}"
    ]


def _where_said(env: Environment, word: AutoscalerWord, on_pod: str) -> str:
    """Where the autoscaler's own words are: the Karpenter object whose conditions say them,
    its status ConfigMap for a group's backoff, else the pod's Events."""
    if word.shown_by:
        return env.settings.kubectl.cluster("describe", *word.shown_by.split("/", 1))
    if not word.message.startswith(STATUS_SAID):
        return on_pod
    status = _status(env)
    return _describe_status(env, None if isinstance(status, CantRead) else status)


def _status(env: Environment) -> KubeObject | CantRead | None:
    """cluster-autoscaler's status ConfigMap: the one it wrote last of those found
    (`latest_status`); the read that could not look; None where none was read or none exists
    (a measured absence: no cluster-autoscaler writes one)."""
    read = env.autoscaler_status
    if read is None or isinstance(read, CantRead):
        return None if read is None or read.is_measurement else read
    return read.obj if isinstance(read, Got) else latest_status(read.items)


def _status_place(status: KubeObject | None) -> tuple[str, str]:
    """The status ConfigMap's namespace and name (its default place where none was read)."""
    if status is None:
        return STATUS_CONFIG_MAP
    return o.namespace_of(status) or STATUS_CONFIG_MAP[0], o.name_of(status)


def _describe_status(env: Environment, status: KubeObject | None) -> str:
    """The command that shows the status ConfigMap where it was found."""
    namespace, name = _status_place(status)
    return env.settings.kubectl.cluster("-n", namespace, "describe", "configmap", name)


STATUS_SAID = "cluster-autoscaler status:"
"""How a word read from the status ConfigMap starts (`_scaling`)."""


def _scaling(word: AutoscalerWord, groups: Mapping[str, GroupScaleUp]) -> AutoscalerWord:
    """A scale-up whose machine group cluster-autoscaler's own status now shows in backoff (a
    scale-up failed) or unhealthy is no machine on its way, however long ago it was asked
    for: its status is the measurement."""
    group = triggered_group(word) if word.word in (Word.ADDING, Word.EXPIRED) else None
    state = groups.get(group) if group is not None else None
    if state is None or state.status not in BLOCKED_SCALE_UPS:
        return word
    said = f"{STATUS_SAID} machine group {group} scale-up {state.status}"
    return replace(
        word, word=Word.CANNOT_ADD, message=f"{said}: {state.error}" if state.error else said
    )


def _launch_ended(env: Environment, ended: Sequence[AutoscalerWord], lines: list[str]) -> Finding:
    """The machine Karpenter was making for the pods is gone before it started: not on its
    way, and no refusal was measured either (Karpenter tries again for pods that still wait;
    the Event that says why is on the NodeClaim, not on the pods)."""
    first = ended[0]
    claim = nominated_claim(first) or ""
    why = (
        f"the machine {claim} that Karpenter was making for the training job "
        f"'{_job_of_pod(env, first.pod)}' is gone before it started, and whether another "
        "comes is not known"
    )
    events = env.settings.kubectl.cluster(
        "get",
        "events",
        "-A",
        "--field-selector",
        f"involvedObject.kind=NodeClaim,involvedObject.name={claim}",
    )
    unknown = SAY.finding(
        Status.UNKNOWN,
        Basis.CANT_CHECK,
        CANT_READ,
        details=[*lines, *(f"{w.source} on {w.pod}: {w.message}" for w in ended)],
        objects=[f"Pod/{w.pod}" for w in ended],
        why=why,
        remedy=(
            "Run this again in a minute: Karpenter tries again for a job that still waits. "
            f"{events} shows why the machine ended (the cluster keeps events about an hour)."
        ),
    )
    return replace(unknown, why=why)


def _autoscaler_health(env: Environment) -> tuple[list[Finding], list[str]]:
    """cluster-autoscaler's own health, when it says it is unhealthy: a finding; otherwise a
    line for the details (or nothing where there is no cluster-autoscaler)."""
    status = _status(env)
    if status is None:
        return [], []
    if isinstance(status, CantRead):
        return [], [f"the autoscaler's status could not be read: {status.reason}"]
    health = autoscaler_health(status)
    if health.healthy is not False:
        return [], [health.detail]
    namespace, name = _status_place(status)
    unhealthy = SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        AUTOSCALER_UNHEALTHY,
        details=(health.detail,),
        objects=(f"ConfigMap/{namespace}/{name}",),
        command=_describe_status(env, status),
    )
    return [unhealthy], [health.detail]


def _scheduler_lines(
    env: Environment, verdicts: Sequence[tuple[KubeObject, SchedulerVerdict]]
) -> list[str]:
    """The scheduler's words on each pod, and where the provision time came from: the flag,
    and each Cluster API machine group's own that a scale-up of these pods names."""
    lines = [f"scheduler on {v.pod}: {v.message}" for _, v in verdicts]
    events = env.autoscaler_events.get("cluster-autoscaler")
    named = (
        scale_up_groups(events.items, {v.pod for _, v in verdicts})
        if isinstance(events, Listed)
        else []
    )
    return lines + _provision_lines(env, _provision(env)) + group_lines(env.machine_groups, named)


def _said(word: AutoscalerWord) -> str:
    """An autoscaler's word on a pod, and how far its machine has come, for the details."""
    progress = f"; {word.progress}" if word.progress else ""
    return f"{word.source} on {word.pod}: {word.message}{progress}"


def _coming(
    env: Environment,
    verdicts: Sequence[tuple[KubeObject, SchedulerVerdict]],
    words: Sequence[AutoscalerWord],
    lines: Sequence[str],
) -> Finding | None:
    """A machine an autoscaler is adding for the pods: a measured wait, unless for a job whose
    pods must all run at once and for one of which it cannot add one (the machine coming
    starts none of them then); None when no machine is on its way."""
    work = env.work()
    together = {v.pod: job.ref for pod, v in verdicts if (job := work.job_of(pod)) and job.together}
    refused = {together.get(w.pod) for w in words if w.word is Word.CANNOT_ADD}
    adding = [w for w in words if w.word is Word.ADDING and together.get(w.pod, "") not in refused]
    if not adding:
        return None
    details = [*lines]
    claims = env.node_claims
    if isinstance(claims, CantRead) and any(nominated_claim(w) for w in adding):
        details.append(f"whether Karpenter's machine launched is not known: {claims.reason}")
    # The refusals for pods of jobs that start them one by one: true, beside the wait.
    details += [_said(w) for w in words if w.word in (Word.ADDING, Word.CANNOT_ADD)]
    first = adding[0]
    return SAY.finding(
        Status.WARN,
        Basis.MEASURED,
        MACHINE_COMING,
        details=details,
        objects=[f"Pod/{w.pod}" for w in adding],
        job=f"'{_job_of_pod(env, first.pod)}'",
        how=plain_adding(first),
    )


def _preemption_under_way(
    env: Environment, verdicts: Sequence[tuple[KubeObject, SchedulerVerdict]]
) -> Finding:
    """The scheduler has preempted for every pod it could not place and waits for what it
    stopped on the machines it nominated them for: they bind there once that room is free."""
    machines = list(dict.fromkeys(v.nominated for _, v in verdicts))
    return SAY.finding(
        Status.WARN,
        Basis.MEASURED,
        PREEMPTION_UNDER_WAY,
        details=[
            *(f"scheduler on {v.pod}: {v.message}" for _, v in verdicts),
            *(
                f"{v.pod} is nominated for {v.nominated}: the scheduler keeps that room for it "
                "while the work it preempted there stops"
                for _, v in verdicts
            ),
        ],
        objects=[f"Pod/{v.pod}" for _, v in verdicts],
        machines=joined_words(machines),
        job=f"'{_job_of_pod(env, verdicts[0][1].pod)}'",
        command=env.settings.kubectl.cluster("describe", "node", *machines),
    )


def _job_of_pod(env: Environment, pod_name: str) -> str:
    """The training job of the namespace's pod named `pod_name`."""
    for pod in training_pods(env):
        if o.name_of(pod) == pod_name:
            return training_owner(pod) or pod_name
    return pod_name
