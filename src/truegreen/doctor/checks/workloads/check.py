"""Workloads: rollouts complete by kubectl's rules, and the environment's pods are healthy."""

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Kind, KubeObject, Listed
from truegreen.doctor.checks.base import format_age, workloads_of
from truegreen.doctor.checks.workloads.memory import failed_tries, restarted_after_kill
from truegreen.doctor.checks.workloads.missing_login import (
    LoginLack,
    LoginReads,
    MissingLogin,
    machines_refused,
    missing_login,
)
from truegreen.doctor.checks.workloads.runtime_needs import SHM_FIX, SHM_PATH, shared_memory_needs
from truegreen.doctor.checks.workloads.words import (
    CRASH_LOOP,
    IMAGE_COPY_DAMAGED,
    IMAGE_DOWNLOAD_ERROR,
    IMAGE_DOWNLOAD_FAILING,
    IMAGE_LOGIN_EMPTY,
    IMAGE_LOGIN_NEEDED,
    IMAGE_LOGIN_REFUSED,
    IMAGE_MACHINE_LOGIN_FAILED,
    IMAGE_NOT_IN_REGISTRY,
    IMAGE_PULL_LIMIT,
    IMAGE_SIGNATURE_REFUSED,
    IMAGE_WRONG_PLATFORM,
    JOB_EMPTY,
    JOB_PAUSED,
    JOB_QUEUED,
    KIND_NOT_INSTALLED,
    KIND_VERSION_NOT_SERVED,
    LAST_JOB_DEADLINE,
    LAST_JOB_EVICTED,
    LAST_JOB_FAILED,
    LAST_JOB_GROUP_NO_ROOM,
    LAST_JOB_IMAGE,
    LAST_JOB_MACHINE_REFUSED,
    LAST_JOB_NOT_PLACED,
    LAST_JOB_OUT_OF_MEMORY,
    LAST_JOB_OVER_DISK_LIMIT,
    LAST_JOB_REFUSED,
    NO_SHARED_MEMORY,
    NONE_FOUND,
    NOT_READY,
    OUT_OF_MEMORY,
    OUT_OF_MEMORY_ONCE,
    PREPARING,
    REGISTRY_FAILING,
    REGISTRY_NOT_TRUSTED,
    REGISTRY_UNREACHABLE,
    SAY,
    SCHEDULE_PAUSED,
    SETTING_MISSING,
    SETTING_NAMED_MISSING,
    STARTING,
    STUCK_ON_MACHINE,
    TRY_OUT_OF_MEMORY,
    UPDATE_STUCK,
    UPDATING,
    WAITING_TOO_LONG,
    WONT_START,
)
from truegreen.doctor.environment import Environment, owner_words
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.knowledge.evidence import (
    DiskLimit,
    DiskLimitOf,
    Ending,
    attach_failures,
    job_failure,
    waiting_to_attach,
)
from truegreen.doctor.knowledge.reports import failing_wait, pods_with_evidence, quoted
from truegreen.doctor.knowledge.training import (
    CONTROLLERS,
    TrainingJob,
    TrainingWork,
    indexes_text,
    training_owner,
)
from truegreen.images import ImageReferenceError, parse_image
from truegreen.kubectl import Kubectl
from truegreen.plain_words import with_article
from truegreen.pull_reasons import FAILED_PULL_REASONS
from truegreen.quantity import (
    EPHEMERAL_STORAGE,
    QuantityError,
    format_amount,
    parse_quantity,
    scheduler_units,
)
from truegreen.rollout import rollout_status

if TYPE_CHECKING:
    from truegreen.pull_errors import PullError

CHECK = CheckId.WORKLOADS
_CRASHING = {"CrashLoopBackOff"}
_IMAGE_FAILING = FAILED_PULL_REASONS | {"InvalidImageName"}
"""The kubelet's waits on an image it could not download or name. Not `ErrImageNeverPull`: with
pull policy Never nothing is downloaded (image_manager.go EnsureImageExists), so that wait is
quoted as any other error of the kubelet's is."""
_SETTING_MISSING = {"CreateContainerConfigError"}
_WONT_START = {"CreateContainerError", "RunContainerError"}
"""The runtime refused to create or start the container (pkg/kubelet/kuberuntime
kuberuntime_container.go `ErrCreateContainer`, `ErrRunContainer`): its error is the reason."""
_WAITS = frozenset({WAITING_TOO_LONG, STUCK_ON_MACHINE, STARTING, NOT_READY})
"""What the check infers from a pod's wait alone; a component's own word on it comes first."""


