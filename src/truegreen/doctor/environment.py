"""Everything doctor reads, gathered once, before any check runs.

Checks are pure functions of this record: they never read the cluster themselves, so a snapshot
and a live cluster give the same findings, and no read is made twice.
"""

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from functools import partial
from typing import Any, Protocol

from msgspec import Struct, field

from truegreen import kubeobjects as o
from truegreen.cluster import (
    CantRead,
    ClusterReader,
    CreateResult,
    FieldIsNot,
    GetRead,
    Got,
    Kind,
    KubeObject,
    Listed,
    ListRead,
    ReadFailure,
)
from truegreen.cluster.schedule import IN_FLIGHT, Pending, ReadSchedule
from truegreen.doctor.autoscaling import AUTOSCALER_SOURCES, STATUS_CONFIG_MAP
from truegreen.doctor.devices import DeviceReads, claim_refs, template_names
from truegreen.doctor.evidence import scheduler_verdict
from truegreen.doctor.gpu_supply import gpu_problems
from truegreen.doctor.image_presence import ImageRegistry, RegistryAnswers, wanted_lookups
from truegreen.doctor.kueue import DEFAULT_QUEUE, GROUP, KueueKinds, kinds_served
from truegreen.doctor.preemption import priorities_matter
from truegreen.doctor.training import (
    TRAINING_KIND_NAMES,
    TrainingJob,
    TrainingWork,
    optional_kinds_served,
    runtime_of,
    served_versions,
    shape,
    training_work,
)
from truegreen.doctor.trial import trial_pod
from truegreen.doctor.usage import CapacityTally, ClusterUsage, cluster_usage, machines_for_fit
from truegreen.doctor.webhooks import SERVICE_NAME_LABEL, Webhook, pod_create_webhooks
from truegreen.kubectl import Kubectl
from truegreen.quantity import Resources
from truegreen.refresh.annotations import ATTEMPTS, LATCHED, EventReason

WORKLOAD_KINDS = (Kind.DEPLOYMENT, Kind.STATEFUL_SET, Kind.DAEMON_SET)
# Only pods that hold capacity: the scheduler ignores Succeeded and Failed pods.
HOLDING_CAPACITY = {"status.phase": FieldIsNot(("Succeeded", "Failed"))}
REFRESH_FAILURE_EVENTS = {"reason": EventReason.ROLLOUT_FAILED.value}
GPU_MACHINES_READ = 3
"""GPU machines whose pods are read for the state of their GPU software, at most."""
WARNING_EVENTS = {"type": "Warning"}
"""The field selector of the namespace's warnings (events accept `type`:
pkg/apis/core/v1/conversion.go)."""
"""The field selector of refresh's failed-rollout Events (events accept `reason`)."""
WEBHOOK_KINDS = (Kind.VALIDATING_WEBHOOK_CONFIGURATION, Kind.MUTATING_WEBHOOK_CONFIGURATION)
_NOT_READ = CantRead(ReadFailure.NOT_CAPTURED, "not read")


class PodCreator(Protocol):
    """Sends doctor's one write: the trial start, a create with `dryRun=All`."""

    def create(
        self, kind: Kind, obj: Mapping[str, Any], *, namespace: str, dry_run: bool
    ) -> CreateResult:
        """Create `obj` (only as a dry run, from doctor); a refusal keeps the server's words."""
        ...


class CredentialsRequirement(Struct, frozen=True):
    """The backend credentials: a stored login and the keys it must hold, non-empty."""

    name: str
    keys: tuple[str, ...]


class DoctorSettings(Struct, frozen=True):
    """What the operator told doctor about the environment."""

    job_requests: Resources | None = None
    """One training job pod's requests (`--job-requests`); else the newest Job's template."""
    credentials: CredentialsRequirement | None = None
    """`--credentials-secret NAME:KEY1,KEY2`; the credentials check runs only when given."""
    pending_grace: timedelta = timedelta(minutes=5)
    """How long a pod may wait to start before it is called stuck."""
    admission_dry_run: bool = False
    """`--admission-dry-run`: make a trial start of the training job's pod (`dryRun=All`)."""
    planned_job: tuple[Kind, Mapping[str, Any]] | None = None
    """`--job-file`: a training job not yet submitted, checked instead of the newest one."""
    kubectl: Kubectl = Kubectl()
    """How remedies write kubectl commands that reach this cluster and namespace."""
    fleet: tuple[str, ...] = ()
    """Every namespace of a run over many (empty for one): their reads outside themselves are
    shared, so the cluster's pods are folded once, keeping all of theirs."""


