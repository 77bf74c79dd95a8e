"""doctor's reads: everything the checks need, gathered once on one bounded schedule.

Checks are pure functions of the Environment this returns: they never read the cluster
themselves, so a snapshot and a live cluster give the same findings, and no read is made twice.

One module past 600 lines: every read and what it waits on is visible in one schedule, so
the order the reads go out in reads from top to bottom.
"""

import time
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, TypeGuard

from msgspec import Struct
from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import (
    CantRead,
    ClusterReader,
    FieldIsNot,
    FoldRead,
    GetRead,
    Got,
    Kind,
    KubeObject,
    Listed,
    ListRead,
    ReadFailure,
)
from truegreen.cluster.discovery_memory import DiscoveryMemory
from truegreen.cluster.schedule import Pending, ReadSchedule, in_flight_for
from truegreen.doctor.checks.capacity.autoscaler_sources import AUTOSCALER_SOURCES
from truegreen.doctor.checks.capacity.filters.dynamic_resources import (
    claim_refs,
    template_names,
)
from truegreen.doctor.checks.capacity.filters.volume_attachment import driver_to_ask
from truegreen.doctor.checks.capacity.preemption import priorities_matter
from truegreen.doctor.environment import (
    NOT_READ,
    WEBHOOK_KINDS,
    WORKLOAD_KINDS,
    DeviceReads,
    DoctorSettings,
    Environment,
    GangReads,
    MachineGroups,
    PodCreator,
    PodTemplate,
    QueueReads,
    Unreachable,
    templates_of,
    webhooks_called,
)
from truegreen.doctor.knowledge.evidence import scheduler_verdict
from truegreen.doctor.knowledge.gpu_supply import gpu_problems
from truegreen.doctor.knowledge.image_presence import (
    PULLED_EVENTS,
    ImageRegistry,
    RegistryAnswers,
    kubelet_pulled,
    login_probes,
    still_to_pull,
    wanted_lookups,
)
from truegreen.doctor.knowledge.kueue_kinds import GROUP, KueueKinds, kinds_served
from truegreen.doctor.knowledge.no_provisioner import (
    awaits_made_volume,
    limits_places,
    waits_for_first_pod,
)
from truegreen.doctor.knowledge.reports import pod_state, settled
from truegreen.doctor.knowledge.scheduler_name import RUNNING_PODS, schedulers_named
from truegreen.doctor.knowledge.training import (
    TrainingJob,
    TrainingWork,
    not_served,
    optional_kinds_of,
    optional_kinds_served,
    runtime_of,
    served_instead,
    served_versions,
    shape,
    shown_name,
    training_work,
)
from truegreen.doctor.knowledge.usage import (
    CapacityTally,
    cluster_usage,
    machines_for_fit,
)
from truegreen.doctor.knowledge.webhooks import SERVICE_NAME_LABEL
from truegreen.doctor.reads.autoscaler_status import read_status
from truegreen.refresh.annotations import ATTEMPTS, LATCHED, EventReason

if TYPE_CHECKING:
    from truegreen.doctor.knowledge.yunikorn import PodRef

# Only pods that hold capacity: the scheduler ignores Succeeded and Failed pods.
HOLDING_CAPACITY = {"status.phase": FieldIsNot(("Succeeded", "Failed"))}
REFRESH_FAILURE_EVENTS = {"reason": EventReason.ROLLOUT_FAILED.value}
"""The field selector of refresh's failed-rollout Events (events accept `reason`)."""
GPU_MACHINES_READ = 3
"""GPU machines whose pods are read for the state of their GPU software, at most."""
WARNING_EVENTS = {"type": "Warning"}
"""The field selector of the namespace's warnings (events accept `type`:
pkg/apis/core/v1/conversion.go)."""


def _discovery(reader: ClusterReader) -> tuple[Got | CantRead, float]:
    """The cluster's API groups, and the seconds their answer took."""
    asked = time.monotonic()
    found = reader.get(Kind.API_GROUPS, "", namespace=None)
    return found, time.monotonic() - asked


class _Discovery:
    """Discovery's answer for one run: read first and alone; or, where the server's earlier
    answer is remembered, sent with the first wave, beside the lists of the optional training
    kinds it remembers."""

    def __init__(self, reader: ClusterReader, memory: DiscoveryMemory | None) -> None:
        self._reader = reader
        self._memory = memory
        self._recalled = None if memory is None else memory.recall()
        self._answer: Got | CantRead | None = None
        self._seconds = 0.0 if self._recalled is None else self._recalled.seconds
        self._pending: Pending[tuple[Got | CantRead, float]] | None = None
        self._guessed: dict[Kind, Pending[ListRead]] = {}

    def first(self) -> Got | CantRead | None:
        """Discovery read alone, when nothing is remembered; None otherwise."""
        if self._recalled is None:
            self._settle(*_discovery(self._reader))
        return self._answer

    def in_flight(self) -> int:
        """Reads to have in flight, by how long discovery's answer took (or last took)."""
        return in_flight_for(self._seconds)

    def send(self, schedule: ReadSchedule, listing: Callable[[Kind], Pending[ListRead]]) -> None:
        """Where the answer is remembered: discovery, and the lists of the optional kinds the
        server served, go out now."""
        if self._recalled is None:
            return
        self._pending = schedule.submit(partial(_discovery, self._reader))
        self._guessed = {kind: listing(kind) for kind in optional_kinds_of(self._recalled.served)}

    def answered(self) -> Got | CantRead:
        """The fresh answer, once it is in."""
        if self._pending is not None:
            self._settle(*self._pending.result())
        assert self._answer is not None, "first() or send() comes first"
        return self._answer

    def optional(
        self, listing: Callable[[Kind], Pending[ListRead]]
    ) -> dict[Kind, Pending[ListRead]]:
        """The lists of the optional training kinds the fresh answer says are served: those
        already sent from the memory, the others sent now. A remembered kind no longer served
        is not among them."""
        if not isinstance(self._answer, Got):
            return {}
        served = optional_kinds_served(self._answer.obj)
        return {kind: self._guessed.get(kind) or listing(kind) for kind in served}

    def _settle(self, answer: Got | CantRead, seconds: float) -> None:
        self._answer, self._seconds = answer, seconds
        if self._memory is not None and isinstance(answer, Got):
            self._memory.keep(served_versions(answer.obj), seconds)


