"""Queue: does Kueue, or the scheduler the job's pods name, let the judged training job start?

A job handed to Kueue (the `kueue.x-k8s.io/queue-name` label, or for a job not yet created the
namespace's LocalQueue `default`) stays suspended until its ClusterQueue admits it: what Kueue
says of it is kueue_verdict.py; what a gang scheduler says is gang.py.
"""

from truegreen.cluster import Kind
from truegreen.doctor.checks.queue.words import SAY, not_used
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import CheckId, Finding
from truegreen.doctor.knowledge.training import TrainingJob

CHECK = CheckId.QUEUE


def check(env: Environment) -> list[Finding]:
    """What the queue says, or would say, about the judged training job."""
    work = env.work()
    job = work.judged
    # A list of training jobs not read could hold the newest job: which job is judged, and so
    # whether it waits in a queue (Kueue's, or its own scheduler's), is not known.
    if work.judged_unknown:
        return [SAY.cant_check(env, kind, cant) for kind, cant in work.judged_unknown]
    discovery = next((cant for kind, cant in work.unread if kind is Kind.API_GROUPS), None)
    if job is not None and discovery is not None:
        return [SAY.cant_check(env, Kind.API_GROUPS, discovery)]
    gangs = _gang_findings(env, job)
    reads = env.queue
    if job is None or reads is None:
        why = "no training job to judge" if job is None else "Kueue is not installed"
        return [not_used(why), *gangs]
    # Imported on use: only a namespace with Kueue's queues runs it (doctor's start-up on a
    # small namespace, bench/imports.py).
    from truegreen.doctor.checks.queue.kueue_verdict import kueue_findings

    return [*kueue_findings(env, job, reads), *gangs]


def _gang_findings(env: Environment, job: TrainingJob | None) -> list[Finding]:
    """What the scheduler other than the cluster's own that the job's pods name says."""
    if job is None or env.gangs is None:
        return []
    # Imported on use: only a job whose pods name a scheduler of their own runs it.
    from truegreen.doctor.checks.queue.gang import gang_findings

    return gang_findings(env, job, env.gangs)