class PodTemplate(Struct, frozen=True):
    """A pod template of the environment: whose it is, and the pod spec it stamps out."""

    owner: str
    """Plain words for the owner: `the workload 'manager'`, `the training job 'run-7'`."""
    ref: str
    """`Kind/name` of the owner."""
    spec: Mapping[str, Any]


class QueueReads(Struct, frozen=True):
    """Kueue's objects, read where Kueue is served and the judged job is handed to a queue."""

    kinds: KueueKinds
    """The version discovery chose (v1beta2, else v1beta1)."""
    local_queues: ListRead
    """The namespace's LocalQueues: the one the job names, or the default one."""
    cluster_queues: ListRead = _NOT_READ
    flavors: ListRead = _NOT_READ
    workloads: ListRead = _NOT_READ
    """The namespace's Workloads: the judged job's own, and those holding its queue's quota."""
    cohorts: ListRead | None = None
    """Read only where a ClusterQueue belongs to a cohort."""
    admission_checks: ListRead | None = None
    """Read only where a ClusterQueue names admission checks."""


class Environment(Struct, frozen=True):
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
    namespace_object: GetRead = _NOT_READ
    """The namespace itself: its phase and its labels (Pod Security, webhook selectors)."""
    quotas: ListRead = _NOT_READ
    webhook_configurations: Mapping[Kind, ListRead] = field(default_factory=dict)
    endpoint_slices: Mapping[tuple[str, str], ListRead] = field(default_factory=dict)
    """Per (namespace, name) of a Service behind a webhook that pod creation calls."""
    trial: CreateResult | None = None
    """The server's answer to the trial start; None when none was made."""
    refresh_failures: ListRead | None = None
    """refresh's failed-rollout Events, read only when a workload shows refresh attempts."""
    training: TrainingWork | None = None
    """Every training job of the namespace as its pod sets (None: from `jobs` alone)."""
    gpu_machine_pods: Mapping[str, ListRead] = field(default_factory=dict)
    """The pods on each GPU machine whose GPUs cannot all be used (at most GPU_MACHINES_READ),
    for the state of its GPU software."""
    autoscaler_events: Mapping[str, ListRead] = field(default_factory=dict)
    """Per autoscaler (`cluster-autoscaler`, `karpenter`), its Events in the namespace, read
    only while the scheduler has marked a training pod it could not place."""
    autoscaler_status: GetRead | None = None
    """cluster-autoscaler's status ConfigMap, read with its Events."""
    warning_events: ListRead | None = None
    """The namespace's Warning Events, read only while some training job does not run whole
    (`training_not_running`): the controllers' own word on why."""
    priority_classes: ListRead | None = None
    """The cluster's PriorityClasses, read only when the job's priority can change its verdict
    (doctor/preemption.py `priorities_matter`); None when not read."""
    volumes: Mapping[str, GetRead] = field(default_factory=dict)
    """The PersistentVolumes the judged job's bound claims are bound to, by name."""
    devices: DeviceReads | None = None
    """The device objects, read only when the judged job's pods claim devices."""
    queue: QueueReads | None = None
    """Kueue's objects; None where Kueue is not served or no training job is judged."""
    registry: RegistryAnswers | None = None
    """The registries' answers about the images (`image_presence.wanted_lookups`); None when
    they were not asked."""

    def namespace_labels(self) -> Mapping[str, str] | None:
        """The namespace's labels; None when the namespace could not be read."""
        return namespace_labels(self.namespace_object)

    def work(self) -> TrainingWork:
        """The namespace's training jobs (of every kind read)."""
        if self.training is not None:
            return self.training
        return training_work({Kind.JOB: self.jobs}, {})

    def judged_job(self) -> TrainingJob | None:
        """The training job the next run is judged by: `--job-file`'s, else the newest."""
        return self.work().judged

    def pods_of(self, job: TrainingJob) -> list[KubeObject]:
        """The namespace's pods of `job` (none when the pods could not be read)."""
        if not isinstance(self.pods, Listed):
            return []
        work = self.work()
        return [p for p in self.pods.items if work.job_of(p) is job]

    def training_pod_labels(self) -> Mapping[str, str] | None:
        """The labels the next training job's pods get; None when no training job shows them."""
        job = self.judged_job()
        return job.primary.labels if job is not None else None

    def pod_create_webhooks(self) -> list[Webhook]:
        """The webhooks that creating the training job's pod calls (or may call)."""
        return webhooks_called(
            self.webhook_configurations, self.namespace_object, self.training_pod_labels()
        )

    def unread_template_sources(self) -> list[tuple[Kind, CantRead]]:
        """The lists the pod templates come from that could not be read.

        A check that looks at what the templates refer to cannot call anything fine while
        one of these is missing: it never learned what to look at.
        """
        sources = [*((k, self.workloads[k]) for k in WORKLOAD_KINDS), (Kind.JOB, self.jobs)]
        unread = [(kind, read) for kind, read in sources if isinstance(read, CantRead)]
        return unread + [u for u in self.work().unread if u[0] is not Kind.JOB]

    def templates(self) -> list[PodTemplate]:
        """Pod templates of the services and of the training jobs that matter now."""
        return templates_of(self.workloads, self.work())