def _unreachable(api_groups: Got | CantRead) -> TypeGuard[CantRead]:
    """Whether discovery's answer says no other read can be answered either."""
    return isinstance(api_groups, CantRead) and (
        not api_groups.reached or api_groups.failure is ReadFailure.UNAUTHORIZED
    )


def gather(
    reader: ClusterReader,
    namespace: str,
    now: datetime,
    settings: DoctorSettings,
    creator: PodCreator | None = None,
    in_flight: int | None = None,
    registry: ImageRegistry | None = None,
    memory: DiscoveryMemory | None = None,
) -> Environment | Unreachable:
    """Make every read doctor needs, once. Stops at once if the cluster cannot be reached.

    Without a remembered discovery, the first read goes alone: it learns whether the cluster
    answers at all (and fetches a login once). The other reads then go out together, at most
    `in_flight` at a time, each as soon as what it depends on is in: the gets that follow from
    the templates are made while the cluster's pods still stream. The reads, and their order,
    are the same for any `in_flight` (1 is one after another; None: as many as the first
    answer's time calls for, `in_flight_for`). The trial start is made only when asked for and
    `creator` is given (never offline). `registry`, when given, is asked about the images
    once the logins they need are in, while the last reads are still out.

    With `memory` holding what the server served at an earlier run, discovery goes out with
    the lists, the optional training kinds it remembers included, in one wave: one round trip
    fewer. Only the fresh answer decides what is judged, so the findings are the same as
    without the memory; what it answers is remembered for the next run.
    """
    discovery = _Discovery(reader, memory)
    first = discovery.first()
    if first is not None and _unreachable(first):
        return Unreachable(first)  # a refused login refuses every later read too
    with ReadSchedule(discovery.in_flight() if in_flight is None else in_flight) as schedule:

        def listing(kind: Kind, where: str | None = namespace) -> Pending[ListRead]:
            return schedule.submit(partial(reader.list, kind, namespace=where))

        get_each = _NamedGets(schedule, reader, namespace).each

        discovery.send(schedule, listing)
        first_wave = _independent_reads(schedule, reader, namespace, settings)
        api_groups = discovery.answered()
        if _unreachable(api_groups):
            schedule.abandon()  # what has not started would go unanswered as well
            return Unreachable(api_groups)
        # Only the optional training kinds the cluster serves are listed.
        optional = discovery.optional(listing)
        workloads = {kind: read.result() for kind, read in first_wave.workloads.items()}
        # refresh's own word on why it failed, only where its annotations say it has been trying.
        failures = (
            schedule.submit(
                partial(reader.list, Kind.EVENT, namespace=namespace, fields=REFRESH_FAILURE_EVENTS)
            )
            if any(refresh_tried(o.annotations_of(w)) for w in _listed(workloads))
            else None
        )
        lists: dict[Kind, ListRead] = {
            Kind.JOB: first_wave.jobs.result(),
            Kind.CRON_JOB: first_wave.cron_jobs.result(),
        }
        if isinstance(api_groups, CantRead):
            lists[Kind.API_GROUPS] = api_groups
        lists.update({kind: read.result() for kind, read in optional.items()})
        early_start = (
            _early_reads(schedule, reader, namespace, api_groups, lists, workloads, get_each)
            if settings.planned_job is None
            else None
        )
        work = _training(schedule, reader, namespace, lists, settings.planned_job, api_groups)
        pod_list = first_wave.pods.result()
        node_list = first_wave.nodes.result()
        evidence = _evidence_reads(
            schedule, reader, namespace, work, pod_list, node_list, _listed(workloads), api_groups
        )
        gangs = _gang_reads(schedule, reader, namespace, api_groups, work, pod_list)
        job_list = lists[Kind.JOB]
        job = work.judged
        queue_start = _queue_start(
            schedule, reader, namespace, api_groups, job, early_start, job is work.planned
        )
        # A list of training jobs not read could hold a newer job than `job`: admission is
        # unknown for the judged job whatever the server answers about this one's pod
        # (`judged_unknown`), so the write is not made.
        trial = (
            schedule.submit(
                partial(
                    creator.create, Kind.POD, _dry_run_pod(job), namespace=namespace, dry_run=True
                )
            )
            if settings.admission_dry_run
            and creator is not None
            and job is not None
            and not work.judged_unknown
            else None
        )
        templates = templates_of(workloads, work)
        # The kubelet's word on images no pod status shows pulled (a finished job's pods gone),
        # read only where it spares a registry look-up.
        pulled_events = (
            schedule.submit(
                partial(reader.list, Kind.EVENT, namespace=namespace, fields=PULLED_EVENTS)
            )
            if registry is not None and still_to_pull(templates, kubelet_pulled(pod_list))
            else None
        )
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
            get_each(
                Kind.PERSISTENT_VOLUME_CLAIM,
                [*referenced_claims(templates, workloads), *_waiting_ephemeral_claims(pod_list)],
            )
        )
        # A storage type only matters while a claim waits to be bound, or is yet to be made for
        # the planned job; reading it otherwise would make namespace-only access (no
        # cluster-wide reads) an unknown for a healthy volume.
        storage_types = {
            n: schedule.submit(partial(reader.get, Kind.STORAGE_CLASS, n, namespace=None))
            for n in dict.fromkeys(
                [*_waiting_storage_types(claims), *ephemeral_storage_types(work.planned)]
            )
        }
        runtime_classes = _runtime_class_reads(schedule, reader, job)
        # What the scheduler's filters read, only for the features the judged job uses.
        filters = _filter_reads(
            schedule,
            reader,
            namespace,
            [s.spec for s in job.pod_sets] if job is not None else [],
            claims,
            storage_types,
            api_groups,
        )
        accounts = results(service_accounts)
        secrets = get_each(Kind.SECRET, pull_secret_names(templates, accounts))
        namespace_read = first_wave.namespace_object.result()
        webhook_configurations = {kind: read.result() for kind, read in first_wave.webhooks.items()}
        slices = _webhook_slices(schedule, reader, webhook_configurations, namespace_read, job)
        capacity = cluster_usage(first_wave.usage.result(), namespace if settings.fleet else None)
        flags = _autoscaler_flags(schedule, reader, evidence, now)
        machine_groups = _machine_groups(schedule, reader, evidence, api_groups, work, pod_list)
        # Read only when the job's priority can change its verdict
        # (doctor/checks/capacity/preemption.py).
        classes = (
            listing(Kind.PRIORITY_CLASS, None)
            if priorities_matter(capacity, job) or _priority_scoped(first_wave.quotas.result())
            else None
        )
        pulled = None if pulled_events is None else pulled_events.result()
        lookups = _ask_registry(
            schedule, registry, templates, accounts, secrets, job, node_list, pod_list, pulled
        )
        filtered = filters()
        return Environment(
            namespace=namespace,
            now=now,
            settings=settings,
            workloads=workloads,
            jobs=job_list,
            pods=pod_list,
            limit_ranges=first_wave.limit_ranges.result(),
            nodes=node_list,
            cluster_usage=capacity,
            service_accounts=accounts,
            secrets=results(secrets),
            claims=claims,
            storage_types=results(storage_types),
            runtime_classes=results(runtime_classes),
            credentials=None if credentials is None else credentials.result(),
            namespace_object=namespace_read,
            quotas=first_wave.quotas.result(),
            webhook_configurations=webhook_configurations,
            endpoint_slices={service: read.result() for service, read in slices.items()},
            trial=None if trial is None else trial.result(),
            refresh_failures=None if failures is None else failures.result(),
            training=work,
            gpu_machine_pods={k: v.result() for k, v in evidence.gpu_pods.items()},
            autoscaler_events={k: v.result() for k, v in evidence.scaler_events.items()},
            autoscaler_status=None
            if evidence.scaler_status is None
            else (evidence.scaler_status.result()),
            autoscaler_flags=None if flags is None else flags.result(),
            machine_groups=None
            if machine_groups is None
            else MachineGroups(machine_groups[0], results(machine_groups[1])),
            warning_events=None if evidence.warnings is None else evidence.warnings.result(),
            node_claims=None if evidence.node_claims is None else evidence.node_claims.result(),
            node_pools=None if evidence.node_pools is None else evidence.node_pools.result(),
            priority_classes=None if classes is None else classes.result(),
            volumes=filtered.volumes,
            made_volumes=filtered.made_volumes,
            csi_drivers=filtered.drivers,
            devices=filtered.devices,
            queue=None
            if queue_start is None
            else _queue_reads(schedule, reader, namespace, queue_start),
            registry=None if lookups is None else lookups.result(),
            pulled_events=pulled,
            gangs=None if gangs is None else gangs(),
        )


