"""The pod as the API server stores it, and preemption, over the fake API server.

Each scenario's objects follow the real shapes: LimitRanges as kubernetes.io's tasks write
them (docs/tasks/administer-cluster/manage-resources/memory-default-namespace,
memory-constraint-namespace), GPU machines as the managed services label and taint them, pods
with `spec.priority` as the Priority admission plugin sets it and `status.nominatedNodeName` as
the scheduler sets it on a preemptor (pkg/scheduler/schedule_one.go handleSchedulingFailure).
"""

import copy
import json
import urllib.request
from datetime import datetime, timedelta
from typing import Any

from tests.scenario.conftest import Doctor
from tests.support.fake_apiserver import Fault
from tests.support.scenarios import (
    NAMESPACE,
    find,
    gpu_held_by_notebook,
    healthy,
    job_pod,
    running_containers,
    training_job,
    ts,
)

Obj = dict[str, Any]

# The codes this file pins (test_doctor_codes checks that every catalogue code is pinned).
PINNED_HERE = {
    "admission.limit-range-refused",
    "admission.default-limit-below-request",
    "admission.priority-missing",
    "admission.account-missing",
    "capacity.preempts",
    "capacity.preemption-under-way",
    "capacity.reservation-unknown",
}
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
"""The taint GPU operators' docs and the managed services put on GPU machines."""


def _check(report: dict[str, Any], check: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == check]


def _codes(report: dict[str, Any], check: str) -> list[tuple[str, str, str]]:
    return [(f["code"], f["status"], f["basis"]) for f in _check(report, check)]


def limit_range(name: str, **item: Any) -> Obj:
    """A LimitRange of one Container item (as `kubectl apply` sends it: the API server fills
    the item's defaults itself, SetDefaults_LimitRangeItem)."""
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"limits": [{"type": "Container", **item}]},
    }


def _newest_job(now: datetime, resources: Obj, **spec: Any) -> Obj:
    """train-002, newer than train-001: its trainer container sized by `resources` alone."""
    job = training_job("train-002", now, age=timedelta(minutes=5))
    pod_spec = job["spec"]["template"]["spec"]
    pod_spec["containers"][0]["resources"] = resources
    pod_spec.update(spec)
    return job


# -- defaulting and LimitRanger --------------------------------------------------------------------


def test_a_memory_limit_alone_is_the_request_not_the_range_s_default(doctor: Doctor) -> None:
    """kubernetes.io memory-default-namespace, "What if you specify a container's limit, but
    not its request?": the request is set to the limit (SetDefaults_Pod, before LimitRanger),
    so a trainer limited to 80 GiB needs 80 GiB, more than any machine has."""

    def build(now: datetime) -> list[Obj]:
        return [
            *healthy(now),
            limit_range("mem-limit-range", defaultRequest={"memory": "256Mi", "cpu": "500m"}),
            _newest_job(now, {"limits": {"memory": "80Gi", "nvidia.com/gpu": "1"}}),
        ]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    (capacity,) = _check(report, "capacity")
    assert (capacity["code"], capacity["status"]) == ("capacity.too-large", "fail")
    assert capacity["details"][0] == (
        "job size 0.5 CPUs, 80 GiB memory, 1 nvidia.com/gpu (from the template of Job/train-002)"
    )
    assert report["job"]["pod_sets"][0]["requests"]["memory"] == 80 * 1024**3
    assert result.exit_code == 2


def test_a_range_maximum_that_refuses_the_job_is_a_measured_failure(doctor: Doctor) -> None:
    """kubernetes.io memory-constraint-namespace: a container limit over the range's max is
    refused (`maximum memory usage per Container is 1Gi, but limit is 1536Mi`); the Job then
    never gets a pod."""

    def build(now: datetime) -> list[Obj]:
        return [
            *healthy(now),
            limit_range("mem-min-max", max={"memory": "1Gi"}, min={"memory": "500Mi"}),
            _newest_job(now, {"limits": {"memory": "1536Mi"}, "requests": {"cpu": "1"}}),
        ]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "admission") == [("admission.limit-range-refused", "fail", "measured")]
    (refused,) = _check(report, "admission")
    assert refused["headline"] == (
        "A training job can't start: the environment's size limits 'mem-min-max' refuse it "
        "('trainer' may use up to 1.5 GiB memory, more than the 1 GiB memory each program may "
        "have)."
    )
    assert refused["details"] == [
        "LimitRange mem-min-max refuses the pods of Job/train-002 (worker): forbidden: maximum "
        "memory usage per Container is 1Gi, but limit is 1536Mi"
    ]
    assert refused["objects"] == ["LimitRange/mem-min-max", "Job/train-002"]
    assert (report["headline"]["rule"], report["headline"]["code"]) == (
        "root-cause-failure",
        "admission.limit-range-refused",
    )
    assert result.exit_code == 2


