"""Admission: the gates the API server puts before a training pod, beyond the scheduler.

A Terminating namespace, ResourceQuota, admission webhooks that fail closed with nobody behind
them, the namespace's Pod Security level, and on request the server's own answer to a trial
start (`dryRun=All`). The decisions live in quota.py, webhooks.py, podsecurity.py and trial.py;
this module turns them into findings.

One module past 600 lines: the admission chain's gates (namespace, LimitRange, priority,
quota, Pod Security, webhooks, the dry-run create) in the order the API server applies them,
each a short function over the same stored pod.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Got, Kind, KubeObject, Listed, ReadFailure
from truegreen.doctor.checks.admission.added import as_created, operator_security_finding
from truegreen.doctor.checks.admission.claim_quota import ClaimHolder, quota_claim
from truegreen.doctor.checks.admission.claims import claim_limit_findings, claim_quota_findings
from truegreen.doctor.checks.admission.limits import limit_range_findings
from truegreen.doctor.checks.admission.podsecurity_api import Level, Policy, enforced_policy
from truegreen.doctor.checks.admission.quota import (
    JOB_COUNT,
    Holder,
    QuotaPod,
    QuotaVerdict,
    Refusal,
    applies_to_pod,
    gang_verdicts,
    job_verdicts,
    object_count,
    parse_quota,
    pod_verdicts,
    quota_pod,
)
from truegreen.doctor.checks.admission.under_way import StillToCreate, still_to_create
from truegreen.doctor.checks.admission.words import (
    ACCOUNT_MISSING,
    NAMESPACE_MISSING,
    NAMESPACE_TERMINATING,
    NOUNS,
    OK,
    PODS_REFUSED,
    PRIORITY_MISSING,
    QUOTA_EXCEEDED,
    QUOTA_HELD_BY_RUNNING_JOB,
    QUOTA_NEEDS_SIZES,
    QUOTA_NOT_COUNTED,
    RUNTIME_CONFLICT,
    RUNTIME_MISSING,
    SAY,
    SECURITY_LEVEL,
    TRIAL_FAILED,
    TRIAL_NOT_ALLOWED,
    TRIAL_OFFLINE,
    TRIAL_REFUSED,
    WEBHOOK_DOWN,
    WEBHOOK_DOWN_IGNORED,
    WEBHOOK_UNVERIFIABLE,
)
from truegreen.doctor.environment import WEBHOOK_KINDS, Environment
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.knowledge.evidence import Cause, refusals, uncalled_hook, unstated_sizes
from truegreen.doctor.knowledge.reports import quoted
from truegreen.doctor.knowledge.stored_pod import (
    job_priority,
    runtime_class_conflict,
    stored_spec,
    with_priority,
)
from truegreen.doctor.knowledge.training import TrainingJob
from truegreen.doctor.knowledge.webhooks import Applies, ready_endpoints
from truegreen.kubectl import truegreen_command
from truegreen.quantity import (
    CPU,
    MEMORY,
    QuantityError,
    Resources,
    format_amount,
)

if TYPE_CHECKING:
    from truegreen.doctor.checks.admission.podsecurity import Violation as PodSecurityViolation

CHECK = CheckId.ADMISSION
_IGNORED_HOOK = WEBHOOK_DOWN_IGNORED
_JOB_COUNT_NOUN = "training jobs (finished ones count until deleted)"


def _plain_amount(resource: str, value: int) -> str:
    base = resource.removeprefix("requests.").removeprefix("limits.")
    return format_amount(base, value) if base in (CPU, MEMORY, "ephemeral-storage") else str(value)


def _plain_resource(resource: str, for_job: bool) -> str:
    if for_job:
        return _JOB_COUNT_NOUN  # the object count of the training job's own kind
    base = resource.removeprefix("requests.").removeprefix("limits.")
    noun = NOUNS.get(base, base)
    return f"the limit on {noun}" if resource.startswith("limits.") else noun


def _exceeded(verdict: QuotaVerdict, for_job: bool) -> Finding:
    # A job under way is charged only the pods it still creates: it needs that much more.
    still = " more" if verdict.present else ""
    shortfall = "; ".join(
        f"{_plain_resource(s.resource, for_job)}: {_plain_amount(s.resource, s.used)} of "
        f"{_plain_amount(s.resource, s.hard)} in use, the job needs "
        f"{_plain_amount(s.resource, s.requested)}{still}"
        for s in verdict.shortfalls
    )
    one_by_one = []
    if verdict.present:
        one_by_one.append(
            f"{verdict.present} of the job's {verdict.pods} pods were let in and are counted in "
            f"used: charged the {verdict.pods - verdict.present} still to create"
        )
    if verdict.pods:
        shortfall += (
            f"; only {verdict.admitted} of its {verdict.pods} programs would be let in, and "
            "they run only all together"
        )
        one_by_one.append(
            f"the job's {verdict.pods} pods are admitted one by one, each charged as it is let "
            f"in: {verdict.admitted} let in, {verdict.pods - verdict.admitted} refused"
        )
    if all(s.hard == 0 for s in verdict.shortfalls):
        # A limit of none: nothing holds any of it, so nothing can be freed.
        free = "This environment allows none of it, so run the job elsewhere"
    elif for_job:
        free = "Delete finished training jobs (they count until deleted)"
    elif verdict.finished:
        more = len(verdict.finished) - 3
        names = ", ".join(verdict.finished[:3]) + (f" and {more} more" if more > 0 else "")
        free = f"Delete the finished programs, which count until deleted ({names})"
        if verdict.users and not all(s.resource.startswith("count/") for s in verdict.shortfalls):
            # What finished pods never hold (`pods`, sizes) only running ones can free.
            free += f", and wait for or stop what uses the rest ({', '.join(verdict.users[:3])})"
    elif verdict.users:
        free = f"Wait for or stop what uses it ({', '.join(verdict.users[:3])})"
    else:
        free = "Free some of it"
    details = [
        f"quota {verdict.quota}: {s.resource} used {s.used} + requested {s.requested} "
        f"> hard {s.hard}"
        for s in verdict.shortfalls
    ]
    if verdict.users:
        details.append(f"held by {', '.join(verdict.users)}")
    if verdict.finished:
        details.append(
            f"held by finished pods, which count until deleted: {', '.join(verdict.finished)}"
        )
    details += one_by_one
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        QUOTA_EXCEEDED,
        details=details,
        objects=[f"ResourceQuota/{verdict.quota}"],
        quota=verdict.quota,
        shortfall=shortfall,
        free=free,
    )


def _quota_finding(verdict: QuotaVerdict, whose: str = "", *, for_job: bool = False) -> Finding:
    """The finding of one quota's refusal; `whose` names the pods it refuses, for the details."""
    found = _quota_refusal(verdict, for_job)
    return replace(found, details=[*found.details, f"refuses {whose}"]) if whose else found


