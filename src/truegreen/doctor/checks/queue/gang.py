"""Gang schedulers: does the scheduler the judged job's pods name run, and what does it say
about the group they must start as?

The scheduler's own word is measured and wins: a group's failing condition is quoted, never
replaced by doctor's arithmetic. What each object means is doctor/knowledge/gangs.py.
"""

import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Final

from msgspec import Struct
from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Got, Kind, KubeObject, Listed, ReadFailure
from truegreen.doctor.checks.gang_waits import whole_request
from truegreen.doctor.checks.queue.words import (
    GANG_MISSING,
    GANG_NEVER_FITS,
    GANG_NO_GROUP,
    GANG_PLACED,
    GANG_QUEUE_CLOSED,
    GANG_QUEUE_FULL,
    GANG_QUEUE_MISSING,
    GANG_QUEUE_NO_ROOM,
    GANG_QUEUE_NOT_LEAF,
    GANG_QUEUE_ORPHANED,
    GANG_REFUSED,
    GANG_TOO_FEW_PODS,
    GANG_USER_LIMIT_NEVER_FITS,
    GANG_USER_QUOTA_NO_ROOM,
    SAY,
    SCHEDULER_DOWN,
    SCHEDULER_MISSING,
    SCHEDULER_UNCONFIRMED,
)
from truegreen.doctor.environment import Environment, GangReads
from truegreen.doctor.findings import Basis, Finding, Status
from truegreen.doctor.knowledge import gangs as g
from truegreen.doctor.knowledge import yunikorn as yk
from truegreen.doctor.knowledge.training import TrainingJob
from truegreen.gang_membership import VOLCANO_GROUP_ANNOTATION
from truegreen.pull_reasons import FAILED_PULL_REASONS
from truegreen.quantity import CPU, MEMORY, PODS, Resources, format_amount

_MALFORMED = CantRead(ReadFailure.MALFORMED, "the running pods' summary is not of its shape")
_CONFIG_NOUN = "YuniKorn's configuration (its queues' limits)"
LONGEST_MESSAGE = 400
"""A scheduler's message is quoted up to this many characters."""


def gang_findings(env: Environment, job: TrainingJob, reads: GangReads) -> list[Finding]:
    """What the job's own scheduler, and the group and queue it keeps, say about the job."""
    pods = env.pods_of(job)
    fields: dict[str, Any] = {"job": f"'{job.name}'", "scheduler": reads.schedulers[0]}
    missing = _scheduler_missing(env, job, reads, pods, fields)
    if missing is not None:
        return [missing]
    found: list[Finding] = []
    staying = o.remaining(pods)
    unplaced = g.still_to_place(staying)
    for ref in g.gangs_of(staying):
        if ref in unplaced:
            waiting = sum(1 for p in staying if g.gang_of(p) == ref and not o.node_name(p))
            counted = g.counted_members(pods, ref)
            found += _group(env, job, reads, ref, fields, _Members(waiting, counted))
        else:
            members = sum(1 for p in staying if g.gang_of(p) == ref)
            found.append(_bound(env, job, ref, members, fields))
    if yk.YUNIKORN in reads.schedulers:
        found += _yunikorn(env, job, reads, pods, {**fields, "scheduler": yk.YUNIKORN})
    ungrouped = _without_group(env, job, staying, fields)
    return found if ungrouped is None else [*found, ungrouped]


def _without_group(
    env: Environment, job: TrainingJob, staying: list[KubeObject], fields: dict[str, Any]
) -> Finding | None:
    """Pods that name Volcano and belong to no PodGroup: Volcano's scheduler never places them
    (pkg/scheduler/cache/event_handlers.go `getOrCreateJob` keeps no job for a task whose group
    is empty), and nothing writes why. Volcano's controllers give each such pod a group
    (pkg/controllers/podgroup `createNormalPodPGIfNotExist`, `updatePodAnnotations`) within
    seconds of its creation; a pod left without one `g.UNJUDGED_SECONDS` and never judged
    says they are not running, or that the job's operator makes no group for it."""
    lost = [
        p
        for p in staying
        if o.pod_spec(p).get("schedulerName") == g.VOLCANO
        and g.gang_of(p) is None
        and not g.looked_at(p)
    ]
    if not lost or not g.waited_unjudged(lost, env.now):
        return None
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        GANG_NO_GROUP,
        details=(
            f"{job.ref}: {len(lost)} pods name schedulerName {g.VOLCANO} and carry no "
            f"{VOLCANO_GROUP_ANNOTATION} annotation (no PodGroup), and none has been judged "
            f"by a scheduler in {g.UNJUDGED_SECONDS} s",
        ),
        objects=(job.ref, *(f"Pod/{o.name_of(p)}" for p in lost[:3])),
        **{**fields, "scheduler": g.VOLCANO},
        count=len(lost),
        command=env.settings.kubectl.cluster("get", "pods", "--all-namespaces"),
    )


