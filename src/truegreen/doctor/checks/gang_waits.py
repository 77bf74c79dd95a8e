"""The waits of the judged job's pods that its gang scheduler accounts for: shared by the
queue check, which says them (its scheduler's word on the group, YuniKorn's note that a queue
has no room, KAI's queue limits), and the capacity check, which then never calls such a wait
one "free capacity doesn't explain" (`capacity.job-stuck`): a queue wait can last hours, and
the queue check's measured explanation stands over an inference from the pod's age.
"""

from collections.abc import Sequence

from truegreen import kubeobjects as o
from truegreen.cluster import Got, Kind, KubeObject, Listed
from truegreen.doctor.environment import Environment, GangReads
from truegreen.doctor.knowledge import gangs as g
from truegreen.doctor.knowledge import yunikorn as yk
from truegreen.doctor.knowledge.fit import pod_requests
from truegreen.doctor.knowledge.training import TrainingJob
from truegreen.quantity import Resources


def explained_waits(env: Environment) -> frozenset[str]:
    """The names of the judged job's pods not yet on a machine whose wait its gang scheduler
    accounts for: a group with a failing condition its scheduler wrote (Volcano's
    `Unschedulable`, KAI's `UnschedulableOnNodePool`), a KAI group its queue holds back (a
    queue or parent missing, a queue with queues under it, a limit the job passes alone or with
    what the queue holds now), or YuniKorn's newest note on a pod of the job that its queue or
    its user's quota has no room."""
    reads = env.gangs
    job = env.judged_job()
    if reads is None or job is None:
        return frozenset()
    staying = o.remaining(env.pods_of(job))
    waiting = [p for p in staying if not o.node_name(p)]
    explained: set[str] = set()
    for ref in g.gangs_of(waiting):
        read = reads.groups.get((ref.kind, ref.name))
        if not isinstance(read, Got):
            continue
        group = g.GROUP_READERS[ref.kind](read.obj)
        if group.failing or _kai_queue_holds(job, reads, ref.kind, group, staying):
            explained.update(o.name_of(p) for p in waiting if g.gang_of(p) == ref)
    if yk.YUNIKORN in reads.schedulers and isinstance(reads.notes, Listed):
        everyone = env.pods.items if isinstance(env.pods, Listed) else ()
        if yk.held_requests(reads.notes.items, yk.noted_pods(staying, everyone)):
            # A training job starts whole: a request of it held by its queue holds it all.
            explained.update(o.name_of(p) for p in waiting)
    return frozenset(explained)


def whole_request(job: TrainingJob) -> Resources:
    """What every pod of the job asks for together, as a gang needs it at once."""
    return sum((pod_requests(s.spec) * s.count for s in job.pod_sets), Resources())


def _kai_queue_holds(
    job: TrainingJob,
    reads: GangReads,
    kind: Kind,
    group: g.PodGroupState,
    staying: Sequence[KubeObject],
) -> bool:
    """A KAI group not placed, with no word of KAI's on it, that its queue holds back as the
    queue check judges it (gang.py `_kai_queue`)."""
    if kind is not Kind.KAI_POD_GROUP or group.placed or not group.queue:
        return False
    listed = reads.kai_queues
    if not isinstance(listed, Listed):
        return False
    chain = g.kai_chain(group.queue, [g.kai_queue(q) for q in listed.items])
    if not chain.judged:
        return False
    if chain.missing or chain.children:
        return True
    if group.min_member < job.pods:
        return False
    placed = any(o.node_name(p) for p in staying)
    return g.kai_limit(whole_request(job), chain, placed=placed) is not None