@cache
def _pull_codes() -> dict["PullError", str]:
    """The kubelet's reason for a failed pull, read from its message, as a finding."""
    # Imported on use: only a pod whose image failed to download has a pull error to read
    # (doctor's start-up on a small namespace, bench/imports.py).
    from truegreen.pull_errors import PullError

    return {
        PullError.NOT_FOUND: IMAGE_NOT_IN_REGISTRY,
        PullError.LOGIN_REFUSED: IMAGE_LOGIN_REFUSED,
        PullError.LOGIN_NEEDED: IMAGE_LOGIN_NEEDED,
        PullError.PULL_LIMIT: IMAGE_PULL_LIMIT,
        PullError.UNREACHABLE: REGISTRY_UNREACHABLE,
        PullError.REGISTRY_FAILING: REGISTRY_FAILING,
        PullError.UNTRUSTED: REGISTRY_NOT_TRUSTED,
        PullError.WRONG_PLATFORM: IMAGE_WRONG_PLATFORM,
        PullError.SIGNATURE_REFUSED: IMAGE_SIGNATURE_REFUSED,
        PullError.COPY_DAMAGED: IMAGE_COPY_DAMAGED,
    }


def _registry_of(image: str) -> str:
    """The registry an image reference names (`docker.io` for a short name)."""
    try:
        return parse_image(image).registry
    except ImageReferenceError:
        return "its registry"


def _age(since: datetime | None, now: datetime) -> timedelta:
    return max(now - since, timedelta(0)) if since else timedelta(0)


class _PodProblem(Struct, frozen=True):
    code: str
    status: Status
    basis: Basis
    detail: str
    fields: tuple[tuple[str, str], ...] = ()


class _SetupStep(Struct, frozen=True):
    """The init container a pod's kubelet waits for before it starts the main containers."""

    name: str
    sidecar: bool
    """A native sidecar (`restartPolicy: Always`) whose startup has not yet been seen to
    succeed; any other is a setup step that runs to its end."""
    since: datetime | None

    def words(self) -> str:
        """`its setup step 'fetch-data' has been running` (for how long follows)."""
        if self.sidecar:
            return f"its helper '{self.name}' has been starting"
        return f"its setup step '{self.name}' has been running"


def _setup_step(pod: KubeObject) -> _SetupStep | None:
    """The running init container the kubelet waits for: a setup step runs until it ends, a
    sidecar until it has started (`started`, its startup probe passed); a started sidecar is
    past, and the kubelet goes on to the next (pkg/kubelet/kuberuntime/kuberuntime_container.go
    computeInitContainerActions). None when no init container runs that it waits for."""
    sidecars = {str(c.get("name")) for c in o.init_containers(o.pod_spec(pod)) if o.is_sidecar(c)}
    for found in o.sequence(o.mapping(pod.get("status")).get("initContainerStatuses")):
        status = o.mapping(found)
        running = o.mapping(o.mapping(status.get("state")).get("running"))
        name = str(status.get("name") or "")
        sidecar = name in sidecars
        if "startedAt" not in running or (sidecar and status.get("started") is True):
            continue
        return _SetupStep(name, sidecar, o.parse_time(running.get("startedAt")))
    return None


def _preparing(
    pod: KubeObject, step: _SetupStep, age: timedelta, now: datetime, kubectl: Kubectl
) -> _PodProblem:
    """A pod Pending for `age` while the kubelet runs its setup `step`."""
    name = o.name_of(pod)
    ran = _age(step.since, now)
    return _PodProblem(
        PREPARING,
        Status.WARN,
        Basis.MEASURED,
        f"pod {name} is Pending for {format_age(age)}: init container {step.name} running "
        f"for {format_age(ran)}",
        (
            ("step", step.words()),
            ("age", format_age(ran)),
            ("command", kubectl.here("logs", name, "-c", step.name)),
        ),
    )


def _pending(
    pod: KubeObject, now: datetime, grace: timedelta, is_job: bool, kubectl: Kubectl
) -> _PodProblem | None:
    """A Pending pod whose containers report no failure: placed and preparing, placed and
    stuck, or waiting for a machine."""
    name = o.name_of(pod)
    describe = ("command", kubectl.here("describe", "pod", name))
    if not o.node_name(pod) and is_job:
        return None  # unscheduled training job pods are the capacity check's to explain
    scheduled = o.condition(pod, "PodScheduled")
    why = (scheduled or {}).get("message") or "not yet started"
    age = _age(o.created_at(pod), now)
    step = _setup_step(pod) if o.node_name(pod) else None
    if step is not None:
        # The kubelet measured a step of the pod's start in progress: not a failure to
        # start, however long it takes (a dataset download may take hours).
        return None if is_job and age <= grace else _preparing(pod, step, age, now, kubectl)
    detail = f"pod {name} is Pending for {format_age(age)}: {why}"
    if age > grace:
        # A pod placed on a machine is past every question of room: what holds it is
        # there (a volume, the sandbox, the image), not in the arithmetic.
        return _PodProblem(
            STUCK_ON_MACHINE if o.node_name(pod) else WAITING_TOO_LONG,
            Status.FAIL,
            Basis.INFERRED,
            detail,
            (("age", format_age(age)), describe),
        )
    if is_job:
        return None
    return _PodProblem(STARTING, Status.WARN, Basis.MEASURED, detail, (("age", format_age(age)),))