def templates_of(workloads: Mapping[Kind, ListRead], work: TrainingWork) -> list[PodTemplate]:
    """Pod templates of the services and of the training jobs that matter now (each pod set
    of each unfinished job, and of the judged one)."""
    found: list[PodTemplate] = []
    for kind in WORKLOAD_KINDS:
        read = workloads[kind]
        if isinstance(read, Listed):
            for item in read.items:
                spec = o.pod_spec(o.pod_template(item))
                found.append(PodTemplate(owner_words(item), o.ref(item), spec))
    for job in work.relevant():
        for pod_set in job.pod_sets:
            found.append(PodTemplate(job.words(), job.ref, pod_set.spec))
    return found


def namespace_labels(namespace_object: GetRead) -> Mapping[str, str] | None:
    """The namespace's labels; None when the namespace could not be read."""
    return o.labels_of(namespace_object.obj) if isinstance(namespace_object, Got) else None


def webhooks_called(
    webhook_configurations: Mapping[Kind, ListRead],
    namespace_object: GetRead,
    pod_labels: Mapping[str, str] | None,
) -> list[Webhook]:
    """The webhooks that creating the training job's pod calls (or may call).

    A function of three reads, so `gather` can look up their Services before the rest is in."""
    configurations = [
        item
        for kind in WEBHOOK_KINDS
        if isinstance(read := webhook_configurations.get(kind), Listed)
        for item in read.items
    ]
    return pod_create_webhooks(configurations, namespace_labels(namespace_object), pod_labels)


class Unreachable(Struct, frozen=True):
    """The cluster could not be reached, or refused the login: nothing was read."""

    cant_read: CantRead


