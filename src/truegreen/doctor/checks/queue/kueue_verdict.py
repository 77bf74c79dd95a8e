"""Queue: what Kueue says, or would say, about the judged training job.

A job handed to Kueue (the `kueue.x-k8s.io/queue-name` label, or for a job not yet created the
namespace's LocalQueue `default`) stays suspended until its ClusterQueue admits it. What the
Workload's own conditions say is measured and wins; before Kueue has said anything, doctor
assigns flavors as Kueue does (doctor/knowledge/kueue.py) and says so (basis inferred).
"""

from collections.abc import Mapping, Sequence
from typing import Any

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Kind, KubeObject, Listed, ListRead, ReadFailure
from truegreen.doctor.checks.autoscaler_refusals import plain_refusal
from truegreen.doctor.checks.base import format_age
from truegreen.doctor.checks.queue import flavor_assigner as fa
from truegreen.doctor.checks.queue.words import (
    ADMITTED,
    CHECK_PENDING,
    CHECK_REJECTED,
    DEACTIVATED,
    DEFAULT_UNCONFIRMED,
    FITS,
    FITS_BORROWING,
    HELD,
    INACTIVE,
    KUEUE_REPORTED,
    MISSING,
    NEVER_FITS,
    NONE_NAMED,
    NOT_ALLOWED,
    NOT_TAKEN,
    SAY,
    STOPPED,
    not_used,
)
from truegreen.doctor.environment import Environment, QueueReads
from truegreen.doctor.findings import Basis, Finding, Status
from truegreen.doctor.knowledge import kueue as k
from truegreen.doctor.knowledge.fit import pod_requests
from truegreen.doctor.knowledge.reports import quoted
from truegreen.doctor.knowledge.stored_pod import limit_items
from truegreen.doctor.knowledge.training import TrainingJob
from truegreen.quantity import QuantityError, Resources, format_amount

_INACTIVE_WORDS = {
    "FlavorNotFound": "a machine type it offers doesn't exist",
    "AdmissionCheckNotFound": "a start check it needs doesn't exist",
    "AdmissionCheckInactive": "a start check it needs is not ready",
    "TopologyNotFound": "the placement layout it names doesn't exist",
    "Terminating": "it is being deleted",
}
"""Plain words for a ClusterQueue's `Active` False reasons (apis/kueue/v1beta1
clusterqueue_types.go `ClusterQueueActiveReason*`)."""


def kueue_findings(env: Environment, job: TrainingJob, reads: QueueReads) -> list[Finding]:
    """What Kueue says, or would say, about the judged job, then the other jobs held for a
    LocalQueue that does not exist."""
    return [_judged(env, job, reads), *_others_without_a_queue(env, job, reads)]


def _others_without_a_queue(
    env: Environment, judged: TrainingJob, reads: QueueReads
) -> list[Finding]:
    """The other unfinished jobs held for a LocalQueue that does not exist: they never start
    either (only the judged job's queue is judged further)."""
    if not isinstance(reads.local_queues, Listed):
        return []
    names = {o.name_of(q) for q in reads.local_queues.items}
    return [
        SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            MISSING,
            details=(f"{job.ref}: LocalQueue {job.queue} doesn't exist in {env.namespace}",),
            objects=(job.ref,),
            job=f"'{job.name}'",
            queue=job.queue,
            command=env.settings.kubectl.here("get", "localqueues"),
        )
        for job in env.work().jobs
        if job is not judged
        and job.queue
        and job.suspended
        and not job.finished
        and not job.managed_by
        and job.queue not in names
    ]


def _listed(read: ListRead | None) -> tuple[KubeObject, ...]:
    return read.items if isinstance(read, Listed) else ()


def _unread(env: Environment, reads: QueueReads, job: TrainingJob, cohorts: bool) -> Finding | None:
    """An unknown for the first Kueue read the verdict needs that could not be made."""
    kinds = reads.kinds
    needed: list[tuple[Kind, ListRead | None]] = [
        (kinds.cluster_queue, reads.cluster_queues),
        (kinds.resource_flavor, reads.flavors),
        (kinds.workload, reads.workloads),
    ]
    if cohorts:
        needed.append((kinds.cohort, reads.cohorts))
    for kind, read in needed:
        # Cohort objects are served since Kueue v0.11: a 404 is a release without them.
        if isinstance(read, CantRead) and not (kind is kinds.cohort and read.is_measurement):
            return SAY.cant_check(env, kind, read, job.ref)
    return None


