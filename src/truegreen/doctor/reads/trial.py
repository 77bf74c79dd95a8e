"""`--trial`: the training job's own pods started for a few seconds, after every other read.

The pods are the one doctor's admission trial sends (doctor/checks/admission/trial.py
`trial_pod`: the judged job's largest pod set's template as its controller would post it),
made into trial pods by truegreen.trial.pods and run by truegreen.trial.run, which deletes them
on every path. A distributed job (pods that run together, more than one) gets two workers,
rank 0 first, kept on two machines where the job's pods would span machines; the rendezvous
port is the job's `MASTER_PORT` where its trainer states one; the /dev/shm it needs is the
size its memory-backed /dev/shm volume states; the job's PriorityClass is dropped where it may
preempt (a trial pod never does: truegreen.trial.pods). A job handed to a Kueue queue hands its
trial pods to the same queue. A signal that stops the trial before its pods could all be removed
ends the run saying which are left and the command that removes them (truegreen.left_behind).
"""

from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import Kind, Listed
from truegreen.doctor.checks.admission.trial import trial_pod as job_pod
from truegreen.doctor.checks.capacity.filters.dynamic_resources import device_rules
from truegreen.doctor.checks.capacity.filters.framework import Found, JobPodSet
from truegreen.doctor.checks.trial import left_behind
from truegreen.doctor.environment import Environment
from truegreen.doctor.knowledge.claimed_gpus import claimed_gpus
from truegreen.doctor.knowledge.fit import pod_requests
from truegreen.doctor.knowledge.gpu_supply import allocatable_gpus
from truegreen.doctor.knowledge.stored_pod import job_priority
from truegreen.doctor.knowledge.training import QUEUE_LABEL, TrainingJob
from truegreen.gpu_resources import ClaimedGpus, is_gpu_class, is_gpu_resource
from truegreen.left_behind import LeftBehind
from truegreen.quantity import Resources
from truegreen.trial.pods import (
    TrialSettings,
    new_run_id,
    shm_need_mib,
    trainer_index,
    trial_pod,
)
from truegreen.trial.readback import TrialRun
from truegreen.trial.record import redacted
from truegreen.trial.run import REPORT_MARGIN_SECONDS, TrialClient, TrialInterrupted, run_trial

DEFAULT_PORT = 29500
_DEADLINE_MARGIN_SECONDS = 30
"""The kubelet's own deadline for a trial pod, past doctor's: it ends the pod if doctor
cannot (killed, or the connection lost)."""
_PROBE_WAIT_LIMIT_SECONDS = 300
"""The probe's own bound on its wait for the other workers (TRUEGREEN_PROBE_INIT_TIMEOUT_S)."""


PYTORCH_JOB_PORT = 23456
"""training-operator's rendezvous port for a PyTorchJob that names none
(pkg/apis/kubeflow.org/v1/constants.go `PyTorchJobDefaultPort`, added by its defaulting as the
`pytorch` container's port `pytorchjob-port`: pytorch_defaults.go `setPytorchDefaultPort`)."""
_PYTORCH_CONTAINER = "pytorch"
_PYTORCH_PORT_NAME = "pytorchjob-port"


def _port(job: TrainingJob, spec: object, claimed: tuple[ClaimedGpus, ...]) -> int:
    """The job's rendezvous port, as the job's pods get it: a PyTorchJob with a Master gets
    `MASTER_PORT` from its controller, the port `pytorchjob-port` of the Master's `pytorch`
    container (training-operator pkg/controller.v1/pytorch/envvar.go `getPortFromPyTorchJob`),
    else the operator's default; it is appended after the template's env, and of two entries of
    one name the last is the one the container sees (pkg/kubelet/kubelet_pods.go
    makeEnvironmentVariables). Any other job: the trainer's literal `MASTER_PORT`, else
    PyTorch's own default."""
    master = next((s for s in job.pod_sets if s.name == "Master"), None)
    if job.kind is Kind.PYTORCH_JOB and master is not None:
        return _pytorch_port(master.spec) or PYTORCH_JOB_PORT
    containers = o.containers(o.mapping(spec))
    if not containers:
        return DEFAULT_PORT
    trainer = containers[trainer_index(o.mapping(spec), claimed)]
    for item in o.sequence(trainer.get("env")):
        value = o.mapping(item).get("value")
        if o.mapping(item).get("name") == "MASTER_PORT" and str(value).isdigit():
            return int(str(value))
    return DEFAULT_PORT


def _pytorch_port(spec: object) -> int | None:
    """The port `pytorchjob-port` of a pod spec's `pytorch` container; None where it has none."""
    for container in o.containers(o.mapping(spec)):
        if container.get("name") != _PYTORCH_CONTAINER:
            continue
        for port in o.sequence(container.get("ports")):
            number = o.mapping(port).get("containerPort")
            if o.mapping(port).get("name") == _PYTORCH_PORT_NAME and isinstance(number, int):
                return number
    return None


def _shm_need(spec: object, claimed: tuple[ClaimedGpus, ...]) -> int:
    containers = o.containers(o.mapping(spec))
    if not containers:
        return 0
    return shm_need_mib(containers[trainer_index(o.mapping(spec), claimed)], o.mapping(spec))


def _claimed(env: Environment, spec: object) -> tuple[ClaimedGpus, ...]:
    """The GPUs the job's pod asks for through its device claims, from the device objects doctor
    read for the job (none read: a job without claims)."""
    devices = env.devices
    if devices is None:
        return ()
    return claimed_gpus(
        o.mapping(spec), env.namespace, devices.templates, devices.claims, devices.classes
    )