class _IndependentReads(Struct):
    """The reads that depend on nothing, under way."""

    workloads: dict[Kind, Pending[ListRead]]
    jobs: Pending[ListRead]
    cron_jobs: Pending[ListRead]
    pods: Pending[ListRead]
    limit_ranges: Pending[ListRead]
    nodes: Pending[ListRead]
    usage: Pending[FoldRead]
    namespace_object: Pending[GetRead]
    quotas: Pending[ListRead]
    webhooks: dict[Kind, Pending[ListRead]]


def _independent_reads(
    schedule: ReadSchedule, reader: ClusterReader, namespace: str, settings: DoctorSettings
) -> _IndependentReads:
    """Send every read that depends on nothing: the namespace's workloads, jobs, pods, limits
    and quotas, the machines, what the cluster's pods hold, the namespace, the webhooks."""

    def listing(kind: Kind, where: str | None = namespace) -> Pending[ListRead]:
        return schedule.submit(partial(reader.list, kind, namespace=where))

    return _IndependentReads(
        workloads={kind: listing(kind) for kind in WORKLOAD_KINDS},
        jobs=listing(Kind.JOB),
        cron_jobs=listing(Kind.CRON_JOB),
        pods=listing(Kind.POD),
        limit_ranges=listing(Kind.LIMIT_RANGE),
        nodes=schedule.submit(lambda: machines_for_fit(reader.list(Kind.NODE, namespace=None))),
        usage=schedule.submit(
            lambda: reader.fold(
                Kind.POD,
                CapacityTally(namespace, settings.fleet),
                namespace=None,
                fields=HOLDING_CAPACITY,
            )
        ),
        namespace_object=schedule.submit(
            partial(reader.get, Kind.NAMESPACE, namespace, namespace=None)
        ),
        quotas=listing(Kind.RESOURCE_QUOTA),
        webhooks={kind: listing(kind, None) for kind in WEBHOOK_KINDS},
    )


def pull_secret_names(templates: list[PodTemplate], accounts: Mapping[str, GetRead]) -> list[str]:
    """The registry logins the templates name, and those of every service account read."""
    names = [n for t in templates for n in o.pull_secret_names(t.spec)]
    for read in accounts.values():
        if isinstance(read, Got):
            names += o.pull_secret_names(read.obj)
    return names


def _priority_scoped(quotas: ListRead) -> bool:
    """Some quota is scoped by PriorityClass: the class the Priority plugin gives the job's pods
    (the `globalDefault` one where they name none) decides whether it applies to them
    (plugin/pkg/admission/priority/admission.go admitPod, before ResourceQuota)."""
    if not isinstance(quotas, Listed):
        return False
    return any(
        o.mapping(term).get("scopeName") == "PriorityClass"
        for quota in quotas.items
        for term in o.sequence(
            o.mapping(o.mapping(quota.get("spec")).get("scopeSelector")).get("matchExpressions")
        )
    )


def _dry_run_pod(job: TrainingJob) -> dict[str, Any]:
    """The pod `--admission-dry-run` asks the server to create (`dryRun=All`) for `job`."""
    # Imported here: only --admission-dry-run makes a trial start.
    from truegreen.doctor.checks.admission.trial import trial_pod

    return trial_pod(job)