def _judged(env: Environment, job: TrainingJob, reads: QueueReads) -> Finding:
    kubectl = env.settings.kubectl
    if isinstance(reads.local_queues, CantRead):
        return SAY.cant_check(env, reads.kinds.local_queue, reads.local_queues, job.ref)
    local = {q.name: q for q in map(k.local_queue, reads.local_queues.items)}
    workloads = [k.workload(w, _sizer(env)) for w in _listed(reads.workloads)]
    planned = job is env.work().planned
    own = k.workload_of(workloads, job.uid) if not planned else None
    # The LocalQueue `default` is applied when a job is created (Kueue's webhook sets the
    # label): a job still to be created gets it (a `--job-file` job, a CronJob's next Job); a
    # stored job without the label was created without it, and Kueue ignores it.
    defaulted = not job.queue and k.DEFAULT_QUEUE in local and k.still_to_create(job.kind, planned)
    if defaulted and not k.defaults_to_queue(reads.kinds):
        return _default_unconfirmed(env, job)
    name = job.queue or (k.DEFAULT_QUEUE if defaulted else "")
    fields: dict[str, Any] = {"job": f"'{job.name}'", "queue": name}
    if not name:
        if own is not None and not job.finished:
            # Kueue holds it without a queue (its `manageJobsWithoutQueueName`): never admitted.
            return SAY.finding(
                Status.FAIL,
                Basis.MEASURED,
                NONE_NAMED,
                details=(f"{job.ref} names no queue; Workload {own.name} holds it suspended",),
                objects=(job.ref,),
                **fields,
                command=kubectl.here("get", "localqueues"),
            )
        if k.DEFAULT_QUEUE in local:
            return not_used(
                f"{job.ref} names no queue; the LocalQueue '{k.DEFAULT_QUEUE}' takes only jobs "
                "created after it, when they are created"
            )
        return not_used(f"{job.ref} names no queue and there is no LocalQueue 'default'")
    admitted = (
        own is not None
        and not job.finished
        and not own.holds("Finished")
        and k.said(own) is k.Said.ADMITTED
    )
    queue = local.get(name)
    if queue is None and own is not None and admitted:
        # Kueue judges a missing LocalQueue only for work without a reservation
        # (workload_controller.go reconcileOnLocalQueueActiveState): admitted work runs on.
        gone = (
            f"LocalQueue {name} doesn't exist in {env.namespace}: Kueue lets admitted work run on"
        )
        return _admitted(own, job, fields, gone)
    if queue is None:
        return SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            MISSING,
            details=(f"{job.ref}: LocalQueue {name} doesn't exist in {env.namespace}",),
            objects=(job.ref,),
            **fields,
            command=kubectl.here("get", "localqueues"),
        )
    fields["cluster_queue"] = queue.cluster_queue
    if k.stops(queue.stop_policy, admitted):
        patch = '{"spec":{"stopPolicy":"None"}}'
        return SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            STOPPED,
            details=(f"LocalQueue {name}: stopPolicy {queue.stop_policy}",),
            objects=(f"LocalQueue/{name}", job.ref),
            **fields,
            why="it was stopped",
            todo="If nobody stopped it on purpose, start it again with "
            + kubectl.here("patch", "localqueue", name, "--type=merge", "-p", patch),
        )
    unread = _unread(env, reads, job, cohorts=False)
    if unread is not None:
        return unread
    queues = {q.name: q for q in map(k.cluster_queue, _listed(reads.cluster_queues))}
    shared = queues.get(queue.cluster_queue)
    describe = kubectl.cluster("describe", "clusterqueue", queue.cluster_queue)
    fields["command"] = describe
    if own is not None and admitted and not (shared and k.stops(shared.stop_policy, True)):
        # Kueue evicts an admitted Workload only for HoldAndDrain: a held, inactive or missing
        # ClusterQueue stops new admissions and lets this one run to completion.
        return _admitted(own, job, fields)
    if shared is None:
        return SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            INACTIVE,
            details=(f"LocalQueue {name} points at ClusterQueue {queue.cluster_queue}, absent",),
            objects=(f"LocalQueue/{name}", job.ref),
            **fields,
            why=f"the shared queue '{queue.cluster_queue}' it feeds doesn't exist",
            command=kubectl.cluster("get", "clusterqueues"),
        )
    blocked = _shared_queue_blocked(env, job, name, shared, fields)
    if blocked is not None:
        return blocked
    if shared.node.parent:
        unread = _unread(env, reads, job, cohorts=True)
        if unread is not None:
            return unread
    said = _said(env, job, own, reads, fields)
    if said is not None:
        return said
    found = _arithmetic(env, job, reads, own, workloads, shared, queues, fields)
    if found.status in (Status.FAIL, Status.UNKNOWN) or own is not None:
        return found
    return _not_taken(env, job, planned, fields, found) or found