def _yunikorn(
    env: Environment,
    job: TrainingJob,
    reads: GangReads,
    pods: list[KubeObject],
    fields: dict[str, Any],
) -> list[Finding]:
    """YuniKorn's newest note on the job's unplaced pods (or its gang's placeholders): no room
    in its queue (or more than a configured `max` may ever hold), or in the user's quota."""
    notes = reads.notes
    if notes is None:
        return []
    if isinstance(notes, CantRead):
        return [SAY.cant_check(env, Kind.EVENT, notes, job.ref)]
    everyone = env.pods.items if isinstance(env.pods, Listed) else ()
    held = yk.held_requests(notes.items, yk.noted_pods(o.remaining(pods), everyone))
    if not held:
        return []
    note = next((n for n in held if n.queue), held[0])
    kubectl = env.settings.kubectl
    details = tuple(f"YuniKorn on pod {n.pod}: {quoted(n.message)}" for n in held[:3])
    objects = (job.ref, *(f"Pod/{n.pod}" for n in held[:3]))
    said = {
        **fields,
        "message": quoted(note.message),
        "command": kubectl.here("describe", "pod", note.pod),
    }
    if not note.queue:
        user, unread = _yunikorn_user_limit(env, job, reads, note, pods, fields)
        if user is not None and user.status is Status.FAIL:
            return [user]
        quota = SAY.finding(
            Status.WARN,
            Basis.MEASURED,
            GANG_USER_QUOTA_NO_ROOM,
            details=(*details, *unread),
            objects=objects,
            **said,
        )
        return [quota] if user is None else [quota, user]
    never, unread = _yunikorn_never_fits(env, job, reads, note, fields)
    if never is not None and never.status is Status.FAIL:
        return [never]
    no_room = SAY.finding(
        Status.WARN,
        Basis.MEASURED,
        GANG_QUEUE_NO_ROOM,
        details=(*details, *unread),
        objects=objects,
        **said,
        queue=note.queue,
    )
    # Where the configuration can't be read, whether the queue could ever hold the job is
    # not known: that is said too, never taken for "only for now".
    return [no_room] if never is None else [no_room, never]


class _Config(Struct, frozen=True):
    """YuniKorn's configuration as read: its queues' text and where it came from, and the
    YAML (empty where there is none: YuniKorn's defaults, no limits)."""

    queues: yk.QueuesText
    config: Mapping[str, Any]
    namespace: str


def _yunikorn_config(
    env: Environment, job: TrainingJob, reads: GangReads
) -> _Config | Finding | str:
    """YuniKorn's configuration; an unknown where its ConfigMaps can't be read; why, where
    they were read but the queues in them can't be."""
    namespace = reads.configs_namespace
    read = {name: reads.configs.get(name) for name in yk.CONFIG_MAPS}
    for name, answer in read.items():
        if isinstance(answer, CantRead) and not answer.is_measurement:
            return SAY.cant_check(
                env,
                Kind.CONFIG_MAP,
                answer,
                job.ref,
                namespace=namespace,
                name=name,
                noun=_CONFIG_NOUN,
            )
    found = [(n, a.obj) for n in reversed(yk.CONFIG_MAPS) if isinstance(a := read[n], Got)]
    queues = yk.queues_text(found)
    if queues.unread:
        return queues.unread
    config = yk.queues_config(queues.text) if queues.text else None
    if queues.text and config is None:
        return f"YuniKorn's {queues.key} in {queues.config_map} is not YAML doctor can read"
    return _Config(queues, config or {}, namespace)


def _whole_job(job: TrainingJob) -> Resources:
    """The whole job (all its pods at once, as training needs them) in YuniKorn's terms: one
    `pods` each (yunikorn-k8shim pkg/common/resource.go `GetPodResource`)."""
    return whole_request(job) + Resources.of({PODS: job.pods})


def _describe_config(env: Environment, config: _Config) -> str:
    return env.settings.kubectl.cluster(
        "-n", config.namespace, "describe", "configmap", config.queues.config_map
    )