def _gpus(amounts: Resources) -> int:
    return sum(amount for name, amount in amounts.amounts if is_gpu_resource(name))


def _needs_machines_apart(env: Environment, job: TrainingJob) -> bool:
    """Whether the job's pods would span machines: all its GPUs, those of a GPU resource and
    those its device claims take (knowledge/claimed_gpus.py, the fewest where the number is not
    fixed), more than the largest machine offers, by its allocatable GPU resources and the GPU
    devices of its ResourceSlices (`_gpu_devices`). Then the workers are kept on two machines,
    so the network between machines is what is measured; otherwise they may share one, as the
    job's own pods would. Machines not read: kept apart (the harder case)."""
    if not isinstance(env.nodes, Listed):
        return True
    wanted = sum(
        (_gpus(pod_requests(s.spec)) + sum(c.at_least for c in _claimed(env, s.spec))) * s.count
        for s in job.pod_sets
    )
    devices = _gpu_devices(env, job)
    largest = max(
        (allocatable_gpus(n) + devices.get(o.name_of(n), 0) for n in env.nodes.items), default=0
    )
    return wanted > largest


def _gpu_devices(env: Environment, job: TrainingJob) -> dict[str, int]:
    """Per machine, the devices of a GPU DeviceClass (truegreen.gpu_resources.is_gpu_class)
    that the job's device claims could take there, counted as the capacity check counts them
    (filters/dynamic_resources.py `device_rules`: the classes' and the requests' selectors,
    device taints, the newest generation of each pool); none where they can't be counted, and
    then the job is kept apart if it asks for any."""
    devices = env.devices
    if devices is None or not isinstance(env.nodes, Listed):
        return {}
    sets = [JobPodSet(s.name, s.spec, s.labels) for s in job.pod_sets]
    room = device_rules(
        sets, env.namespace, env.nodes.items, devices, env.settings.kubectl, Found()
    )
    classes = (
        {o.name_of(c): c for c in devices.classes.items}
        if isinstance(devices.classes, Listed)
        else {}
    )
    gpus = [kind for kind, name in room.classes if is_gpu_class(name, classes.get(name))]
    return {machine: sum(there.get(k) for k in gpus) for machine, there, _ in room.machines}


def _preempting_class(env: Environment, spec: object) -> str:
    """The PriorityClass the job's pod names where its pods may preempt (the Priority plugin's
    answer, knowledge/stored_pod.py `job_priority`), or where the classes could not be read to
    tell; '' otherwise. A class that does not exist is kept: the server refuses the trial pod
    as it refuses the job's."""
    named = str(o.mapping(spec).get("priorityClassName") or "")
    classes = env.priority_classes
    if not named or not isinstance(classes, Listed):
        return named
    level = job_priority(o.mapping(spec), classes.items)
    return named if level.preempts and not level.missing else ""


def _listen_seconds(timeout: float) -> int:
    """How long rank 0 listens for the workers: the trial's time, less the margin its report
    needs, and never less than a worker's own wait. A worker starts once its machine has the
    image, which may take longer there than on rank 0's; it is waited for as long as the trial
    can, not a fixed few seconds."""
    default = TrialSettings(run="", deadline_seconds=0).init_timeout_seconds
    wanted = max(default, int(timeout) - REPORT_MARGIN_SECONDS)
    return min(wanted, _PROBE_WAIT_LIMIT_SECONDS)


def with_trial(env: Environment, client: TrialClient) -> Environment:
    """`env` with what the trial of its judged training job measured; unchanged when there is
    no training job to try."""
    run = trial_of(env, client)
    return env if run is None else replace(env, trial_run=run)


def trial_of(env: Environment, client: TrialClient) -> TrialRun | None:
    """What the trial of `env`'s judged training job read back, redacted by the snapshot's
    policy (a live run and its snapshot judge the same text); None when there is no training
    job to try, or which job is judged is not known (no pod is made then)."""
    work = env.training
    # A list of training jobs not read could hold a newer job than the newest listed: the
    # trial's pods would be made for a job that may not be the one judged (`judged_unknown`).
    job = work.judged if work is not None and not work.judged_unknown else None
    if job is None:
        return None
    pod = job_pod(job)
    pods = sum(s.count for s in job.pod_sets)
    world = 2 if job.together and pods > 1 else 1
    timeout = env.settings.trial_timeout
    claimed = _claimed(env, pod.get("spec"))
    settings = TrialSettings(
        run=new_run_id(),
        deadline_seconds=int(timeout) + _DEADLINE_MARGIN_SECONDS,
        rendezvous_port=_port(job, pod.get("spec"), claimed),
        shm_need_mib=_shm_need(pod.get("spec"), claimed),
        claimed_gpus=claimed,
        listen_seconds=_listen_seconds(timeout),
        selector_keys=job.selector_keys,
        preempting_class=_preempting_class(env, pod.get("spec")),
        queue_labels=((QUEUE_LABEL, job.queue),) if job.queue else (),
    )

    apart = world > 1 and _needs_machines_apart(env, job)

    def make(master: str) -> list[dict[str, object]]:
        return [
            trial_pod(
                job.name, pod, settings, rank=r, world=world, master=master, separate_machines=apart
            )
            for r in range(world)
        ]

    try:
        run = run_trial(client, env.namespace, make, timeout_seconds=timeout)
    except TrialInterrupted as stopped:
        what, todo = left_behind(env, stopped.run)
        raise LeftBehind(stopped.signal, what, todo) from stopped
    return redacted(run)
