"""Everything doctor reads, gathered once, before any check runs.

Checks are pure functions of this record: they never read the cluster themselves, so a snapshot
and a live cluster give the same findings, and no read is made twice.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from truegreen import kubeobjects as o
from truegreen.cluster import (
    CantRead,
    ClusterReader,
    FieldIsNot,
    GetRead,
    Got,
    Kind,
    Listed,
    ListRead,
)
from truegreen.cluster.schedule import IN_FLIGHT, Pending, ReadSchedule
from truegreen.doctor.usage import CapacityTally, ClusterUsage, cluster_usage, machines_for_fit
from truegreen.quantity import Resources

WORKLOAD_KINDS = (Kind.DEPLOYMENT, Kind.STATEFUL_SET, Kind.DAEMON_SET)
# Only pods that hold capacity: the scheduler ignores Succeeded and Failed pods.
HOLDING_CAPACITY = {"status.phase": FieldIsNot(("Succeeded", "Failed"))}


@dataclass(frozen=True)
class CredentialsRequirement:
    """The backend credentials: a stored login and the keys it must hold, non-empty."""

    name: str
    keys: tuple[str, ...]


@dataclass(frozen=True)
class DoctorSettings:
    """What the operator told doctor about the environment."""

    job_requests: Resources | None = None
    """One training job pod's requests (`--job-requests`); else the newest Job's template."""
    credentials: CredentialsRequirement | None = None
    """`--credentials-secret NAME:KEY1,KEY2`; the credentials check runs only when given."""
    pending_grace: timedelta = timedelta(minutes=5)
    """How long a pod may wait to start before it is called stuck."""


@dataclass(frozen=True)
class PodTemplate:
    """A pod template of the environment: whose it is, and the pod spec it stamps out."""

    owner: str
    """Plain words for the owner: `the service 'manager'`, `the training job 'run-7'`."""
    ref: str
    """`Kind/name` of the owner."""
    spec: Mapping[str, Any]


@dataclass(frozen=True)
class Environment:
    """The reads doctor made of one namespace (and the cluster's machines)."""

    namespace: str
    now: datetime
    settings: DoctorSettings
    workloads: Mapping[Kind, ListRead]
    jobs: ListRead
    pods: ListRead
    limit_ranges: ListRead
    nodes: ListRead
    cluster_usage: ClusterUsage | CantRead
    """What the pods of the whole cluster reserve per machine, summed as the pages arrived."""
    service_accounts: Mapping[str, GetRead] = field(default_factory=dict)
    secrets: Mapping[str, GetRead] = field(default_factory=dict)
    claims: Mapping[str, GetRead] = field(default_factory=dict)
    storage_types: Mapping[str, GetRead] = field(default_factory=dict)
    credentials: GetRead | None = None

    def unread_template_sources(self) -> list[tuple[Kind, CantRead]]:
        """The lists the pod templates come from that could not be read.

        A check that looks at what the templates refer to cannot call anything fine while
        one of these is missing: it never learned what to look at.
        """
        sources = [*((k, self.workloads[k]) for k in WORKLOAD_KINDS), (Kind.JOB, self.jobs)]
        return [(kind, read) for kind, read in sources if isinstance(read, CantRead)]

    def templates(self) -> list[PodTemplate]:
        """Pod templates of the services and of the training jobs that matter now."""
        return templates_of(self.workloads, self.jobs)


def templates_of(workloads: Mapping[Kind, ListRead], jobs: ListRead) -> list[PodTemplate]:
    """Pod templates of the services and of the training jobs that matter now."""
    found: list[PodTemplate] = []
    for kind in WORKLOAD_KINDS:
        read = workloads[kind]
        if isinstance(read, Listed):
            for item in read.items:
                spec = o.pod_spec(o.pod_template(item))
                found.append(PodTemplate(owner_words(item), o.ref(item), spec))
    for job in relevant_jobs(jobs):
        spec = o.pod_spec(o.pod_template(job))
        found.append(PodTemplate(owner_words(job), o.ref(job), spec))
    return found


@dataclass(frozen=True)
class Unreachable:
    """The cluster could not be reached at all; nothing was read."""

    cant_read: CantRead


def owner_words(obj: Mapping[str, Any]) -> str:
    """Plain words for a workload: `the service 'manager'`, `the training job 'run-7'`."""
    noun = "training job" if obj.get("kind") == "Job" else "service"
    return f"the {noun} '{o.name_of(obj)}'"


def job_finished(job: Mapping[str, Any]) -> bool:
    """A Job with a Complete or Failed condition set to True."""
    return any(
        (c := o.condition(job, kind)) is not None and c.get("status") == "True"
        for kind in ("Complete", "Failed")
    )


def newest_job(jobs: ListRead) -> Mapping[str, Any] | None:
    """The most recently created Job, the best guess at the next training job's shape."""
    if not isinstance(jobs, Listed) or not jobs.items:
        return None
    return max(jobs.items, key=lambda j: (str(o.created_at(j) or ""), o.name_of(j)))


def relevant_jobs(jobs: ListRead) -> list[Mapping[str, Any]]:
    """Unfinished Jobs, plus the newest Job even when finished."""
    if not isinstance(jobs, Listed):
        return []
    newest = newest_job(jobs)
    return [j for j in jobs.items if not job_finished(j) or j is newest]


def gather(
    reader: ClusterReader,
    namespace: str,
    now: datetime,
    settings: DoctorSettings,
    in_flight: int = IN_FLIGHT,
) -> Environment | Unreachable:
    """Make every read doctor needs, once. Stops at once if the cluster cannot be reached.

    The first read goes alone: it learns whether the cluster answers at all (and fetches a
    login once). The other reads then go out together, at most `in_flight` at a time, each
    as soon as what it depends on is in: the gets that follow from the templates are made
    while the cluster's pods still stream. The reads, and their order, are the same for any
    `in_flight` (1 is one after another).
    """
    first = reader.list(Kind.DEPLOYMENT, namespace=namespace)
    if isinstance(first, CantRead) and not first.reached:
        return Unreachable(first)
    with ReadSchedule(in_flight) as schedule:

        def listing(kind: Kind, where: str | None = namespace) -> Pending[ListRead]:
            return schedule.submit(partial(reader.list, kind, namespace=where))

        def get_each(kind: Kind, names: list[str]) -> dict[str, Pending[GetRead]]:
            return {
                n: schedule.submit(partial(reader.get, kind, n, namespace=namespace))
                for n in dict.fromkeys(names)
            }

        later_workloads = {kind: listing(kind) for kind in WORKLOAD_KINDS[1:]}
        jobs = listing(Kind.JOB)
        pods = listing(Kind.POD)
        limit_ranges = listing(Kind.LIMIT_RANGE)
        nodes = schedule.submit(lambda: machines_for_fit(reader.list(Kind.NODE, namespace=None)))
        usage = schedule.submit(
            lambda: reader.fold(
                Kind.POD, CapacityTally(namespace), namespace=None, fields=HOLDING_CAPACITY
            )
        )
        workloads: dict[Kind, ListRead] = {Kind.DEPLOYMENT: first}
        workloads.update({kind: read.result() for kind, read in later_workloads.items()})
        templates = templates_of(workloads, jobs.result())
        service_accounts = get_each(
            Kind.SERVICE_ACCOUNT, [o.service_account_name(t.spec) for t in templates]
        )
        credentials = (
            schedule.submit(
                partial(reader.get, Kind.SECRET, settings.credentials.name, namespace=namespace)
            )
            if settings.credentials
            else None
        )
        claims = results(
            get_each(Kind.PERSISTENT_VOLUME_CLAIM, referenced_claims(templates, workloads))
        )
        # A storage type only matters while a claim waits to be bound; reading it otherwise would
        # make namespace-only access (no cluster-wide reads) an unknown for a healthy volume.
        storage_type_names = [
            str(o.mapping(read.obj.get("spec")).get("storageClassName"))
            for read in claims.values()
            if isinstance(read, Got)
            and o.mapping(read.obj.get("spec")).get("storageClassName")
            and o.mapping(read.obj.get("status")).get("phase") != "Bound"
        ]
        storage_types = {
            n: schedule.submit(partial(reader.get, Kind.STORAGE_CLASS, n, namespace=None))
            for n in dict.fromkeys(storage_type_names)
        }
        accounts = results(service_accounts)
        secret_names = [n for t in templates for n in o.pull_secret_names(t.spec)]
        for read in accounts.values():
            if isinstance(read, Got):
                secret_names += o.pull_secret_names(read.obj)
        secrets = get_each(Kind.SECRET, secret_names)
        return Environment(
            namespace=namespace,
            now=now,
            settings=settings,
            workloads=workloads,
            jobs=jobs.result(),
            pods=pods.result(),
            limit_ranges=limit_ranges.result(),
            nodes=nodes.result(),
            cluster_usage=cluster_usage(usage.result()),
            service_accounts=accounts,
            secrets=results(secrets),
            claims=claims,
            storage_types=results(storage_types),
            credentials=None if credentials is None else credentials.result(),
        )


def results(reads: Mapping[str, Pending[GetRead]]) -> dict[str, GetRead]:
    """Each name's read, once it is in."""
    return {name: read.result() for name, read in reads.items()}


def referenced_claims(
    templates: list[PodTemplate], workloads: Mapping[Kind, ListRead]
) -> list[str]:
    """Volume claims the environment uses, StatefulSet claim templates expanded per replica."""
    names = [n for t in templates for n in o.claim_names(t.spec)]
    statefulsets = workloads[Kind.STATEFUL_SET]
    if isinstance(statefulsets, Listed):
        for sts in statefulsets.items:
            spec = o.mapping(sts.get("spec"))
            replicas = spec.get("replicas", 1)
            count = replicas if isinstance(replicas, int) and replicas >= 0 else 1
            for template in o.sequence(spec.get("volumeClaimTemplates")):
                base = o.name_of(o.mapping(template))
                names += [f"{base}-{o.name_of(sts)}-{i}" for i in range(count)]
    return names