def _pod_problem(
    pod: KubeObject,
    now: datetime,
    grace: timedelta,
    is_job: bool,
    kubectl: Kubectl,
    events: Sequence[KubeObject],
    logins: LoginReads,
) -> _PodProblem | None:
    name = o.name_of(pod)
    describe = ("command", kubectl.here("describe", "pod", name))
    killed_once: _PodProblem | None = None
    for container in o.container_statuses(pod):
        waiting = o.mapping(o.mapping(container.get("state")).get("waiting"))
        reason = str(waiting.get("reason", ""))
        cname = container.get("name")
        last = o.mapping(o.mapping(container.get("lastState")).get("terminated"))
        if reason in _CRASHING:
            restarts = o.integer(container.get("restartCount"))
            detail = f"pod {name} container {cname}: {reason}, {restarts} restarts"
            if last.get("reason") == "OOMKilled":
                return _PodProblem(
                    OUT_OF_MEMORY,
                    Status.FAIL,
                    Basis.MEASURED,
                    detail + ", OOMKilled",
                    (describe,),
                )
            logs = kubectl.here("logs", "--previous", name, "-c", str(cname))
            return _PodProblem(
                CRASH_LOOP, Status.FAIL, Basis.MEASURED, detail, (("command", logs),)
            )
        if reason in _IMAGE_FAILING:
            return _pull_problem(pod, container, now, events, describe, logins)
        if reason in _SETTING_MISSING or reason in _WONT_START:
            from truegreen.doctor.knowledge.missing_settings import missing_setting

            message = str(waiting.get("message", ""))
            detail = f"pod {name} container {cname}: {reason}: {message}"
            missing = missing_setting(message) if reason in _SETTING_MISSING else None
            if missing is not None:
                fields = (("setting", missing.words()), describe)
                return _PodProblem(
                    SETTING_NAMED_MISSING, Status.FAIL, Basis.MEASURED, detail, fields
                )
            if reason in _WONT_START or message.strip():
                # a config error that names no missing setting (runAsNonRoot refused, the
                # kubelet's Secret watch not synced, a subPath it could not prepare) is quoted
                fields = (("message", quoted(message) or reason), describe)
                return _PodProblem(WONT_START, Status.FAIL, Basis.MEASURED, detail, fields)
            return _PodProblem(SETTING_MISSING, Status.FAIL, Basis.MEASURED, detail, (describe,))
        if failing_wait(reason):
            # a kubelet error no rule names (ImageInspectError, PreStartHookError, …): its
            # reason and message in its own words
            message = str(waiting.get("message", ""))
            words = f"{reason}: {message}" if message.strip() else reason
            detail = f"pod {name} container {cname}: {words}"
            fields = (("message", quoted(words)), describe)
            return _PodProblem(WONT_START, Status.FAIL, Basis.MEASURED, detail, fields)
        # Between the kubelet's back-off waits the container runs again, its memory kill in
        # its last state: the same loop as during the wait, whatever the moment (memory.py).
        # A single kill it was restarted from at once is no loop yet: a warning, said only
        # when nothing of the pod fails (another container, its start).
        killed = restarted_after_kill(name, container, now)
        if killed is not None and not killed.once:
            return _PodProblem(
                OUT_OF_MEMORY, Status.FAIL, Basis.MEASURED, killed.detail(now), (describe,)
            )
        if killed is not None and killed_once is None:
            killed_once = _PodProblem(
                OUT_OF_MEMORY_ONCE, Status.WARN, Basis.MEASURED, killed.detail(now), (describe,)
            )
    waits = _waits(pod, now, grace, is_job, kubectl)
    if killed_once is not None and (waits is None or waits.status is not Status.FAIL):
        return killed_once
    return waits