def _quota_refusal(verdict: QuotaVerdict, for_job: bool) -> Finding:
    objects = [f"ResourceQuota/{verdict.quota}"]
    if verdict.refusal is Refusal.UNSTATED:
        sizes = sorted({resource for resource, _ in verdict.unstated})
        containers = sorted({c for _, names in verdict.unstated for c in names})
        return SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            QUOTA_NEEDS_SIZES,
            details=[
                f"quota {verdict.quota} limits {r}; containers without it: {', '.join(n)}"
                for r, n in verdict.unstated
            ],
            objects=objects,
            quota=verdict.quota,
            sizes=" and ".join(sizes),
            containers=", ".join(f"'{c}'" for c in containers),
        )
    if verdict.refusal is Refusal.UNCOUNTED:
        return SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            QUOTA_NOT_COUNTED,
            details=[f"quota {verdict.quota}: no status.used for {', '.join(verdict.uncounted)}"],
            objects=objects,
            quota=verdict.quota,
        )
    if verdict.waiting_for:
        # Each is a training job's `Kind/name`: the words name it, the objects keep its kind.
        jobs = ", ".join(f"'{ref.partition('/')[2]}'" for ref in verdict.waiting_for)
        return SAY.finding(
            Status.WARN,
            Basis.INFERRED,
            QUOTA_HELD_BY_RUNNING_JOB,
            details=_exceeded(verdict, for_job).details,
            objects=[*objects, *verdict.waiting_for],
            quota=verdict.quota,
            jobs=jobs,
        )
    return _exceeded(verdict, for_job)


def _invalid(env: Environment, error: QuantityError) -> Finding:
    cant = CantRead(ReadFailure.MALFORMED, f"a usage limit holds an invalid amount: {error}")
    return SAY.cant_check(env, Kind.RESOURCE_QUOTA, cant)


def _training_job_of(env: Environment, pod: KubeObject) -> tuple[str, str] | None:
    """(`Kind/name`, name) of the training job `pod` belongs to, of whatever kind: the one its
    controller or its controller's label points at (TrainingWork.job_of), else the batch Job
    that owns it (a Job whose list was not read); None for a pod of no training job."""
    job = env.work().job_of(pod)
    if job is not None:
        return job.ref, job.name
    name = o.job_owner(pod)
    return (f"{Kind.JOB.spec.name}/{name}", name) if name else None


