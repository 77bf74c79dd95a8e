"""Kueue's model of a training job's admission, as Kueue keeps it (pkg/cache): its objects, the
quota tree and what a Workload's status says, as pure functions of the objects.

Kueue (kubernetes-sigs/kueue) holds a job suspended until its queue admits it. The objects and
their fields follow apis/kueue/v1beta2 and v1beta1 (`*_types.go`); both versions are parsed, and
where they differ (a ClusterQueue's `cohortName` / `cohort`, its `admissionChecksStrategy` /
`admissionChecks`) each spelling is read. The quota arithmetic is rebuilt value by value from
Kueue's own code:
- pkg/cache/scheduler/resource_node.go: a ClusterQueue's or Cohort's `SubtreeQuota`,
  `localQuota` (lending limits), `Usage` bubbling to the cohort (`accumulateFromChild`),
  `available` and `potentialAvailable` (borrowing limits), `LocalAvailable`;
- pkg/cache/scheduler/clusterqueue_snapshot.go: `Available` (never below 0), `BorrowingWith`;
The flavor assignment that decides on this model is doctor.checks.queue.flavor_assigner.
What is not rebuilt: preemption (`SimulatePreemption`: a job that waits for quota may instead
take the place of lower-priority work), fair sharing, topology-aware placement, partial
admission, resource transformations and the `IgnoreUndeclared` quota check strategy.

Which version of Kueue's API the cluster serves is knowledge/kueue_kinds.py.

One module past 600 lines: Kueue's objects in both API versions and the quota tree built from
them are read together, as Kueue's own cache holds them.
"""

import re
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from enum import IntEnum
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import Kind, KubeObject
from truegreen.doctor.knowledge.kueue_kinds import V1BETA2, KueueKinds
from truegreen.doctor.knowledge.training import RAY_HEAD_GROUP
from truegreen.quantity import QuantityError, Resources, parse_quantity, scheduler_units

JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
"""The label Kueue puts on a job's Workload: the job's uid (pkg/controller/constants)."""


DEFAULT_QUEUE = "default"
"""The LocalQueue a job without a queue label is handed to when it is created, where one of
that name exists (pkg/controller/jobframework/defaults.go `ApplyDefaultLocalQueue`, stable since
v0.17, run by the `create` webhooks only: a stored job keeps the labels it was created with)."""


def still_to_create(kind: Kind, planned: bool) -> bool:
    """Kueue's create webhook is still to see the job: `--job-file`'s, or the Job a CronJob's
    next run creates. A CronJob is no Kueue integration (pkg/controller/jobs has none), so the
    Job webhook defaults each Job it makes as any other (jobframework/integrationmanager.go
    `IsOwnerManagedByKueueForObject`: only an owner Kueue manages stops it; Kueue's
    site/content/en/docs/tasks/run/run_cronjobs.md: the label may be left to the LocalQueue
    `default`). A stored job keeps the labels it was created with."""
    return planned or kind is Kind.CRON_JOB


DEFAULT_POD_SET = "main"
"""The name Kueue gives a batch Job's one pod set (apis/kueue/v1beta2/constants.go
`DefaultPodSetName`; pkg/controller/jobs/job/job_controller.go `PodSets`)."""
RAY_HEAD_POD_SET = "head"
"""The name Kueue gives a Ray cluster's head (pkg/controller/jobs/raycluster/
raycluster_controller.go and rayjob/rayjob_controller.go `headGroupPodSetName`)."""


def pod_set_reference(kind: Kind, name: str) -> str:
    """The name Kueue gives the job's pod set `name` in its Workload, as its messages say it:
    `main` for a batch Job (a CronJob's Job too), `head` for a Ray head, else the pod set's
    own name lower-cased (apis/kueue/v1beta2/workload_types.go `NewPodSetReference`: a
    JobSet's replicated jobs, a Kubeflow job's replica types, Ray's worker groups)."""
    if kind in (Kind.JOB, Kind.CRON_JOB):
        return DEFAULT_POD_SET
    if kind in (Kind.RAY_CLUSTER, Kind.RAY_JOB) and name == RAY_HEAD_GROUP:
        return RAY_HEAD_POD_SET
    return name.lower()


NO_STOP = "None"
"""The `stopPolicy` of a queue that admits (apis/kueue/v1beta2: None, Hold, HoldAndDrain)."""


HOLD_AND_DRAIN = "HoldAndDrain"
"""The `stopPolicy` that evicts admitted workloads too; `Hold` lets them run to completion."""