def _pull_problem(
    pod: KubeObject,
    container: Mapping[str, Any],
    now: datetime,
    events: Sequence[KubeObject],
    describe: tuple[str, str],
    logins: LoginReads,
) -> _PodProblem:
    """A container waiting on an image it could not download or name (`_IMAGE_FAILING`): what
    the kubelet's reason and words say stopped it, else its words quoted, else the wait."""
    from truegreen.doctor.knowledge.pull_errors import (
        error_words,
        last_pull_failure,
        one_line,
        quoted_cause,
    )
    from truegreen.pull_errors import failed_pull, pod_images

    waiting = o.mapping(o.mapping(container.get("state")).get("waiting"))
    reason = str(waiting.get("reason", ""))
    image = str(container.get("image", ""))
    message = str(waiting.get("message", ""))
    detail = f"pod {o.name_of(pod)} container {container.get('name')}: {reason}: {message}"
    said = failed_pull(reason, message, pod_images(pod)) if reason in FAILED_PULL_REASONS else None
    words = error_words(message)
    if said is None and not words and reason == "ImagePullBackOff":
        # The back-off names no error (kubelets before 1.30): the newest Failed Event is the
        # kubelet's word on the pull it backs off from.
        found = last_pull_failure(pod, str(container.get("name") or ""), image, events)
        if found is not None:
            said, words = found.error, error_words(found.message)
            ago = f" {format_age(_age(found.seen, now))} ago" if found.seen else ""
            detail = f"{detail}; the kubelet's newest Failed Event{ago}: {one_line(found.message)}"
    fields: tuple[tuple[str, str], ...] = (("image", image), describe)
    code = IMAGE_DOWNLOAD_FAILING
    if said is not None:
        machine = f"'{o.node_name(pod)}'"
        fields = (*fields, ("registry", _registry_of(image)), ("machine", machine))
        code = _pull_codes()[said]
        if code == IMAGE_LOGIN_NEEDED:
            code, more = _lacking(missing_login(image, o.pod_spec(pod), logins), words)
            fields = (*fields, *more)
        elif code == IMAGE_LOGIN_REFUSED and machines_refused(image, o.pod_spec(pod), logins):
            code = IMAGE_MACHINE_LOGIN_FAILED
            fields = (*fields, ("message", quoted_cause(words)))
    elif words:
        fields = (*fields, ("message", quoted_cause(words)))
        code = IMAGE_DOWNLOAD_ERROR
    return _PodProblem(code, Status.FAIL, Basis.MEASURED, detail.rstrip(": "), fields)