def _holders(env: Environment, pods: Sequence[KubeObject], own: frozenset[str]) -> list[Holder]:
    """The namespace's pods, which count against quotas: a finished one only in `count/pods`,
    named itself, since deleting it is what frees that; a training job's by the job. `own`, the
    judged job's pods it runs only with, hold nothing it could wait for or stop."""
    holders = []
    for pod in pods:
        if o.name_of(pod) in own:
            continue
        job = _training_job_of(env, pod)
        finished = o.is_terminated(pod)
        owner = f"the training job '{job[1]}'" if job and not finished else f"'{o.name_of(pod)}'"
        ref = job[0] if job else None
        try:
            holders.append(Holder(owner, ref, quota_pod(o.pod_spec(pod)), finished))
        except QuantityError:
            continue  # the server would not have admitted it; it holds nothing we can count
    return holders


def _claim_holders(
    env: Environment, pods: Sequence[KubeObject], own: frozenset[str]
) -> list[ClaimHolder]:
    """The running pods of training jobs with the claims their generic ephemeral volumes made
    (a running pod has its volumes: the kubelet mounts them before it starts a container).
    A finished pod keeps its claims until it is deleted, and a pending one may not have them
    yet: neither is a job's end to wait for. `own`, as for _holders, hold nothing."""
    holders = []
    for pod in pods:
        job = _training_job_of(env, pod)
        if job is None or o.name_of(pod) in own or o.phase(pod) != "Running":
            continue
        try:
            claims = tuple(quota_claim(v, spec) for v, spec in o.ephemeral_claims(o.pod_spec(pod)))
        except QuantityError:
            continue  # the controller's create would be invalid: no claim to count
        if claims:
            holders.append(ClaimHolder(job[0], claims))
    return holders


def _set_quota_pod(env: Environment, spec: Mapping[str, Any]) -> QuotaPod:
    """One pod set's pod as the quota plugin sees it (QuantityError on a bad amount)."""
    limit_ranges = env.limit_ranges.items if isinstance(env.limit_ranges, Listed) else ()
    stored = stored_spec(
        spec, limit_ranges, extended_tolerations=False, runtime_class=env.runtime_class(spec)
    )
    if isinstance(env.priority_classes, Listed):
        # The Priority plugin names the default class before the quota plugin matches scopes.
        stored = with_priority(stored, job_priority(stored, env.priority_classes.items))
    return quota_pod(stored, requests=env.settings.job_requests)


def _training_quota_pods(
    env: Environment, job: TrainingJob | None
) -> tuple[list[tuple[str, QuotaPod]], list[str], Finding | None]:
    """Each pod set's pod as quota sees it (named by its set; "" with no job), notes on what was
    left out, or an unknown finding."""
    requests = env.settings.job_requests
    if job is None:
        note = "no training job to copy: compared the program count and --job-requests only"
        return [("", QuotaPod(requests or Resources(), Resources()))], [note], None
    if isinstance(env.limit_ranges, CantRead):
        return [], [], SAY.cant_check(env, Kind.LIMIT_RANGE, env.limit_ranges)
    pods = []
    for pod_set in job.pod_sets:
        try:
            pods.append((pod_set.name, _set_quota_pod(env, pod_set.created_spec)))
        except QuantityError:
            return [], ["the training job's sizes are invalid (see capacity)"], None
    return pods, [], None


def _job_count(job: TrainingJob) -> str:
    """The object count creating the next training job is charged: its own kind's; a CronJob's
    next run is a Job its controller creates. What a job's controller creates in turn (a
    JobSet's Jobs, a TrainJob's JobSet) is not judged."""
    if job.kind is Kind.CRON_JOB:
        return JOB_COUNT
    return object_count(job.kind.spec.group, job.kind.spec.plural)