def _ask_registry(
    schedule: ReadSchedule,
    registry: ImageRegistry | None,
    templates: list[PodTemplate],
    accounts: Mapping[str, GetRead],
    secrets: Mapping[str, Pending[GetRead]],
    job: TrainingJob | None,
    machines: ListRead,
    pods: ListRead,
    pulled_events: ListRead | None,
) -> Pending[RegistryAnswers] | None:
    """The registry look-ups, sent once the logins they need are in; None when not asked.
    An image a machine has pulled for the namespace is not asked about: the kubelet has (its
    pods' statuses, and its `Pulled` Events)."""
    if registry is None:
        return None
    wanted = wanted_lookups(
        templates,
        accounts,
        results(secrets),
        job.ref if job else None,
        machines,
        kubelet_pulled(pods, pulled_events, machines),
    )
    # Whether a registry the kubelet downloaded from for pods that name no login hands that
    # image to anyone: if not, the machines may log in there on their own (OwnLogin.PULLED).
    probes = login_probes(wanted, pods, pulled_events)
    wanted += [probe for probe in probes if probe not in wanted]
    return schedule.submit(partial(registry.look_up, wanted))


class _NamedGets:
    """Gets of named objects of the namespace, each asked once per run however often named."""

    def __init__(self, schedule: ReadSchedule, reader: ClusterReader, namespace: str) -> None:
        self._schedule = schedule
        self._reader = reader
        self._namespace = namespace
        self._asked: dict[tuple[Kind, str], Pending[GetRead]] = {}

    def each(self, kind: Kind, names: list[str]) -> dict[str, Pending[GetRead]]:
        """Each named object of `kind`, asked now unless it was before."""
        for name in dict.fromkeys(names):
            if (kind, name) not in self._asked:
                self._asked[kind, name] = self._schedule.submit(
                    partial(self._reader.get, kind, name, namespace=self._namespace)
                )
        return {name: self._asked[kind, name] for name in dict.fromkeys(names)}


def _early_reads(
    schedule: ReadSchedule,
    reader: ClusterReader,
    namespace: str,
    api_groups: GetRead,
    lists: Mapping[Kind, ListRead],
    workloads: Mapping[Kind, ListRead],
    get_each: Callable[[Kind, list[str]], dict[str, Pending[GetRead]]],
) -> "_QueueStart | None":
    """What is known before any TrainJob's runtime answers goes out now, not a wave later: the
    templates' service accounts, volume claims and registry logins, and the judged job's
    queue (the runtimes shape a TrainJob's pods; they name no object these reads depend on)."""
    work = training_work(lists, {}, None)
    templates = templates_of(workloads, work)
    get_each(Kind.SERVICE_ACCOUNT, [o.service_account_name(t.spec) for t in templates])
    get_each(Kind.PERSISTENT_VOLUME_CLAIM, referenced_claims(templates, workloads))
    get_each(Kind.SECRET, pull_secret_names(templates, {}))
    return _queue_start(schedule, reader, namespace, api_groups, work.judged)


def _training(
    schedule: ReadSchedule,
    reader: ClusterReader,
    namespace: str,
    lists: Mapping[Kind, ListRead],
    planned_job: tuple[Kind, Mapping[str, Any]] | None,
    api_groups: Got | CantRead,
) -> TrainingWork:
    """The training jobs of `lists` and `planned_job`, each TrainJob's runtime read once, and
    whether discovery (`api_groups`) says the cluster does not serve the planned job's kind,
    and at which other versions it serves that kind."""
    planned_objects = [planned_job] if planned_job else []
    runtimes = {
        key: schedule.submit(
            partial(reader.get, key[0], key[1], namespace=namespace if key[0].namespaced else None)
        )
        for key in dict.fromkeys(
            runtime_of(obj)
            for kind, obj in [*_listed_of(lists, Kind.TRAIN_JOB), *planned_objects]
            if kind is Kind.TRAIN_JOB
        )
    }
    runtime_reads = {key: read.result() for key, read in runtimes.items()}
    planned = None
    if planned_job is not None:
        kind, document = planned_job
        planned = shape(kind, document, runtime_reads.get(runtime_of(document)))
        if planned is not None and not planned.name:
            # A job file named by `generateName` alone: said by its prefix, never ''.
            planned = replace(planned, name=shown_name(document))
    work = training_work(lists, runtime_reads, planned)
    if planned_job is None or not not_served(planned_job[0], api_groups, lists):
        return work
    instead = served_instead(planned_job[0], api_groups, lists)
    return replace(work, planned_not_served=True, planned_served_as=instead)


class _QueueLists(Struct, frozen=True):
    """Kueue's cluster-wide lists and the namespace's Workloads, under way."""

    cluster_queues: Pending[ListRead]
    flavors: Pending[ListRead]
    workloads: Pending[ListRead]
    cohorts: Pending[ListRead] | None = None
    """Sent with the others for a job that names its queue (a round trip saved for one
    request); their answer is used only where a ClusterQueue belongs to a cohort."""
    admission_checks: Pending[ListRead] | None = None
    """Likewise, used only where a ClusterQueue names admission checks."""


class _QueueStart(Struct, frozen=True):
    """Kueue's reads sent first: the LocalQueues, and the rest when the job names a queue."""

    kinds: KueueKinds
    job: TrainingJob
    local_queues: Pending[ListRead]
    early: _QueueLists | None
    planned: bool = False
    """The job is `--job-file`'s, not yet created: the LocalQueue `default` may take it."""


def _kueue_listing(
    schedule: ReadSchedule, reader: ClusterReader, namespace: str, kind: Kind
) -> Pending[ListRead]:
    where = namespace if kind.namespaced else None
    return schedule.submit(partial(reader.list, kind, namespace=where))