def stops(stop_policy: str, admitted: bool) -> bool:
    """The queue's `stopPolicy` keeps the workload from running: any stop holds back one not
    yet admitted; only HoldAndDrain evicts an admitted one (workload_controller.go
    `reconcileOnLocalQueueActiveState`, `reconcileOnClusterQueueActiveState`)."""
    return stop_policy != NO_STOP and (not admitted or stop_policy == HOLD_AND_DRAIN)


FlavorResource = tuple[str, str]
"""(flavor, resource): what one quota is of."""


def defaults_to_queue(kinds: KueueKinds) -> bool:
    """The served Kueue hands a job created without a queue label to the LocalQueue `default`:
    every release that serves v1beta2 (v0.15 on) does by default (pkg/features/kube_features.go
    `LocalQueueDefaulting`: beta and on since v0.12, GA and locked on since v0.17, no gate
    since v0.19; v0.15 and v0.16 could still turn it off). One that serves v1beta1 alone
    (v0.14 or older) may not: the feature is absent before v0.10 and off by default in v0.10
    and v0.11 (alpha), and doctor reads no release number."""
    return kinds is V1BETA2


class Condition(Struct, frozen=True):
    """A metav1.Condition as Kueue writes it."""

    status: str
    reason: str = ""
    message: str = ""


def condition_of(obj: Mapping[str, Any], kind: str) -> Condition | None:
    """The condition of `kind` on `obj`, if it has one."""
    found = o.condition(obj, kind)
    if found is None:
        return None
    return Condition(
        str(found.get("status") or ""),
        str(found.get("reason") or ""),
        str(found.get("message") or ""),
    )


class Quota(Struct, frozen=True):
    """One resource's quota in one flavor (`ResourceQuota`), in scheduler units."""

    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None


class ResourceGroup(Struct, frozen=True):
    """Resources that always take the same flavor, and the flavors to try, in order."""

    covered: tuple[str, ...]
    flavors: tuple[str, ...]


class QuotaNode(Struct, frozen=True):
    """A ClusterQueue or a Cohort as the quota tree holds it (resource_node.go)."""

    name: str
    parent: str = ""
    """The cohort it belongs to, "" for none."""
    quotas: Mapping[FlavorResource, Quota] = {}
    groups: tuple[ResourceGroup, ...] = ()
    reserved: Mapping[FlavorResource, int] = {}
    """A ClusterQueue's quota reserved by its workloads (`status.flavorsReservation`); a
    Cohort's usage is what its members use past their own quota."""


class ClusterQueue(Struct, frozen=True):
    """The parts of a ClusterQueue that decide admission."""

    node: QuotaNode
    stop_policy: str = NO_STOP
    active: Condition | None = None
    namespace_selector: Mapping[str, Any] | None = None
    """None admits no namespace (the API's default); `{}` admits every one."""
    admission_checks: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Each check's name and the flavors it applies to (none: all)."""
    when_can_borrow: str = "MayStopSearch"
    """`flavorFungibility.whenCanBorrow`. Its `whenCanPreempt` is not read: a flavor whose
    quota is in use is always passed over, as Kueue passes one with no preemption candidates."""
    preference: str = ""
    pending_head: tuple[tuple[str, str], ...] = ()
    """The first pending workloads (namespace, name), in order, where the queue reports them
    (v1beta1 `status.pendingWorkloadsStatus`)."""

    @property
    def name(self) -> str:
        """The ClusterQueue's name."""
        return self.node.name


class Flavor(Struct, frozen=True):
    """A ResourceFlavor: the machines its quota stands for."""

    name: str
    node_labels: Mapping[str, str] = {}
    node_taints: tuple[Mapping[str, Any], ...] = ()
    tolerations: tuple[Mapping[str, Any], ...] = ()


class LocalQueue(Struct, frozen=True):
    """A namespace's LocalQueue: the ClusterQueue it feeds."""

    name: str
    cluster_queue: str
    stop_policy: str = NO_STOP


class CheckState(Struct, frozen=True):
    """One admission check's state on a Workload (`status.admissionChecks`)."""

    name: str
    state: str
    message: str = ""

    @property
    def retried(self) -> bool:
        """The check said Retry: it does now, or it did until Kueue's eviction reset it to
        Pending (workload/evict/evict.go `resetChecksOnEviction`: "Reset to Pending after
        eviction. Previously: Retry", the same words since v0.9)."""
        return self.state == "Retry" or self.message.endswith("Previously: Retry")


class PodSetRequest(Struct, frozen=True):
    """One pod set as Kueue admits it: `count` pods of `requests` each, and its placement
    rules (`nodeSelector`, affinity, tolerations)."""

    name: str
    count: int
    requests: Resources
    spec: Mapping[str, Any] = {}