def _yunikorn_never_fits(
    env: Environment,
    job: TrainingJob,
    reads: GangReads,
    note: yk.QueueNote,
    fields: dict[str, Any],
) -> tuple[Finding | None, tuple[str, ...]]:
    """The whole job against each configured `max` on the way to the queue YuniKorn placed it
    in; an unknown where YuniKorn's ConfigMaps can't be read; the lines that say why the
    queues themselves could not be judged."""
    read = _yunikorn_config(env, job, reads)
    if isinstance(read, Finding):
        return read, ()
    if isinstance(read, str):
        return None, (f"whether the queue could ever hold the job is not known: {read}",)
    wanted = _whole_job(job)
    for limit in yk.queue_limits(read.config, note.queue):
        over = limit.beyond(wanted)
        if not over:
            continue
        needs = _amounts(wanted, over)
        holds = ", ".join(_amount(name, limit.get(name)) for name in over)
        template = " (the childtemplate of a parent)" if limit.template else ""
        never = SAY.finding(
            Status.FAIL,
            Basis.INFERRED,
            GANG_NEVER_FITS,
            details=(
                f"YuniKorn on pod {note.pod}: {quoted(note.message)}",
                f"ConfigMap {read.namespace}/{read.queues.config_map} {read.queues.key}: queue "
                f"{limit.path} max{template} {holds}",
                f"the job's {job.pods} pods request {needs}",
            ),
            objects=(f"ConfigMap/{read.queues.config_map}", job.ref),
            **{**fields, "queue": limit.path, "command": _describe_config(env, read)},
            needs=needs,
            holds=holds,
        )
        return never, ()
    return None, ()


def _yunikorn_user_limit(
    env: Environment,
    job: TrainingJob,
    reads: GangReads,
    note: yk.QueueNote,
    pods: list[KubeObject],
    fields: dict[str, Any],
) -> tuple[Finding | None, tuple[str, ...]]:
    """The whole job against each user or group limit that applies to the user YuniKorn runs
    it as, on the way to its queue: the queue YuniKorn's own queue notes name, else the one
    the pod asks for where it is written out from root and `provided` is the only placement
    rule (it keeps such a name: yunikorn-core pkg/scheduler/placement/provided_rule.go
    `placeApplication`; `yk.places_where_asked`).
    An unknown where YuniKorn's ConfigMaps can't be read; the lines that say why the limits
    could not be judged."""
    everyone = env.pods.items if isinstance(env.pods, Listed) else ()
    staying = o.remaining(pods)
    pod = yk.application_pod(note.pod, staying, everyone)
    if pod is None:
        return None, (f"{_USER_UNKNOWN}: pod {note.pod} is not one of the job's",)
    noted = yk.noted_queue(
        reads.notes.items if isinstance(reads.notes, Listed) else (),
        yk.noted_pods(staying, everyone),
    )
    asked = yk.pod_queue(pod)
    queue = noted or (asked.lower() if asked.lower().startswith(f"{yk.ROOT}.") else "")
    if not queue:
        why = (
            f"pod {o.name_of(pod)} asks for queue '{asked}', which YuniKorn's placement rules place"
            if asked
            else f"no note of YuniKorn's names the queue and pod {o.name_of(pod)} names none"
        )
        return None, (f"{_USER_UNKNOWN}: {why}",)
    read = _yunikorn_config(env, job, reads)
    if isinstance(read, Finding):
        return read, ()
    if isinstance(read, str):
        return None, (f"{_USER_UNKNOWN}: {read}",)
    if not read.queues.text:
        # YuniKorn then runs with its built-in configuration, which sets no user or group
        # limit (yunikorn-core pkg/common/configs/config.go `DefaultSchedulerConfig`).
        return None, ()
    if not noted and not yk.places_where_asked(read.config):
        # Only the `provided` rule, alone, is sure to have put the application in the queue
        # its pod asks for; another rule may have put it elsewhere.
        rules = ", ".join(yk.placement_rules(read.config)) or "none: no partition 'default'"
        why = (
            f"pod {o.name_of(pod)} asks for queue '{asked}', and no note of YuniKorn's names "
            f"the queue; YuniKorn's placement rules ({rules}) may place the job elsewhere"
        )
        return None, (f"{_USER_UNKNOWN}: {why}",)
    who = yk.submitter(pod)
    wanted = _whole_job(job)
    for found in yk.user_limits(read.config, queue, who):
        over = found.limit.beyond(wanted)
        if not over:
            continue
        needs = _amounts(wanted, over)
        holds = ", ".join(_amount(name, found.limit.get(name)) for name in over)
        kind = "groups" if found.group else "users"
        user = (
            f"user {who.user} (annotation {yk.USER_INFO})"
            if who.annotated
            else f"user {who.user} (no user in annotation {yk.USER_INFO}: YuniKorn's default)"
        )
        return SAY.finding(
            Status.FAIL,
            Basis.INFERRED,
            GANG_USER_LIMIT_NEVER_FITS,
            details=(
                f"YuniKorn on pod {note.pod}: {quoted(note.message)}",
                f"pod {o.name_of(pod)}: {user}, groups {list(who.groups)}; queue {queue}",
                f"ConfigMap {read.namespace}/{read.queues.config_map} {read.queues.key}: queue "
                f"{found.limit.path} limit for {kind} [{found.name}] maxresources {holds}",
                f"the job's {job.pods} pods request {needs}",
            ),
            objects=(f"ConfigMap/{read.queues.config_map}", job.ref),
            **{**fields, "queue": found.limit.path, "command": _describe_config(env, read)},
            needs=needs,
            holds=holds,
            who=_whose(found, who.user),
        ), ()
    return None, ()


