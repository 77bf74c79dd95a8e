"""The pods of the judged job a quota has still to let in, where the job is under way.

A job's controller creates only the pods it lacks (kubeflow/training-operator
pkg/controller.v1/common/pod.go ReconcilePods: a pod for an index that has none; the Job
controller, pkg/controller/job/job_controller.go manageJob: up to `parallelism` active), and
the quota already counts those it created: `status.used` holds every pod not finished
(kubernetes pkg/quota/v1/evaluator/core/pods.go QuotaV1Pod). Charging them again would refuse
a job for its own pods. A job under way with all its pods, like capacity's job whose every pod
is placed (checks/capacity/shape.py `all_bound`), is taken whole, as a next run's: its pods are
then what that run waits for.
"""

from collections import Counter

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.doctor.environment import Environment
from truegreen.doctor.knowledge.training import TrainingJob, pod_set_of


class StillToCreate(Struct, frozen=True):
    """What of a job a quota has yet to let in."""

    counts: dict[str, int]
    """Per pod set, the pods to charge."""
    present: int = 0
    """The job's own pods the quota already counts, never created again."""
    own: frozenset[str] = frozenset()
    """Their names, where the job runs only with all its pods: never what it waits for or
    what to stop, since it cannot run without them."""


def still_to_create(env: Environment, job: TrainingJob) -> StillToCreate:
    """Per pod set of `job`, the pods the quota has yet to let in: those its controller wants
    less those it created that stay (neither finished nor being deleted); the whole job when it
    is not under way (a job file's, a finished one's) or all its pods are there. `job` may hold
    only some of the namespace's job's sets (the trial's untried ones): its pods are found by
    the whole job, by `Kind/name`."""
    whole = StillToCreate({s.name: s.count for s in job.pod_sets})
    work = env.work()
    if job.finished or (work.planned is not None and work.planned.ref == job.ref):
        return whole  # a job file's is not created yet, whatever the namespace holds
    under_way = next((j for j in work.jobs if j.ref == job.ref), None)
    if under_way is None:
        return whole
    created = o.remaining(env.pods_of(under_way))
    there = Counter(pod_set_of(under_way, pod) for pod in created)
    wanted = job.wanted()
    missing = {name: max(count - there[name], 0) for name, count in wanted.items()}
    if not any(missing.values()):
        return whole
    present = sum(min(there[name], count) for name, count in wanted.items())
    own = frozenset(o.name_of(pod) for pod in created) if job.together else frozenset()
    return StillToCreate(missing, present, own)