class Workload(Struct, frozen=True):
    """A Workload: Kueue's record of one job's admission."""

    name: str
    namespace: str
    queue: str
    owner_uids: frozenset[str]
    owner: str = ""
    """The name of the job it is for (its controller owner)."""
    job_uid: str = ""
    active: bool = True
    conditions: Mapping[str, Condition] = {}
    cluster_queue: str = ""
    """`status.admission.clusterQueue`: where its quota is reserved, "" while it is not."""
    usage: Mapping[FlavorResource, int] = {}
    """The quota its admission holds, per flavor and resource."""
    checks: tuple[CheckState, ...] = ()
    pod_sets: tuple[PodSetRequest, ...] = ()
    priority: int = 0
    requeue_at: datetime | None = None
    """`status.requeueState.requeueAt`: when an evicted workload's backoff ends and Kueue may
    queue it again."""
    requeue_count: int = 0
    """`status.requeueState.count`: how many times Kueue evicted it because its pods were not
    all ready in time (pkg/workload/workload.go `UpdateRequeueState` counts each; an admission
    check's retry sets `requeueAt` alone, `SetRequeueState(..., false)`)."""

    def holds(self, condition: str) -> bool:
        """The condition is there and True."""
        found = self.conditions.get(condition)
        return found is not None and found.status == "True"


def _amount(resource: str, value: object) -> int | None:
    try:
        return scheduler_units(resource, parse_quantity(str(value)))
    except QuantityError:
        return None


def _usage(entries: object) -> dict[FlavorResource, int]:
    """`flavorsReservation` / `flavorsUsage`: per flavor, each resource's `total`."""
    usage: dict[FlavorResource, int] = {}
    for flavor in (o.mapping(f) for f in o.sequence(entries)):
        for resource in (o.mapping(r) for r in o.sequence(flavor.get("resources"))):
            name = str(resource.get("name") or "")
            amount = _amount(name, resource.get("total", "0"))
            if amount:
                usage[(str(flavor.get("name") or ""), name)] = amount
    return usage


def _groups(
    spec: Mapping[str, Any],
) -> tuple[tuple[ResourceGroup, ...], dict[FlavorResource, Quota]]:
    groups = []
    quotas: dict[FlavorResource, Quota] = {}
    for group in (o.mapping(g) for g in o.sequence(spec.get("resourceGroups"))):
        flavors = []
        for flavor in (o.mapping(f) for f in o.sequence(group.get("flavors"))):
            flavor_name = str(flavor.get("name") or "")
            flavors.append(flavor_name)
            for resource in (o.mapping(r) for r in o.sequence(flavor.get("resources"))):
                name = str(resource.get("name") or "")
                borrowing = resource.get("borrowingLimit")
                lending = resource.get("lendingLimit")
                quotas[(flavor_name, name)] = Quota(
                    _amount(name, resource.get("nominalQuota", "0")) or 0,
                    None if borrowing is None else _amount(name, borrowing),
                    None if lending is None else _amount(name, lending),
                )
        covered = tuple(str(r) for r in o.sequence(group.get("coveredResources")))
        groups.append(ResourceGroup(covered, tuple(flavors)))
    return tuple(groups), quotas


def _stop_policy(spec: Mapping[str, Any]) -> str:
    return str(spec.get("stopPolicy") or NO_STOP)


def cluster_queue(obj: KubeObject) -> ClusterQueue:
    """A ClusterQueue of either version."""
    spec = o.mapping(obj.get("spec"))
    status = o.mapping(obj.get("status"))
    groups, quotas = _groups(spec)
    parent = spec.get("cohortName", spec.get("cohort"))
    checks: list[tuple[str, tuple[str, ...]]] = [
        (str(c), ()) for c in o.sequence(spec.get("admissionChecks"))
    ]
    strategy = o.mapping(spec.get("admissionChecksStrategy"))
    for rule in (o.mapping(r) for r in o.sequence(strategy.get("admissionChecks"))):
        on = tuple(str(f) for f in o.sequence(rule.get("onFlavors")))
        checks.append((str(rule.get("name") or ""), on))
    fungibility = o.mapping(spec.get("flavorFungibility"))
    head = o.mapping(status.get("pendingWorkloadsStatus")).get("clusterQueuePendingWorkload")
    selector = spec.get("namespaceSelector")
    return ClusterQueue(
        QuotaNode(
            o.name_of(obj),
            str(parent or ""),
            quotas,
            groups,
            _usage(status.get("flavorsReservation")),
        ),
        _stop_policy(spec),
        condition_of(obj, "Active"),
        o.mapping(selector) if isinstance(selector, Mapping) else None,
        tuple(checks),
        # v1beta1's `Borrow` is MayStopSearch's old name: anything but TryNextFlavor stops.
        str(fungibility.get("whenCanBorrow") or "MayStopSearch"),
        str(fungibility.get("preference") or ""),
        tuple(
            (str(o.mapping(w).get("namespace") or ""), str(o.mapping(w).get("name") or ""))
            for w in o.sequence(head)
        ),
    )