def _queue_start(
    schedule: ReadSchedule,
    reader: ClusterReader,
    namespace: str,
    api_groups: GetRead,
    job: TrainingJob | None,
    started: "_QueueStart | None" = None,
    planned: bool = False,
) -> "_QueueStart | None":
    """Where discovery serves Kueue and a job is judged: the namespace's LocalQueues; with a
    job that names its queue, the ClusterQueues, flavors and Workloads too, at once (they are
    needed whatever the LocalQueues say). None: nothing of Kueue's is read. The lists a start
    made for the job as first known (`started`) are used, not asked again."""
    if not isinstance(api_groups, Got) or job is None:
        return None
    kinds = kinds_served(served_versions(api_groups.obj).get(GROUP, ()))
    if kinds is None:
        return None
    listing = partial(_kueue_listing, schedule, reader, namespace)
    local_queues = started.local_queues if started is not None else listing(kinds.local_queue)
    early = started.early if started is not None else None
    if early is None and job.queue:
        early = _QueueLists(
            listing(kinds.cluster_queue),
            listing(kinds.resource_flavor),
            listing(kinds.workload),
            listing(kinds.cohort),
            listing(kinds.admission_check),
        )
    return _QueueStart(kinds, job, local_queues, early, planned)


def _queue_reads(
    schedule: ReadSchedule, reader: ClusterReader, namespace: str, start: _QueueStart
) -> QueueReads:
    """Kueue's objects for the judged job. A job without a queue label needs more only where
    it is still to be created (`--job-file`'s, or a CronJob's next Job), the namespace has the
    LocalQueue `default` and the Kueue served surely hands it there when it is created, or
    while it is suspended (Kueue may hold it without a queue); then the cohorts and admission
    checks are read only where a ClusterQueue names them."""
    # Imported on use: only a cluster that serves Kueue reads its queues (doctor's start-up on
    # a small namespace, bench/imports.py).
    from truegreen.doctor.knowledge.kueue import DEFAULT_QUEUE, defaults_to_queue, still_to_create

    listing = partial(_kueue_listing, schedule, reader, namespace)
    kinds = start.kinds
    queues = start.local_queues.result()
    defaulted = (
        still_to_create(start.job.kind, start.planned)
        and defaults_to_queue(kinds)
        and isinstance(queues, Listed)
        and any(o.name_of(q) == DEFAULT_QUEUE for q in queues.items)
    )
    if start.early is None and not defaulted and not start.job.suspended:
        return QueueReads(kinds, queues)
    lists = start.early or _QueueLists(
        listing(kinds.cluster_queue),
        listing(kinds.resource_flavor),
        listing(kinds.workload),
    )
    cluster_queues = lists.cluster_queues.result()
    specs = (
        [o.mapping(q.get("spec")) for q in cluster_queues.items]
        if isinstance(cluster_queues, Listed)
        else []
    )
    in_cohort = any(s.get("cohortName") or s.get("cohort") for s in specs)
    checked = any(s.get("admissionChecks") or s.get("admissionChecksStrategy") for s in specs)
    cohorts = (lists.cohorts or listing(kinds.cohort)) if in_cohort else None
    checks = (lists.admission_checks or listing(kinds.admission_check)) if checked else None
    return QueueReads(
        kinds,
        queues,
        cluster_queues,
        lists.flavors.result(),
        lists.workloads.result(),
        None if cohorts is None else cohorts.result(),
        None if checks is None else checks.result(),
    )


def _gang_reads(
    schedule: ReadSchedule,
    reader: ClusterReader,
    namespace: str,
    api_groups: GetRead,
    work: TrainingWork,
    pods: ListRead,
) -> Callable[[], GangReads] | None:
    """Where the judged job's pods name a scheduler other than the cluster's own: whether
    that scheduler's own pod runs (one fold of the cluster's running pods), the group objects
    its pods name (those discovery serves), then the Volcano Queues those groups name and, for
    a KAI group, every KAI Queue (its parents judge it too); for YuniKorn, its notes on the
    namespace's requests, then its configuration where a note says the job's queue has no
    room. None: nothing to read."""
    job = work.judged
    if job is None:
        return None
    everyone = o.remaining(pods.items) if isinstance(pods, Listed) else []
    own = [p for p in everyone if work.job_of(p) is job]
    # A template that names its machine goes to that machine's kubelet, past every scheduler
    # (pkg/kubelet/lifecycle/predicate.go Admit); a live pod's schedulerName stays: it is
    # bound or waiting, and its scheduler's word on it counts.
    templates = (s.spec for s in job.pod_sets if not s.spec.get("nodeName"))
    schedulers = schedulers_named([*templates, *map(o.pod_spec, own)])
    if not schedulers:
        return None
    # Imported on use: only a job whose pods name a scheduler of their own reads what it keeps.
    from truegreen.doctor.knowledge.gangs import (
        GANG_KINDS,
        UNFINISHED_PODS,
        SchedulerPods,
        kai_pod_group,
        pod_group,
        still_to_place,
    )
    from truegreen.doctor.knowledge.yunikorn import NOTES, YUNIKORN, noted_pods

    running = schedule.submit(
        partial(
            reader.fold,
            Kind.POD,
            SchedulerPods(schedulers),
            namespace=None,
            fields=UNFINISHED_PODS,
        )
    )
    versions = served_versions(api_groups.obj) if isinstance(api_groups, Got) else {}
    served = frozenset(k for k in GANG_KINDS if k.spec.version in versions.get(k.spec.group, ()))
    groups = {
        (ref.kind, ref.name): schedule.submit(
            partial(reader.get, ref.kind, ref.name, namespace=namespace)
        )
        for ref in still_to_place(own)
        if ref.kind in served
    }
    notes = (
        schedule.submit(partial(reader.list, Kind.EVENT, namespace=namespace, fields=NOTES))
        if YUNIKORN in schedulers
        else None
    )

    def finish() -> GangReads:
        read = {key: pending.result() for key, pending in groups.items()}
        names = dict.fromkeys(
            pod_group(answer.obj).queue
            for (kind, _), answer in read.items()
            if kind is Kind.VOLCANO_POD_GROUP and isinstance(answer, Got)
        )
        queues = {
            name: schedule.submit(partial(reader.get, Kind.VOLCANO_QUEUE, name, namespace=None))
            for name in names
            if Kind.VOLCANO_QUEUE in served
        }
        kai_named = any(
            kind is Kind.KAI_POD_GROUP
            and isinstance(answer, Got)
            and kai_pod_group(answer.obj).queue
            for (kind, _), answer in read.items()
        )
        kai = (
            schedule.submit(partial(reader.list, Kind.KAI_QUEUE, namespace=None))
            if kai_named and Kind.KAI_QUEUE in served
            else None
        )
        listed_notes = None if notes is None else notes.result()
        configs_namespace, configs = _yunikorn_configs(
            schedule, reader, running.result(), listed_notes, noted_pods(own, everyone)
        )
        return GangReads(
            schedulers,
            running.result(),
            served,
            read,
            results(queues),
            None if kai is None else kai.result(),
            listed_notes,
            results(configs),
            configs_namespace,
        )

    return finish