_KUEUE_SETTINGS = ("kueue-system", "kueue-manager-config")
"""Where Kueue's Configuration lives as it comes: config/default/kustomization.yaml
(`namespace: kueue-system`, `namePrefix: kueue-`, the `manager-config` ConfigMap) and the
Helm chart (`<fullname>-manager-config`). doctor does not read it."""


def _not_taken(
    env: Environment,
    job: TrainingJob,
    planned: bool,
    fields: Mapping[str, Any],
    would: Finding,
) -> Finding | None:
    """An unknown in place of `would` (the queue's room, which says the job fits or waits)
    where Kueue has not taken the stored job up: it names a queue and is suspended, yet past
    the pending grace no Workload is its. Kueue's reconciler makes one within seconds for
    every job it manages (jobframework/reconciler.go `ReconcileGenericJob`), but ignores a
    job whose namespace its `managedJobsNamespaceSelector` does not match, queue label or
    not ("Namespace not opted in for Kueue management"; pkg/features/kube_features.go
    `ManagedJobsNamespaceSelectorAlwaysRespected`: alpha v0.13, beta and on since v0.15, GA
    and locked since v0.19), while its job webhook still suspends one with the label
    (jobframework/utils.go `WorkloadShouldBeSuspended`): the job waits forever. The selector,
    like `integrations.frameworks`, is in Kueue's Configuration, which doctor does not read,
    so it can't tell; a job still to be created has no Workload yet and is not judged so."""
    if (
        k.still_to_create(job.kind, planned)
        or not job.queue
        or not job.suspended
        or job.finished
        or job.managed_by
        or job.created is None
        or env.now - job.created <= env.settings.pending_grace
    ):
        return None
    namespace, config = _KUEUE_SETTINGS
    return SAY.finding(
        Status.UNKNOWN,
        Basis.CANT_CHECK,
        NOT_TAKEN,
        details=(
            f"{job.ref} names LocalQueue {job.queue} and is suspended; no Workload is owned by "
            f"it or labelled {k.JOB_UID_LABEL}={job.uid}",
            "Kueue ignores a job whose namespace its managedJobsNamespaceSelector does not "
            "match, queue label or not (v0.15 on), and one whose kind its "
            "integrations.frameworks leave out; doctor does not read its Configuration",
            f"were Kueue to take it up: {would.code}",
            *would.details,
        ),
        objects=(job.ref,),
        **{
            **fields,
            "age": format_age(env.now - job.created),
            "command": env.settings.kubectl.elsewhere(
                namespace, "get", "configmap", config, "-o", "yaml"
            ),
        },
    )


def _default_unconfirmed(env: Environment, job: TrainingJob) -> Finding:
    """A job still to be created names no queue and the LocalQueue `default` exists, but the
    Kueue served (v1beta1 alone: v0.14 or older) may not hand it there: unknown, never
    `queue.not-used` (knowledge/kueue.py `defaults_to_queue`)."""
    cron = job.kind is Kind.CRON_JOB
    return SAY.finding(
        Status.UNKNOWN,
        Basis.CANT_CHECK,
        DEFAULT_UNCONFIRMED,
        details=(
            f"{job.ref} names no queue and LocalQueue {k.DEFAULT_QUEUE} exists in {env.namespace}",
            "kueue.x-k8s.io is served at v1beta1 alone (Kueue v0.14 or older): its "
            "LocalQueueDefaulting feature is off by default before v0.12",
        ),
        objects=(job.ref, f"LocalQueue/{k.DEFAULT_QUEUE}"),
        job=f"'{job.name}'",
        where="the settings of the jobs it starts (`spec.jobTemplate.metadata.labels`)"
        if cron
        else "its settings",
        command=env.settings.kubectl.here("get", "localqueues"),
    )