def cohort(obj: KubeObject) -> QuotaNode:
    """A Cohort object: its own quota and its parent cohort (`parentName`)."""
    spec = o.mapping(obj.get("spec"))
    groups, quotas = _groups(spec)
    return QuotaNode(o.name_of(obj), str(spec.get("parentName") or ""), quotas, groups)


def flavor(obj: KubeObject) -> Flavor:
    """A ResourceFlavor."""
    spec = o.mapping(obj.get("spec"))
    return Flavor(
        o.name_of(obj),
        {str(k): str(v) for k, v in o.mapping(spec.get("nodeLabels")).items()},
        tuple(o.mapping(t) for t in o.sequence(spec.get("nodeTaints"))),
        tuple(o.mapping(t) for t in o.sequence(spec.get("tolerations"))),
    )


def local_queue(obj: KubeObject) -> LocalQueue:
    """A LocalQueue."""
    spec = o.mapping(obj.get("spec"))
    return LocalQueue(o.name_of(obj), str(spec.get("clusterQueue") or ""), _stop_policy(spec))


PROVISIONING = "kueue.x-k8s.io/provisioning-request"
"""The controller of an admission check that asks the cluster autoscaler for machines
(apis/kueue/v1beta2 provisioningrequestconfig_types.go `ProvisioningRequestControllerName`)."""


MULTIKUEUE = "kueue.x-k8s.io/multikueue"
"""The controller of an admission check that runs the job on another cluster (MultiKueue)."""


def admission_check(obj: KubeObject) -> tuple[str, str]:
    """An AdmissionCheck's name and the controller that decides it (`spec.controllerName`)."""
    return o.name_of(obj), str(o.mapping(obj.get("spec")).get("controllerName") or "")


RequestsOf = Callable[[Mapping[str, Any]], Resources]
"""One pod's requests from its spec, as the API server would store the pod."""


def workload(obj: KubeObject, requests_of: RequestsOf) -> Workload:
    """A Workload of either version, each pod set's pod sized by `requests_of` (an amount that
    cannot be read counts as none)."""
    meta = o.mapping(obj.get("metadata"))
    spec = o.mapping(obj.get("spec"))
    status = o.mapping(obj.get("status"))
    admission = o.mapping(status.get("admission"))
    usage: dict[FlavorResource, int] = {}
    for assignment in (o.mapping(a) for a in o.sequence(admission.get("podSetAssignments"))):
        flavors = o.mapping(assignment.get("flavors"))
        for resource, quantity in o.mapping(assignment.get("resourceUsage")).items():
            amount = _amount(str(resource), quantity)
            key = (str(flavors.get(resource) or ""), str(resource))
            if amount:
                usage[key] = usage.get(key, 0) + amount
    conditions = {}
    for entry in (o.mapping(c) for c in o.sequence(status.get("conditions"))):
        kind = str(entry.get("type") or "")
        conditions[kind] = Condition(
            str(entry.get("status") or ""),
            str(entry.get("reason") or ""),
            str(entry.get("message") or ""),
        )
    checks = tuple(
        CheckState(str(c.get("name") or ""), str(c.get("state") or ""), str(c.get("message") or ""))
        for c in (o.mapping(x) for x in o.sequence(status.get("admissionChecks")))
    )
    sets = []
    for pod_set in (o.mapping(p) for p in o.sequence(spec.get("podSets"))):
        pod_spec = o.pod_spec(o.mapping(pod_set.get("template")))
        try:
            requests = requests_of(pod_spec)
        except QuantityError:
            requests = Resources()
        sets.append(
            PodSetRequest(
                str(pod_set.get("name") or ""), o.integer(pod_set.get("count")), requests, pod_spec
            )
        )
    references = [o.mapping(r) for r in o.sequence(meta.get("ownerReferences"))]
    owners = frozenset(str(r.get("uid") or "") for r in references)
    controller = next((r for r in references if r.get("controller") is True), None)
    owner = controller or (references[0] if references else {})
    return Workload(
        o.name_of(obj),
        o.namespace_of(obj),
        str(spec.get("queueName") or ""),
        owners - {""},
        str(owner.get("name") or ""),
        str(o.labels_of(obj).get(JOB_UID_LABEL) or ""),
        spec.get("active") is not False,
        conditions,
        str(admission.get("clusterQueue") or ""),
        usage,
        checks,
        tuple(sets),
        o.integer(spec.get("priority")),
        o.parse_time(o.mapping(status.get("requeueState")).get("requeueAt")),
        o.integer(o.mapping(status.get("requeueState")).get("count")),
    )