def _lacking(missing: MissingLogin, words: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The finding for a pull whose anonymous token the registry refused, by whose login it
    lacked (missing_login.py), and the words it adds."""
    from truegreen.doctor.knowledge.pull_errors import quoted_cause

    if missing.lack is LoginLack.MACHINES:
        return IMAGE_MACHINE_LOGIN_FAILED, (("message", quoted_cause(words)),)
    if missing.lack is LoginLack.EMPTY:
        return IMAGE_LOGIN_EMPTY, (("names", ", ".join(f"'{n}'" for n in missing.names)),)
    return IMAGE_LOGIN_NEEDED, ()


def _waits(
    pod: KubeObject, now: datetime, grace: timedelta, is_job: bool, kubectl: Kubectl
) -> _PodProblem | None:
    """A pod whose containers report no failure, by its phase: Pending (`_pending`), or a
    service's copy Running and not Ready (starting within the grace period, then not
    ready)."""
    name = o.name_of(pod)
    describe = ("command", kubectl.here("describe", "pod", name))
    pod_phase = o.phase(pod)
    created = o.created_at(pod)
    if pod_phase == "Pending":
        return _pending(pod, now, grace, is_job, kubectl)
    if pod_phase == "Running" and not is_job:
        ready = o.condition(pod, "Ready")
        if ready is not None and ready.get("status") != "True":
            since = o.parse_time(ready.get("lastTransitionTime")) or created
            age = _age(since, now)
            detail = f"pod {name} is Running but not Ready for {format_age(age)}"
            if age > grace:
                return _PodProblem(
                    NOT_READY,
                    Status.FAIL,
                    Basis.MEASURED,
                    detail,
                    (("age", format_age(age)), describe),
                )
            return _PodProblem(
                STARTING,
                Status.WARN,
                Basis.MEASURED,
                detail,
                (("age", format_age(age)),),
            )
    return None


def _owner_of(
    pod: KubeObject, selectors: list[tuple[KubeObject, Mapping[str, Any]]]
) -> KubeObject | None:
    for workload, selector in selectors:
        if o.selector_matches(selector, o.labels_of(pod)):
            return workload
    return None


def check(env: Environment) -> list[Finding]:
    """Findings about the environment's workloads and the pods of workloads and training jobs."""
    workloads, findings = workloads_of(env, SAY)
    kubectl = env.settings.kubectl
    all_listed = not findings
    # A list of training jobs not read holds jobs whose state (paused, empty, failed, short of
    # shared memory) is not known: never all well. Their pods are still judged below, each
    # tied to its job by the pod's own owner and labels.
    findings += [SAY.cant_check(env, kind, cant) for kind, cant in env.work().unread]
    for workload in workloads:
        rollout = rollout_status(workload)
        if rollout.done or not rollout.ruled:
            # OnDelete has no rollout to judge (kubectl declines it too); a copy that does
            # not start is its pod's finding below.
            continue
        code, status = (UPDATE_STUCK, Status.FAIL) if rollout.stuck else (UPDATING, Status.WARN)
        target = f"{str(workload.get('kind', '')).lower()}/{o.name_of(workload)}"
        findings.append(
            SAY.finding(
                status,
                Basis.MEASURED,
                code,
                details=(f"{o.ref(workload)} rollout: {rollout.progress}",),
                objects=(o.ref(workload),),
                workload=owner_words(workload),
                progress=rollout.progress,
                command=kubectl.here("rollout", "status", target),
                undo=kubectl.here("rollout", "undo", target),
            )
        )
    work_found = env.work()
    if (
        all_listed
        and not workloads
        and isinstance(env.jobs, Listed)
        and not work_found.jobs
        and not work_found.unread
        and not work_found.unshaped
    ):
        findings.append(
            SAY.finding(
                Status.FAIL,
                Basis.MEASURED,
                NONE_FOUND,
                details=(
                    f"no Deployments, StatefulSets, DaemonSets or training jobs in {env.namespace}",
                ),
                namespace=env.namespace,
                command=kubectl.here("get", "deployments,statefulsets,daemonsets,jobs"),
            )
        )
    if isinstance(env.pods, CantRead):
        findings.append(SAY.cant_check(env, Kind.POD, env.pods))
        return findings
    selectors = [(w, o.mapping(o.mapping(w.get("spec")).get("selector"))) for w in workloads]
    jobs = {o.name_of(j): j for j in env.jobs.items} if isinstance(env.jobs, Listed) else {}
    work = env.work()
    events = env.warning_events.items if isinstance(env.warning_events, Listed) else ()
    logins = LoginReads(env.service_accounts, env.secrets)
    # The storage check says a volume the attach-detach controller could not attach.
    reported = pods_with_evidence(env.reports()) | {
        f.pod for f in attach_failures(events, waiting_to_attach(env.pods.items))
    }
    grouped: dict[tuple[str, str], tuple[KubeObject, list[tuple[_PodProblem, KubeObject]]]] = {}
    # A terminating pod is on its way out: its old image, crash loop or unreadiness is no
    # longer the workload's state (the controller already counts it out, kubectl#1628).
    for pod in o.remaining(env.pods.items):
        job_name = training_owner(pod)
        training_job = work.job_of(pod)
        owner: KubeObject | None = (
            {"kind": training_job.kind.spec.name, "metadata": {"name": training_job.name}}
            if training_job is not None
            else jobs.get(job_name)
            if job_name
            else _owner_of(pod, selectors)
        )
        if owner is None and job_name:
            owner = {"kind": "Job", "metadata": {"name": job_name}}
        if owner is None:
            continue  # not part of the environment
        problem = _pod_problem(
            pod, env.now, env.settings.pending_grace, bool(job_name), kubectl, events, logins
        )
        if problem is not None and problem.code in _WAITS and o.name_of(pod) in reported:
            continue  # a component said why it waits: the evidence or storage check says it
        if problem is not None:
            key = (problem.code, o.ref(owner))
            grouped.setdefault(key, (owner, []))[1].append((problem, pod))
    for (code, owner_ref), (owner, entries) in grouped.items():
        first = entries[0][0]
        findings.append(
            SAY.finding(
                first.status,
                first.basis,
                code,
                details=[problem.detail for problem, _ in entries],
                objects=(owner_ref, *(o.ref(pod) for _, pod in entries)),
                workload=owner_words(owner),
                **dict(first.fields),
            )
        )
    findings += _job_states(env)
    findings += _tries_out_of_memory(env)
    return findings or [SAY.ok(objects=[o.ref(w) for w in workloads])]