def _quota_findings(
    env: Environment, job: TrainingJob | None
) -> tuple[list[Finding], list[Finding], list[str]]:
    """(refusals a single pod's trial start does not answer: of the Job object, and of the
    whole of a job whose pods run only together; refusals of its pods; notes) from the
    namespace's quotas."""
    if isinstance(env.quotas, CantRead):
        return [], [SAY.cant_check(env, Kind.RESOURCE_QUOTA, env.quotas)], []
    if not env.quotas.items:
        return [], [], ["no usage limits"]
    try:
        quotas = [parse_quota(q) for q in env.quotas.items]
    except QuantityError as error:
        return [], [_invalid(env, error)], []
    # Without a job its kind is unknown, and so is the object count it would be charged.
    verdicts = job_verdicts(quotas, _job_count(job)) if job is not None else []
    for_job = [_quota_finding(v, for_job=True) for v in verdicts]
    still = still_to_create(env, job) if job is not None else StillToCreate({"": 1})
    listed = env.pods.items if isinstance(env.pods, Listed) else []
    # The claims its pods make are admitted after them, whatever their own gates answer.
    by_claims, compared, claim_notes = claim_quota_findings(
        env, job, quotas, still, _claim_holders(env, listed, still.own)
    )
    for_job += by_claims
    if job is not None:
        compared |= {q.name for q in quotas if _job_count(job) in q.hard and not q.scopes}
    pods, notes, problem = _training_quota_pods(env, job)
    notes += claim_notes
    if not pods:
        return for_job, [problem] if problem else [], notes
    if job is None:
        # Without a template the pod's scopes are unknown: only unscoped quotas are compared.
        quotas = [q for q in quotas if not q.scopes]
    holders = _holders(env, env.pods.items, still.own) if isinstance(env.pods, Listed) else []
    if isinstance(env.pods, CantRead):
        notes.append("couldn't read the running programs: no wait for running jobs inferred")
    # Each set's pods are created and admitted apart: one verdict per refusal, naming its sets.
    # A set whose pods are all there (a job under way) creates none: nothing of it is judged.
    pods = [(name, pod) for name, pod in pods if still.counts[name]]
    refused: dict[QuotaVerdict, list[str]] = {}
    for name, pod in pods:
        for verdict in pod_verdicts(quotas, pod, holders):
            refused.setdefault(verdict, []).append(name)
    if job is not None and job.together:
        # The job's pods use the room up between them (each is charged as it is let in), and
        # it runs only with all of them: it needs room for every pod it has still to create.
        # One pod's trial start (a dry run, never charged) does not answer for that, so it
        # goes with the refusals of the Job object, which the trial leaves standing.
        counted = [(pod, still.counts[name]) for name, pod in pods]
        whole = _whose(job, [name for name, _ in pods])
        judged = (v.quota for v in refused)
        for_job += [
            _quota_finding(v, whole)
            for v in gang_verdicts(quotas, counted, holders, judged, still.present)
        ]
    for_pod = [_quota_finding(v, _whose(job, sets)) for v, sets in refused.items()]
    compared |= {q.name for q in quotas for _, pod in pods if applies_to_pod(q, pod)}
    # A quota nothing the job creates is counted in compared nothing: it says so.
    return (
        for_job,
        for_pod,
        [
            *notes,
            *(
                f"usage limit {q.name} compared"
                if q.name in compared
                else f"usage limit {q.name}: counts nothing the training job creates"
                for q in quotas
            ),
        ],
    )


def _whose(job: TrainingJob | None, sets: Sequence[str]) -> str:
    """`the pods of PyTorchJob/bert-large (Master)`; "" with no job."""
    return f"the pods of {job.ref} ({', '.join(sets)})" if job is not None else ""


def _priority_findings(env: Environment, job: TrainingJob | None) -> list[Finding]:
    """The Priority plugin refuses a pod naming a PriorityClass that does not exist."""
    named = sorted(
        {
            str(s.spec.get("priorityClassName"))
            for s in job.pod_sets
            if s.spec.get("priorityClassName")
        }
        if job is not None
        else set()
    )
    read = env.priority_classes
    if not named or read is None:
        return []
    if isinstance(read, CantRead):
        return [SAY.cant_check(env, Kind.PRIORITY_CLASS, read)]
    known = {o.name_of(c) for c in read.items}
    return [
        SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            PRIORITY_MISSING,
            details=[f"no PriorityClass with name {name} was found"],
            objects=[f"PriorityClass/{name}"],
            name=name,
            command=env.settings.kubectl.cluster("get", "priorityclasses"),
        )
        for name in named
        if name not in known
    ]


def _account_findings(env: Environment, job: TrainingJob | None) -> list[Finding]:
    """The ServiceAccount plugin refuses a pod whose service account does not exist
    (plugin/pkg/admission/serviceaccount/admission.go `Admit`: "error looking up service
    account %s/%s"); `default` where the pod names none. Measured by the account's read: a
    NotFound is its absence; a read that failed otherwise leaves the gate unknown."""
    named = sorted({o.service_account_name(s.spec) for s in job.pod_sets} if job else set())
    found: list[Finding] = []
    for name in named:
        read = env.service_accounts.get(name)
        if not isinstance(read, CantRead):
            continue
        if not read.is_measurement:
            found.append(SAY.cant_check(env, Kind.SERVICE_ACCOUNT, read))
            continue
        found.append(
            SAY.finding(
                Status.FAIL,
                Basis.MEASURED,
                ACCOUNT_MISSING,
                details=[f"serviceaccount {name} not found in namespace {env.namespace}"],
                objects=[f"ServiceAccount/{name}"],
                name=name,
                command=env.settings.kubectl.here("create", "serviceaccount", name),
            )
        )
    return found