_USER_UNKNOWN = "whether the user's limits could ever hold the job is not known"


def _whose(found: yk.UserLimit, user: str) -> str:
    """Whose limit it is, in plain words."""
    if not found.group:
        if found.name == yk.WILDCARD:
            return f"any user without a limit of their own, as '{user}',"
        return f"the user '{user}'"
    if found.name == yk.WILDCARD:
        return f"the users outside the named groups together, '{user}' among them,"
    return f"the group '{found.name}' of the user '{user}' together"


def _scheduler_missing(
    env: Environment,
    job: TrainingJob,
    reads: GangReads,
    pods: list[KubeObject],
    fields: dict[str, Any],
) -> Finding | None:
    """A measured fail where no running pod of the cluster is a named scheduler's own and no
    scheduler has looked at the job's pods, by their state or in an Event of the scheduler they
    name (for a name kube-scheduler may serve as a profile, once a pod has waited
    `UNJUDGED_SECONDS` unjudged; unknown before); unknown where the cluster's pods can't be
    read."""
    if isinstance(reads.running, CantRead):
        return SAY.cant_check(env, Kind.POD, reads.running, job.ref, everywhere=True)
    running = g.schedulers_running(reads.running.summary)
    if running is None:
        return SAY.cant_check(env, Kind.POD, _MALFORMED, job.ref, everywhere=True)
    # The namespace's Warning Events are read whenever a pod waits (reads/gather.py
    # `something_waits`), as unjudged pods do; a scheduler's word on a pod it could not place
    # is a Warning, and a pod it placed has a machine.
    events = env.warning_events.items if isinstance(env.warning_events, Listed) else ()
    if any(g.looked_at(p) for p in pods) or g.heard_from_scheduler(pods, events):
        return None
    absent = [name for name in reads.schedulers if name not in running]
    if not absent:
        return None
    scheduler = absent[0]
    down = g.schedulers_down(reads.running.summary).get(scheduler)
    if down is not None:
        return _scheduler_down(env, job, scheduler, down, len(pods), fields)
    identity = g.scheduler_identity(scheduler)
    unseen = (
        f"{job.ref}: pods name schedulerName {scheduler}; no running pod in any namespace is "
        f"named {identity}-… or labelled with the value {identity}"
    )
    said = {
        **fields,
        "scheduler": scheduler,
        "command": env.settings.kubectl.cluster("get", "pods", "--all-namespaces"),
    }
    if scheduler not in g.SEPARATE_SCHEDULERS and not g.waited_unjudged(pods, env.now):
        # kube-scheduler may serve the name as a profile, or a managed control plane may run
        # it unseen: nothing measured says it does not run until its pods wait unjudged
        wait = f"none has waited {g.UNJUDGED_SECONDS} s unjudged by a scheduler"
        unconfirmed = SAY.finding(
            Status.UNKNOWN,
            Basis.CANT_CHECK,
            SCHEDULER_UNCONFIRMED,
            details=(unseen, f"{len(pods)} of the job's pods exist; {wait}"),
            objects=(job.ref,),
            **said,
        )
        return replace(unconfirmed, why=f"whether `{scheduler}` runs in this cluster")
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        SCHEDULER_MISSING,
        details=(
            unseen,
            f"none of the job's {len(pods)} pods has been judged by a scheduler "
            "(no nodeName, no PodScheduled condition)",
        ),
        objects=(job.ref,),
        **said,
    )


