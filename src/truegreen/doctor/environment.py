"""Everything doctor reads, gathered once, before any check runs.

Checks are pure functions of this record: they never read the cluster themselves, so a snapshot
and a live cluster give the same findings, and no read is made twice.
"""

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from msgspec import Struct, field

from truegreen import kubeobjects as o
from truegreen.cluster import (
    CantRead,
    CreateResult,
    FoldRead,
    GetRead,
    Got,
    Kind,
    KubeObject,
    Listed,
    ListRead,
    ReadFailure,
)
from truegreen.doctor.knowledge.image_presence import RegistryAnswers
from truegreen.doctor.knowledge.kueue_kinds import KueueKinds
from truegreen.doctor.knowledge.reports import Report, Sources, unruled_reports
from truegreen.doctor.knowledge.training import (
    TRAINING_KIND_NAMES,
    TrainingJob,
    TrainingWork,
    training_work,
)
from truegreen.doctor.knowledge.usage import (
    ClusterUsage,
)
from truegreen.doctor.knowledge.webhooks import Webhook, pod_create_webhooks
from truegreen.kubectl import Kubectl
from truegreen.quantity import Resources

if TYPE_CHECKING:
    # Only for a field's type: no run without --trial reads a trial back, and this record is
    # never encoded or decoded, so msgspec never resolves the name.
    from truegreen.trial.readback import TrialRun

WORKLOAD_KINDS = (Kind.DEPLOYMENT, Kind.STATEFUL_SET, Kind.DAEMON_SET)
WEBHOOK_KINDS = (Kind.VALIDATING_WEBHOOK_CONFIGURATION, Kind.MUTATING_WEBHOOK_CONFIGURATION)
NOT_READ = CantRead(ReadFailure.NOT_CAPTURED, "not read")


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
    trial: bool = False
    """`--trial`: start the training job's own pods for a few seconds (docs/trial.md)."""
    trial_timeout: float = 300.0
    """`--trial-timeout`: the trial's whole time, the image pull included, in seconds."""
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


class DeviceReads(Struct, frozen=True):
    """The device objects, read only for a job whose pods have device claims."""

    served: bool
    """Discovery says the cluster serves resource.k8s.io/v1."""
    slices: ListRead
    claims: ListRead
    """Every namespace's claims: what their allocations hold."""
    classes: ListRead
    templates: Mapping[str, GetRead]
    """The namespace's claim templates the job names, by name."""


class QueueReads(Struct, frozen=True):
    """Kueue's objects, read where Kueue is served and the judged job is handed to a queue."""

    kinds: KueueKinds
    """The version discovery chose (v1beta2, else v1beta1)."""
    local_queues: ListRead
    """The namespace's LocalQueues: the one the job names, or the default one."""
    cluster_queues: ListRead = NOT_READ
    flavors: ListRead = NOT_READ
    workloads: ListRead = NOT_READ
    """The namespace's Workloads: the judged job's own, and those holding its queue's quota."""
    cohorts: ListRead | None = None
    """Read only where a ClusterQueue belongs to a cohort."""
    admission_checks: ListRead | None = None
    """Read only where a ClusterQueue names admission checks."""


class GangReads(Struct, frozen=True):
    """What the judged job's own schedulers keep, read only where its pods name a scheduler
    other than the cluster's own (doctor/knowledge/gangs.py)."""

    schedulers: tuple[str, ...]
    """The schedulers the job's pods name, other than the cluster's own."""
    running: FoldRead
    """The fold of the cluster's running pods that looks for each scheduler's own pod."""
    served: frozenset[Kind] = frozenset()
    """The group kinds discovery says the cluster serves."""
    groups: Mapping[tuple[Kind, str], GetRead] = field(default_factory=dict)
    """Each group object the job's pods name, by (kind, name); only those served are read."""
    queues: Mapping[str, GetRead] = field(default_factory=dict)
    """Each Volcano Queue a read group names, by name."""
    kai_queues: ListRead | None = None
    """Every KAI Queue, listed where a read KAI group names a queue and the kind is served."""
    notes: ListRead | None = None
    """YuniKorn's notes on the namespace's requests (Events of reason `Informational`), listed
    where the job's pods name YuniKorn (doctor/knowledge/yunikorn.py)."""
    configs: Mapping[str, GetRead] = field(default_factory=dict)
    """YuniKorn's ConfigMaps by name, read in `configs_namespace` where a note says a pod of
    the job has no room in its queue or its user's quota."""
    configs_namespace: str = ""