DEFAULTS_BELOW_THE_REQUEST = limit_range(
    "defaults",
    default={"cpu": "1", "memory": "2Gi"},
    defaultRequest={"cpu": "500m", "memory": "1Gi"},
)
"""kubernetes.io concepts/policy/limit-range ("LimitRange and admission checks for Pods"): a
range whose default limit is below what a container requests."""
INVALID_TRAINER = (
    'spec.containers[0].resources.requests: Invalid value: "4": must be less than or equal to '
    'cpu limit of 1, spec.containers[0].resources.requests: Invalid value: "16Gi": must be less '
    "than or equal to memory limit of 2Gi"
)
"""pkg/apis/core/validation ValidateResourceRequirements on healthy's trainer (requests cpu 4,
memory 16Gi, nvidia.com/gpu 1; a limit of nvidia.com/gpu alone) after the range's defaults."""


def test_a_default_limit_below_the_request_makes_every_pod_invalid(doctor: Doctor) -> None:
    """LimitRanger fills a limit the container does not state from the range's `default`
    without looking at the request (plugin/pkg/admission/limitranger/admission.go
    mergeContainerResources: `if _, found := container.Resources.Limits[k]; !found`); the
    create's validation, after the mutating plugins (apiserver registry/generic/registry/
    store.go create: rest.BeforeCreate before createValidation), then refuses a request above
    its limit (pkg/apis/core/validation ValidateResourceRequirements). Every pod of the job is
    refused; the Job controller records only FailedCreate."""
    doctor.load(lambda now: [*healthy(now), DEFAULTS_BELOW_THE_REQUEST])
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "admission") == [
        ("admission.default-limit-below-request", "fail", "measured")
    ]
    (refused,) = _check(report, "admission")
    assert refused["headline"] == (
        "A training job can't start: 'trainer' asks for 4 CPUs and 16 GiB memory but states no "
        "most it may use, and the environment's default sizes 'defaults' set that most to "
        "1 CPU and 2 GiB memory, below what it asks for."
    )
    assert refused["remedy"] == (
        "Set the most 'trainer' may use (CPU and memory) in the training job's settings, at "
        "least what it asks for, or ask your cluster admin to raise the default sizes "
        f"'defaults' (`kubectl --kubeconfig {doctor.kubeconfig} describe limitrange defaults` "
        "shows them)."
    )
    assert refused["details"] == [
        "the defaults of LimitRange defaults make the pods of Job/train-001 (worker) invalid: "
        f"[{INVALID_TRAINER}]"
    ]
    assert refused["objects"] == ["LimitRange/defaults", "Job/train-001"]
    assert result.exit_code == 2


def test_the_server_refuses_the_invalid_trial_start_in_the_words_doctor_read(
    doctor: Doctor,
) -> None:
    """The fake's validation, written apart from doctor's, refuses the trial start with the
    sentence doctor worked out (apimachinery errors.NewInvalid: `Pod "<name>" is invalid: …`)."""
    doctor.load(lambda now: [*healthy(now), DEFAULTS_BELOW_THE_REQUEST])
    report = doctor.live("-o", "json", "--admission-dry-run").json()
    codes = [f["code"] for f in _check(report, "admission")]
    assert codes == ["admission.default-limit-below-request", "admission.trial-refused"]
    refused, trial = _check(report, "admission")
    assert trial["headline"] == (
        f"The cluster refused a trial start of the training job: [{INVALID_TRAINER}]"
    )
    assert refused["details"][0].endswith(f"invalid: [{INVALID_TRAINER}]")


def test_a_default_limit_above_the_request_is_let_in(doctor: Doctor) -> None:
    """The same range with limits the trainer's requests fit under: nothing to refuse."""
    wide = limit_range("defaults", default={"cpu": "8", "memory": "32Gi"})
    doctor.load(lambda now: [*healthy(now), wide])
    report = doctor.live("-o", "json").json()
    assert _codes(report, "admission") == [("admission.ok", "ok", "measured")]