def owner_words(obj: Mapping[str, Any]) -> str:
    """Plain words for a workload: `the workload 'manager'`, `the training job 'run-7'`.

    Not "service": that is a different thing to anyone who knows Kubernetes."""
    noun = "training job" if obj.get("kind") in TRAINING_KIND_NAMES else "workload"
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
    creator: PodCreator | None = None,
    in_flight: int = IN_FLIGHT,
    registry: ImageRegistry | None = None,
) -> Environment | Unreachable:
    """Make every read doctor needs, once. Stops at once if the cluster cannot be reached.

    The first read goes alone: it learns whether the cluster answers at all (and fetches a
    login once). The other reads then go out together, at most `in_flight` at a time, each
    as soon as what it depends on is in: the gets that follow from the templates are made
    while the cluster's pods still stream. The reads, and their order, are the same for any
    `in_flight` (1 is one after another). The trial start is made only when asked for and
    `creator` is given (never offline). `registry`, when given, is asked about the images
    once the logins they need are in, while the last reads are still out.
    """
    first = reader.list(Kind.DEPLOYMENT, namespace=namespace)
    if isinstance(first, CantRead) and (
        not first.reached or first.failure is ReadFailure.UNAUTHORIZED
    ):
        return Unreachable(first)  # a refused login refuses every later read too
    with ReadSchedule(in_flight) as schedule:

        def listing(kind: Kind, where: str | None = namespace) -> Pending[ListRead]:
            return schedule.submit(partial(reader.list, kind, namespace=where))

        def get_each(kind: Kind, names: list[str]) -> dict[str, Pending[GetRead]]:
            return {
                n: schedule.submit(partial(reader.get, kind, n, namespace=namespace))
                for n in dict.fromkeys(names)
            }

        later_workloads = {kind: listing(kind) for kind in WORKLOAD_KINDS[1:]}
        # Which optional training kinds the cluster serves, so that only those are listed.
        discovery = schedule.submit(partial(reader.get, Kind.API_GROUPS, "", namespace=None))
        jobs = listing(Kind.JOB)
        cron_jobs = listing(Kind.CRON_JOB)
        pods = listing(Kind.POD)
        limit_ranges = listing(Kind.LIMIT_RANGE)
        nodes = schedule.submit(lambda: machines_for_fit(reader.list(Kind.NODE, namespace=None)))
        usage = schedule.submit(
            lambda: reader.fold(
                Kind.POD,
                CapacityTally(namespace, settings.fleet),
                namespace=None,
                fields=HOLDING_CAPACITY,
            )
        )
        namespace_object = schedule.submit(
            partial(reader.get, Kind.NAMESPACE, namespace, namespace=None)
        )
        quotas = listing(Kind.RESOURCE_QUOTA)
        webhook_lists = {kind: listing(kind, None) for kind in WEBHOOK_KINDS}
        api_groups = discovery.result()
        optional = (
            {kind: listing(kind) for kind in optional_kinds_served(api_groups.obj)}
            if isinstance(api_groups, Got)
            else {}
        )
        workloads: dict[Kind, ListRead] = {Kind.DEPLOYMENT: first}
        workloads.update({kind: read.result() for kind, read in later_workloads.items()})
        # refresh's own word on why it failed, only where its annotations say it has been trying.
        failures = (
            schedule.submit(
                partial(reader.list, Kind.EVENT, namespace=namespace, fields=REFRESH_FAILURE_EVENTS)
            )
            if any(refresh_tried(o.annotations_of(w)) for w in _listed(workloads))
            else None
        )
        lists: dict[Kind, ListRead] = {Kind.JOB: jobs.result(), Kind.CRON_JOB: cron_jobs.result()}
        if isinstance(api_groups, CantRead):
            lists[Kind.API_GROUPS] = api_groups
        lists.update({kind: read.result() for kind, read in optional.items()})
        work = _training(schedule, reader, namespace, lists, settings.planned_job)
        pod_list = pods.result()
        node_list = nodes.result()
        evidence = _evidence_reads(schedule, reader, namespace, work, pod_list, node_list)
        job_list = lists[Kind.JOB]
        job = work.judged
        queue_start = _queue_start(schedule, reader, namespace, api_groups, job)
        trial = (
            schedule.submit(
                partial(creator.create, Kind.POD, trial_pod(job), namespace=namespace, dry_run=True)
            )
            if settings.admission_dry_run and creator is not None and job is not None
            else None
        )
        templates = templates_of(workloads, work)
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
        storage_types = {
            n: schedule.submit(partial(reader.get, Kind.STORAGE_CLASS, n, namespace=None))
            for n in dict.fromkeys(_waiting_storage_types(claims))
        }
        # What the scheduler's filters read, only for the features the judged job uses.
        filter_reads = _filter_reads(
            schedule,
            reader,
            namespace,
            [s.spec for s in job.pod_sets] if job is not None else [],
            claims,
            api_groups,
        )
        accounts = results(service_accounts)
        secrets = get_each(Kind.SECRET, pull_secret_names(templates, accounts))
        namespace_read = namespace_object.result()
        webhook_configurations = {kind: read.result() for kind, read in webhook_lists.items()}
        slices = _webhook_slices(schedule, reader, webhook_configurations, namespace_read, job)
        capacity = cluster_usage(usage.result(), namespace if settings.fleet else None)
        # Read only when the job's priority can change its verdict (doctor/preemption.py).
        classes = listing(Kind.PRIORITY_CLASS, None) if priorities_matter(capacity, job) else None
        lookups = _ask_registry(schedule, registry, templates, accounts, secrets, job, node_list)
        return Environment(
            namespace=namespace,
            now=now,
            settings=settings,
            workloads=workloads,
            jobs=job_list,
            pods=pod_list,
            limit_ranges=limit_ranges.result(),
            nodes=node_list,
            cluster_usage=capacity,
            service_accounts=accounts,
            secrets=results(secrets),
            claims=claims,
            storage_types=results(storage_types),
            credentials=None if credentials is None else credentials.result(),
            namespace_object=namespace_read,
            quotas=quotas.result(),
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
            warning_events=None if evidence.warnings is None else evidence.warnings.result(),
            priority_classes=None if classes is None else classes.result(),
            **filter_reads(),
            queue=None
            if queue_start is None
            else _queue_reads(schedule, reader, namespace, queue_start),
            registry=None if lookups is None else lookups.result(),
        )