def _shared_queue_blocked(
    env: Environment,
    job: TrainingJob,
    name: str,
    shared: k.ClusterQueue,
    fields: Mapping[str, Any],
) -> Finding | None:
    """The ClusterQueue is stopped, inactive, or closed to this namespace."""
    objects = (f"ClusterQueue/{shared.name}", f"LocalQueue/{name}", job.ref)
    if shared.stop_policy != k.NO_STOP:
        return SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            STOPPED,
            details=(f"ClusterQueue {shared.name}: stopPolicy {shared.stop_policy}",),
            objects=objects,
            **fields,
            why=f"the shared queue '{shared.name}' it feeds is stopped",
            todo=f"Ask your cluster admin to start the shared queue '{shared.name}' again "
            f"({fields['command']} shows it)",
        )
    active = shared.active
    if active is not None and active.status == "False":
        return SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            INACTIVE,
            details=(f"ClusterQueue {shared.name} Active=False {active.reason}: {active.message}",),
            objects=objects,
            **fields,
            why=f"the shared queue '{shared.name}' it feeds is not active: "
            + _inactive_words(active),
        )
    labels = env.namespace_labels()
    if labels is None and isinstance(env.namespace_object, CantRead):
        return SAY.cant_check(env, Kind.NAMESPACE, env.namespace_object, job.ref)
    if not k.namespace_allowed(shared, labels or {}):
        return SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            NOT_ALLOWED,
            details=(
                f"ClusterQueue {shared.name} namespaceSelector "
                f"{_selector_text(shared.namespace_selector)} does not match namespace "
                f"{env.namespace}",
            ),
            objects=objects,
            **fields,
        )
    return None


def _inactive_words(active: k.Condition) -> str:
    """Why the ClusterQueue is not active: plain words for a reason doctor has a rule for,
    else Kueue's reason and message quoted (cache/scheduler/clusterqueue.go `inactiveReason`
    also writes MultipleMultiKueueAdmissionChecks, MultiKueueAdmissionCheckAppliedPerFlavor,
    MultiKueueWithProvisioningRequest and Unknown, each with "Can't admit new workloads: …")."""
    plain = _INACTIVE_WORDS.get(active.reason)
    if plain is not None:
        return plain
    reason = quoted(active.reason) or "(no reason)"
    message = quoted(active.message).rstrip(".") or "(no message)"
    return f"Kueue says “{reason}: {message}”"


def _selector_text(selector: Mapping[str, Any] | None) -> str:
    return "null (no namespace)" if selector is None else str(dict(selector))


_TOPOLOGY_TODO = (
    "Free or add machines in the placement layout Kueue names, or ask for fewer or smaller "
    "programs (Kueue's words here don't say whether other work holds the room or the layout "
    "can never hold the job)"
)
"""The remedy where the job's topology can't place it, in Kueue's words before v0.19."""


_CONTROLLER_WORDS = {
    k.PROVISIONING: ", which asks the cluster for machines for it",
    k.MULTIKUEUE: ", which hands it to another cluster",
}
"""What an admission check does, by its controller, in plain words."""


def _said(
    env: Environment,
    job: TrainingJob,
    own: k.Workload | None,
    reads: QueueReads,
    fields: Mapping[str, Any],
) -> Finding | None:
    """What the job's own Workload measured: admitted, turned off, waiting for a check, a
    refusal the queue reads found no blocker for, or a reason doctor has no rule for (both
    quoted); None where it has not said (or says what the arithmetic explains: a wait,
    never)."""
    if own is None or job.finished or own.holds("Finished"):
        return None
    state = k.said(own)
    objects = (f"Workload/{own.name}", job.ref)
    details = _conditions(own)
    if state is k.Said.DEACTIVATED:
        evicted = own.conditions.get("Evicted")
        message = (evicted.message if evicted is not None else "") or "it was turned off"
        patch = '{"spec":{"active":true}}'
        return SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            DEACTIVATED,
            details=details,
            objects=objects,
            **{
                **fields,
                "message": message.rstrip("."),
                "command": env.settings.kubectl.here(
                    "patch", "workload", own.name, "--type=merge", "-p", patch
                ),
            },
        )
    if state is k.Said.ADMITTED:
        return _admitted(own, job, fields)
    if state is k.Said.EVICTED and k.requeued(own):
        todo = "Nothing to do: Kueue puts it back in the queue, where it waits its turn again"
        return _reported(env, job, own, fields, Status.WARN, todo, "Evicted")
    if state is k.Said.EVICTED and k.check_retry(own):
        return _check_retry(env, job, own, reads, fields)
    if state is k.Said.EVICTED and k.timed_out(own):
        return _timed_out(env, job, own, fields)
    if state is k.Said.EVICTED:
        todo = "Fix what Kueue names" + _back_in_queue(env, own)
        return _reported(env, job, own, fields, Status.FAIL, todo, "Evicted")
    if state is k.Said.WAITS:
        todo = "Nothing to do while Kueue waits for what it names"
        return _reported(env, job, own, fields, Status.WARN, todo)
    if state is k.Said.QUEUE_PROBLEM:
        # The reads of the queues found no blocker of their own: Kueue's refusal stands
        # (workload_controller.go also writes `ValidateAdmissibility`'s errors, a LimitRange).
        return _reported(env, job, own, fields, Status.FAIL, "Fix what Kueue names")
    if state is k.Said.TOPOLOGY_REFUSED:
        # Kueue before v0.19 writes the same words whether other work holds the room or no
        # placement could ever hold the job (flavorassigner.go `assignFlavors`: the
        # `WithSimulateEmpty` pass changes only the mode): a refusal either way, never a fit.
        return _reported(env, job, own, fields, Status.FAIL, _TOPOLOGY_TODO)
    if state is k.Said.OTHER:
        todo = "Fix what Kueue names; doctor has no plainer words for this one"
        return _reported(env, job, own, fields, Status.FAIL, todo)
    if state in (k.Said.CHECK_REJECTED, k.Said.CHECKS_PENDING):
        wanted = "Rejected" if state is k.Said.CHECK_REJECTED else ""
        waiting = [c for c in own.checks if (c.state == wanted if wanted else c.state != "Ready")]
        first = waiting[0] if waiting else k.CheckState("(unnamed)", "Pending")
        code = CHECK_REJECTED if wanted else CHECK_PENDING
        controllers = dict(map(k.admission_check, _listed(reads.admission_checks)))
        unread = (
            [f"admission checks not read: {reads.admission_checks.reason}"]
            if isinstance(reads.admission_checks, CantRead)
            else []
        )
        return SAY.finding(
            Status.FAIL if wanted else Status.WARN,
            Basis.MEASURED,
            code,
            details=(
                *details,
                *(
                    f"admission check {c.name} ({controllers.get(c.name, 'controller unknown')}): "
                    f"{c.state} {c.message}"
                    for c in own.checks
                ),
                *unread,
            ),
            objects=objects,
            **{
                **fields,
                "step": first.name,
                "does": _CONTROLLER_WORDS.get(controllers.get(first.name, ""), ""),
                "message": (first.message or f"it is {first.state.lower()}").rstrip("."),
                "command": env.settings.kubectl.here("describe", "workload", own.name),
            },
        )
    return None