def test_the_server_refuses_the_trial_start_in_the_words_doctor_read(doctor: Doctor) -> None:
    """The fake's LimitRanger, written apart from doctor's, refuses the trial start with the
    same sentence doctor worked out."""
    doctor.load(lambda now: [*healthy(now), limit_range("mem-max", max={"memory": "1Gi"})])
    doctor.server.add(_newest_job(doctor.now, {"limits": {"memory": "1536Mi"}}))
    report = doctor.live("-o", "json", "--admission-dry-run").json()
    codes = [f["code"] for f in _check(report, "admission")]
    assert codes == ["admission.limit-range-refused", "admission.trial-refused"]
    refused, trial = _check(report, "admission")
    assert trial["headline"] == (
        "The cluster refused a trial start of the training job: maximum memory usage per "
        "Container is 1Gi, but limit is 1536Mi"
    )
    assert refused["details"][0].endswith(
        "forbidden: maximum memory usage per Container is 1Gi, but limit is 1536Mi"
    )


def test_a_job_within_the_range_is_let_in_at_the_range_s_defaults(doctor: Doctor) -> None:
    """The range's max is its default limit (SetDefaults_LimitRangeItem): a container stating
    no memory is let in, sized at the default request."""
    doctor.load(lambda now: [*healthy(now), limit_range("mem-max", max={"memory": "8Gi"})])
    doctor.server.add(_newest_job(doctor.now, {"requests": {"cpu": "1"}}))
    report = doctor.live("-o", "json").json()
    assert _codes(report, "admission") == [("admission.ok", "ok", "measured")]
    assert report["job"]["pod_sets"][0]["requests"] == {"cpu": 1000, "memory": 8 * 1024**3}


