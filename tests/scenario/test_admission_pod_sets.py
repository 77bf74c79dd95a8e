"""Admission of a job of several pod sets (a PyTorchJob's Master and Workers) over the fake API
server: every set's pods pass the gates, not only the largest set's.

The training operator creates each replica type's pods from its own template
(kubeflow/training-operator pkg/controller.v1/common/pod.go ReconcilePods), and the API server
admits each pod on its own: one refused set leaves the job without its pods.
"""

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tests.scenario.conftest import Doctor
from tests.support import training_kinds as kinds
from tests.support.scenarios import NAMESPACE, healthy
from tests.support.training_kinds import ALL_GROUPS

Obj = dict[str, Any]


def _replica(count: int, cpu: str, **spec: Any) -> Obj:
    """One replica type of a PyTorchJob as `kubectl apply -f` sends it (kubeflow.org/v1
    ReplicaSpec: replicas and a pod template)."""
    return {
        "replicas": count,
        "template": {
            "spec": {
                **spec,
                "imagePullSecrets": [{"name": "regcred"}],
                "containers": [
                    {
                        "name": "pytorch",
                        "image": "registry.example.com/trainer:2.1",
                        "resources": {
                            "requests": {"cpu": cpu, "memory": "8Gi"},
                            "limits": {"cpu": cpu, "memory": "8Gi"},
                        },
                    }
                ],
            }
        },
    }


def pytorch_job(tmp_path: Path, master: Obj, worker: Obj) -> Path:
    """A PyTorchJob manifest not yet submitted (`--job-file`), Master and Worker replicas."""
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "bert-large", "namespace": NAMESPACE},
        "spec": {"pytorchReplicaSpecs": {"Master": master, "Worker": worker}},
    }
    path = tmp_path / "pytorchjob.json"
    path.write_text(json.dumps(job))
    return path


def limit_range(name: str, **item: Any) -> Obj:
    """A LimitRange of one Container item, as `kubectl apply` sends it."""
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"limits": [{"type": "Container", **item}]},
    }


def _admission(report: Obj) -> list[Obj]:
    return [f for f in report["findings"] if f["check"] == "admission"]


def _codes(report: Obj) -> list[tuple[str, str, str]]:
    return [(f["code"], f["status"], f["basis"]) for f in _admission(report)]


def test_an_admitted_trial_of_the_workers_leaves_the_masters_refusal(
    doctor: Doctor, tmp_path: Path
) -> None:
    """The trial start is made of the largest set's pod (the Workers, 2 CPUs each) and the
    server admits it; the Master (8 CPUs) is still over the LimitRange's `max` (limitranger/
    admission.go maxConstraint: "maximum cpu usage per Container is 4, but limit is 8"). The
    server's answer measures the pod it was asked about, not the Master's."""
    doctor.server.install("kubeflow.org")  # the training operator serves PyTorchJob
    doctor.load("healthy")
    doctor.server.add(limit_range("per-program", max={"cpu": "4"}))
    path = pytorch_job(tmp_path, master=_replica(1, "8"), worker=_replica(2, "2"))
    result = doctor.live("-o", "json", "--job-file", str(path), "--admission-dry-run")
    report = result.json()
    assert _codes(report) == [("admission.limit-range-refused", "fail", "measured")], (
        "the Master's refusal stays"
    )
    assert result.exit_code == 2
    assert report["headline"]["code"] == "admission.limit-range-refused"
    assert report["headline"]["text"] == (
        "A training job can't start: the environment's size limits 'per-program' refuse it "
        "('pytorch' may use up to 8 CPUs, more than the 4 CPUs each program may have)."
    )
    (found,) = _admission(report)
    assert found["details"] == [
        "LimitRange per-program refuses the pods of PyTorchJob/bert-large (Master): forbidden: "
        "maximum cpu usage per Container is 4, but limit is 8",
        "the trial start was made of the Worker pods only: it does not answer for Master",
    ]


def test_an_admitted_trial_answers_for_every_set_of_the_same_template(
    doctor: Doctor, tmp_path: Path
) -> None:
    """Master and Workers of one template: the server's answer for one pod of it is the answer
    for all; what doctor read into the template is overruled for every set."""
    doctor.server.install("kubeflow.org")  # the training operator serves PyTorchJob
    doctor.load("healthy")
    doctor.server.add(limit_range("per-program", max={"cpu": "4"}))
    path = pytorch_job(tmp_path, master=_replica(1, "2"), worker=_replica(2, "2"))
    result = doctor.live("-o", "json", "--job-file", str(path), "--admission-dry-run")
    report = result.json()
    assert _codes(report) == [("admission.ok", "ok", "measured")]
    assert result.exit_code == 0
    assert "trial start: admitted" in _admission(report)[0]["details"]