def _check_retry(
    env: Environment,
    job: TrainingJob,
    own: k.Workload,
    reads: QueueReads,
    fields: Mapping[str, Any],
) -> Finding:
    """Kueue took the job out of line because a start check said Retry: it waits out the
    check's backoff and is queued again (a check that gives up says Rejected, and Kueue turns
    the job off). Kueue's eviction words are quoted: since v0.18 they carry each check's own
    message (workload_controller.go `buildAdmissionChecksMessage`). Where those words are
    the autoscaler's reason it could add no machine, and a rule names it, the retry is no
    wait but that measured failure (`_refused`)."""
    controllers = dict(map(k.admission_check, _listed(reads.admission_checks)))
    retried = next((c for c in own.checks if c.retried), None)
    checks = tuple(
        f"admission check {c.name} ({controllers.get(c.name, 'controller unknown')}): "
        f"{c.state} {c.message}"
        for c in own.checks
    )
    wait = _requeue_wait(env, own)
    when = f"in {wait}" if wait else "shortly"
    refused = _refused(own, retried)
    if refused is not None:
        todo = f"{refused}; Kueue tries again {when}, and turns the job off after its last try"
        return _reported(env, job, own, fields, Status.FAIL, todo, "Evicted", checks)
    step = "a start check"
    if retried is not None:
        does = _CONTROLLER_WORDS.get(controllers.get(retried.name, ""), "")
        step = f"the start check '{retried.name}'{does}{',' if does else ''}"
    todo = (
        f"Nothing to do: {step} asked to try again later, and Kueue puts the job back in the "
        f"queue {when}"
    )
    return _reported(env, job, own, fields, Status.WARN, todo, "Evicted", checks)


def _timed_out(
    env: Environment, job: TrainingJob, own: k.Workload, fields: Mapping[str, Any]
) -> Finding:
    """Kueue stopped the job because its pods were not all ready in time, and queues it again
    once its backoff ends (knowledge/kueue.py `timed_out`): a wait in Kueue's words, with how
    many times it has timed out; past the limit Kueue's settings may set, the Workload is
    turned off, which is `queue.deactivated`."""
    wait = _requeue_wait(env, own)
    when = f"in {wait}" if wait else "shortly"
    tries = f" (it has timed out {own.requeue_count} times)" if own.requeue_count > 1 else ""
    todo = (
        "Nothing to do for now: not all of its programs were running within the time Kueue "
        f"allows, so Kueue stopped it and puts it back in the queue {when}{tries}; if that "
        "keeps happening, find out why its programs don't start (Kueue may turn the job off "
        "after a set number of tries)"
    )
    return _reported(env, job, own, fields, Status.WARN, todo, "Evicted")