def workload_of(workloads: Iterable[Workload], uid: str) -> Workload | None:
    """The Workload Kueue made for the job of `uid`: owned by it, or carrying its uid in the
    `kueue.x-k8s.io/job-uid` label (pkg/controller/jobframework/reconciler.go)."""
    if not uid:
        return None
    for found in workloads:
        if uid in found.owner_uids or found.job_uid == uid:
            return found
    return None


class QuotaTree(Struct, frozen=True):
    """Every ClusterQueue and Cohort, linked by their parents."""

    queues: Mapping[str, QuotaNode]
    cohorts: Mapping[str, QuotaNode]
    """Cohorts by name: those with an object, and those only named by a member."""

    @classmethod
    def of(cls, queues: Iterable[ClusterQueue], cohorts: Iterable[QuotaNode]) -> "QuotaTree":
        """The tree of `queues`; a cohort a member names without an object has no quota."""
        by_name = {c.name: c for c in cohorts}
        nodes = {q.name: q.node for q in queues}
        for parent in [n.parent for n in [*nodes.values(), *by_name.values()] if n.parent]:
            by_name.setdefault(parent, QuotaNode(parent))
        return cls(nodes, by_name)

    def parent(self, node: QuotaNode) -> QuotaNode | None:
        """The cohort `node` belongs to."""
        return self.cohorts.get(node.parent) if node.parent else None

    def _children(self, cohort_node: QuotaNode) -> list[QuotaNode]:
        return [
            n
            for n in [*self.cohorts.values(), *self.queues.values()]
            if n.parent == cohort_node.name
        ]

    def _is_queue(self, node: QuotaNode) -> bool:
        return self.queues.get(node.name) is node

    def subtree_quota(self, node: QuotaNode, fr: FlavorResource, depth: int = 0) -> int:
        """The node's own quota, and what its children lend it (`SubtreeQuota`)."""
        own = node.quotas[fr].nominal if fr in node.quotas else 0
        if self._is_queue(node) or depth > _MAX_DEPTH:
            return own
        for child in self._children(node):
            own += self.subtree_quota(child, fr, depth + 1) - self.local_quota(child, fr, depth + 1)
        return own

    def local_quota(self, node: QuotaNode, fr: FlavorResource, depth: int = 0) -> int:
        """What a lending limit keeps from the cohort (`localQuota`)."""
        quota = node.quotas.get(fr)
        if quota is None or quota.lending_limit is None:
            return 0
        return max(0, self.subtree_quota(node, fr, depth) - quota.lending_limit)

    def usage(self, node: QuotaNode, fr: FlavorResource, depth: int = 0) -> int:
        """A queue's reserved quota; a cohort's members' use past their own (`Usage`)."""
        if self._is_queue(node) or depth > _MAX_DEPTH:
            return node.reserved.get(fr, 0)
        return sum(
            max(0, self.usage(c, fr, depth + 1) - self.local_quota(c, fr, depth + 1))
            for c in self._children(node)
        )

    def local_available(self, node: QuotaNode, fr: FlavorResource) -> int:
        """Quota kept at the node that it does not use (`LocalAvailable`)."""
        return max(0, self.local_quota(node, fr) - self.usage(node, fr))

    def _available(self, node: QuotaNode, fr: FlavorResource, depth: int = 0) -> int:
        parent = self.parent(node)
        if parent is None or depth > _MAX_DEPTH:
            return self.subtree_quota(node, fr) - self.usage(node, fr)
        from_parent = self._available(parent, fr, depth + 1)
        quota = node.quotas.get(fr)
        if quota is not None and quota.borrowing_limit is not None:
            kept = self.local_quota(node, fr)
            stored = self.subtree_quota(node, fr) - kept
            used = max(0, self.usage(node, fr) - kept)
            from_parent = min(stored - used + quota.borrowing_limit, from_parent)
        return self.local_available(node, fr) + from_parent

    def available(self, node: QuotaNode, fr: FlavorResource) -> int:
        """What a new workload may take now, borrowing included (`Available`, at least 0)."""
        return max(0, self._available(node, fr))

    def potential(self, node: QuotaNode, fr: FlavorResource, depth: int = 0) -> int:
        """The most the node could ever take, were nothing used (`potentialAvailable`)."""
        parent = self.parent(node)
        if parent is None or depth > _MAX_DEPTH:
            return self.subtree_quota(node, fr)
        most = self.local_quota(node, fr) + self.potential(parent, fr, depth + 1)
        quota = node.quotas.get(fr)
        if quota is not None and quota.borrowing_limit is not None:
            most = min(self.subtree_quota(node, fr) + quota.borrowing_limit, most)
        return most

    def borrows_with(self, node: QuotaNode, fr: FlavorResource, amount: int) -> bool:
        """Taking `amount` more goes past the queue's own quota (`BorrowingWith`)."""
        nominal = node.quotas[fr].nominal if fr in node.quotas else 0
        return self.parent(node) is not None and nominal < self.usage(node, fr) + amount