def _namespace(labels: dict[str, str]) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": NAMESPACE,
            "labels": {"kubernetes.io/metadata.name": NAMESPACE, **labels},
        },
        "status": {"phase": "Active"},
    }


def test_pod_security_judges_the_master_not_only_the_workers(
    doctor: Doctor, tmp_path: Path
) -> None:
    """`enforce: baseline`; the Master alone asks for the machine's network (hostNetwork), the
    three Workers don't. Pod Security judges each pod created (pod-security-admission
    policy/check_hostNamespaces.go: "host namespaces (hostNetwork=true)"): the Master is
    refused, and the job never runs."""
    doctor.server.install("kubeflow.org")  # the training operator serves PyTorchJob
    doctor.load("healthy")
    doctor.server.add(_namespace({"pod-security.kubernetes.io/enforce": "baseline"}))
    path = pytorch_job(tmp_path, master=_replica(1, "2", hostNetwork=True), worker=_replica(3, "2"))
    result = doctor.live("-o", "json", "--job-file", str(path))
    report = result.json()
    assert _codes(report) == [("admission.security-level", "fail", "measured")], (
        "the Master's hostNetwork is refused"
    )
    assert result.exit_code == 2
    assert report["headline"]["code"] == "admission.security-level"
    (found,) = _admission(report)
    assert found["headline"] == (
        "The training job is refused by the environment's security level 'baseline': it asks "
        "for a share of the machine's own network or processes."
    )
    assert found["details"] == [
        'the pods of PyTorchJob/bert-large (Master): violates PodSecurity "baseline:latest": '
        "hostNamespaces (hostNetwork=true)"
    ]
    assert found["objects"] == ["Namespace/train", "PyTorchJob/bert-large"]


def _quota(name: str, hard: dict[str, str], used: dict[str, str]) -> Obj:
    """A ResourceQuota as the quota controller leaves it: status.hard copied, status.used
    counted."""
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"hard": hard},
        "status": {"hard": hard, "used": used},
    }


def test_a_quota_judges_the_master_not_only_the_workers(doctor: Doctor, tmp_path: Path) -> None:
    """`limits.cpu` 10, 4 used: a Worker's 2 CPUs fit, the Master's 8 don't. The quota plugin
    charges each pod created (pkg/quota/v1/evaluator/core/pods.go PodUsageFunc; resourcequota/
    controller.go checkRequest: used + requested > hard refuses it)."""
    doctor.server.install("kubeflow.org")  # the training operator serves PyTorchJob
    doctor.load("healthy")
    doctor.server.add(_quota("compute", {"limits.cpu": "10"}, {"limits.cpu": "4"}))
    path = pytorch_job(tmp_path, master=_replica(1, "8"), worker=_replica(2, "2"))
    result = doctor.live("-o", "json", "--job-file", str(path))
    report = result.json()
    assert _codes(report) == [("admission.quota-exceeded", "fail", "measured")], (
        "the Master is over the quota"
    )
    assert result.exit_code == 2
    assert report["headline"]["text"] == (
        "A training job can't start: the usage limit 'compute' is reached (the limit on CPU: "
        "4 CPUs of 10 CPUs in use, the job needs 8 CPUs)."
    )
    (found,) = _admission(report)
    assert found["details"] == [
        "quota compute: limits.cpu used 4000 + requested 8000 > hard 10000",
        "refuses the pods of PyTorchJob/bert-large (Master)",
    ]