def test_limit_ranges_that_cannot_be_read_leave_admission_unknown(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.server.inject(Fault.FORBIDDEN, r"/limitranges$")
    result = doctor.live("-o", "json")
    assert ("admission.cant-read", "unknown", "cant-check") in _codes(result.json(), "admission")
    assert result.exit_code == 3


# -- ExtendedResourceToleration --------------------------------------------------------------------


def _tainted_gpu_machine(labels: dict[str, str], **spec: Any) -> Any:
    """The healthy namespace with gpu-1 tainted `nvidia.com/gpu=present:NoSchedule` (and
    labelled `labels`); the training job selects the GPU machines and states no toleration."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        gpu = find(objects, "Node", "gpu-1")
        gpu["metadata"]["labels"].update(labels)
        gpu["spec"] = {"taints": [GPU_TAINT], **spec}
        job = find(objects, "Job", "train-001")
        job["spec"]["template"]["spec"]["nodeSelector"] = {"accelerator": "gpu"}
        return objects

    return build


def test_on_eks_the_gpu_machine_s_taint_is_tolerated_by_inference(doctor: Doctor) -> None:
    """EKS runs ExtendedResourceToleration (docs.aws.amazon.com/eks/latest/userguide/
    platform-versions.html); a managed node group's machines carry eks.amazonaws.com/nodegroup.
    The job asking for a GPU gets the toleration: it fits, inferred."""
    doctor.load(_tainted_gpu_machine({"eks.amazonaws.com/nodegroup": "gpu-a10g"}))
    result = doctor.live("-o", "json")
    (capacity,) = _check(result.json(), "capacity")
    assert (capacity["code"], capacity["status"], capacity["basis"]) == (
        "capacity.fits",
        "ok",
        "inferred",
    )
    assert "fits on gpu-1" in capacity["details"]
    assert capacity["details"][-1].startswith(
        "inferred: machine gpu-1 carries the label eks.amazonaws.com/nodegroup (EKS, whose API "
        "server runs ExtendedResourceToleration: docs.aws.amazon.com/eks/"
    )
    assert result.exit_code == 0


def test_on_an_unknown_provider_the_gpu_machine_is_an_honest_unknown(doctor: Doctor) -> None:
    """Whether the plugin runs is not visible through the API: the machine is neither called
    reserved nor offered `kubectl taint … nvidia.com/gpu-`."""
    doctor.load(_tainted_gpu_machine({}, providerID="aws:///us-east-1a/i-0123456789abcdef0"))
    result = doctor.live("-o", "json")
    report = result.json()
    (capacity,) = _check(report, "capacity")
    assert (capacity["code"], capacity["status"], capacity["basis"]) == (
        "capacity.reservation-unknown",
        "unknown",
        "cant-check",
    )
    assert capacity["headline"] == (
        "Couldn't tell whether the training job may use gpu-1, kept for work that asks for "
        "'nvidia.com/gpu': the cluster may let it in on its own, or not."
    )
    assert capacity["remedy"] == (
        "Run again with --admission-dry-run to see what the cluster does, or let the job onto "
        "them in its settings with `tolerations: [{key: nvidia.com/gpu, operator: Exists, "
        "effect: NoSchedule}]`."
    )
    assert capacity["details"][:3] == [
        "not known whether the cluster adds a toleration for nvidia.com/gpu "
        "(ExtendedResourceToleration): the machines run on AWS (providerID aws://…) but carry "
        "no label of its managed service: a control plane run elsewhere may not add it",
        "if it does: capacity.fits (ok)",
        "if it does not: capacity.no-eligible-machine (fail)",
    ]
    assert "taint" not in capacity["remedy"].replace("`tolerations", "")
    assert result.exit_code == 3


def test_the_trial_start_measures_the_toleration_the_cluster_adds(doctor: Doctor) -> None:
    """With --admission-dry-run the server's own stored pod is fitted: the fake runs
    ExtendedResourceToleration as an EKS API server does."""
    doctor.load(_tainted_gpu_machine({}))
    doctor.server.admission.extended_resource_toleration = True
    result = doctor.live("-o", "json", "--admission-dry-run")
    (capacity,) = _check(result.json(), "capacity")
    assert (capacity["code"], capacity["status"], capacity["basis"]) == (
        "capacity.fits",
        "ok",
        "measured",
    )
    assert capacity["details"][-1] == (
        "the trial start's answer carries a toleration the job does not state "
        "(nvidia.com/gpu:NoSchedule): the cluster adds it"
    )
    assert result.exit_code == 0


def test_the_trial_start_measures_that_the_cluster_adds_none(doctor: Doctor) -> None:
    doctor.load(_tainted_gpu_machine({"eks.amazonaws.com/nodegroup": "gpu"}))
    assert doctor.server.admission.extended_resource_toleration is False, "precondition"
    result = doctor.live("-o", "json", "--admission-dry-run")
    (capacity,) = _check(result.json(), "capacity")
    assert (capacity["code"], capacity["basis"]) == ("capacity.no-eligible-machine", "measured")
    assert capacity["details"][-1] == (
        "the trial start's answer carries no toleration for nvidia.com/gpu: the cluster does not "
        "add it"
    )
    assert result.exit_code == 2


def _posted(doctor: Doctor, pod: Obj) -> Obj:
    """`pod` created as the Job controller creates it (a POST through the fake's admission
    gates, ExtendedResourceToleration among them when on); the pod as the server stored it."""
    request = urllib.request.Request(
        f"{doctor.server.url}/api/v1/namespaces/{NAMESPACE}/pods",
        data=json.dumps(pod).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request) as answer:
        stored: Obj = json.loads(answer.read())
    return stored


def _placed(doctor: Doctor, stored: Obj, node: str, phase: str, **status: Any) -> None:
    """The stored pod bound to `node` (the scheduler's binding) in `phase` (the kubelet's)."""
    stored["spec"]["nodeName"] = node
    stored["status"] = {"phase": phase, **status}
    doctor.server.update_object(stored)


def test_the_job_s_own_stored_pod_measures_the_toleration_the_cluster_adds(
    doctor: Doctor,
) -> None:
    """The running job's pod, as the API server stored it, carries the toleration its template
    does not state: the server runs ExtendedResourceToleration, and the GPU machine is the
    job's to use (measured, no unknown)."""
    objects = doctor.load(_tainted_gpu_machine({}))
    job = find(objects, "Job", "train-001")
    job["status"] = {"active": 1, "ready": 1, "startTime": ts(doctor.now - timedelta(minutes=20))}
    doctor.server.update_object(job)
    doctor.server.admission.allow_creates = True
    doctor.server.admission.extended_resource_toleration = True
    stored = _posted(doctor, job_pod(job, doctor.now, suffix="q8r2t", node_name=None))
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in stored[
        "spec"
    ]["tolerations"], "precondition: the plugin ran"
    _placed(
        doctor,
        stored,
        "gpu-1",
        "Running",
        conditions=[{"type": "PodScheduled", "status": "True"}],
        containerStatuses=running_containers(
            stored["metadata"]["name"], stored["spec"]["containers"], ts(doctor.now)
        ),
    )
    result = doctor.live("-o", "json")
    (capacity,) = _check(result.json(), "capacity")
    assert (capacity["status"], capacity["basis"]) == ("ok", "measured")
    assert capacity["details"][-1] == (
        "pod train-001-q8r2t requests nvidia.com/gpu and, as the API server stored it, carries "
        "the toleration nvidia.com/gpu:NoSchedule (operator Exists) its template does not "
        "state: the cluster adds it"
    )
    assert result.exit_code == 0


def test_a_stored_pod_without_the_toleration_measures_that_the_cluster_adds_none(
    doctor: Doctor,
) -> None:
    """The newest job's pod waits, stored without the toleration, and the scheduler says the
    GPU machine's taint keeps it off: a measured failure, with no unknown about whether the
    cluster might add the toleration beside it."""
    objects = doctor.load(_tainted_gpu_machine({}))
    job = training_job("train-002", doctor.now, age=timedelta(minutes=20), finished=False)
    doctor.server.add(job)
    doctor.server.admission.allow_creates = True
    stored = _posted(doctor, job_pod(job, doctor.now, suffix="q8r2t", node_name=None))
    assert "tolerations" not in stored["spec"], "precondition: the plugin is off"
    said = (
        "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated "
        "taint {nvidia.com/gpu: present}. preemption: 0/2 nodes are available: 2 Preemption "
        "is not helpful for scheduling."
    )
    stored["status"] = {
        "phase": "Pending",
        "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": said}
        ],
    }
    doctor.server.update_object(stored)
    assert find(objects, "Node", "gpu-1")["spec"]["taints"] == [GPU_TAINT], "precondition"
    result = doctor.live("-o", "json")
    report = result.json()
    codes = _codes(report, "capacity")
    assert ("capacity.unschedulable", "fail", "measured") in codes
    assert "capacity.reservation-unknown" not in [code for code, _, _ in codes]
    assert all(status == "fail" and basis == "measured" for _, status, basis in codes), codes
    assert (
        "pod train-002-q8r2t requests nvidia.com/gpu and, as the API server stored it, carries "
        "no toleration nvidia.com/gpu:NoSchedule (operator Exists): the cluster does not add it"
    ) in [line for f in _check(report, "capacity") for line in f["details"]]
    assert result.exit_code == 2