def _yunikorn_configs(
    schedule: ReadSchedule,
    reader: ClusterReader,
    running: FoldRead,
    notes: ListRead | None,
    pods: "list[PodRef]",
) -> tuple[str, dict[str, Pending[GetRead]]]:
    """YuniKorn's ConfigMaps, asked for in the namespace its running pod is in, where one of
    its notes says a pod of the job has no room in its queue or its user's quota: its queues'
    limits, and their user and group limits, then say whether the job could ever fit.
    ("", {}) where there is nothing to read."""
    if not isinstance(notes, Listed) or isinstance(running, CantRead):
        return "", {}
    from truegreen.doctor.knowledge.gangs import schedulers_running
    from truegreen.doctor.knowledge.yunikorn import CONFIG_MAPS, YUNIKORN, held_requests

    if not held_requests(notes.items, pods):
        return "", {}
    pod = (schedulers_running(running.summary) or {}).get(YUNIKORN, "")
    namespace = pod.partition("/")[0]
    if not namespace:
        return "", {}
    return namespace, {
        name: schedule.submit(partial(reader.get, Kind.CONFIG_MAP, name, namespace=namespace))
        for name in CONFIG_MAPS
    }


class _EvidenceReads(Struct):
    """Reads made only when what was read calls for them, under way."""

    warnings: Pending[ListRead] | None
    scaler_events: dict[str, Pending[ListRead]]
    scaler_status: Pending[ListRead | GetRead] | None
    gpu_pods: dict[str, Pending[ListRead]]
    node_claims: Pending[ListRead] | None
    node_pools: Pending[ListRead] | None


def _evidence_reads(
    schedule: ReadSchedule,
    reader: ClusterReader,
    namespace: str,
    work: TrainingWork,
    pods: ListRead,
    nodes: ListRead,
    workloads: list[KubeObject],
    api_groups: GetRead,
) -> _EvidenceReads:
    """What the cluster said about training or workloads that do not run (the namespace's
    warnings: a refused create, a volume that would not mount or attach, whatever else a
    component reported), about training pods the scheduler could not place (the autoscalers'
    Events and status, Karpenter's NodeClaims and NodePools), and about GPU machines whose
    GPUs cannot all be used (the pods on them)."""
    # With the pods not read, whether some pod waits or some training job runs short is not
    # known: the cluster's own word is read, as where one does.
    warnings = (
        schedule.submit(
            partial(reader.list, Kind.EVENT, namespace=namespace, fields=WARNING_EVENTS)
        )
        if not isinstance(pods, Listed)
        or training_not_running(work, pods)
        or something_waits(pods, workloads)
        else None
    )
    unplaced = _unplaced_training_pods(work, pods)
    scaler_events = {
        source: schedule.submit(
            partial(reader.list, Kind.EVENT, namespace=namespace, fields={"source": source})
        )
        for source in (AUTOSCALER_SOURCES if unplaced else ())
    }
    scaler_status = schedule.submit(partial(read_status, reader)) if unplaced else None
    problems = gpu_problems(nodes.items)[:GPU_MACHINES_READ] if isinstance(nodes, Listed) else []
    gpu_pods: dict[str, Pending[ListRead]] = {
        problem.machine: schedule.submit(
            partial(
                reader.list, Kind.POD, namespace=None, fields={"spec.nodeName": problem.machine}
            )
        )
        for problem in problems
    }
    karpenter = isinstance(api_groups, Got) and Kind.NODE_CLAIM.spec.version in (
        served_versions(api_groups.obj).get(Kind.NODE_CLAIM.spec.group, ())
    )
    node_claims = (
        schedule.submit(partial(reader.list, Kind.NODE_CLAIM, namespace=None))
        if unplaced and karpenter
        else None
    )
    node_pools = (
        schedule.submit(partial(reader.list, Kind.NODE_POOL, namespace=None))
        if unplaced and karpenter
        else None
    )
    return _EvidenceReads(warnings, scaler_events, scaler_status, gpu_pods, node_claims, node_pools)


def _autoscaler_flags(
    schedule: ReadSchedule, reader: ClusterReader, evidence: _EvidenceReads, now: datetime
) -> Pending[FoldRead] | None:
    """Where a cluster-autoscaler scale-up is older than the default provision time: one fold
    of the cluster's running pods for the autoscaler's own, whose command line says how long
    it waits (doctor/checks/capacity/autoscaler_flags.py)."""
    events = evidence.scaler_events.get("cluster-autoscaler")
    read = None if events is None else events.result()
    if not isinstance(read, Listed):
        return None
    # Imported on use: only a namespace whose training pods an autoscaler spoke of runs it
    # (doctor's start-up on a small namespace, bench/imports.py).
    from truegreen.doctor.checks.capacity.autoscaler_flags import AutoscalerFlags
    from truegreen.doctor.checks.capacity.autoscaling import old_scale_ups

    if not old_scale_ups(read.items, now):
        return None
    return schedule.submit(
        partial(reader.fold, Kind.POD, AutoscalerFlags(), namespace=None, fields=RUNNING_PODS)
    )