_MAX_DEPTH = 16
"""A cohort tree deeper than this is cut short: Kueue refuses a cycle (ErrCohortHasCycle)."""


class Said(IntEnum):
    """What a Workload's own conditions measured about its admission."""

    NOTHING = 0
    """No verdict yet (pending evaluation, or no condition)."""
    ADMITTED = 1
    CHECKS_PENDING = 2
    """Quota reserved; an admission check has not said Ready."""
    CHECK_REJECTED = 3
    WAITS_FOR_QUOTA = 4
    NEVER_FITS = 5
    DEACTIVATED = 6
    QUEUE_PROBLEM = 7
    """The queue is missing, stopped or inactive, or the job breaks a rule of admission such as
    a LimitRange (the reads of the queues say which where they can)."""
    WAITS = 8
    """Kueue waits on something it names: other work's pods to be ready, preemptions in
    flight, an admission gate."""
    OTHER = 9
    """A reason doctor has no rule for: Kueue's own words are the verdict."""
    EVICTED = 10
    """Quota reserved (or admitted) and Evicted: Kueue is stopping the job."""
    TOPOLOGY_REFUSED = 11
    """The job's topology can't place a pod set now, in the words Kueue before v0.19 writes
    with reason `Pending`: whether other work holds the room (since v0.19 `WaitingForQuota`)
    or no placement could ever hold it (`TopologyPlacementFailed`) those words don't say."""


_REQUEUED_EVICTIONS = frozenset({"Preempted", "NodeFailures"})
"""Evictions after which Kueue puts the workload back in its queue to wait its turn
(jobframework/reconciler.go `setRequeued`)."""


def requeued(found: Workload) -> bool:
    """Kueue evicts the workload to queue it again: preempted, or its machines failed."""
    evicted = found.conditions.get("Evicted")
    return evicted is not None and evicted.reason in _REQUEUED_EVICTIONS


PODS_READY_TIMEOUT = "PodsReadyTimeout"
"""The eviction of a workload whose pods were not all ready within Kueue's
`waitForPodsReady.timeout` (or, once running, `recoveryTimeout`): apis/kueue/v1beta2
workload_types.go `WorkloadEvictedByPodsReadyTimeout`."""


def timed_out(found: Workload) -> bool:
    """Kueue evicts the workload because its pods were not all ready in time, and queues it
    again once the backoff it wrote ends: a wait, not a refusal. workload_controller.go
    `reconcileNotReadyTimeout` evicts with this reason only while requeues remain: once
    `requeuingStrategy.backoffLimitCount` is reached, `triggerDeactivation` turns the workload
    off instead (`spec.active` false: Said.DEACTIVATED), and with no limit set it requeues
    endlessly (site/content/en/docs/tasks/manage/setup_wait_for_pods_ready.md, "Requeuing
    Strategy"). The eviction writes `status.requeueState` (`UpdateRequeueState`); once
    `requeueAt` passes, Requeued turns True (`BackoffFinished`) and the workload waits its turn."""
    evicted = found.conditions.get("Evicted")
    return evicted is not None and evicted.reason == PODS_READY_TIMEOUT


def check_retry(found: Workload) -> bool:
    """Kueue evicts the workload because an admission check said Retry, and queues it again
    once the check's backoff ends: a wait, not a refusal. workload_controller.go
    `reconcileCheckBasedEviction` evicts for a Retry check with reason `AdmissionCheck`; for a
    Rejected one it turns the workload off instead (`SetDeactivationTarget`; since v0.8), so
    an `AdmissionCheck` eviction beside a Rejected check (Kueue before v0.8 evicted for both)
    is no retry. The backoff: apis/kueue/v1beta2 admissioncheck_types.go `CheckStateRetry`
    ("back off ... and retry"), workload_controller.go "Waiting for backoff to finish" then
    `BackoffFinished`."""
    evicted = found.conditions.get("Evicted")
    return (
        evicted is not None
        and evicted.reason == "AdmissionCheck"
        and not any(c.state == "Rejected" for c in found.checks)
    )