def _scheduler_down(
    env: Environment,
    job: TrainingJob,
    scheduler: str,
    down: g.DownPod,
    pods: int,
    fields: dict[str, Any],
) -> Finding:
    """The scheduler's pods were found, but none runs its program (a crash loop keeps a pod in
    phase Running; a Pending one has not started): measured, with the state `kubectl get pods`
    shows and where to read why (the log of the container that stopped, once it has
    restarted)."""
    namespace, _, name = down.pod.partition("/")
    logs = ("logs", name, "--previous") if down.restarts else ("describe", "pod", name)
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        SCHEDULER_DOWN,
        details=(
            f"{job.ref}: pods name schedulerName {scheduler}; its pod {down.pod} is {down.state}",
            f"none of the job's {pods} pods has been judged by a scheduler "
            "(no nodeName, no PodScheduled condition)",
        ),
        objects=(job.ref, f"Pod/{down.pod}"),
        **{**fields, "scheduler": scheduler, "state": _plain_state(down)},
        command=env.settings.kubectl.cluster("-n", namespace, *logs),
    )


def _plain_state(down: g.DownPod) -> str:
    """A pod's state in an operator's words; the state as written stays in the details."""
    if down.reason == "CrashLoopBackOff":
        return "keeps crashing" + (f" ({down.restarted})" if down.restarted else "")
    if down.reason in FAILED_PULL_REASONS:
        return "can't be started: its image can't be downloaded"
    if down.reason == "Pending":
        return "hasn't been started on any machine yet"
    return "isn't running"


def _bound(
    env: Environment, job: TrainingJob, ref: g.GangRef, members: int, fields: dict[str, Any]
) -> Finding:
    """Every staying pod of the group is on a machine: its scheduler placed the gang, and its
    object is not read (g.still_to_place); a Volcano queue closed after the gang started
    evicts nothing (pkg/controllers/queue/state/open.go `Closing`)."""
    return SAY.finding(
        Status.OK,
        Basis.MEASURED,
        GANG_PLACED,
        details=(f"{ref.kind.spec.name} {ref.name}: all {members} pods are on machines",),
        objects=(f"{ref.kind.spec.name}/{ref.name}", job.ref),
        **fields,
    )


class _Members(Struct, frozen=True):
    """A group's pods as doctor counts them."""

    waiting: int
    """Staying pods not yet on a machine."""
    counted: int
    """The pods its scheduler counts toward `minMember` (g.counted_members)."""


def _group(
    env: Environment,
    job: TrainingJob,
    reads: GangReads,
    ref: g.GangRef,
    fields: dict[str, Any],
    members: _Members,
) -> list[Finding]:
    """A group with `members.waiting` pods still to place: its object's word, and its queue's
    where the scheduler wrote none."""
    kubectl = env.settings.kubectl
    plural = f"{ref.kind.plural}.{ref.kind.spec.group}"
    group_fields = {**fields, "group": ref.name, "command": kubectl.here("get", plural)}
    if ref.kind not in reads.served:
        return [
            SAY.finding(
                Status.FAIL,
                Basis.MEASURED,
                GANG_MISSING,
                details=(f"discovery does not serve {ref.kind.spec.api_version}",),
                objects=(job.ref,),
                **group_fields,
                why=" (the cluster doesn't offer such groups)",
            )
        ]
    read = reads.groups.get((ref.kind, ref.name))
    if read is None:  # only the groups of the job's remaining pods are read
        return []
    if isinstance(read, CantRead):
        if read.is_measurement:
            return [
                SAY.finding(
                    Status.FAIL,
                    Basis.MEASURED,
                    GANG_MISSING,
                    details=(f"{ref.kind.spec.name} {ref.name}: {read.reason}",),
                    objects=(job.ref,),
                    **group_fields,
                    why="",
                )
            ]
        return [SAY.cant_check(env, ref.kind, read, job.ref)]
    group = g.GROUP_READERS[ref.kind](read.obj)
    queued = None
    if ref.kind is Kind.VOLCANO_POD_GROUP:
        queued = _volcano_queue(env, job, reads, group, fields)
    elif ref.kind is Kind.KAI_POD_GROUP and not group.placed and not group.failing:
        queued = _kai_queue(env, job, reads, group, fields)
    elif (
        ref.kind is Kind.KAI_POD_GROUP and not group.placed and g.over_limit_only(group.failing[0])
    ):
        # KAI's `OverLimit` is said of a job too large for its queue and of one that waits for
        # the queue's running work alike: the queue's arithmetic tells which, and KAI's words
        # stay in the details. Elsewhere KAI's own word on the group is the answer.
        queued = _with_words(_kai_queue(env, job, reads, group, fields), group.failing[0])
    if queued is not None:
        return [queued]
    return _said(env, job, ref.kind, group, fields, members)