def _refused(own: k.Workload, retried: k.CheckState | None) -> str | None:
    """The remedy, and why, where a ProvisioningRequest check retries after the autoscaler
    said why it could add no machine, in words a rule names (the words that on a pod are
    capacity's no-machine-can-be-added); None otherwise. Kueue's Retry is a mechanism, not a
    verdict: provisioning/controller.go retries while `attempt <= backoffLimitCount`, then
    writes Rejected, and with the cause unchanged every try fails the same way."""
    said = k.retry_failure(own)
    refusal = plain_refusal(said) if said else None
    if refusal is None:
        return None
    step = f"the start check '{retried.name}'" if retried is not None else "a start check"
    return f"{refusal.todo} ({step} could not get machines for it: {refusal.why})"


def _requeue_wait(env: Environment, own: k.Workload) -> str:
    """How long until Kueue queues the evicted job again: the end of the backoff it wrote
    (`status.requeueState.requeueAt`; workload_controller.go "Waiting for backoff to
    finish"); "" where that is past or not written."""
    if own.requeue_at is None or own.requeue_at <= env.now:
        return ""
    return format_age(own.requeue_at - env.now)


def _back_in_queue(env: Environment, own: k.Workload) -> str:
    """When Kueue queues the evicted job again, as the end of a remedy."""
    wait = _requeue_wait(env, own)
    return f"; Kueue puts it back in the queue in {wait}" if wait else ""


def _reported(
    env: Environment,
    job: TrainingJob,
    own: k.Workload,
    fields: Mapping[str, Any],
    status: Status,
    todo: str,
    condition: str = "QuotaReserved",
    more: Sequence[str] = (),
) -> Finding:
    """Kueue's own reason for holding the job (its `condition`: not reserving quota, or
    evicting it), quoted as it wrote it: no arithmetic of doctor's speaks over it (`more`:
    further details)."""
    reserved = own.conditions.get(condition) or k.Condition("False")
    return SAY.finding(
        status,
        Basis.MEASURED,
        KUEUE_REPORTED,
        details=(*_conditions(own), *more),
        objects=(f"Workload/{own.name}", job.ref),
        **{
            **fields,
            "reason": quoted(reserved.reason) or "(no reason)",
            "message": quoted(reserved.message).rstrip(".") or "(no message)",
            "todo": todo,
            "command": env.settings.kubectl.here("describe", "workload", own.name),
        },
    )


def _admitted(own: k.Workload, job: TrainingJob, fields: Mapping[str, Any], *notes: str) -> Finding:
    """Kueue admitted the job: measured (`notes`: what of the queues' state it runs despite)."""
    objects = (f"Workload/{own.name}", job.ref)
    details = (*_conditions(own), *notes)
    return SAY.finding(
        Status.OK, Basis.MEASURED, ADMITTED, details=details, objects=objects, **fields
    )


def _conditions(own: k.Workload) -> tuple[str, ...]:
    backoff = (
        (f"Workload {own.name} requeueAt {own.requeue_at.isoformat()}",)
        if own.requeue_at is not None
        else ()
    )
    return (
        *(
            f"Workload {own.name} {kind}={c.status} {c.reason}: {c.message}".rstrip(": ")
            for kind, c in own.conditions.items()
        ),
        *backoff,
    )


def _sizer(env: Environment) -> k.RequestsOf:
    limit_ranges = _listed(env.limit_ranges)

    def requests(spec: Mapping[str, Any]) -> Resources:
        return pod_requests(kueue_sized(spec, limit_ranges))

    return requests


def kueue_sized(spec: Mapping[str, Any], limit_ranges: Sequence[KubeObject]) -> dict[str, Any]:
    """A pod set as Kueue sizes it for its quota: the LimitRange container defaults first
    (the first to name one wins), then limits as the requests still missing
    (kueue pkg/workload/resources.go `AdjustResources`: `handlePodLimitRange`, then
    `handleLimitsToRequests`). The API server stores the pod the other way round (requests from
    limits before the LimitRange defaults), so a container with only a limit can count less in
    Kueue's quota than on its machine."""
    default_limits: dict[str, Any] = {}
    default_requests: dict[str, Any] = {}
    # Kueue summarises every range's Container items, the first default of a resource kept
    # (pkg/util/limitrange/limitrange.go `Summarize`: MergeResourceListKeepFirst).
    for item in (i for r in limit_ranges for i in limit_items(r) if i.type == "Container"):
        for name, value in item.default.items():
            default_limits.setdefault(name, value)
        for name, value in item.default_request.items():
            default_requests.setdefault(name, value)

    def sized(container: Mapping[str, Any]) -> dict[str, Any]:
        resources = o.mapping(container.get("resources"))
        limits = {**default_limits, **o.mapping(resources.get("limits"))}
        requests = {**limits, **default_requests, **o.mapping(resources.get("requests"))}
        return {**container, "resources": {"limits": limits, "requests": requests}}

    return {
        **spec,
        "containers": [sized(c) for c in o.containers(spec)],
        "initContainers": [sized(c) for c in o.init_containers(spec)],
    }