_RETRIED_FAILURE = "Retrying after failure: "
"""How Kueue's ProvisioningRequest check words a retry after the request `Failed`, the
autoscaler's message after it (pkg/controller/admissionchecks/provisioning/controller.go:
`fmt.Sprintf("Retrying after failure: %s", …Failed.Message)`; its other retry, after a
booking expired, says "Retrying after booking expired: ")."""
_QUOTED_RETRIED_FAILURE = re.compile(r'"[^"]*" \(Retrying after failure: (?P<said>.*?)\)(?=; "|$)')
"""One check in Kueue's eviction words since v0.18: `"name" (message)`, joined by "; "
(workload_controller.go `buildAdmissionChecksMessage`)."""
_EVICTED_READ = 4096
"""Characters of an eviction's words read for a check's."""


def retry_failure(found: Workload) -> str:
    """The autoscaler's words where a ProvisioningRequest check retries after the request
    `Failed` ("it is impossible to obtain resources", cluster-autoscaler
    apis/provisioningrequest/autoscaling.x-k8s.io/v1 types.go): from the check in Retry, else
    as the eviction quotes it (evict.go `resetChecksOnEviction` overwrites the check's own
    words with "Reset to Pending after eviction"); "" where neither says (a booking that
    expired, or Kueue before v0.18: "At least one admission check is false")."""
    for check in found.checks:
        if check.state == "Retry" and check.message.startswith(_RETRIED_FAILURE):
            return check.message.removeprefix(_RETRIED_FAILURE)
    evicted = found.conditions.get("Evicted")
    # The message is the cluster's: read within a bound, as the checks' words are short.
    said = evicted.message[:_EVICTED_READ] if evicted is not None else ""
    quoted = _QUOTED_RETRIED_FAILURE.search(said)
    return quoted["said"] if quoted is not None else ""


_NEVER_REASONS = frozenset({"NoMatchingFlavor", "ExceedsMaxQuota", "TopologyPlacementFailed"})


_QUEUE_REASONS = frozenset({"Misconfigured", "Suspended"})


_WAIT_REASONS = frozenset(
    {"WaitingForPodsReady", "Waiting", "WaitingForPreemptedWorkloads", "AdmissionGated"}
)
"""scheduler.go (`WaitingForPodsReady`, `Waiting` without the UnadmittedWorkloadsObservability
gate, on by default since v0.19; `WaitingForPreemptedWorkloads`) and workload_controller.go
(`AdmissionGated`, the `kueue.x-k8s.io/admission-gated-by` annotation)."""


_NO_VERDICT_REASONS = frozenset({"", "PendingEvaluation", "Pending"})
"""Not evaluated yet (`PendingEvaluation`), or the reason of every wait without the
UnadmittedWorkloadsObservability gate (`Pending`), whose message is read instead."""


_NEVER_WORDS = (
    "> maximum capacity",
    "unavailable in ClusterQueue",
    "doesn't match node affinity",
    "untolerated taint",
)


_WAITS_WORDS = "insufficient unused quota"
_POD_SET_PART = re.compile(r"; (?=couldn't assign flavors to pod set )")
"""Where flavorassigner.go `Assignment.Message` joins the pod sets that do not fit."""
_ASSIGNER_WORDS = ("couldn't assign flavors to pod set ", "failed to assign flavors to pod set ")
"""How flavorassigner.go `Assignment.Message` begins: a pod set that does not fit, or one
whose assignment failed with an error (the same words since v0.9)."""
_TOPOLOGY_WORDS = re.compile(r'topology "[^"]*" (?:doesn\'t allow to fit|allows to fit only)')
"""A pod set the topology can't place (cache/scheduler/tas_flavor_snapshot.go `notFitMessage`
and `multiLayerNotFitMessage`, the same words since v0.9), which flavorassigner.go
`assignFlavors` adds to the pod set's reasons (`psAssignment.reason(failure.Reason)`)."""
_PREEMPTING = (". Pending the preemption of ", ". Preempting ")
"""What scheduler.go `markPreemptionOutcome` adds to the message once it has asked other work
to make room: preemptions in flight, or ones that failed and are tried again."""