def _with_words(found: Finding | None, said: g.GroupCondition) -> Finding | None:
    """A queue limit's finding with the scheduler's words on the group added to its details;
    None for any other finding (the scheduler's word then stands)."""
    if found is None or found.code not in (GANG_QUEUE_FULL, GANG_NEVER_FITS):
        return None
    words = f"condition {said.type} ({said.reason}): {said.message}"
    return replace(found, details=(*found.details, words))


def _kai_queue(
    env: Environment,
    job: TrainingJob,
    reads: GangReads,
    group: g.PodGroupState,
    fields: dict[str, Any],
) -> Finding | None:
    """A KAI group's queue: KAI passes over a job whose queue or a parent of it is missing, or
    whose queue has queues under it, without a word on the group; a job more than the queue or
    a parent may ever hold never starts."""
    listed = reads.kai_queues
    if listed is None or not group.queue:
        return None
    if isinstance(listed, CantRead):
        return SAY.cant_check(env, Kind.KAI_QUEUE, listed, job.ref)
    chain = g.kai_chain(group.queue, [g.kai_queue(q) for q in listed.items])
    if not chain.judged:
        return None
    kubectl = env.settings.kubectl
    lists = kubectl.cluster("get", "queues.scheduling.run.ai")
    state = f"PodGroup {group.name}: queue {group.queue}, minMember {group.min_member}"
    objects = (f"PodGroup/{group.name}", job.ref)
    queue_fields = {**fields, "queue": group.queue, "command": lists}
    if chain.missing == group.queue:
        return SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            GANG_QUEUE_MISSING,
            details=(state, f"no Queue {group.queue} among {len(listed.items)} KAI queues"),
            objects=objects,
            **queue_fields,
        )
    if chain.missing:
        child = chain.queues[-1].name
        return SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            GANG_QUEUE_ORPHANED,
            details=(state, f"Queue {child}: parentQueue {chain.missing}, which no Queue is"),
            objects=(f"Queue/{child}", *objects),
            **{**queue_fields, "queue": child, "parent": chain.missing},
        )
    if chain.children:
        return SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            GANG_QUEUE_NOT_LEAF,
            details=(state, f"Queues with parentQueue {group.queue}: {', '.join(chain.children)}"),
            objects=(f"Queue/{group.queue}", *objects),
            **queue_fields,
            children=", ".join(f"'{c}'" for c in chain.children),
        )
    return _kai_limit(env, job, group, chain, queue_fields, state)


def _kai_limit(
    env: Environment,
    job: TrainingJob,
    group: g.PodGroupState,
    chain: g.KaiQueueChain,
    fields: dict[str, Any],
    state: str,
) -> Finding | None:
    """The whole job against each queue's limit, its own then its parents' (KAI checks them
    all: max_allowed_check.go `resultsOverLimit`): more than a limit never starts; within
    every limit but past what a queue has left beside the work it holds now, the job waits.
    Judged only where the group starts every pod of the job (minMember), as the need is then
    the whole job's."""
    if group.min_member < job.pods:
        return None
    wanted = whole_request(job)
    placed = any(o.node_name(pod) for pod in o.remaining(env.pods_of(job)))
    limit = g.kai_limit(wanted, chain, placed=placed)
    if limit is None:
        return None
    queue = limit.queue
    command = env.settings.kubectl.cluster("describe", "queues.scheduling.run.ai", queue.name)
    queue_fields = {**fields, "queue": queue.name, "command": command}
    objects = (f"Queue/{queue.name}", f"PodGroup/{group.name}", job.ref)
    if limit.over:
        needs = _amounts(wanted, [name for name, _ in limit.over])
        holds = ", ".join(_limit(name, amount) for name, amount in limit.over)
        return SAY.finding(
            Status.FAIL,
            Basis.INFERRED,
            GANG_NEVER_FITS,
            details=(
                state,
                f"Queue {queue.name}: limit {holds}",
                f"the job's {job.pods} pods request {needs}",
            ),
            objects=objects,
            **queue_fields,
            needs=needs,
            holds=holds,
        )
    needs = _amounts(wanted, [name for name, _, _ in limit.full])
    holds = ", ".join(_limit(name, amount) for name, amount, _ in limit.full)
    held = ", ".join(_limit(name, amount) for name, _, amount in limit.full)
    return SAY.finding(
        Status.WARN,
        Basis.INFERRED,
        GANG_QUEUE_FULL,
        details=(
            state,
            f"Queue {queue.name}: limit {holds}; status.allocated {held}",
            f"the job's {job.pods} pods request {needs}",
        ),
        objects=objects,
        **queue_fields,
        needs=needs,
        held=held,
        holds=holds,
    )