def pull_secret_names(templates: list[PodTemplate], accounts: Mapping[str, GetRead]) -> list[str]:
    """The registry logins the templates name, and those of every service account read."""
    names = [n for t in templates for n in o.pull_secret_names(t.spec)]
    for read in accounts.values():
        if isinstance(read, Got):
            names += o.pull_secret_names(read.obj)
    return names


def _ask_registry(
    schedule: ReadSchedule,
    registry: ImageRegistry | None,
    templates: list[PodTemplate],
    accounts: Mapping[str, GetRead],
    secrets: Mapping[str, Pending[GetRead]],
    job: TrainingJob | None,
    machines: ListRead,
) -> Pending[RegistryAnswers] | None:
    """The registry look-ups, sent once the logins they need are in; None when not asked."""
    if registry is None:
        return None
    wanted = wanted_lookups(
        templates, accounts, results(secrets), job.ref if job else None, machines
    )
    return schedule.submit(partial(registry.look_up, wanted))


def _training(
    schedule: ReadSchedule,
    reader: ClusterReader,
    namespace: str,
    lists: Mapping[Kind, ListRead],
    planned_job: tuple[Kind, Mapping[str, Any]] | None,
) -> TrainingWork:
    """The training jobs of `lists` and `planned_job`, each TrainJob's runtime read once."""
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
    planned = (
        shape(*planned_job, runtime_reads.get(runtime_of(planned_job[1]))) if planned_job else None
    )
    return training_work(lists, runtime_reads, planned)


class _QueueStart(Struct, frozen=True):
    """Kueue's reads sent first: the LocalQueues, and the rest when the job names a queue."""

    kinds: KueueKinds
    job: TrainingJob
    local_queues: Pending[ListRead]
    early: tuple[Pending[ListRead], Pending[ListRead], Pending[ListRead]] | None


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
) -> _QueueStart | None:
    """Where discovery serves Kueue and a job is judged: the namespace's LocalQueues; with a
    job that names its queue, the ClusterQueues, flavors and Workloads too, at once (they are
    needed whatever the LocalQueues say). None: nothing of Kueue's is read."""
    if not isinstance(api_groups, Got) or job is None:
        return None
    kinds = kinds_served(served_versions(api_groups.obj).get(GROUP, ()))
    if kinds is None:
        return None
    listing = partial(_kueue_listing, schedule, reader, namespace)
    local_queues = listing(kinds.local_queue)
    early = (
        (listing(kinds.cluster_queue), listing(kinds.resource_flavor), listing(kinds.workload))
        if job.queue
        else None
    )
    return _QueueStart(kinds, job, local_queues, early)


def _queue_reads(
    schedule: ReadSchedule, reader: ClusterReader, namespace: str, start: _QueueStart
) -> QueueReads:
    """Kueue's objects for the judged job. A job without a queue label needs more only where
    the namespace has the LocalQueue `default` (Kueue hands it there), or while it is
    suspended (Kueue may hold it without a queue); then the cohorts and admission checks
    are read only where a ClusterQueue names them."""
    listing = partial(_kueue_listing, schedule, reader, namespace)
    kinds = start.kinds
    queues = start.local_queues.result()
    defaulted = isinstance(queues, Listed) and any(
        o.name_of(q) == DEFAULT_QUEUE for q in queues.items
    )
    if start.early is None and not defaulted and not start.job.suspended:
        return QueueReads(kinds, queues)
    cluster, flavors, workloads = start.early or (
        listing(kinds.cluster_queue),
        listing(kinds.resource_flavor),
        listing(kinds.workload),
    )
    cluster_queues = cluster.result()
    specs = (
        [o.mapping(q.get("spec")) for q in cluster_queues.items]
        if isinstance(cluster_queues, Listed)
        else []
    )
    cohorts = (
        listing(kinds.cohort)
        if any(s.get("cohortName") or s.get("cohort") for s in specs)
        else None
    )
    checks = (
        listing(kinds.admission_check)
        if any(s.get("admissionChecks") or s.get("admissionChecksStrategy") for s in specs)
        else None
    )
    return QueueReads(
        kinds,
        queues,
        cluster_queues,
        flavors.result(),
        workloads.result(),
        None if cohorts is None else cohorts.result(),
        None if checks is None else checks.result(),
    )