def _said_by_pod_sets(message: str) -> Said | None:
    """A flavor assigner's message, pod set by pod set. Topology words come first:
    `assignFlavors` asks the topology only once every pod set fits its quota, so the quota
    words beside them are of flavors passed over; where Kueue has asked other work to make
    that room, the job waits for it. Else one pod set that can never fit makes the job never
    fit (`assignFlavors` stops at it); else one whose quota is in use waits for quota.
    Within a pod set, `insufficient unused quota` wins: some flavor would take it once free
    (its best flavor's mode is the pod set's)."""
    if message.startswith(_ASSIGNER_WORDS) and _TOPOLOGY_WORDS.search(message):
        return Said.WAITS if any(p in message for p in _PREEMPTING) else Said.TOPOLOGY_REFUSED
    for part in _POD_SET_PART.split(message):
        if (
            part.startswith("couldn't assign flavors")
            and _WAITS_WORDS not in part
            and any(w in part for w in _NEVER_WORDS)
        ):
            return Said.NEVER_FITS
    return Said.WAITS_FOR_QUOTA if _WAITS_WORDS in message else None


def _held_out(found: Workload) -> bool:
    """Kueue keeps the evicted workload out of its queue: Requeued False, written by the
    eviction for every reason but Preempted and NodeFailures (jobframework/reconciler.go
    "handle eviction"), until its backoff ends (workload_controller.go `BackoffFinished`);
    the queue takes none with Requeued False (cluster_queue.go `backoffWaitingTimeExpired`)."""
    requeued_condition = found.conditions.get("Requeued")
    return requeued_condition is not None and requeued_condition.status == "False"


def said(found: Workload) -> Said:
    """What the Workload's conditions say, measured: Kueue's granular QuotaReserved reasons
    (apis/kueue/v1beta2 workload_types.go `WorkloadQuotaReservedReason*`), and in older
    releases the reasons `Pending` and `Inadmissible`, read by their messages
    (flavorassigner.go `Message`, workload_controller.go `getQueueBlocker`). A reason with no
    rule here is OTHER, never NOTHING, and so is a flavor assigner's refusal whose words no
    rule here reads: Kueue's word is not overruled by arithmetic."""
    if not found.active:
        return Said.DEACTIVATED
    if found.holds("Evicted") and (found.holds("QuotaReserved") or _held_out(found)):
        # Evicted stays True until the next reservation resets it (workload.go
        # `SetQuotaReservation`): with quota still reserved, the eviction is under way; once
        # cleared, Requeued False keeps the workload out of its queue.
        return Said.EVICTED
    if found.holds("Admitted"):
        return Said.ADMITTED
    if found.holds("QuotaReserved"):
        if any(c.state == "Rejected" for c in found.checks):
            return Said.CHECK_REJECTED
        return Said.CHECKS_PENDING
    reserved = found.conditions.get("QuotaReserved")
    if reserved is None:
        return Said.NOTHING
    if reserved.reason in _NEVER_REASONS:
        return Said.NEVER_FITS
    if reserved.reason in _QUEUE_REASONS:
        return Said.QUEUE_PROBLEM
    if reserved.reason == "WaitingForQuota":
        return Said.WAITS_FOR_QUOTA
    by_message = _said_by_pod_sets(reserved.message)
    if by_message is not None:
        return by_message
    if reserved.reason == "Inadmissible":
        return Said.QUEUE_PROBLEM
    if reserved.reason in _WAIT_REASONS:
        return Said.WAITS
    if reserved.reason in _NO_VERDICT_REASONS and not reserved.message.startswith(_ASSIGNER_WORDS):
        return Said.NOTHING
    # The flavor assigner's refusal in words no rule here reads (before v0.19 with reason
    # `Pending`, scheduler.go `requeueAndUpdate`) is Kueue's verdict all the same.
    return Said.OTHER


def namespace_allowed(queue: ClusterQueue, labels: Mapping[str, str]) -> bool:
    """The ClusterQueue takes work from a namespace with these labels (a null selector takes
    none: apis/kueue/v1beta2 `namespaceSelector`)."""
    selector = queue.namespace_selector
    if selector is None:
        return False
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        return True  # `{}` selects everything (metav1.LabelSelectorAsSelector)
    return o.selector_matches(selector, labels)


def holders(
    workloads: Iterable[Workload], queue: str, short: Mapping[FlavorResource, int]
) -> list[tuple[Workload, int]]:
    """The admitted workloads of `queue` that hold the quota the job lacks, the largest first,
    each with how much of it they hold."""
    held = []
    for found in workloads:
        if found.cluster_queue != queue or not found.holds("QuotaReserved"):
            continue
        amount = sum(found.usage.get(fr, 0) for fr in short)
        if amount:
            held.append((found, amount))
    return sorted(held, key=lambda h: (-h[1], h[0].name))