def _tries_out_of_memory(env: Environment) -> list[Finding]:
    """Each unfinished training job with a try the kernel killed for memory while the job
    tries again (`failed_tries`): a warning, measured. Its controller counts the try toward
    the job's limit of failed tries (pkg/controller/job job_controller.go
    `pastBackoffLimitOnFailure`), and the next try with the same settings meets the same
    limit; whether it runs out again is not yet measured, so no failure. A pod of an index
    its controller gave up on (`TrainingJob.failed_indexes`) is no try: nothing tries that
    index again."""
    findings = []
    for job in env.work().jobs:
        if job.finished:
            continue  # its ending is the last job's finding
        tries = [p for p in env.pods_of(job) if not job.gave_up_on(p)]
        kills = failed_tries(tries, env.now)
        if not kills:
            continue
        newest = kills[0]
        age = format_age(env.now - newest.ended) if newest.ended is not None else "a while"
        findings.append(
            SAY.finding(
                Status.WARN,
                Basis.MEASURED,
                TRY_OUT_OF_MEMORY,
                details=[kill.detail(env.now) for kill in kills],
                objects=(job.ref, *(f"Pod/{kill.pod}" for kill in kills)),
                job=f"'{job.name}'",
                age=age,
                command=env.settings.kubectl.here("describe", "pod", newest.pod),
            )
        )
    return findings


_INDEX_RANGES_SHOWN = 10
"""How many ranges of given-up indexes a detail line shows: the list can be thousands long."""


def _given_up(job: TrainingJob) -> str:
    """What the status of a Job bound to fail says: the indexes its controller gave up on,
    which it makes no new pod for, and how the Job ends (job_controller.go syncJob:
    `FailedIndexes` once each other index has ended)."""
    shown = _INDEX_RANGES_SHOWN
    text = indexes_text(job.failed_indexes[:shown])
    if len(job.failed_indexes) > shown:
        text += f",… ({len(job.failed_indexes)} ranges in all)"
    several = len(job.failed_indexes) > 1 or job.failed_indexes[0][0] != job.failed_indexes[0][1]
    return (
        f"{job.ref} {'indexes' if several else 'index'} {text} failed for good "
        f"(status.failedIndexes, backoffLimitPerIndex): its controller makes no new pod for "
        f"{'them' if several else 'it'} and fails the Job (FailedIndexes) once its other "
        "indexes have ended"
    )


def _empty(env: Environment, job: TrainingJob, planned: bool) -> Finding:
    """An unfinished job whose settings ask for no pods: a Job of parallelism 0, which its
    controller keeps "effectively paused" (pkg/controller/job: no pod is created while
    parallelism is 0), a LeaderWorkerSet of no replicas, replica specs that are all empty.
    `planned`: `--job-file`'s, whose settings are in the file, not in the cluster."""
    shown = "the job file" if planned else None
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        JOB_EMPTY,
        details=(
            f"{job.ref} asks for no pods: "
            + (", ".join(f"{s.name} x{s.count}" for s in job.pod_sets) or "no pod sets"),
        ),
        objects=(job.ref,),
        job=f"'{job.name}'",
        command=shown
        or env.settings.kubectl.here("get", job.kind.resource, job.name, "-o", "yaml"),
    )


def _not_installed(work: TrainingWork) -> list[Finding]:
    """`--job-file`'s job, of a kind discovery measured the cluster does not serve: `kubectl
    create -f` refuses it before any request ("no matches for kind … ensure CRDs are installed
    first", apimachinery pkg/api/meta/errors.go `NoKindMatchError`). A measured failure,
    whatever its pods would fit. Where the cluster serves the same kind at another version
    (`served_instead`: an MPIJob at v2beta1, the file's at v1), something does run it: the
    file is to be written for that version, since a second operator for the kind cannot be
    installed beside the first; otherwise nothing runs it, and what installs it is named."""
    job = work.planned or work.planned_unshaped
    if job is None or not work.planned_not_served:
        return []
    spec = job.kind.spec
    api_version = spec.api_version
    served = " or ".join(work.planned_served_as)
    details = (
        f"{job.ref}: {api_version} is not served (discovery: GET /apis, or the list of "
        f"{spec.plural}.{spec.group} answered 404); kubectl create answers “no matches "
        f'for kind "{spec.name}" in version "{api_version}"”',
    )
    if served:
        return [
            SAY.finding(
                Status.FAIL,
                Basis.MEASURED,
                KIND_VERSION_NOT_SERVED,
                details=(
                    *details,
                    f"{spec.plural}.{spec.group} is served at {served}: one CRD holds the "
                    "resource, so another operator's version of it can't be installed beside "
                    "it (kubeflow/trainer#1930)",
                ),
                objects=(job.ref,),
                job=f"'{job.name}'",
                kind=spec.name,
                api_version=api_version,
                served=served,
            )
        ]
    return [
        SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            KIND_NOT_INSTALLED,
            details=details,
            objects=(job.ref,),
            job=f"'{job.name}'",
            kind=spec.name,
            a_kind=with_article(spec.name),
            api_version=api_version,
            controller=CONTROLLERS[job.kind],
        )
    ]