class MachineGroups(Struct, frozen=True):
    """The Cluster API machine groups that cluster-autoscaler's scale-ups of unplaced training
    pods name (`MachineDeployment/ns/name`), for their own provision times
    (doctor/checks/capacity/capi_groups.py)."""

    served: bool
    """Whether the cluster serves cluster.x-k8s.io (discovery): where it does not, the groups
    live in a management cluster apart from this one, and none is read."""
    reads: Mapping[str, GetRead] = field(default_factory=dict)
    """Per group, its object; got only where served."""


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
    runtime_classes: Mapping[str, GetRead] = field(default_factory=dict)
    """The RuntimeClasses the judged job's pods name, by name."""
    credentials: GetRead | None = None
    namespace_object: GetRead = NOT_READ
    """The namespace itself: its phase and its labels (Pod Security, webhook selectors)."""
    quotas: ListRead = NOT_READ
    webhook_configurations: Mapping[Kind, ListRead] = field(default_factory=dict)
    endpoint_slices: Mapping[tuple[str, str], ListRead] = field(default_factory=dict)
    """Per (namespace, name) of a Service behind a webhook that pod creation calls."""
    trial: CreateResult | None = None
    """The server's answer to the trial start; None when none was made; offline, when the
    snapshot or the config asks for it, a CantRead NOT_CAPTURED: a snapshot holds no answer to
    a create."""
    trial_run: "TrialRun | CantRead | None" = None
    """What the trial pods measured (`--trial`); None when no trial ran; a CantRead when a
    snapshot taken with the trial holds no readable record of it."""
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
    autoscaler_status: ListRead | GetRead | None = None
    """cluster-autoscaler's status ConfigMaps, read with its Events: every one of its name in
    the cluster, or, where that list is refused, the one at its default place."""
    autoscaler_flags: FoldRead | None = None
    """The fold of the cluster's running pods that finds cluster-autoscaler's own and the
    provision time it was given, read only when one of its scale-ups is older than the
    default (doctor/checks/capacity/autoscaler_flags.py)."""
    machine_groups: "MachineGroups | None" = None
    """The Cluster API machine groups cluster-autoscaler's scale-ups of training pods name;
    None where its Events or discovery were not read."""
    node_claims: ListRead | None = None
    """Karpenter's NodeClaims, read with the autoscalers' Events where karpenter.sh is served:
    whether a machine it nominated failed to launch."""
    node_pools: ListRead | None = None
    """Karpenter's NodePools, read with its NodeClaims: the limits a pool has reached."""
    pulled_events: ListRead | None = None
    """The kubelet's `Pulled` Events of the namespace, read only while the registries are
    asked and some image is still to pull by the pods' statuses: the kubelet's word that a
    machine holds it (doctor/knowledge/image_presence.py `event_pulled`); None when not read."""
    warning_events: ListRead | None = None
    """The namespace's Warning Events, read only while some training job does not run whole,
    or whether one does is not known (`training_not_running`), or something of the namespace
    waits (`something_waits`), or the pods could not be read: the controllers' own word on
    why."""
    priority_classes: ListRead | None = None
    """The cluster's PriorityClasses, read only when the job's priority can change its verdict
    (doctor/checks/capacity/preemption.py `priorities_matter`); None when not read."""
    volumes: Mapping[str, GetRead] = field(default_factory=dict)
    """The PersistentVolumes the judged job's bound claims are bound to, by name."""
    made_volumes: ListRead | None = None
    """Every PersistentVolume of the cluster, listed only while a claim not bound yet may need
    a volume made in advance (its class makes none, or makes them only where its
    `allowedTopologies` say: doctor/reads/gather.py `free_volumes_matter`); None when not
    listed."""
    csi_drivers: Mapping[str, GetRead] = field(default_factory=dict)
    """The CSIDrivers of those volumes that could keep the job on one machine, by name
    (doctor/checks/capacity/filters/volume_attachment.py `driver_to_ask`)."""
    devices: DeviceReads | None = None
    """The device objects, read only when the judged job's pods claim devices."""
    queue: QueueReads | None = None
    """Kueue's objects; None where Kueue is not served or no training job is judged."""
    gangs: GangReads | None = None
    """The job's own schedulers and their groups; None where its pods name none but the
    cluster's own."""
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

    def runtime_class(self, spec: Mapping[str, Any]) -> KubeObject | None:
        """The RuntimeClass a pod spec names, as read; None when it names none or the read
        found nothing (admission says which)."""
        read = self.runtime_classes.get(o.runtime_class_name(spec))
        return read.obj if isinstance(read, Got) else None

    def pods_of(self, job: TrainingJob) -> list[KubeObject]:
        """The namespace's pods of `job` (none when the pods could not be read)."""
        if not isinstance(self.pods, Listed):
            return []
        work = self.work()
        return [p for p in self.pods.items if work.job_of(p) is job]

    def workload_of(self, pod: KubeObject) -> KubeObject | None:
        """The Deployment, StatefulSet or DaemonSet whose selector takes the pod."""
        for read in self.workloads.values():
            for workload in read.items if isinstance(read, Listed) else ():
                selector = o.mapping(o.mapping(workload.get("spec")).get("selector"))
                if selector and o.selector_matches(selector, o.labels_of(pod)):
                    return workload
        return None

    def reports(self) -> list[Report]:
        """What the cluster's components reported that no other check says and that still
        stands (doctor/knowledge/reports.py), newest first; none where nothing was read."""
        events = self.warning_events
        workloads = [
            w for read in self.workloads.values() if isinstance(read, Listed) for w in read.items
        ]
        return unruled_reports(
            Sources(
                events=events.items if isinstance(events, Listed) else (),
                pods=self.pods.items if isinstance(self.pods, Listed) else (),
                workloads=workloads,
                finished_jobs=frozenset(j.ref for j in self.work().jobs if j.finished),
                jobs=self.work().jobs,
                finished_pods=self._finished_pods(),
                claims=[c.obj for c in self.claims.values() if isinstance(c, Got)],
                nodes=self.nodes.items if isinstance(self.nodes, Listed) else (),
                gang_groups=frozenset(
                    name
                    for (_, name), read in (self.gangs.groups if self.gangs else {}).items()
                    if isinstance(read, Got)
                ),
            )
        )

    def _finished_pods(self) -> frozenset[str]:
        """The names of the pods whose training job finished."""
        if not isinstance(self.pods, Listed):
            return frozenset()
        work = self.work()
        return frozenset(
            o.name_of(pod)
            for pod in self.pods.items
            if (job := work.job_of(pod)) is not None and job.finished
        )

    def training_pod_labels(self) -> list[Mapping[str, str]] | None:
        """The labels the next training job's pods get, per pod set; None when no training job
        shows them."""
        job = self.judged_job()
        return [pod_set.labels for pod_set in job.pod_sets] if job is not None else None

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
    pod_labels: Sequence[Mapping[str, str]] | None,
) -> list[Webhook]:
    """The webhooks that creating the training job's pods calls (or may call), `pod_labels`
    per pod set.

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