def _machine_groups(
    schedule: ReadSchedule,
    reader: ClusterReader,
    evidence: _EvidenceReads,
    api_groups: GetRead,
    work: TrainingWork,
    pods: ListRead,
) -> tuple[bool, dict[str, Pending[GetRead]]] | None:
    """Whether the cluster serves Cluster API, and there, each machine group (at most
    GROUPS_READ) that a cluster-autoscaler scale-up of an unplaced training pod names as a
    Cluster API one, got once, for the provision time its annotation gives
    (doctor/checks/capacity/capi_groups.py). None where its Events or discovery were not read;
    no get where no such scale-up was said."""
    events = evidence.scaler_events.get("cluster-autoscaler")
    read = None if events is None else events.result()
    if not isinstance(read, Listed) or not isinstance(api_groups, Got):
        return None
    from truegreen.doctor.checks.capacity.autoscaling import scale_up_groups
    from truegreen.doctor.checks.capacity.capi_groups import (
        CAPI_GROUP,
        CAPI_VERSIONS,
        GROUPS_READ,
        capi_group,
        capi_kind,
    )

    served = served_versions(api_groups.obj).get(CAPI_GROUP, ())
    gets: dict[str, Pending[GetRead]] = {}
    for name in scale_up_groups(read.items, _unplaced_training_pod_names(work, pods)):
        group = capi_group(name)
        kind = None if group is None else capi_kind(group, served)
        if group is None or kind is None:
            continue
        gets[name] = schedule.submit(
            partial(reader.get, kind, group.name, namespace=group.namespace)
        )
        if len(gets) == GROUPS_READ:
            break
    return any(version in served for version in CAPI_VERSIONS), gets


def _unplaced_training_pod_names(work: TrainingWork, pods: ListRead) -> set[str]:
    """The training pods the scheduler marked as ones it could not place."""
    if not isinstance(pods, Listed):
        return set()
    return {
        o.name_of(p)
        for p in o.remaining(pods.items)
        if scheduler_verdict(p) is not None and work.job_of(p) is not None
    }


def _unplaced_training_pods(work: TrainingWork, pods: ListRead) -> bool:
    """Some training pod the scheduler marked as one it could not place: an autoscaler may
    have said whether a machine comes for it."""
    return bool(_unplaced_training_pod_names(work, pods))


def something_waits(pods: Listed, workloads: list[KubeObject]) -> bool:
    """Some pod of the namespace that has not ended does not run as it should (Pending, or
    Running but not Ready), or some workload runs fewer copies than it asks for: a component
    may have said why. A pod that ended waits for nothing: its controller replaces a failed one
    and runs fewer copies until it has (`training_not_running` for a job's). A namespace where
    everything runs has nothing standing to be told."""
    if any(pod_state(p).waiting for p in o.remaining(pods.items)):
        return True
    return any(not settled(w) for w in workloads)


def training_not_running(work: TrainingWork, pods: Listed) -> bool:
    """Some unfinished training job runs fewer pods than it should, or whether one does is
    not known (a list of training jobs could not be read): the cluster may have said why."""
    if work.unread:
        return True  # a job in the list not read may be one that does not run
    unfinished = [j for j in work.jobs if not j.finished and not j.suspended]
    if not unfinished:
        return False
    running: dict[str, int] = {}
    for pod in o.remaining(pods.items):
        job = work.job_of(pod)
        if job is not None and o.phase(pod) == "Running":
            running[job.ref] = running.get(job.ref, 0) + 1
    return any(running.get(j.ref, 0) < j.pods for j in unfinished)


def _webhook_slices(
    schedule: ReadSchedule,
    reader: ClusterReader,
    configurations: Mapping[Kind, ListRead],
    namespace_object: GetRead,
    job: TrainingJob | None,
) -> dict[tuple[str, str], Pending[ListRead]]:
    """The EndpointSlices of each Service behind a webhook that creating the job's pod calls:
    looked up only once those webhooks are known."""
    labels = [pod_set.labels for pod_set in job.pod_sets] if job is not None else None
    called = webhooks_called(configurations, namespace_object, labels)
    services = dict.fromkeys(h.service for h in called if h.service)
    return {
        service: schedule.submit(
            partial(
                reader.list,
                Kind.ENDPOINT_SLICE,
                namespace=service[0],
                labels={SERVICE_NAME_LABEL: service[1]},
            )
        )
        for service in services
        if service is not None
    }


def _runtime_class_reads(
    schedule: ReadSchedule, reader: ClusterReader, job: TrainingJob | None
) -> dict[str, Pending[GetRead]]:
    """The RuntimeClass each of the judged job's pods names, as the RuntimeClass admission
    plugin reads it (by name, cluster-wide); none for pods that name none."""
    named = dict.fromkeys(o.runtime_class_name(s.spec) for s in job.pod_sets) if job else {}
    return {
        name: schedule.submit(partial(reader.get, Kind.RUNTIME_CLASS, name, namespace=None))
        for name in named
        if name
    }


def _waiting_ephemeral_claims(pods: ListRead) -> list[str]:
    return list(o.waiting_ephemeral_claims(pods.items)) if isinstance(pods, Listed) else []


def ephemeral_storage_types(planned: TrainingJob | None) -> list[str]:
    """The storage types the planned job's generic ephemeral volumes name: no pod of it exists
    yet, so neither do their claims."""
    if planned is None:
        return []
    return [
        str(claim["storageClassName"])
        for pod_set in planned.pod_sets
        for _, claim in o.ephemeral_claims(pod_set.spec)
        if claim.get("storageClassName")
    ]


def _waiting_storage_types(claims: Mapping[str, GetRead]) -> list[str]:
    """The storage types of the claims not bound yet."""
    return [
        str(o.mapping(read.obj.get("spec")).get("storageClassName"))
        for read in claims.values()
        if isinstance(read, Got)
        and o.mapping(read.obj.get("spec")).get("storageClassName")
        and o.mapping(read.obj.get("status")).get("phase") != "Bound"
    ]