_SPEC_SUSPEND = '{"spec":{"suspend":false}}'
# Where each kind keeps its `suspend` (the patch that starts it again): a CronJob's is
# `spec.suspend` (k8s.io/api/batch/v1 CronJobSpec), a Kubeflow job's `spec.runPolicy.suspend`.
_SUSPEND_PATCH = {
    Kind.JOB: _SPEC_SUSPEND,
    Kind.CRON_JOB: _SPEC_SUSPEND,
    Kind.JOB_SET: _SPEC_SUSPEND,
    Kind.TRAIN_JOB: _SPEC_SUSPEND,
    Kind.RAY_JOB: _SPEC_SUSPEND,
    Kind.RAY_CLUSTER: _SPEC_SUSPEND,
}
_KUBEFLOW_PATCH = '{"spec":{"runPolicy":{"suspend":false}}}'
_ENDING_CODES = {
    Ending.OUT_OF_MEMORY: (LAST_JOB_OUT_OF_MEMORY, Status.FAIL),
    Ending.IMAGE: (LAST_JOB_IMAGE, Status.FAIL),
    Ending.OVER_DISK_LIMIT: (LAST_JOB_OVER_DISK_LIMIT, Status.FAIL),
    Ending.EVICTED: (LAST_JOB_EVICTED, Status.WARN),
    Ending.DEADLINE: (LAST_JOB_DEADLINE, Status.FAIL),
    Ending.PROGRAM_FAILED: (LAST_JOB_FAILED, Status.FAIL),
    Ending.REFUSED: (LAST_JOB_REFUSED, Status.FAIL),
    Ending.NOT_PLACED: (LAST_JOB_NOT_PLACED, Status.FAIL),
    Ending.GROUP_NO_ROOM: (LAST_JOB_GROUP_NO_ROOM, Status.FAIL),
    Ending.MACHINE_REFUSED: (LAST_JOB_MACHINE_REFUSED, Status.FAIL),
    Ending.UNKNOWN: (LAST_JOB_FAILED, Status.FAIL),
}


def _disk_limit_words(limit: DiskLimit | None) -> dict[str, str]:
    """The limit an own-limit eviction went over, and the setting that raises it, in plain
    amounts (`10Gi` as `10 GiB`); nothing for any other ending."""
    if limit is None:
        return {}
    try:
        amount = format_amount(
            EPHEMERAL_STORAGE, scheduler_units(EPHEMERAL_STORAGE, parse_quantity(limit.limit))
        )
    except QuantityError:
        amount = limit.limit
    if limit.of is DiskLimitOf.VOLUME:
        return {
            "limit": f"the {amount} size limit of its scratch volume '{limit.name}'",
            "change": f"Raise the size limit of its volume '{limit.name}' "
            f"(`emptyDir.sizeLimit`, {amount} now)",
        }
    if limit.of is DiskLimitOf.PROGRAM:
        return {
            "limit": f"the {amount} of the machine's disk its program '{limit.name}' may use",
            "change": f"Raise the disk limit of its program '{limit.name}' "
            f"(`resources.limits.ephemeral-storage`, {amount} now)",
        }
    return {
        "limit": f"the {amount} of the machine's disk its programs may use in all",
        "change": "Raise its programs' disk limits (`resources.limits.ephemeral-storage`, "
        f"{amount} in all now)",
    }


def _shared_memory(env: Environment, job: TrainingJob) -> list[Finding]:
    """The judged job's programs that need a memory-backed /dev/shm and have the runtime's
    64 MiB: a warning with the lines that fix it."""
    needs = shared_memory_needs(job)
    if not needs:
        return []
    first = needs[0]
    return [
        SAY.finding(
            Status.WARN,
            Basis.INFERRED,
            NO_SHARED_MEMORY,
            details=[
                *(
                    f"{job.ref} {n.pod_set} container {n.container}: {n.signal}, no emptyDir of "
                    f"medium Memory at {SHM_PATH}"
                    for n in needs
                ),
                f"fix: {SHM_FIX}",
            ],
            objects=[job.ref],
            job=f"'{job.name}'",
            signal=first.signal,
        )
    ]


def _schedule_paused(env: Environment, cron: TrainingJob) -> Finding:
    """A suspended CronJob: its controller makes no Job while `spec.suspend` holds, and the
    Jobs it made run on (k8s.io/api/batch/v1 CronJobSpec.Suspend; pkg/controller/cronjob/
    cronjob_controllerv2.go syncCronJob). No controller suspends a CronJob (Kueue suspends the
    Jobs it makes), so a person paused it: said, and no failure of the environment."""
    return SAY.finding(
        Status.WARN,
        Basis.MEASURED,
        SCHEDULE_PAUSED,
        details=(f"{cron.ref} is suspended (spec.suspend)",),
        objects=(cron.ref,),
        job=f"'{cron.name}'",
        command=env.settings.kubectl.here(
            "patch", cron.kind.resource, cron.name, "--type=merge", "-p", _SUSPEND_PATCH[cron.kind]
        ),
    )