def _runtime_class_findings(env: Environment, job: TrainingJob | None) -> list[Finding]:
    """The RuntimeClass plugin refuses a pod whose RuntimeClass does not exist, or whose
    nodeSelector sets a key of the class's scheduling to another value
    (plugin/pkg/admission/runtimeclass/admission.go). Measured by the class's read: a NotFound
    is its absence; a read that failed otherwise leaves the gate unknown."""
    found: list[Finding] = []
    said: set[str] = set()
    for pod_set in job.pod_sets if job is not None else ():
        name = o.runtime_class_name(pod_set.spec)
        read = env.runtime_classes.get(name)
        if not name or read is None or name in said:
            continue
        if isinstance(read, Got):
            conflict = runtime_class_conflict(pod_set.spec, read.obj)
            if conflict is None:
                continue
            finding = SAY.finding(
                Status.FAIL,
                Basis.MEASURED,
                RUNTIME_CONFLICT,
                details=[conflict.message],
                objects=[f"RuntimeClass/{name}"],
                name=name,
                key=conflict.key,
                wanted=conflict.wanted,
                stated=conflict.stated,
            )
        elif not read.is_measurement:
            finding = SAY.cant_check(env, Kind.RUNTIME_CLASS, read)
        else:
            finding = SAY.finding(
                Status.FAIL,
                Basis.MEASURED,
                RUNTIME_MISSING,
                details=[f'pod rejected: RuntimeClass "{name}" not found'],
                objects=[f"RuntimeClass/{name}"],
                name=name,
                command=env.settings.kubectl.cluster("get", "runtimeclasses"),
            )
        said.add(name)
        found.append(finding)
    return found


def _namespace_findings(env: Environment) -> list[Finding]:
    read = env.namespace_object
    name = env.namespace
    if isinstance(read, Got):
        if o.mapping(read.obj.get("status")).get("phase") == "Terminating":
            return [
                SAY.finding(
                    Status.FAIL,
                    Basis.MEASURED,
                    NAMESPACE_TERMINATING,
                    details=[f"namespace {name}: status.phase Terminating"],
                    objects=[f"Namespace/{name}"],
                    name=name,
                )
            ]
        return []
    if read.is_measurement:
        return [
            SAY.finding(
                Status.FAIL,
                Basis.MEASURED,
                NAMESPACE_MISSING,
                details=[read.reason],
                objects=[f"Namespace/{name}"],
                name=name,
                command=env.settings.kubectl.cluster("get", "namespaces"),
            )
        ]
    return [SAY.cant_check(env, Kind.NAMESPACE, read)]


def _security_findings(
    env: Environment, job: TrainingJob | None
) -> tuple[list[Finding], list[Finding], list[str]]:
    """(refusals of the job's own settings, refusals of the init containers its controller
    adds, notes) by the namespace's Pod Security level."""
    labels = env.namespace_labels()
    if labels is None:
        return [], [], []  # the namespace gate already says why
    policy = enforced_policy(labels)
    notes = [f"label {u} does not parse: enforced as restricted:latest" for u in policy.unparsed]
    if policy.level is Level.PRIVILEGED:
        return [], [], [*notes, "security level: privileged (every program is let in)"]
    if job is None:
        return [], [], [*notes, f"security level {policy}: no training job to compare"]
    # Imported on use: only a namespace that enforces more than privileged runs its rules
    # (doctor's start-up on a small namespace, bench/imports.py).
    from truegreen.doctor.checks.admission.podsecurity import violations

    refused: dict[tuple[str, ...], tuple[list[PodSecurityViolation], list[str]]] = {}
    by_operator: dict[tuple[str, ...], tuple[list[PodSecurityViolation], list[str]]] = {}
    for pod_set in job.pod_sets:
        meta = o.mapping(pod_set.template.get("metadata"))
        found = violations(policy, meta, pod_set.spec)
        if found:
            key = tuple(f"{v.check} ({v.detail})" for v in found)
            refused.setdefault(key, (found, []))[1].append(pod_set.name)
        # The added containers judged beside the template's pod-level settings only, so that a
        # finding names what the operator adds and nothing of the job's own.
        alone = {**pod_set.spec, "containers": [], "initContainers": list(pod_set.added)}
        names = [f'"{c.get("name")}"' for c in pod_set.added]
        theirs = [v for v in violations(policy, meta, alone) if any(n in v.detail for n in names)]
        if theirs:
            key = tuple(f"{v.check} ({v.detail})" for v in theirs)
            by_operator.setdefault(key, (theirs, []))[1].append(pod_set.name)
    operator = [
        operator_security_finding(env, job, policy, found, sets)
        for found, sets in by_operator.values()
    ]
    if not refused:
        return [], operator, [*notes, f"security level {policy}: the training job passes"]
    return (
        [
            _security_finding(env, job, policy, found, sets, notes)
            for found, sets in refused.values()
        ],
        operator,
        [],
    )