def free_volumes_matter(
    claims: Mapping[str, GetRead], storage_types: Mapping[str, GetRead]
) -> bool:
    """Whether a claim not bound yet names a class that waits for the first pod and makes no
    volume (knowledge/no_provisioner.py), or makes volumes only where its `allowedTopologies`
    say: only a volume made in advance can bind it (there, on a machine outside those places),
    so the cluster's volumes are listed (volumebinding/binder.go `FindPodVolumes` looks for one
    before it asks the class to make one). Nothing else needs that list, which a large cluster
    makes long."""
    for read in claims.values():
        if not isinstance(read, Got):
            continue
        named = o.mapping(read.obj.get("spec")).get("storageClassName")
        type_read = storage_types.get(str(named)) if named else None
        if not isinstance(type_read, Got):
            continue
        if awaits_made_volume(read.obj, type_read.obj) or (
            waits_for_first_pod(read.obj, type_read.obj) and limits_places(type_read.obj)
        ):
            return True
    return False


DEVICE_GROUP = Kind.RESOURCE_SLICE.spec.group


def bound_volumes(specs: list[Mapping[str, Any]], claims: Mapping[str, GetRead]) -> list[str]:
    """The PersistentVolumes that the claims the pod specs mount are bound to."""
    names = []
    for claim in (n for spec in specs for n in o.claim_names(spec)):
        read = claims.get(claim)
        if not isinstance(read, Got):
            continue
        volume = o.mapping(read.obj.get("spec")).get("volumeName")
        if volume and o.mapping(read.obj.get("status")).get("phase") == "Bound":
            names.append(str(volume))
    return list(dict.fromkeys(names))


class _FilterReads(Struct, frozen=True):
    """What the scheduler's filters read for the judged job."""

    volumes: dict[str, GetRead]
    drivers: dict[str, GetRead]
    devices: DeviceReads | None
    made_volumes: ListRead | None
    """Every volume, listed only while a claim not bound yet may need one made in advance
    (`free_volumes_matter`): the volumes VolumeBinding's FindMatchingVolume picks from, which
    the storage check and the capacity check's VolumeBinding filter judge."""


def _filter_reads(
    schedule: ReadSchedule,
    reader: ClusterReader,
    namespace: str,
    specs: list[Mapping[str, Any]],
    claims: Mapping[str, GetRead],
    storage_types: Mapping[str, Pending[GetRead]],
    api_groups: GetRead,
) -> Callable[[], "_FilterReads"]:
    """The reads of the scheduler's filters for the judged job's pod specs, sent now: the
    volumes its bound claims are bound to (then the CSIDrivers of those a driver could keep on
    one machine, and, once the storage types are in, every volume while any claim not bound
    yet may need one made in advance), and the device objects when its pods claim devices
    (discovery says whether the cluster serves them; after a failed discovery, they are
    tried). Their answers, once they are in."""
    asked = {
        n: schedule.submit(partial(reader.get, Kind.PERSISTENT_VOLUME, n, namespace=None))
        for n in bound_volumes(specs, claims)
    }
    devices = _device_reads(schedule, reader, namespace, specs, api_groups)

    def answers() -> _FilterReads:
        volumes = results(asked)
        wanted = [driver_to_ask(v.obj) for v in volumes.values() if isinstance(v, Got)]
        drivers = {
            n: schedule.submit(partial(reader.get, Kind.CSI_DRIVER, n, namespace=None))
            for n in dict.fromkeys(d for d in wanted if d)
        }
        made = (
            schedule.submit(partial(reader.list, Kind.PERSISTENT_VOLUME, namespace=None))
            if free_volumes_matter(claims, results(storage_types))
            else None
        )
        return _FilterReads(
            volumes,
            results(drivers),
            None if devices is None else devices(),
            None if made is None else made.result(),
        )

    return answers


def _device_reads(
    schedule: ReadSchedule,
    reader: ClusterReader,
    namespace: str,
    specs: list[Mapping[str, Any]],
    api_groups: GetRead,
) -> Callable[[], DeviceReads] | None:
    if not any(claim_refs(spec) for spec in specs):
        return None
    served = not isinstance(api_groups, Got) or Kind.RESOURCE_SLICE.spec.version in (
        served_versions(api_groups.obj).get(DEVICE_GROUP, ())
    )
    if not served:
        return lambda: DeviceReads(False, NOT_READ, NOT_READ, NOT_READ, {})
    slices = schedule.submit(partial(reader.list, Kind.RESOURCE_SLICE, namespace=None))
    claims = schedule.submit(partial(reader.list, Kind.RESOURCE_CLAIM, namespace=None))
    classes = schedule.submit(partial(reader.list, Kind.DEVICE_CLASS, namespace=None))
    templates = {
        name: schedule.submit(
            partial(reader.get, Kind.RESOURCE_CLAIM_TEMPLATE, name, namespace=namespace)
        )
        for name in template_names(specs)
    }
    return lambda: DeviceReads(
        True, slices.result(), claims.result(), classes.result(), results(templates)
    )


def refresh_tried(annotations: Mapping[str, str]) -> bool:
    """refresh has counted restart attempts here that it has not recorded as done, or latched."""
    return bool(annotations.get(ATTEMPTS) or annotations.get(LATCHED))


def _listed_of(lists: Mapping[Kind, ListRead], kind: Kind) -> list[tuple[Kind, KubeObject]]:
    read = lists.get(kind)
    return [(kind, obj) for obj in read.items] if isinstance(read, Listed) else []


def _listed(workloads: Mapping[Kind, ListRead]) -> list[KubeObject]:
    return [item for read in workloads.values() if isinstance(read, Listed) for item in read.items]


def results(reads: Mapping[str, Pending[GetRead]]) -> dict[str, GetRead]:
    """Each name's read, once it is in."""
    return {name: read.result() for name, read in reads.items()}


def referenced_claims(
    templates: list[PodTemplate], workloads: Mapping[Kind, ListRead]
) -> list[str]:
    """Volume claims the environment uses, StatefulSet claim templates expanded per copy."""
    names = [n for t in templates for n in o.claim_names(t.spec)]
    statefulsets = workloads[Kind.STATEFUL_SET]
    if isinstance(statefulsets, Listed):
        names += [n for sts in statefulsets.items for n in o.statefulset_claims(sts)]
    return names