def _volcano_queue(
    env: Environment,
    job: TrainingJob,
    reads: GangReads,
    group: g.PodGroupState,
    fields: dict[str, Any],
) -> Finding | None:
    """A Volcano PodGroup's queue: a gang never leaves a queue that is missing, closed or too
    small for it."""
    kubectl = env.settings.kubectl
    objects = (f"PodGroup/{group.name}", job.ref)
    state = f"PodGroup {group.name}: phase {group.phase}, minMember {group.min_member}"
    queue_fields = {
        **fields,
        "queue": group.queue,
        "command": kubectl.cluster("describe", "queues.scheduling.volcano.sh", group.queue),
    }
    queue_read = reads.queues.get(group.queue)
    if isinstance(queue_read, CantRead):
        if not queue_read.is_measurement:
            return SAY.cant_check(env, Kind.VOLCANO_QUEUE, queue_read, job.ref)
        return SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            GANG_QUEUE_MISSING,
            details=(state, f"Queue {group.queue}: {queue_read.reason}"),
            objects=objects,
            **{**queue_fields, "command": kubectl.cluster("get", "queues.scheduling.volcano.sh")},
        )
    if not isinstance(queue_read, Got):
        return None
    queue = g.volcano_queue(queue_read.obj)
    if queue.state != g.OPEN:
        return SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            GANG_QUEUE_CLOSED,
            details=(state, f"Queue {queue.name}: state {queue.state}"),
            objects=(f"Queue/{queue.name}", *objects),
            **queue_fields,
            state=queue.state.lower(),
        )
    if group.min_resources is None or queue.capability is None:
        return None
    over = g.beyond(group.min_resources, queue.capability)
    if not over:
        return None
    needs = _amounts(group.min_resources, over)
    holds = _amounts(queue.capability, over)
    return SAY.finding(
        Status.FAIL,
        Basis.INFERRED,
        GANG_NEVER_FITS,
        details=(
            state,
            f"Queue {queue.name}: capability {holds}",
            f"PodGroup {group.name}: minResources {needs}",
        ),
        objects=(f"Queue/{queue.name}", *objects),
        **queue_fields,
        needs=needs,
        holds=holds,
    )


def _said(
    env: Environment,
    job: TrainingJob,
    kind: Kind,
    group: g.PodGroupState,
    fields: dict[str, Any],
    members: _Members,
) -> list[Finding]:
    """What the scheduler wrote on the group: placed, or its failing condition quoted. A group
    placed with fewer members than it has pods waiting beyond its `minMember` says nothing of
    those: its scheduler places them one by one (Volcano's phase Running counts minMember
    pods: pkg/scheduler/framework/job_updater.go), so their own wait is the other checks'.
    A group refused while it has fewer pods than it waits for is `_short_of_pods`'s."""
    objects = (f"PodGroup/{group.name}", job.ref)
    state = f"PodGroup {group.name}: phase {group.phase or '-'}, minMember {group.min_member}"
    if group.placed and members.waiting and group.min_member < len(env.pods_of(job)):
        return []
    if group.placed:
        return [
            SAY.finding(
                Status.OK, Basis.MEASURED, GANG_PLACED, details=(state,), objects=objects, **fields
            )
        ]
    said = group.failing[0] if group.failing else None
    if said is None and kind is Kind.COSCHEDULING_POD_GROUP:
        # Coscheduling writes its refusal on the pods, never on the group.
        said = g.sibling_refusal(env.pods_of(job), g.GangRef(kind, group.name))
    if said is None:
        return []
    short = _short_of_pods(env, job, kind, group, said, members.counted, fields)
    if short is not None:
        return [short]
    plural = f"{kind.plural}.{kind.spec.group}"
    return [
        SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            GANG_REFUSED,
            details=(state, f"condition {said.type} ({said.reason}): {said.message}"),
            objects=objects,
            **fields,
            message=quoted(said.message or said.reason),
            command=env.settings.kubectl.here("describe", plural, group.name),
        )
    ]