def _security_finding(
    env: Environment,
    job: TrainingJob,
    policy: Policy,
    found: Sequence[PodSecurityViolation],
    sets: Sequence[str],
    notes: Sequence[str],
) -> Finding:
    """Pod Security's refusal of the pods of `sets`, which all break the level the same way."""
    problems = list(dict.fromkeys(v.plain for v in found))
    fields = list(dict.fromkeys(f for v in found for f in v.fields))
    whose = f"the pods of {job.ref} ({', '.join(sets)})"
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        SECURITY_LEVEL,
        details=[
            *notes,
            *(f'{whose}: violates PodSecurity "{policy}": {v.check} ({v.detail})' for v in found),
        ],
        objects=[f"Namespace/{env.namespace}", job.ref],
        level=f"'{policy.level}'",
        problems=problems[0] + (f" and {len(problems) - 1} more" if problems[1:] else ""),
        fields=", ".join(fields),
    )


def _unverifiable(hook: str, configuration: str, why: str, detail: str) -> Finding:
    unknown = SAY.finding(
        Status.UNKNOWN,
        Basis.CANT_CHECK,
        WEBHOOK_UNVERIFIABLE,
        details=[detail],
        objects=[configuration],
        hook=hook,
        why=why,
    )
    return replace(unknown, why=f"the approval hook '{hook}': {why}")


def _webhook_findings(env: Environment) -> tuple[list[Finding], list[str]]:
    findings: list[Finding] = []
    for kind in WEBHOOK_KINDS:
        read = env.webhook_configurations.get(kind)
        if isinstance(read, CantRead) or read is None:
            findings.append(
                SAY.cant_check(env, kind, read or CantRead(ReadFailure.NOT_CAPTURED, ""))
            )
    notes = []
    for hook in env.pod_create_webhooks():
        where = f"webhook {hook.name} of {hook.configuration}"
        configuration = hook.configuration
        if hook.service is None:
            if hook.fail_closed:
                findings.append(
                    _unverifiable(
                        hook.name,
                        configuration,
                        "it is called at an address outside the cluster",
                        f"{where}: clientConfig.url, failurePolicy Fail",
                    )
                )
            continue
        slices = env.endpoint_slices.get(hook.service)
        if not isinstance(slices, Listed):
            findings.append(
                SAY.cant_check(
                    env,
                    Kind.ENDPOINT_SLICE,
                    slices or CantRead(ReadFailure.NOT_CAPTURED, ""),
                    everywhere=True,  # the hook's server may live in any namespace
                )
            )
            continue
        ready = ready_endpoints(slices.items)
        if ready:
            notes.append(f"{where}: {ready} ready endpoints behind {hook.service_text}")
            continue
        detail = f"{where}: no ready endpoints behind service {hook.service_text}"
        if hook.applies is Applies.UNSURE:
            if hook.fail_closed:
                findings.append(_unverifiable(hook.name, configuration, hook.unsure_why, detail))
            continue
        findings.append(
            SAY.finding(
                Status.FAIL if hook.fail_closed else Status.WARN,
                Basis.MEASURED,
                WEBHOOK_DOWN if hook.fail_closed else WEBHOOK_DOWN_IGNORED,
                details=[f"{detail}, failurePolicy {'Fail' if hook.fail_closed else 'Ignore'}"],
                objects=[configuration, f"Service/{hook.service_text}"],
                hook=hook.name,
                service=f"'{hook.service_text}'",
            )
        )
    return findings, notes


def _trial_findings(env: Environment, job: TrainingJob | None) -> list[Finding]:
    if env.trial is None or job is None:
        return []
    if isinstance(env.trial, CantRead) and env.trial.failure is ReadFailure.NOT_CAPTURED:
        # Read from a snapshot that asks for the trial start: the answer is the live server's
        # admission on a dry-run create (create.go `createHandler`), which no snapshot holds.
        # Asked for and not made is could-not-check, never a pass (as trial.not-saved).
        command = truegreen_command("doctor", "--admission-dry-run", *env.settings.kubectl.flags())
        offline = SAY.finding(
            Status.UNKNOWN,
            Basis.CANT_CHECK,
            TRIAL_OFFLINE,
            details=[env.trial.reason],
            objects=[job.ref],
            command=command,
        )
        return [replace(offline, why=env.trial.reason)]
    # Imported here: only --admission-dry-run makes a trial start for the server to answer.
    from truegreen.doctor.checks.admission.trial import TrialOutcome, judge, trial_name

    trial = judge(env.trial, trial_name(job))
    details = [f"trial create of pod {trial_name(job)} with dryRun=All: {trial.outcome}"]
    if trial.outcome is TrialOutcome.REFUSED:
        return [
            SAY.finding(
                Status.FAIL,
                Basis.MEASURED,
                TRIAL_REFUSED,
                details=details,
                objects=[job.ref],
                reason=trial.reason,
            )
        ]
    if trial.outcome is TrialOutcome.ADMITTED:
        return []
    code = TRIAL_NOT_ALLOWED if trial.outcome is TrialOutcome.NOT_ALLOWED else TRIAL_FAILED
    if trial.cant is not None:
        details.append(trial.cant.reason)  # names the grant a refused permission needs
    unknown = SAY.finding(
        Status.UNKNOWN,
        Basis.CANT_CHECK,
        code,
        details=[*details, trial.reason],
        command=env.settings.kubectl.cluster("get", "--raw", "/readyz"),
    )
    return [replace(unknown, why="the trial start could not be made")]