def test_what_the_cluster_adds_is_not_said_where_no_machine_is_kept_for_it(doctor: Doctor) -> None:
    """No machine is tainted for the GPUs: whether the cluster adds the toleration changes
    nothing, and neither the stored pod nor the trial start's answer is a line of the fit."""
    objects = doctor.load("healthy")
    job = find(objects, "Job", "train-001")
    doctor.server.admission.allow_creates = True
    doctor.server.admission.extended_resource_toleration = True
    stored = _posted(doctor, job_pod(job, doctor.now, suffix="q8r2t", node_name=None))
    _placed(doctor, stored, "gpu-1", "Succeeded")
    for args in ((), ("--admission-dry-run",)):
        result = doctor.live("-o", "json", *args)
        (capacity,) = _check(result.json(), "capacity")
        assert capacity["code"] == "capacity.fits", args
        assert not [line for line in capacity["details"] if "the cluster adds it" in line], args
        assert result.exit_code == 0


def test_a_stored_pod_whose_template_states_the_toleration_shows_nothing(doctor: Doctor) -> None:
    """The plugin adds nothing to a pod that states its toleration already: such a pod says
    nothing about the cluster, and the honest unknown stands for the next job."""

    def build(now: datetime) -> list[Obj]:
        objects = _tainted_gpu_machine({})(now)
        stating = training_job("train-000", now, age=timedelta(hours=5))
        stating["spec"]["template"]["spec"]["tolerations"] = [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
        ]
        return [
            *objects,
            stating,
            job_pod(stating, now, suffix="a1b2c", node_name="gpu-1", phase="Succeeded"),
        ]

    doctor.load(build)
    result = doctor.live("-o", "json")
    assert _codes(result.json(), "capacity") == [
        ("capacity.reservation-unknown", "unknown", "cant-check")
    ]
    assert result.exit_code == 3


# -- preemption and nominated pods -----------------------------------------------------------------


def priority_class(name: str, value: int, **fields: Any) -> Obj:
    """A PriorityClass (scheduling.k8s.io/v1), as kubernetes.io pod-priority-preemption
    writes one."""
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        **fields,
    }


def _urgent_job(now: datetime, gpus: int = 2, cls: str = "training-high") -> Obj:
    job = training_job("train-002", now, gpus=gpus, age=timedelta(minutes=5))
    job["spec"]["template"]["spec"]["priorityClassName"] = cls
    return job