def _pod_sets(env: Environment, job: TrainingJob, own: k.Workload | None) -> list[k.PodSetRequest]:
    """The pod sets Kueue admits: the Workload's where it has one, else the job's own, named
    as Kueue names them."""
    if own is not None and own.pod_sets:
        return list(own.pod_sets)
    size = _sizer(env)
    return [
        k.PodSetRequest(k.pod_set_reference(job.kind, s.name), s.count, size(s.spec), s.spec)
        for s in job.pod_sets
    ]


def _arithmetic(
    env: Environment,
    job: TrainingJob,
    reads: QueueReads,
    own: k.Workload | None,
    workloads: Sequence[k.Workload],
    shared: k.ClusterQueue,
    queues: Mapping[str, k.ClusterQueue],
    fields: Mapping[str, Any],
) -> Finding:
    """The flavor assignment rebuilt from the queues' quota (inferred), unless the Workload
    already said it waits for quota or never fits (measured)."""
    if isinstance(env.limit_ranges, CantRead) and own is None:
        return SAY.cant_check(env, Kind.LIMIT_RANGE, env.limit_ranges, job.ref)
    try:
        pod_sets = _pod_sets(env, job, own)
    except QuantityError as error:
        cant = CantRead(ReadFailure.MALFORMED, f"the training job's size can't be read: {error}")
        return SAY.cant_check(env, Kind.JOB, cant, job.ref)
    tree = k.QuotaTree.of(queues.values(), map(k.cohort, _listed(reads.cohorts)))
    flavors = {f.name: f for f in map(k.flavor, _listed(reads.flavors))}
    assignment = fa.assign(shared, tree, flavors, pod_sets)
    state = k.said(own) if own is not None and not job.finished else k.Said.NOTHING
    measured = state in (k.Said.WAITS_FOR_QUOTA, k.Said.NEVER_FITS)
    basis = Basis.MEASURED if measured else Basis.INFERRED
    details = [
        *(_conditions(own) if own is not None else ()),
        *(f"pod set {p.name} x{p.count}: {_size(p.requests)} each" for p in pod_sets),
        *(
            f"pod set {p.name}: flavors {dict(p.flavors)}" + (" (borrowing)" if p.borrows else "")
            for p in assignment.pod_sets
            if p.flavors
        ),
        *assignment.reasons,
    ]
    if not measured:
        details.append("inferred: Kueue's flavor assignment rebuilt from the queues' quota")
    objects = (f"ClusterQueue/{shared.name}", job.ref)
    never = state is k.Said.NEVER_FITS or (
        state is not k.Said.WAITS_FOR_QUOTA and assignment.mode is fa.Mode.NO_FIT
    )
    if never:
        said = own.conditions.get("QuotaReserved") if own is not None and measured else None
        why, todo = _never_words(assignment, shared, said)
        return SAY.finding(
            Status.FAIL,
            basis,
            NEVER_FITS,
            details=details,
            objects=objects,
            **fields,
            why=why,
            todo=todo,
        )
    if state is k.Said.WAITS_FOR_QUOTA or assignment.mode is fa.Mode.WAITS:
        return _held(env, job, own, workloads, shared, tree, assignment, details, basis, fields)
    checks = fa.checks_for(shared, assignment)
    if checks:
        details.append(f"once its quota is reserved, the admission checks {', '.join(checks)} run")
    if assignment.borrows:
        return SAY.finding(
            Status.OK,
            basis,
            FITS_BORROWING,
            details=details,
            objects=objects,
            **fields,
            cohort=_root_cohort(tree, shared.node),
        )
    return SAY.finding(Status.OK, basis, FITS, details=details, objects=objects, **fields)


def _size(requests: Resources) -> str:
    return ", ".join(format_amount(r, n) for r, n in requests.amounts) or "nothing"


def _root_cohort(tree: k.QuotaTree, node: k.QuotaNode) -> str:
    """The top of the cohort tree the queue borrows in."""
    seen = {node.name}
    parent = tree.parent(node)
    top = node.parent
    while parent is not None and parent.name not in seen:
        seen.add(parent.name)
        top = parent.name
        parent = tree.parent(parent)
    return top