_CAUSE_WORDS: dict[Cause, tuple[str, str]] = {
    Cause.QUOTA: (
        "they would go over a usage limit of the environment",
        "Free some of the limit, raise it, or ask for less ({command} shows the limits)",
    ),
    Cause.QUOTA_NEEDS_SIZES: (
        # As quota-needs-sizes says it where the quota itself is read.
        "the usage limit {quota} requires every program to state its {sizes}, and {containers} "
        "doesn't",
        "Set {sizes} for {programs} in the training job's settings, or give this environment "
        "default sizes ({command} shows the limits)",
    ),
    Cause.LIMIT_RANGE: (
        "they are outside the sizes the environment allows one program",
        "Size the job's programs within the environment's limits ({command} shows them)",
    ),
    Cause.WEBHOOK: (
        "an approval hook turns them down",
        "Change the job so that the hook lets it in (the details say why it refused), or ask "
        "your cluster admin about the hook",
    ),
    Cause.WEBHOOK_DOWN: (
        # Never reached: the hook said nothing about the job, and every new program waits for
        # it alike (docs/admission.md, webhook-down), so the fix is the cluster's.
        "it can't call its approval hook {hook}, which must let every new program in",
        "Ask your cluster admin to bring the approval hook {hook} back (the details quote why "
        "the cluster could not call it; {command} lists the hooks), or to fix or remove it; "
        "changing the job can't help",
    ),
    Cause.POD_SECURITY: (
        "they break the environment's security level",
        "Change the job's security settings to what the environment's level allows",
    ),
    Cause.INVALID: (
        "their settings are not valid",
        "Fix the job's settings the details name",
    ),
    Cause.OTHER: (
        "its controller reports “{message}”",
        "Read the cluster's full account with {command} and fix what it names; doctor has no "
        "plainer words for this one",
    ),
}
_COMMANDS = {
    Cause.QUOTA: ("describe", "resourcequotas"),
    Cause.QUOTA_NEEDS_SIZES: ("describe", "resourcequotas"),
    Cause.LIMIT_RANGE: ("describe", "limitranges"),
}


def _cause_fields(message: str) -> dict[str, str]:
    """What a cause's words name, read from the server's `message`: the hook it could not call,
    the quota and the sizes it requires, and which programs do not state them (where the words
    name none, as before Kubernetes named them: "one of them", "every program")."""
    sizes = unstated_sizes(message)
    named = ", ".join(f"'{c}'" for c in sizes.containers) if sizes is not None else ""
    return {
        "hook": f"'{uncalled_hook(message)}'",
        "quota": f"'{sizes.quota}'" if sizes is not None else "",
        "sizes": " and ".join(sizes.sizes) if sizes is not None else "",
        "containers": named or "one of them",
        "programs": named or "every program",
    }


def _refused_creates(env: Environment) -> list[Finding]:
    """Each unfinished training job whose controller recorded refused creates of its pods
    (`FailedCreate`), while the job has fewer pods than it runs: measured, with the cause."""
    events = env.warning_events
    if events is None:
        return []
    if isinstance(events, CantRead):
        return [SAY.cant_check(env, Kind.EVENT, events)]
    jobs = env.jobs.items if isinstance(env.jobs, Listed) else ()
    found = []
    for job in env.work().jobs:
        if job.finished or job.suspended or len(o.remaining(env.pods_of(job))) >= job.pods:
            continue
        refused = refusals(events.items, job, jobs)
        if not refused:
            continue
        newest = refused[0]
        cause, todo = _CAUSE_WORDS[newest.cause]
        # A refusal doctor has no words for is said in the server's own, with where to read on.
        kind, _, name = newest.involved.partition("/")
        described = ("describe", kind.lower(), name) if newest.cause is Cause.OTHER else None
        command = (
            # The hooks are cluster-wide objects, read with a cluster admin's rights.
            env.settings.kubectl.cluster(
                "get", "mutatingwebhookconfigurations,validatingwebhookconfigurations"
            )
            if newest.cause is Cause.WEBHOOK_DOWN
            else env.settings.kubectl.here(
                *(described or _COMMANDS.get(newest.cause, ("describe", "events")))
            )
        )
        fields = _cause_fields(newest.message)
        cause = cause.format(message=quoted(newest.message), **fields)
        found.append(
            SAY.finding(
                Status.FAIL,
                Basis.MEASURED,
                PODS_REFUSED,
                details=[
                    f"{r.reason} on {r.involved} ({r.count} times, last {r.last_seen}): {r.message}"
                    for r in refused[:3]
                ],
                objects=[job.ref],
                job=f"'{job.name}'",
                cause=cause,
                todo=todo.format(command=command, **fields),
            )
        )
    return found