def test_a_higher_priority_job_preempts_the_work_holding_its_room(doctor: Doctor) -> None:
    """The notebook holds both GPUs at priority 0; a job of class training-high (1000) gets
    them by preemption (defaultpreemption SelectVictimsOnNode): a warning that names it."""

    def build(now: datetime) -> list[Obj]:
        return [
            *gpu_held_by_notebook(now),
            priority_class("training-high", 1000, description="training that may preempt"),
            _urgent_job(now),
        ]

    doctor.load(build)
    result = doctor.live("-o", "json")
    (capacity,) = _check(result.json(), "capacity")
    assert (capacity["code"], capacity["status"], capacity["basis"]) == (
        "capacity.preempts",
        "warn",
        "inferred",
    )
    assert capacity["headline"] == (
        "A training job of 4 CPUs, 16 GiB memory, 2 nvidia.com/gpu can start only by stopping "
        "work of a lower priority: the workload 'notebook-alice' in 'research' "
        "(2 nvidia.com/gpu on gpu-1)."
    )
    assert (
        "priority 1000 (class 'training-high'), may preempt lower priorities"
        in (capacity["details"])
    )
    assert (
        "would preempt pod research/notebook-alice-0 (priority 0) on gpu-1" in (capacity["details"])
    )
    assert result.exit_code == 0


def test_a_job_that_never_preempts_is_blocked_by_the_same_work(doctor: Doctor) -> None:
    def build(now: datetime) -> list[Obj]:
        return [
            *gpu_held_by_notebook(now),
            priority_class("training-high", 1000, preemptionPolicy="Never"),
            _urgent_job(now),
        ]

    doctor.load(build)
    result = doctor.live("-o", "json")
    (capacity,) = _check(result.json(), "capacity")
    assert capacity["code"] == "capacity.blocked-by-other-work"
    assert (
        "priority 1000 (class 'training-high'), never preempts (preemptionPolicy)"
        in (capacity["details"])
    )
    assert result.exit_code == 2


def _preempting(now: datetime) -> list[Obj]:
    """kube-scheduler has preempted for the job's pod: the notebook holding both GPUs of gpu-1
    is terminating with `DisruptionTarget` `PreemptionByScheduler` (framework/preemption/
    preemption.go prepareCandidate), the pod is nominated for gpu-1 (`status.nominatedNodeName`,
    schedule_one.go handleSchedulingFailure), and on its retry the scheduler says it waits for
    the victim (defaultpreemption/default_preemption.go PodEligibleToPreemptOthers)."""
    objects = gpu_held_by_notebook(now)
    notebook = find(objects, "Pod", "notebook-alice-0")
    notebook["metadata"].update(
        {"deletionTimestamp": ts(now - timedelta(seconds=20)), "deletionGracePeriodSeconds": 30}
    )
    notebook["status"]["conditions"] = [
        {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "PreemptionByScheduler",
            "message": "default-scheduler: preempting to accommodate a higher priority pod",
        }
    ]
    job = training_job("train-002", now, gpus=2, finished=False, age=timedelta(minutes=3))
    job["spec"]["template"]["spec"]["priorityClassName"] = "training-high"
    pod = job_pod(job, now, suffix="w1", node_name=None, phase="Pending", age=timedelta(minutes=3))
    pod["spec"].update({"priority": 1000, "preemptionPolicy": "PreemptLowerPriority"})
    pod["status"]["nominatedNodeName"] = "gpu-1"
    pod["status"]["conditions"][0]["message"] = (
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: not eligible due "
        "to a terminating pod on the nominated node."
    )
    return [*objects, priority_class("training-high", 1000), job, pod]


def test_a_preemption_under_way_is_a_wait(doctor: Doctor) -> None:
    """The room on the nominated machine is the pod's once the victim is gone: the scheduler
    binds it there, a measured wait, and the victim is not named again as work to stop."""
    doctor.load(_preempting)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "capacity") == [("capacity.preemption-under-way", "warn", "measured")], (
        "a preemption under way is reported as a failure"
    )
    assert report["headline"]["text"] == (
        "The cluster is stopping work of a lower priority on gpu-1 to make room for the "
        "training job 'train-002'; the job starts there once that work is gone."
    )
    (capacity,) = _check(report, "capacity")
    assert capacity["details"] == [
        "scheduler on train-002-w1: 0/2 nodes are available: 2 Insufficient nvidia.com/gpu. "
        "preemption: not eligible due to a terminating pod on the nominated node.",
        "train-002-w1 is nominated for gpu-1: the scheduler keeps that room for it while the "
        "work it preempted there stops",
    ]
    assert result.exit_code == 0