class _EvidenceReads(Struct):
    """Reads made only when what was read calls for them, under way."""

    warnings: Pending[ListRead] | None
    scaler_events: dict[str, Pending[ListRead]]
    scaler_status: Pending[GetRead] | None
    gpu_pods: dict[str, Pending[ListRead]]


def _evidence_reads(
    schedule: ReadSchedule,
    reader: ClusterReader,
    namespace: str,
    work: TrainingWork,
    pods: ListRead,
    nodes: ListRead,
) -> _EvidenceReads:
    """What the cluster said about training that does not run (the namespace's warnings: a
    refused create, a volume that would not attach), about training pods the scheduler could
    not place (the autoscalers' Events and status), and about GPU machines whose GPUs cannot
    all be used (the pods on them)."""
    warnings = (
        schedule.submit(
            partial(reader.list, Kind.EVENT, namespace=namespace, fields=WARNING_EVENTS)
        )
        if training_not_running(work, pods)
        else None
    )
    unplaced = _unplaced_training_pods(work, pods)
    scaler_events = {
        source: schedule.submit(
            partial(reader.list, Kind.EVENT, namespace=namespace, fields={"source": source})
        )
        for source in (AUTOSCALER_SOURCES if unplaced else ())
    }
    status_namespace, status_name = STATUS_CONFIG_MAP
    scaler_status = (
        schedule.submit(
            partial(reader.get, Kind.CONFIG_MAP, status_name, namespace=status_namespace)
        )
        if unplaced
        else None
    )
    problems = gpu_problems(nodes.items)[:GPU_MACHINES_READ] if isinstance(nodes, Listed) else []
    gpu_pods: dict[str, Pending[ListRead]] = {
        problem.machine: schedule.submit(
            partial(
                reader.list, Kind.POD, namespace=None, fields={"spec.nodeName": problem.machine}
            )
        )
        for problem in problems
    }
    return _EvidenceReads(warnings, scaler_events, scaler_status, gpu_pods)


def _unplaced_training_pods(work: TrainingWork, pods: ListRead) -> bool:
    """Some training pod the scheduler marked as one it could not place: an autoscaler may
    have said whether a machine comes for it."""
    if not isinstance(pods, Listed):
        return False
    return any(
        scheduler_verdict(p) is not None and work.job_of(p) is not None
        for p in o.remaining(pods.items)
    )


def training_not_running(work: TrainingWork, pods: ListRead) -> bool:
    """Some unfinished training job runs fewer pods than it should (or the pods could not be
    read): the cluster may have said why."""
    unfinished = [j for j in work.jobs if not j.finished and not j.suspended]
    if not unfinished:
        return False
    if not isinstance(pods, Listed):
        return True
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
    called = webhooks_called(
        configurations, namespace_object, job.primary.labels if job is not None else None
    )
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


def _waiting_storage_types(claims: Mapping[str, GetRead]) -> list[str]:
    """The storage types of the claims not bound yet."""
    return [
        str(o.mapping(read.obj.get("spec")).get("storageClassName"))
        for read in claims.values()
        if isinstance(read, Got)
        and o.mapping(read.obj.get("spec")).get("storageClassName")
        and o.mapping(read.obj.get("status")).get("phase") != "Bound"
    ]


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


def _filter_reads(
    schedule: ReadSchedule,
    reader: ClusterReader,
    namespace: str,
    specs: list[Mapping[str, Any]],
    claims: Mapping[str, GetRead],
    api_groups: GetRead,
) -> Callable[[], dict[str, Any]]:
    """The reads of the scheduler's filters for the judged job's pod specs, sent now: the
    volumes its bound claims are bound to, and the device objects when its pods claim devices
    (discovery says whether the cluster serves them; after a failed discovery, they are
    tried). The Environment fields they fill, once they are in."""
    volumes = {
        n: schedule.submit(partial(reader.get, Kind.PERSISTENT_VOLUME, n, namespace=None))
        for n in bound_volumes(specs, claims)
    }
    devices = _device_reads(schedule, reader, namespace, specs, api_groups)
    return lambda: {
        "volumes": results(volumes),
        "devices": None if devices is None else devices(),
    }


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
        return lambda: DeviceReads(False, _NOT_READ, _NOT_READ, _NOT_READ, {})
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