def _trial_admitted(env: Environment, job: TrainingJob | None) -> bool:
    """Whether the API server let the trial start of `job`'s pod in (`--admission-dry-run`)."""
    if env.trial is None or job is None:
        return False
    # Imported here: only --admission-dry-run makes a trial start for the server to answer.
    from truegreen.doctor.checks.admission.trial import TrialOutcome, judge, trial_name

    return judge(env.trial, trial_name(job)).outcome is TrialOutcome.ADMITTED


def _pod_gates(
    env: Environment, job: TrainingJob | None, hooks: Sequence[Finding] = ()
) -> tuple[list[Finding], list[Finding], list[str]]:
    """(refusals a trial start of one pod does not answer: of the Job object, of the whole job,
    of what its controller adds to its pods; findings of the gates each of its pods passes;
    notes); `hooks` are the webhooks' findings, judged apart by the labels of the largest
    set's pods."""
    for_job, for_pod, quota_notes = _quota_findings(env, job)
    security, security_by_operator, security_notes = _security_findings(env, job)
    limits, limits_by_operator = limit_range_findings(env, job)
    for_job += claim_limit_findings(env, job)
    gates = [
        *_priority_findings(env, job),
        *_account_findings(env, job),
        *_runtime_class_findings(env, job),
        *limits,
        *hooks,
        *for_pod,
        *security,
    ]
    # The trial start is made of the template as written (the controller adds its init
    # containers only to the pods it creates): its answer says nothing of them.
    by_operator = [*limits_by_operator, *security_by_operator]
    return [*for_job, *by_operator], gates, quota_notes + security_notes


def _untried(job: TrainingJob) -> TrainingJob | None:
    """`job` with only the pod sets the trial start does not answer for: those whose template
    differs from the largest set's, of which the trial pod was made; None when there are none."""
    tried = job.primary.template
    sets = tuple(s for s in job.pod_sets if s.template != tried)
    return replace(job, pod_sets=sets) if sets else None


def _kept(tried: str, untried: TrainingJob, finding: Finding) -> Finding:
    """A finding about pod sets the admitted trial start was not made of, saying so."""
    others = ", ".join(s.name for s in untried.pod_sets)
    note = f"the trial start was made of the {tried} pods only: it does not answer for {others}"
    return replace(finding, details=[*finding.details, note])


def check(env: Environment) -> list[Finding]:
    """Findings about whether the API server would let a training job's pod in."""
    # A list of training jobs not read could hold the newest job: the gates of the judged
    # job's pods are not known, and only what needs no job is judged.
    unknown = env.work().judged_unknown
    judged = None if unknown else env.judged_job()
    # What the job's controller adds to its pods, as a pod it created shows it.
    job = None if judged is None else as_created(env, judged)
    hooks, notes = _webhook_findings(env)
    for_job, pod_gates, gate_notes = _pod_gates(env, job, hooks)
    notes += gate_notes
    if job is not None and _trial_admitted(env, job):
        # The server's answer is the measurement of every gate the tried pod passes through; a
        # webhook that is down but ignored stays worth a warning. The pod sets of another
        # template were not tried: doctor's own reading of their gates stands.
        untried = _untried(job)
        kept = (
            []
            if untried is None
            else [_kept(job.primary.name, untried, f) for f in _pod_gates(env, untried)[1]]
        )
        overruled = [f.code for f in pod_gates if f.code != _IGNORED_HOOK]
        pod_gates = [*kept, *(f for f in pod_gates if f.code == _IGNORED_HOOK)]
        notes += ["trial start: admitted", *(f"overruled by the trial: {c}" for c in overruled)]
    problems = [
        *_namespace_findings(env),
        *for_job,
        *pod_gates,
        *_trial_findings(env, job),
        *_refused_creates(env),
        *(SAY.cant_check(env, kind, cant) for kind, cant in unknown),
    ]
    if problems:
        return problems
    return [SAY.finding(Status.OK, Basis.MEASURED, OK, details=notes)]