def test_a_preemption_for_one_pod_of_a_job_that_runs_together_is_no_wait(
    doctor: Doctor,
) -> None:
    """Two pods that must run at once: the scheduler preempted for one of them, and for the
    other finds nothing to stop (the preemption plugin's `No preemption victims found for
    incoming pod`, framework/preemption/preemption.go), so its nomination is cleared. The job
    does not start whole: the scheduler's verdict stands."""

    def build(now: datetime) -> list[Obj]:
        objects = _preempting(now)
        job, first = objects[-2], objects[-1]
        job["spec"].update({"parallelism": 2, "completions": 2, "completionMode": "Indexed"})
        second = copy.deepcopy(first)
        second["metadata"]["name"] = "train-002-w2"
        del second["status"]["nominatedNodeName"]
        second["status"]["conditions"][0]["message"] = (
            "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are "
            "available: 2 No preemption victims found for incoming pod."
        )
        return [*objects, second]

    doctor.load(build)
    result = doctor.live("-o", "json")
    assert _codes(result.json(), "capacity") == [("capacity.too-large", "fail", "measured")]
    assert result.exit_code == 2


def test_work_of_the_same_priority_is_never_preempted(doctor: Doctor) -> None:
    def build(now: datetime) -> list[Obj]:
        objects = gpu_held_by_notebook(now)
        find(objects, "Pod", "notebook-alice-0")["spec"]["priority"] = 1000
        return [*objects, priority_class("training-high", 1000), _urgent_job(now)]

    doctor.load(build)
    (capacity,) = _check(doctor.live("-o", "json").json(), "capacity")
    assert capacity["code"] == "capacity.blocked-by-other-work"


def test_the_default_class_gives_a_job_naming_none_its_priority(doctor: Doctor) -> None:
    """No class named: the globalDefault class's value (priority admission getDefaultPriority),
    known once the notebook's own priority makes the classes worth reading."""

    def build(now: datetime) -> list[Obj]:
        objects = gpu_held_by_notebook(now)
        find(objects, "Pod", "notebook-alice-0")["spec"]["priority"] = -10
        job = training_job("train-002", now, gpus=2, age=timedelta(minutes=5))
        return [
            *objects,
            priority_class("batch-low", -10),
            priority_class("standard", 100, globalDefault=True),
            job,
        ]

    doctor.load(build)
    (capacity,) = _check(doctor.live("-o", "json").json(), "capacity")
    assert capacity["code"] == "capacity.preempts"
    assert "priority 100 (class 'standard'), may preempt lower priorities" in capacity["details"]


def _nominated(priority: int, gpus: int = 2) -> Obj:
    """A pending pod in another namespace that a preemption nominated for gpu-1."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "serving-0", "namespace": "inference"},
        "spec": {
            "priority": priority,
            "containers": [
                {
                    "name": "s",
                    "image": "s",
                    "resources": {"requests": {"nvidia.com/gpu": str(gpus)}},
                }
            ],
        },
        "status": {
            "phase": "Pending",
            "nominatedNodeName": "gpu-1",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "0/2 nodes are available: 1 Insufficient nvidia.com/gpu.",
                }
            ],
        },
    }


def test_room_promised_to_a_nominated_pod_of_higher_priority_is_not_free(doctor: Doctor) -> None:
    """framework/runtime addNominatedPods: a pod nominated for gpu-1 at priority 2000 counts
    against gpu-1 for the job (priority 0)."""
    doctor.load("healthy")
    doctor.server.add(_nominated(2000))
    result = doctor.live("-o", "json")
    (capacity,) = _check(result.json(), "capacity")
    assert capacity["code"] == "capacity.blocked-by-other-work"
    assert "best machine gpu-1 is 1 nvidia.com/gpu short" in capacity["details"]
    assert result.exit_code == 2


def test_room_promised_to_a_lower_priority_pod_is_still_the_job_s(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.server.add(_nominated(-5))
    (capacity,) = _check(doctor.live("-o", "json").json(), "capacity")
    assert capacity["code"] == "capacity.fits"


def test_priority_levels_that_cannot_be_read_leave_preemption_unknown(doctor: Doctor) -> None:
    def build(now: datetime) -> list[Obj]:
        return [*gpu_held_by_notebook(now), priority_class("training-high", 1000), _urgent_job(now)]

    doctor.load(build)
    doctor.server.inject(Fault.FORBIDDEN, r"^/apis/scheduling.k8s.io/v1/priorityclasses$")
    result = doctor.live("-o", "json")
    report = result.json()
    (capacity,) = _check(report, "capacity")
    assert (capacity["code"], capacity["status"]) == ("capacity.cant-read", "unknown")
    assert capacity["headline"] == (
        "Couldn't check whether there is room for a training job: no permission to read the "
        "priority levels."
    )
    assert (
        "needs list priorityclasses.scheduling.k8s.io (cluster-wide: a ClusterRole)"
        in (capacity["details"][0])
    )
    assert result.exit_code == 3


def test_a_job_naming_a_missing_priority_is_refused(doctor: Doctor) -> None:
    """priority admission: `no PriorityClass with name training-high was found`."""
    doctor.load(lambda now: [*healthy(now), _urgent_job(now, gpus=1)])
    result = doctor.live("-o", "json")
    report = result.json()
    assert ("admission.priority-missing", "fail", "measured") in _codes(report, "admission")
    assert result.exit_code == 2


def test_a_job_whose_service_account_does_not_exist_is_refused(doctor: Doctor) -> None:
    """ServiceAccount admission (plugin/pkg/admission/serviceaccount/admission.go `Admit`)
    refuses the pod: `error looking up service account train/trainer: serviceaccount "trainer"
    not found`. The account's read answering NotFound is that measurement, never "ready"."""

    def build(now: datetime) -> list[Obj]:
        job = training_job("train-009", now, gpus=1, finished=False)
        job["spec"]["template"]["spec"]["serviceAccountName"] = "trainer"
        return [*healthy(now), job]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "admission") == [("admission.account-missing", "fail", "measured")]
    assert report["headline"]["text"] == (
        "A training job can't start: the identity 'trainer' its programs run as doesn't exist "
        "in the environment."
    )
    assert "create serviceaccount trainer`" in report["headline"]["remedy"]
    assert result.exit_code == 2