def test_pod_level_sizes_satisfy_a_quota_on_cpu_and_memory(doctor: Doctor) -> None:
    """The template states CPU and memory for the whole pod (`spec.resources`), its container
    only the GPU. With pod-level resources set, the quota plugin asks the containers for no
    sizes (pkg/quota/v1/evaluator/core/pods.go podEvaluator.Constraints: PodLevelResources,
    beta and on by default since 1.34, and IsPodLevelResourcesSet) and charges the pod-level
    amounts (PodUsageFunc)."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        (job,) = [o for o in objects if o["kind"] == "Job" and o["metadata"]["name"] == "train-001"]
        template = job["spec"]["template"]["spec"]
        template["resources"] = {
            "requests": {"cpu": "4", "memory": "16Gi"},
            "limits": {"cpu": "4", "memory": "16Gi"},
        }
        gpu = {"nvidia.com/gpu": "1"}
        template["containers"][0]["resources"] = {"requests": gpu, "limits": gpu}
        return objects

    doctor.load(build)
    doctor.server.add(
        _quota(
            "compute",
            {"limits.cpu": "64", "limits.memory": "256Gi", "requests.cpu": "64"},
            {"limits.cpu": "0", "limits.memory": "0", "requests.cpu": "1500m"},
        )
    )
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report) == [("admission.ok", "ok", "measured")], "pod-level sizes count"
    assert result.exit_code == 0
    assert "usage limit compute compared" in _admission(report)[0]["details"]


def test_a_pytorchjob_is_not_charged_the_count_of_batch_jobs(
    doctor: Doctor, tmp_path: Path
) -> None:
    """`count/jobs.batch` is full; creating a PyTorchJob creates no batch/v1 Job. The quota
    plugin charges an object of any other kind `count/pytorchjobs.kubeflow.org` only
    (apiserver admission/plugin/resourcequota/controller.go checkRequest: the evaluator of the
    request's GroupResource; quota/v1/generic/evaluator.go ObjectCountQuotaResourceNameFor)."""
    doctor.server.install("kubeflow.org")  # the training operator serves PyTorchJob
    doctor.load("healthy")
    doctor.server.add(_quota("objects", {"count/jobs.batch": "3"}, {"count/jobs.batch": "3"}))
    path = pytorch_job(tmp_path, master=_replica(1, "2"), worker=_replica(1, "2"))
    result = doctor.live("-o", "json", "--job-file", str(path))
    report = result.json()
    assert _codes(report) == [("admission.ok", "ok", "measured")], "no batch Job is created"
    assert result.exit_code == 0


def test_a_pytorchjob_is_refused_by_the_count_of_its_own_kind(
    doctor: Doctor, tmp_path: Path
) -> None:
    """`count/pytorchjobs.kubeflow.org` 3 of 3: creating the PyTorchJob itself is refused
    (the object-count evaluator, unscoped), and a finished PyTorchJob counts until deleted."""
    doctor.load("healthy")
    full = {"count/pytorchjobs.kubeflow.org": "3"}
    doctor.server.add(_quota("objects", full, full))
    path = pytorch_job(tmp_path, master=_replica(1, "2"), worker=_replica(1, "2"))
    result = doctor.live("-o", "json", "--job-file", str(path))
    report = result.json()
    assert _codes(report) == [("admission.quota-exceeded", "fail", "measured")]
    assert result.exit_code == 2
    assert report["headline"]["text"] == (
        "A training job can't start: the usage limit 'objects' is reached (training jobs "
        "(finished ones count until deleted): 3 of 3 in use, the job needs 1)."
    )
    assert report["headline"]["remedy"] == (
        "Delete finished training jobs (they count until deleted), or ask your cluster admin "
        "to raise the limit 'objects'."
    )
    assert _admission(report)[0]["details"] == [
        "quota objects: count/pytorchjobs.kubeflow.org used 3 + requested 1 > hard 3"
    ]


# -- what the training operator adds to the pods it creates ---------------------------------------

RESTRICTED_POD = {
    "securityContext": {
        "runAsNonRoot": True,
        "runAsUser": 1000,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
}
"""kubernetes.io concepts/security/pod-security-standards, restricted: what the pod states."""


def _restricted(replica: Obj) -> Obj:
    """A replica whose own containers meet `restricted` (allowPrivilegeEscalation false,
    capabilities drop ALL)."""
    for container in replica["template"]["spec"]["containers"]:
        container["securityContext"] = {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        }
    return replica


RESTRICTED_CONTAINER = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
"""What `restricted` asks of every container, init containers included."""


def _operator_ran(doctor: Doctor, *, meets_restricted: bool) -> None:
    """Another PyTorchJob, 'gpt', that the training operator took up (its `Created` condition,
    training-operator pytorchjob_controller.go onOwnerCreateFunc) and created the pods of: its
    Worker carries the init container the operator adds to every Worker, from its default
    template, or (`meets_restricted`) from one the operator was given that meets `restricted`
    (--pytorch-init-container-template-file)."""
    doctor.server.install(*ALL_GROUPS)
    job = kinds.pytorch_job("gpt", doctor.now, workers=1, gpus=0, age=timedelta(hours=1))
    small = {"cpu": "100m", "memory": "128Mi"}
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        replica["template"]["spec"]["containers"][0]["resources"] = {
            "requests": small,
            "limits": small,
        }
    master = kinds.pytorch_pod(job, "Master", 0, doctor.now, node_name="cpu-1")
    worker = kinds.pytorch_pod(job, "Worker", 0, doctor.now, node_name="cpu-1")
    assert worker["spec"]["initContainers"][-1]["name"] == "init-pytorch"
    if meets_restricted:
        worker["spec"]["initContainers"][-1]["securityContext"] = RESTRICTED_CONTAINER
    doctor.server.add(job, master, worker)


def test_the_operator_s_init_container_breaks_the_security_level_of_the_workers(
    doctor: Doctor, tmp_path: Path
) -> None:
    """kubeflow/training-operator v1.4-v1.9 appends `init-pytorch` to every Worker pod of a
    PyTorchJob with a Master (pkg/controller.v1/pytorch/initcontainer.go setInitContainer);
    here its default template, no securityContext, as it added it to gpt's Worker. Pod
    Security visits init containers (pod-security-admission policy/
    check_allowPrivilegeEscalation.go, check_capabilities_restricted.go), so every Worker is
    refused though the job's own settings meet `restricted`: measured on that pod."""
    doctor.server.install("kubeflow.org")  # the training operator serves PyTorchJob
    doctor.load("healthy")
    doctor.server.add(_namespace({"pod-security.kubernetes.io/enforce": "restricted"}))
    _operator_ran(doctor, meets_restricted=False)
    path = pytorch_job(
        tmp_path,
        master=_restricted(_replica(1, "2", **RESTRICTED_POD)),
        worker=_restricted(_replica(2, "2", **RESTRICTED_POD)),
    )
    result = doctor.live("-o", "json", "--job-file", str(path))
    report = result.json()
    assert _codes(report) == [("admission.operator-container-refused", "fail", "measured")]
    (found,) = _admission(report)
    assert found["headline"] == (
        "A training job can't start: the training operator adds its own start-up program "
        "'init-pytorch' to the job's Worker programs, and it breaks the environment's security "
        "level 'restricted' (it asks for the right to gain more privileges and 1 more)."
    )
    assert found["remedy"] == (
        "Ask your cluster admin to give the training operator a start-up program that meets "
        "the security level (its `--pytorch-init-container-template-file` setting), or to "
        "lower the security level; a PyTorch job without a Master gets no such program."
    )
    assert found["details"] == [
        'the pods of PyTorchJob/bert-large (Worker): violates PodSecurity "restricted:latest": '
        'allowPrivilegeEscalation (container "init-pytorch" must set '
        "securityContext.allowPrivilegeEscalation=false)",
        'the pods of PyTorchJob/bert-large (Worker): violates PodSecurity "restricted:latest": '
        'capabilities (container "init-pytorch" must set '
        'securityContext.capabilities.drop=["ALL"])',
        "init-pytorch: as the training operator added it to pod gpt-worker-0",
    ]
    assert result.exit_code == 2


def test_an_admitted_trial_start_does_not_answer_for_the_operator_s_init_container(
    doctor: Doctor, tmp_path: Path
) -> None:
    """The trial pod is the Workers' template as written: the operator adds `init-pytorch`
    only to the pods it creates, so the server's admission of the trial says nothing of it."""
    doctor.server.install("kubeflow.org")  # the training operator serves PyTorchJob
    doctor.load("healthy")
    doctor.server.add(_namespace({"pod-security.kubernetes.io/enforce": "restricted"}))
    _operator_ran(doctor, meets_restricted=False)
    path = pytorch_job(
        tmp_path,
        master=_restricted(_replica(1, "2", **RESTRICTED_POD)),
        worker=_restricted(_replica(2, "2", **RESTRICTED_POD)),
    )
    report = doctor.live("-o", "json", "--job-file", str(path), "--admission-dry-run").json()
    # No trial-refused, trial-failed or trial-not-allowed: the server admitted the trial pod.
    assert _codes(report) == [("admission.operator-container-refused", "fail", "measured")]


def test_the_operator_s_init_container_is_under_a_range_s_minimum(
    doctor: Doctor, tmp_path: Path
) -> None:
    """`init-pytorch` requests memory 10Mi (the default template, on gpt's Worker): a range's
    Container `min` of 64Mi refuses every Worker (limitranger/admission.go minConstraint), not
    the Master."""
    doctor.server.install("kubeflow.org")  # the training operator serves PyTorchJob
    doctor.load("healthy")
    doctor.server.add(limit_range("mins", min={"memory": "64Mi"}))
    _operator_ran(doctor, meets_restricted=False)
    path = pytorch_job(tmp_path, master=_replica(1, "2"), worker=_replica(2, "2"))
    report = doctor.live("-o", "json", "--job-file", str(path)).json()
    assert _codes(report) == [("admission.operator-container-refused", "fail", "measured")]
    (found,) = _admission(report)
    assert found["headline"] == (
        "A training job can't start: the training operator adds its own start-up program "
        "'init-pytorch' to the job's Worker programs, and it breaks the environment's size "
        "limits 'mins' ('init-pytorch' asks for 10 MiB memory, less than the 64 MiB memory each "
        "program must have)."
    )
    assert found["details"][0] == (
        "LimitRange mins refuses the pods of PyTorchJob/bert-large (Worker): forbidden: minimum "
        "memory usage per Container is 64Mi, but request is 10Mi"
    )


def test_a_template_the_operator_was_given_that_meets_the_level_lets_the_workers_in(
    doctor: Doctor, tmp_path: Path
) -> None:
    """The operator was given a template that meets `restricted` (gpt's Worker shows it):
    that, not the default, is what it adds to the next job's Workers."""
    doctor.server.install("kubeflow.org")  # the training operator serves PyTorchJob
    doctor.load("healthy")
    doctor.server.add(_namespace({"pod-security.kubernetes.io/enforce": "restricted"}))
    _operator_ran(doctor, meets_restricted=True)
    path = pytorch_job(
        tmp_path,
        master=_restricted(_replica(1, "2", **RESTRICTED_POD)),
        worker=_restricted(_replica(2, "2", **RESTRICTED_POD)),
    )
    report = doctor.live("-o", "json", "--job-file", str(path)).json()
    assert _codes(report) == [("admission.ok", "ok", "measured")]


def _restricted_pytorch_job(now: datetime) -> Obj:
    """PyTorchJob bert (Master + 2 Workers of 1 CPU and 1 GiB), taken up by the operator, whose
    own settings meet `restricted`."""
    job = kinds.pytorch_job("bert", now, workers=2, gpus=0, age=timedelta(minutes=30))
    size = {"cpu": "1", "memory": "1Gi"}
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        replica["template"]["spec"]["containers"][0]["resources"] = {
            "requests": size,
            "limits": size,
        }
        _restricted(replica)
        replica["template"]["spec"].update(RESTRICTED_POD)
    return job


def test_the_job_s_own_workers_show_what_the_operator_adds(doctor: Doctor) -> None:
    """bert runs; its Workers, as the operator created them, carry an `init-pytorch` that meets
    `restricted` (the only way such a job runs there): measured on them, it lets them in."""
    doctor.server.install(*ALL_GROUPS)
    doctor.load("healthy")
    doctor.server.add(_namespace({"pod-security.kubernetes.io/enforce": "restricted"}))
    job = _restricted_pytorch_job(doctor.now)
    pods = [kinds.pytorch_pod(job, "Master", 0, doctor.now, node_name="gpu-1")]
    for index in range(2):
        worker = kinds.pytorch_pod(job, "Worker", index, doctor.now, node_name="gpu-1")
        worker["spec"]["initContainers"][-1]["securityContext"] = RESTRICTED_CONTAINER
        pods.append(worker)
    doctor.server.add(job, *pods)
    result = doctor.live("-o", "json")
    assert _codes(result.json()) == [("admission.ok", "ok", "measured")]
    assert result.exit_code == 0


def test_the_job_s_own_init_container_on_its_workers_is_the_job_s_not_the_operator_s(
    doctor: Doctor,
) -> None:
    """The Workers' template has an init container of its own, 'fetch-data', that breaks
    `restricted`; the operator appends its compliant 'init-pytorch' after it. Only what the
    template does not hold is the operator's: 'fetch-data' is the job's own refusal."""
    doctor.server.install(*ALL_GROUPS)
    doctor.load("healthy")
    doctor.server.add(_namespace({"pod-security.kubernetes.io/enforce": "restricted"}))
    job = _restricted_pytorch_job(doctor.now)
    fetch = {"name": "fetch-data", "image": "registry.example.com/fetch:1"}
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["initContainers"] = [fetch]
    worker = kinds.pytorch_pod(job, "Worker", 0, doctor.now, node_name="gpu-1")
    assert [c["name"] for c in worker["spec"]["initContainers"]] == ["fetch-data", "init-pytorch"]
    worker["spec"]["initContainers"][-1]["securityContext"] = RESTRICTED_CONTAINER
    master = kinds.pytorch_pod(job, "Master", 0, doctor.now, node_name="gpu-1")
    doctor.server.add(job, master, worker)
    report = doctor.live("-o", "json").json()
    assert _codes(report) == [("admission.security-level", "fail", "measured")]


def test_with_no_worker_to_read_the_operator_s_default_is_not_a_measurement(
    doctor: Doctor,
) -> None:
    """The operator took bert up and created its Master, no Worker yet: what it adds is not
    visible through the API (its template file and version are its own settings), so its
    default template breaking `restricted` is what doctor could not check, never a measured
    refusal."""
    doctor.server.install(*ALL_GROUPS)
    doctor.load("healthy")
    doctor.server.add(_namespace({"pod-security.kubernetes.io/enforce": "restricted"}))
    job = _restricted_pytorch_job(doctor.now)
    doctor.server.add(job, kinds.pytorch_pod(job, "Master", 0, doctor.now, node_name="gpu-1"))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report) == [("admission.operator-container-unverified", "unknown", "cant-check")]
    (found,) = _admission(report)
    assert found["headline"] == (
        "Couldn't check the start-up program the training operator adds to the job's Worker "
        "programs: none of them exists yet, and its settings can't be read; its default one, "
        "'init-pytorch', breaks the environment's security level 'restricted' (it asks for the "
        "right to gain more privileges and 1 more)."
    )
    assert found["remedy"] == (
        "Ask your cluster admin whether the training operator is given a start-up program that "
        "meets the security level (its `--pytorch-init-container-template-file` setting), and "
        "if not, for one, or to lower the security level; once the job's Worker programs "
        "exist, doctor checks theirs."
    )
    assert result.exit_code == 3


def test_with_no_training_operator_seen_doctor_says_so(doctor: Doctor, tmp_path: Path) -> None:
    """No PyTorchJob here was ever taken up (none has a status; both operators set `Created`
    when they first see one: training-operator pytorchjob_controller.go onOwnerCreateFunc,
    pytorch-operator pkg/controller.v1/pytorch/job.go) and no pod of one exists: whether an
    operator runs at all, and what it would add, can't be seen."""
    doctor.server.install(*ALL_GROUPS)
    doctor.load("healthy")
    doctor.server.add(_namespace({"pod-security.kubernetes.io/enforce": "restricted"}))
    path = pytorch_job(
        tmp_path,
        master=_restricted(_replica(1, "2", **RESTRICTED_POD)),
        worker=_restricted(_replica(2, "2", **RESTRICTED_POD)),
    )
    result = doctor.live("-o", "json", "--job-file", str(path))
    report = result.json()
    assert _codes(report) == [("admission.operator-not-seen", "unknown", "cant-check")]
    (found,) = _admission(report)
    assert found["headline"] == (
        "Couldn't check the start-up program a training operator adds to the job's Worker "
        "programs: no training operator has taken up a PyTorch job here yet; the default one, "
        "'init-pytorch', breaks the environment's security level 'restricted' (it asks for the "
        "right to gain more privileges and 1 more)."
    )
    assert found["remedy"] == (
        "Ask your cluster admin whether a training operator runs for PyTorch jobs, and whether "
        "the start-up program it adds meets the security level (its "
        "`--pytorch-init-container-template-file` setting); if not, ask for one that does, or "
        "to lower the security level."
    )
    assert result.exit_code == 3
    # A submitted job no operator took up (no status, no pods) is no sign of one either.
    job = _restricted_pytorch_job(doctor.now)
    del job["status"]
    doctor.server.add(job)
    report = doctor.live("-o", "json").json()
    assert _codes(report) == [("admission.operator-not-seen", "unknown", "cant-check")]


def test_a_pytorch_job_without_a_master_gets_no_init_container(
    doctor: Doctor, tmp_path: Path
) -> None:
    """setInitContainer: "There is no need to set init container if no master is specified"."""
    doctor.load("healthy")
    doctor.server.add(limit_range("mins", min={"memory": "64Mi"}))
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "bert-large", "namespace": NAMESPACE},
        "spec": {"pytorchReplicaSpecs": {"Worker": _replica(2, "2")}},
    }
    path = tmp_path / "workers-only.json"
    path.write_text(json.dumps(job))
    report = doctor.live("-o", "json", "--job-file", str(path)).json()
    assert _codes(report) == [("admission.ok", "ok", "measured")]