def _job_states(env: Environment) -> list[Finding]:
    """What the training jobs' own status says: a paused job nothing will start, one waiting
    for its queue or its manager, and the newest job's failure (its pods say how it ended).

    A queued job is the queue check's to judge where Kueue's queues were read; where they
    could not be (discovery or the LocalQueues unread), or for a job another controller
    manages, it waits (a warning). Where Kueue is not installed, a job held for a queue is
    paused and nothing will start it. While a list of training jobs is unread, no job is
    judged the newest (`TrainingWork.judged_unknown`)."""
    work = env.work()
    kubectl = env.settings.kubectl
    findings = []
    discovered = not any(kind is Kind.API_GROUPS for kind, _ in work.unread)
    queue = env.queue
    judged_by_queue = queue is not None and isinstance(queue.local_queues, Listed)
    findings += _not_installed(work)
    findings += [_empty(env, j, j is work.planned) for j in work.relevant() if j.empty]
    for job in work.jobs:
        if job.finished or not job.suspended:
            continue
        if job.kind is Kind.CRON_JOB:
            findings.append(_schedule_paused(env, job))
            continue
        if job.queue and not job.managed_by and job is work.judged and judged_by_queue:
            continue
        kueue_absent = queue is None and discovered
        if job.managed_by or (job.queue and not kueue_absent):
            findings.append(
                SAY.finding(
                    Status.WARN,
                    Basis.INFERRED,
                    JOB_QUEUED,
                    details=(
                        f"{job.ref} is suspended; "
                        + (f"queue {job.queue}" if job.queue else f"managed by {job.managed_by}"),
                    ),
                    objects=(job.ref,),
                    job=f"'{job.name}'",
                    queue=f"'{job.queue}'" if job.queue else f"'{job.managed_by}'",
                )
            )
            continue
        patch = _SUSPEND_PATCH.get(job.kind, _KUBEFLOW_PATCH)
        findings.append(
            SAY.finding(
                Status.FAIL,
                Basis.MEASURED,
                JOB_PAUSED,
                details=(
                    f"{job.ref} is suspended; its queue label names Kueue, which is not installed"
                    if job.queue
                    else f"{job.ref} is suspended and no queue or other controller manages it",
                ),
                objects=(job.ref,),
                job=f"'{job.name}'",
                command=kubectl.here(
                    "patch", job.kind.resource, job.name, "--type=merge", "-p", patch
                ),
            )
        )
    # A list of training jobs not read could hold a newer job (a healthy one): which job is
    # the newest, and so whose failure or shared memory speaks for the next run, is not known.
    # The `cant-read` finding `check` adds for each such list says so, as capacity, queue and
    # admission do (`TrainingWork.judged_unknown`).
    judged = None if work.judged_unknown else work.judged
    if judged is not None:
        findings += _shared_memory(env, judged)
    if judged is not None and judged is not work.planned and (judged.failed or judged.failing):
        pods = env.pods_of(judged)
        failure = job_failure(judged, pods)
        if judged.failing:
            # Bound to fail, not yet failed: the pods of the indexes given up on say how.
            pods = [p for p in pods if judged.gave_up_on(p)]
        if failure is not None:
            code, status = _ENDING_CODES[failure.ending]
            failed_pod = next((o.name_of(p) for p in pods if o.phase(p) == "Failed"), "")
            # A job its controller stopped at its deadline: `kubectl describe job` shows it.
            own_deadline = failure.reason == "DeadlineExceeded"
            command = (
                kubectl.here("logs", failed_pod)
                if failed_pod and failure.ending is Ending.PROGRAM_FAILED
                else kubectl.here("describe", "pod", failed_pod)
                if failed_pod and not own_deadline
                else kubectl.here("describe", judged.kind.spec.name.lower(), judged.name)
            )
            findings.append(
                SAY.finding(
                    status,
                    Basis.MEASURED,
                    code,
                    details=(
                        _given_up(judged)
                        if judged.failing
                        else f"{judged.ref} failed ({failure.reason or 'no reason given'})",
                        failure.detail,
                    ),
                    objects=(judged.ref,),
                    job=f"'{judged.name}'",
                    command=command,
                    said=quoted(failure.said or failure.detail),
                    scheduler=failure.by,
                    machine=f"'{failure.by}'",
                    **_disk_limit_words(failure.disk_limit),
                )
            )
    return findings