def test_a_cluster_at_priority_zero_reads_no_priority_levels(doctor: Doctor) -> None:
    doctor.load("gpu-held-by-notebook")
    doctor.live("-o", "json")
    paths = {r.path for r in doctor.server.requests()}
    assert "/apis/scheduling.k8s.io/v1/priorityclasses" not in paths
    assert "/api/v1/pods" in paths, "precondition: the cluster's pods were summed"


def test_the_nominated_pod_s_age_does_not_matter(doctor: Doctor) -> None:
    """A nomination is the scheduler's own measurement: no grace period applies to it."""
    doctor.load("healthy")
    pod = _nominated(2000)
    pod["metadata"]["creationTimestamp"] = ts(doctor.now - timedelta(seconds=5))
    doctor.server.add(pod)
    (capacity,) = _check(doctor.live("-o", "json").json(), "capacity")
    assert capacity["code"] == "capacity.blocked-by-other-work"


def test_a_quota_scoped_to_the_default_priority_counts_a_job_naming_none(doctor: Doctor) -> None:
    """The Priority plugin names the globalDefault class on the pod before ResourceQuota
    matches its scopes (plugin order, pkg/kubeapiserver/options/plugins.go): a quota on the
    `standard` class covers the job."""
    from tests.scenario.test_admission import quota

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        # a pod created since the default class exists carries its priority
        find(objects, "Pod", "mysql-def34")["spec"]["priority"] = 100
        scope = {
            "matchExpressions": [
                {"scopeName": "PriorityClass", "operator": "In", "values": ["standard"]}
            ]
        }
        return [
            *objects,
            priority_class("standard", 100, globalDefault=True),
            quota("standard-work", {"pods": "1"}, {"pods": "1"}, scopeSelector=scope),
        ]

    doctor.load(build)
    result = doctor.live("-o", "json")
    assert _codes(result.json(), "admission") == [("admission.quota-exceeded", "fail", "measured")]
    assert result.exit_code == 2


def test_a_size_that_is_no_quantity_under_pod_level_limits_is_one_plain_finding(
    doctor: Doctor,
) -> None:
    """defaultPodResources sums the containers; an amount that is not a quantity there is
    the job's bad size, never a crash."""

    def build(now: datetime) -> list[Obj]:
        job = _newest_job(now, {"requests": {"cpu": "lots"}})
        job["spec"]["template"]["spec"]["resources"] = {"limits": {"cpu": "4"}}
        return [*healthy(now), job]

    doctor.load(build)
    result = doctor.live("-o", "json")
    assert result.stderr == ""
    (capacity,) = _check(result.json(), "capacity")
    assert (capacity["code"], capacity["status"]) == ("capacity.bad-job-size", "fail")
    assert result.exit_code == 2