_TOPOLOGY = "TopologyPlacementFailed"
"""Kueue's reason for a pod set its topology cannot place even were every other workload
preempted (flavorassigner.go, `WithSimulateEmpty`); doctor does not rebuild topology."""


def _never_words(
    assignment: fa.Assignment, shared: k.ClusterQueue, said: k.Condition | None
) -> tuple[str, str]:
    """Why no flavor will ever take the job, and what to do: Kueue's words where it said so
    and doctor's arithmetic has no reason of its own."""
    todo = f"Ask for less, or ask your cluster admin for more quota in '{shared.name}'"
    if said is not None and said.reason == _TOPOLOGY:
        return (
            "its machines' placement layout has no room for it even were all other work "
            f"stopped (Kueue says “{quoted(said.message)}”)",
            "Ask for fewer or smaller programs, or ask your cluster admin for more machines in "
            "the layout",
        )
    if said is not None and assignment.mode is not fa.Mode.NO_FIT:
        return f"Kueue says “{quoted(said.reason)}: {quoted(said.message)}”", todo
    return _quota_words(assignment, shared), todo


def _quota_words(assignment: fa.Assignment, shared: k.ClusterQueue) -> str:
    """Why no flavor's quota will ever take the job, in plain words."""
    reasons = " ".join(r for p in assignment.pod_sets for r in p.reasons)
    missing = sorted(
        {
            r.split(" ")[1]
            for p in assignment.pod_sets
            for r in p.reasons
            if r.startswith("resource ")
        }
    )
    if missing:
        return f"it offers no {_and(missing)}"
    if "maximum capacity" in reasons:
        return "the job asks for more than its quota is, even borrowing all it may"
    if reasons:
        return "none of its machine types is one the job may run on"
    return f"the shared queue '{shared.name}' has nothing the job asks for"


def _held(
    env: Environment,
    job: TrainingJob,
    own: k.Workload | None,
    workloads: Sequence[k.Workload],
    shared: k.ClusterQueue,
    tree: k.QuotaTree,
    assignment: fa.Assignment,
    details: list[str],
    basis: Basis,
    fields: Mapping[str, Any],
) -> Finding:
    """The quota is there but in use: who holds it, and the job's place in line."""
    short = assignment.short or {
        fr: 1 for fr in shared.node.reserved if fr[1] in _asked(assignment, own)
    }
    held = [h for h in k.holders(workloads, shared.name, short) if own is None or h[0] is not own]
    names = [_holder_words(h[0]) for h in held[:3]]
    ours = {fr: sum(h[0].usage.get(fr, 0) for h in held) for fr in short}
    others = any(shared.node.reserved.get(fr, 0) > ours[fr] for fr in short)
    if others or not names:
        names.append(f"other work in the shared queue '{shared.name}'")
    if shared.node.parent and any(tree.borrows_with(shared.node, fr, n) for fr, n in short.items()):
        names.append(f"the other queues of '{_root_cohort(tree, shared.node)}'")
    details += [
        f"{fr[1]} in flavor {fr[0]}: reserved {shared.node.reserved.get(fr, 0)}, "
        f"available {tree.available(shared.node, fr)}"
        for fr in short
    ]
    details += [f"held by Workload {h[0].name}: {h[1]}" for h in held]
    details.append("Kueue may instead preempt lower-priority work (not evaluated)")
    position = ""
    if own is not None and (env.namespace, own.name) in shared.pending_head:
        place = shared.pending_head.index((env.namespace, own.name)) + 1
        position = f"; it is number {place} in line"
    resources = _and(sorted({f"{r} of type '{f}'" for f, r in short}))
    return SAY.finding(
        Status.WARN,
        basis,
        HELD,
        details=details,
        objects=(f"ClusterQueue/{shared.name}", job.ref, *(f"Workload/{h[0].name}" for h in held)),
        **fields,
        resources=resources or "the resources it asks for",
        holders=_and(names),
        position=position,
    )


def _asked(assignment: fa.Assignment, own: k.Workload | None) -> set[str]:
    asked = {r for p in assignment.pod_sets for r in p.flavors}
    if own is not None:
        asked |= {r for p in own.pod_sets for r in p.requests.names}
    return asked


def _holder_words(holder: k.Workload) -> str:
    """`the training job 'run-7'` for a Workload its job owns."""
    return f"the training job '{holder.owner or holder.name}'"


def _and(items: Sequence[str]) -> str:
    if not items:
        return ""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