_MIN_AVAILABLE_KINDS: Final = frozenset(
    {
        Kind.PYTORCH_JOB,
        Kind.TF_JOB,
        Kind.MPI_JOB_V1,
        Kind.XGBOOST_JOB,
        Kind.PADDLE_JOB,
        Kind.JAX_JOB,
        Kind.MPI_JOB,
    }
)
"""The job kinds whose operator writes a Volcano PodGroup's `minMember` from the job's
`runPolicy.schedulingPolicy.minAvailable`, all the job's pods where it is unset (the training
operator: kubeflow/training-operator pkg/controller.v1/common/job.go `ReconcileJobs`;
mpi-operator: pkg/apis/kubeflow/v2beta1 `SchedulingPolicy.MinAvailable`, "passed to
`.spec.minMember` in PodGroup"): an edit of the group itself is written over."""


def _short_of_pods(
    env: Environment,
    job: TrainingJob,
    kind: Kind,
    group: g.PodGroupState,
    said: g.GroupCondition,
    counted: int,
    fields: dict[str, Any],
) -> Finding | None:
    """A group refused while it has fewer pods than it waits for: by Volcano's own reason
    (g.SHORT_OF_PODS_REASONS), or by doctor's count of the group's pods below its `minMember`
    (Volcano from v1.12 calls that `NotEnoughResources`). No amount of room places it: the
    remedy is the count, never capacity. The scheduler's words stay the headline."""
    volcano = kind is Kind.VOLCANO_POD_GROUP
    short = group.min_member > counted
    if not short and not (volcano and said.reason in g.SHORT_OF_PODS_REASONS):
        return None
    if volcano and job.kind in _MIN_AVAILABLE_KINDS:
        field = "`runPolicy.schedulingPolicy.minAvailable` in the job's settings"
    else:
        field = "the group's `minMember`"
    missing = "find out why the job's missing programs were not made"
    wanted = _amount(PODS, group.min_member)
    if short and group.min_member > job.pods:
        has = f"the job makes {job.pods}"
        todo = f"lower {field} to {job.pods} or less"
    elif short:
        has = f"only {counted} of the job's {job.pods} exist"
        todo = f"{missing}, or lower {field} to {counted} or less"
    elif said.reason == g.PER_TASK_REASON:
        wanted = "a minimum number of programs of each part of the job"
        has = "one part has fewer"
        todo = f"{missing}, or lower that part's number in the group's `minTaskMember`"
    else:
        # Volcano counted fewer than doctor sees now (a pod made since it looked): its word
        # stands, and so does its reason.
        has = f"`{fields['scheduler']}` counted fewer"
        todo = f"{missing}, or lower {field}"
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        GANG_TOO_FEW_PODS,
        details=(
            f"PodGroup {group.name}: phase {group.phase or '-'}, minMember {group.min_member}",
            f"condition {said.type} ({said.reason}): {said.message}",
            f"{job.ref}: makes {job.pods} pods; {counted} of the group's pods exist, neither "
            "failed nor being deleted",
        ),
        objects=(f"PodGroup/{group.name}", job.ref),
        **fields,
        message=quoted(said.message or said.reason),
        wanted=wanted,
        has=has,
        todo=todo,
        command=env.settings.kubectl.here(
            "describe", f"{job.kind.plural}.{job.kind.spec.group}", job.name
        ),
    )


def quoted(message: str) -> str:
    """A scheduler's message as a headline quotes it: bounded, and in backticks (the machine's
    words, kept as written; a backtick inside would end the quote early)."""
    text = message.replace("`", "'")
    if len(text) > LONGEST_MESSAGE:
        text = text[: LONGEST_MESSAGE - 1] + "…"
    return f"`{text}`"


def _limit(name: str, limit: Decimal) -> str:
    """A KAI limit in doctor's words; a GPU limit may be a fraction of a device."""
    if name in (CPU, MEMORY):
        return format_amount(name, math.floor(limit))
    return f"{limit.normalize():f} {name}"


def _amounts(resources: Resources, names: list[str]) -> str:
    return ", ".join(_amount(name, resources.get(name)) for name in names)


def _amount(name: str, amount: int) -> str:
    """An amount in doctor's words; a count of pods is of programs, the operator's word."""
    if name == PODS:
        return f"{amount} program{'s' if amount != 1 else ''}"
    return format_amount(name, amount)
