"""doctor judges the training job as its controller will run it: every kind, every pod set,
all of its pods placed together; a kind whose controller is not installed is absent, not
unknown."""

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support.cli import CliResult, run_cli
from tests.support.fake_apiserver import Fault
from tests.support.scenarios import (
    NAMESPACE,
    Obj,
    docker_config,
    find,
    healthy,
    node,
    running_containers,
    ts,
)
from tests.support.training_kinds import (
    ALL_GROUPS,
    _template,
    cluster_training_runtime,
    gpu_container,
    indexed_job,
    jobset,
    leader_worker_set,
    pytorch_job,
    pytorch_pod,
    ray_cluster,
    ray_job,
    train_job,
)


def _capacity(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == "capacity"]


def _with_big_machine(now: datetime) -> list[Obj]:
    """The healthy namespace, and one free machine of 8 GPUs beside gpu-1's 2."""
    return [*healthy(now), node("gpu-8", "64", "512Gi", gpus=8)]


def test_an_indexed_job_of_four_ranks_does_not_fit_one_free_machine(doctor: Doctor) -> None:
    """Four ranks of 8 GPUs each (an Indexed Job, parallelism = completions = 4) and one free
    8-GPU machine: one rank could start, and a torchrun of four never meets."""
    doctor.load(
        lambda now: [
            *_with_big_machine(now),
            indexed_job("ranks-4", now, ranks=4, gpus=8, age=timedelta(minutes=1)),
        ]
    )
    result = doctor.live("-o", "json")
    report = result.json()
    (finding,) = _capacity(report)
    assert (finding["status"], finding["code"]) == ("fail", "capacity.too-large")
    assert finding["headline"] == (
        "A training job of 4 programs of 8 CPUs, 64 GiB memory, 8 nvidia.com/gpu each doesn't "
        "fit on the machines, even empty ones."
    )
    assert (
        "1 of its 4 programs fit even when empty; the next needs 8 nvidia.com/gpu and the most "
        "free on one machine is 2 nvidia.com/gpu (gpu-1)" in finding["details"]
    )
    assert "Job/ranks-4: worker x4, all at once" in finding["details"]
    assert report["job"] == {
        "kind": "Job",
        "name": "ranks-4",
        "source": "newest",
        "together": True,
        "pod_sets": [
            {
                "name": "worker",
                "count": 4,
                "requests": {"cpu": 8000, "memory": 64 * 2**30, "nvidia.com/gpu": 8},
            }
        ],
    }
    assert result.exit_code == 2


def test_one_rank_of_the_same_job_fits(doctor: Doctor) -> None:
    """The same machines and a job of one 8-GPU rank: it fits, so the four-rank verdict above
    comes from the job's shape and not from the machines."""
    doctor.load(
        lambda now: [
            *_with_big_machine(now),
            indexed_job("ranks-1", now, ranks=1, gpus=8, age=timedelta(minutes=1)),
        ]
    )
    result = doctor.live("-o", "json")
    (finding,) = _capacity(result.json())
    assert (finding["code"], finding["details"][-1]) == ("capacity.fits", "fits on gpu-8")
    assert result.exit_code == 0


def _training_now(now: datetime) -> list[Obj]:
    """A namespace that trains right now with a PyTorchJob alone: no Deployments, no Jobs; the
    training operator made the pods itself, and they hold both GPUs of gpu-1."""
    job = pytorch_job("bert-large", now, workers=1, gpus=1, age=timedelta(hours=1))
    return [
        node("cpu-1", "8", "32Gi"),
        node("gpu-1", "32", "256Gi", gpus=2),
        docker_config("registry.example.com"),
        find(healthy(now), "Secret", "backend-credentials"),
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "default", "namespace": NAMESPACE},
        },
        job,
        pytorch_pod(job, "Master", 0, now, node_name="gpu-1"),
        pytorch_pod(job, "Worker", 0, now, node_name="gpu-1"),
    ]


def test_a_namespace_training_with_a_pytorch_job_is_a_training_environment(
    doctor: Doctor,
) -> None:
    doctor.server.install("kubeflow.org")
    doctor.load(_training_now)
    result = doctor.live("-o", "json")
    report = result.json()
    codes = {f["code"] for f in report["findings"]}
    assert "workloads.none-found" not in codes
    (finding,) = _capacity(report)
    # The next job of the same shape waits for the running one: both GPUs are its own.
    assert (finding["status"], finding["code"]) == ("warn", "capacity.held-by-running-job")
    assert finding["headline"].startswith(
        "Training can run, but the free capacity is held by the running training job 'bert-large'"
    )
    assert "PyTorchJob/bert-large: Master x1, Worker x1, all at once" in finding["details"]
    assert report["job"]["kind"] == "PyTorchJob"
    assert result.exit_code == 0


def test_a_rank_of_a_distributed_job_without_gpus_is_warned_of_the_64_mib_shared_memory(
    doctor: Doctor,
) -> None:
    """Each pod of a PyTorchJob of several is one rank of a distributed run, GPUs or not: the
    training operator sets WORLD_SIZE, MASTER_ADDR and RANK in every one
    (kubeflow/training-operator pkg/controller.v1/pytorch/envvar.go `setPodEnv`), and its
    DataLoader workers hand their batches over through /dev/shm all the same."""
    doctor.server.install("kubeflow.org")
    doctor.load(
        lambda now: [
            *healthy(now),
            pytorch_job("ddp-cpu", now, workers=3, gpus=0, age=timedelta(minutes=2)),
        ]
    )
    report = doctor.live("-o", "json").json()
    assert report["job"]["name"] == "ddp-cpu", "precondition: the job judged"
    (warning,) = [f for f in report["findings"] if f["code"] == "workloads.no-shared-memory"]
    assert (warning["status"], warning["basis"]) == ("warn", "inferred")
    assert warning["headline"] == (
        "The training job 'ddp-cpu' has the container default of 64 MiB of shared memory, too "
        "little for its programs (one of 4 programs run together): they stop with a bus error "
        "when it fills."
    )


def test_without_the_controller_installed_the_kind_is_absent_not_unknown(
    doctor: Doctor,
) -> None:
    """The same pods, but the cluster serves no kubeflow.org: nothing is unknown for it, and
    the list is never asked for (discovery says it is not there)."""
    doctor.load(lambda now: [o for o in _training_now(now) if o["kind"] != "PyTorchJob"])
    result = doctor.live("-o", "json")
    assert not [f for f in result.json()["findings"] if f["status"] == "unknown"]
    assert not [r for r in doctor.server.log if "kubeflow.org" in r.path]
    assert any(r.path == "/apis" for r in doctor.server.log), "precondition: discovery read"


def test_a_training_kind_that_cannot_be_listed_makes_the_job_unknown(doctor: Doctor) -> None:
    doctor.server.install(*ALL_GROUPS)
    doctor.load("healthy")
    doctor.server.inject(Fault.FORBIDDEN, r"/pytorchjobs$")
    result = doctor.live("-o", "json")
    report = result.json()
    (finding,) = _capacity(report)
    assert (finding["status"], finding["code"]) == ("unknown", "capacity.cant-read")
    assert finding["headline"] == (
        "Couldn't check whether there is room for a training job: no permission to read the "
        "training jobs (PyTorchJob)."
    )
    assert "list pytorchjobs.kubeflow.org in namespace train" in " ".join(finding["details"])
    assert result.exit_code == 3


def test_a_jobset_is_placed_whole(doctor: Doctor) -> None:
    """A driver and four workers of 2 GPUs each: gpu-1 (2 GPUs) holds one worker, gpu-8 four;
    the five pods fit only on both machines together."""
    doctor.server.install("jobset.x-k8s.io")
    doctor.load(
        lambda now: [
            *_with_big_machine(now),
            jobset("sft", now, workers=5, gpus=2, age=timedelta(minutes=1)),
        ]
    )
    (finding,) = _capacity(doctor.live("-o", "json").json())
    assert finding["code"] == "capacity.fits"
    assert "JobSet/sft: driver x1, workers x5, all at once" in finding["details"]
    # Machines are tried by name: one worker fills gpu-1's memory, gpu-8 takes the rest.
    assert finding["details"][-1] == "fits on gpu-1, gpu-8"
    assert "workers x1 on gpu-1" in finding["details"]
    assert "workers x4 on gpu-8" in finding["details"]


def test_a_trainjob_runs_its_runtime_with_its_own_nodes(doctor: Doctor) -> None:
    """A TrainJob of 3 nodes of 4 GPUs on the torch-distributed runtime: the runtime's `node`
    job runs numNodes pods with the TrainJob's resources."""
    doctor.server.install("trainer.kubeflow.org")
    doctor.load(
        lambda now: [
            *_with_big_machine(now),
            cluster_training_runtime(),
            train_job("llama", now, nodes=3, gpus=4, age=timedelta(minutes=1)),
        ]
    )
    result = doctor.live("-o", "json")
    report = result.json()
    (finding,) = _capacity(report)
    assert finding["code"] == "capacity.too-large"
    assert (
        "2 of its 3 programs fit even when empty; the next needs 4 nvidia.com/gpu and the most "
        "free on one machine is 2 nvidia.com/gpu (gpu-1)" in finding["details"]
    )
    assert report["job"]["pod_sets"] == [
        {
            "name": "node",
            "count": 3,
            "requests": {"cpu": 8000, "memory": 64 * 2**30, "nvidia.com/gpu": 4},
        }
    ]


def test_a_trainjob_whose_runtime_is_missing_is_a_measured_failure(doctor: Doctor) -> None:
    doctor.server.install("trainer.kubeflow.org")
    doctor.load(
        lambda now: [*healthy(now), train_job("llama", now, nodes=2, gpus=1, age=timedelta(0))]
    )
    result = doctor.live("-o", "json")
    (finding,) = _capacity(result.json())
    assert (finding["status"], finding["basis"], finding["code"]) == (
        "fail",
        "measured",
        "capacity.job-unshaped",
    )
    assert finding["headline"] == (
        "The training job 'llama' can't start: its cluster training runtime "
        "'torch-distributed' doesn't exist."
    )
    assert result.exit_code == 2


def test_a_ray_job_and_a_leader_worker_set_are_their_pod_sets(doctor: Doctor) -> None:
    doctor.server.install("ray.io", "leaderworkerset.x-k8s.io")
    doctor.load(
        lambda now: [
            *_with_big_machine(now),
            ray_job("tune", now, workers=2, gpus=2, age=timedelta(minutes=2)),
            leader_worker_set("serve", now, size=3, gpus=4, age=timedelta(minutes=1)),
        ]
    )
    report = doctor.live("-o", "json").json()
    assert report["job"]["kind"] == "LeaderWorkerSet"
    assert [(s["name"], s["count"]) for s in report["job"]["pod_sets"]] == [
        ("leader", 1),
        ("worker", 2),
    ]
    (finding,) = _capacity(report)
    assert finding["code"] == "capacity.too-large"


def test_a_ray_worker_group_below_its_min_replicas_runs_its_min(doctor: Doctor) -> None:
    """`replicas: 0`, `minReplicas: 4`: kuberay creates 4 workers of 4 GPUs (ray-operator/
    controllers/ray/utils/util.go GetWorkerGroupDesiredReplicas, read by raycluster_controller.go
    reconcilePods), 16 GPUs where the machines have 10."""
    doctor.server.install("ray.io")
    doctor.load(
        lambda now: [
            *_with_big_machine(now),
            ray_cluster("rc", now, replicas=0, min_replicas=4, max_replicas=4, gpus=4),
        ]
    )
    result = doctor.live("-o", "json")
    report = result.json()
    assert [(s["name"], s["count"]) for s in report["job"]["pod_sets"]] == [
        ("headgroup", 1),
        ("gpu-group", 4),
    ]
    (finding,) = _capacity(report)
    assert (finding["status"], finding["code"]) == ("fail", "capacity.too-large")
    assert "RayCluster/rc: headgroup x1, gpu-group x4, all at once" in finding["details"]
    assert result.exit_code == 2


def test_a_ray_worker_group_above_its_max_replicas_runs_its_max(doctor: Doctor) -> None:
    """`replicas: 10`, `maxReplicas: 2`: kuberay creates 2 workers of 4 GPUs (GetWorkerGroup
    DesiredReplicas), which fit the free 8-GPU machine."""
    doctor.server.install("ray.io")
    doctor.load(
        lambda now: [
            *_with_big_machine(now),
            ray_cluster("rc", now, replicas=10, min_replicas=1, max_replicas=2, gpus=4),
        ]
    )
    result = doctor.live("-o", "json")
    report = result.json()
    (finding,) = _capacity(report)
    assert (finding["status"], finding["code"]) == ("ok", "capacity.fits")
    assert "RayCluster/rc: headgroup x1, gpu-group x2, all at once" in finding["details"]
    assert result.exit_code == 0


def test_an_mpi_job_s_worker_without_replicas_runs_none(doctor: Doctor) -> None:
    """An MPIJob (kubeflow.org/v2beta1, mpi-operator examples/v2beta1/pi/pi.yaml) whose Worker
    names no `replicas`: mpi-operator defaults it to 0 (pkg/apis/kubeflow/v2beta1/default.go
    setDefaultsTypeWorker) and, with `runLauncherAsWorker`, runs the 8-GPU launcher alone,
    which fits the free 8-GPU machine."""
    doctor.server.install("kubeflow.org")

    def build(now: datetime) -> list[Obj]:
        mpi = {
            "apiVersion": "kubeflow.org/v2beta1",
            "kind": "MPIJob",
            "metadata": {
                "name": "mpi",
                "namespace": NAMESPACE,
                "creationTimestamp": ts(now - timedelta(minutes=1)),
            },
            "spec": {
                "slotsPerWorker": 8,
                "runLauncherAsWorker": True,
                "mpiReplicaSpecs": {
                    "Launcher": {
                        "replicas": 1,
                        "template": _template({}, gpu_container("launcher", 8)),
                    },
                    "Worker": {"template": _template({}, gpu_container("worker", 8))},
                },
            },
        }
        return [*_with_big_machine(now), mpi]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    (finding,) = _capacity(report)
    assert (finding["status"], finding["code"]) == ("ok", "capacity.fits")
    assert "MPIJob/mpi: Launcher x1, Worker x0, all at once" in finding["details"]
    assert result.exit_code == 0


def test_a_ray_job_on_an_existing_cluster_is_not_empty(doctor: Doctor) -> None:
    """A RayJob with `spec.clusterSelector` and no rayClusterSpec runs on the RayCluster
    `shared` (kuberay apis/ray/v1/rayjob_types.go ClusterSelector; rayjob_controller.go
    initRayJobStatusIfNeed sets status.rayClusterName from it, getOrCreateRayClusterInstance
    creates none), whose head pod runs and is ready (labels from ray-operator/controllers/ray/
    common/pod.go labelPod). It asks for no programs of its own: not workloads.job-empty."""
    doctor.server.install("ray.io")

    def build(now: datetime) -> list[Obj]:
        cluster = ray_cluster("shared", now, replicas=0, min_replicas=0, max_replicas=0, gpus=1)
        cluster["metadata"]["creationTimestamp"] = ts(now - timedelta(days=1))
        cluster["status"] = {
            "state": "ready",
            "conditions": [{"type": "HeadPodReady", "status": "True"}],
        }
        head_spec = cluster["spec"]["headGroupSpec"]["template"]["spec"]
        head = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "shared-head-abcde",
                "namespace": NAMESPACE,
                "creationTimestamp": ts(now - timedelta(days=1)),
                "labels": {
                    "ray.io/cluster": "shared",
                    "ray.io/group": "headgroup",
                    "ray.io/node-type": "head",
                },
                "ownerReferences": [
                    {
                        "apiVersion": "ray.io/v1",
                        "kind": "RayCluster",
                        "name": "shared",
                        "uid": "uid-shared",
                        "controller": True,
                    }
                ],
            },
            "spec": {**head_spec, "nodeName": "cpu-1"},
            "status": {
                "phase": "Running",
                "conditions": [
                    {"type": "PodScheduled", "status": "True"},
                    {"type": "Ready", "status": "True"},
                ],
                "containerStatuses": running_containers(
                    "shared-head-abcde", head_spec["containers"], ts(now - timedelta(days=1))
                ),
            },
        }
        job = ray_job("rj", now, workers=1, gpus=1, age=timedelta(minutes=1))
        del job["spec"]["rayClusterSpec"]
        job["spec"]["clusterSelector"] = {"ray.io/cluster": "shared"}
        job["status"] = {
            "rayClusterName": "shared",
            "jobDeploymentStatus": "Running",
            "jobStatus": "RUNNING",
        }
        return [*healthy(now), cluster, head, job]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    codes = {f["code"] for f in report["findings"]}
    assert "workloads.job-empty" not in codes
    assert (report["verdict"], report["job"]["kind"], report["job"]["pod_sets"]) == (
        "ready",
        "RayJob",
        [],
    )
    assert result.exit_code == 0


def test_a_ray_job_kuberay_refused_is_a_measured_failure(doctor: Doctor) -> None:
    """A RayJob at jobDeploymentStatus ValidationFailed, 2 hours old (kuberay ray-operator/
    controllers/ray/rayjob_controller.go Reconcile: validateRayJob failed, so kuberay set
    ValidationFailed with reason ValidationFailed and the error as message, and returned
    without creating its RayCluster; apis/ray/v1/rayjob_types.go). Its Warning Event is gone
    past the API server's event TTL; the status still says why. Nothing of it ran."""
    doctor.server.install("ray.io")
    message = (
        "train/rj: The RayJob spec is invalid: BackoffLimit is incompatible with InteractiveMode"
    )

    def build(now: datetime) -> list[Obj]:
        job = ray_job("rj", now, workers=2, gpus=2, age=timedelta(hours=2))
        head = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
        head["containers"][0]["image"] = "registry.example.com/ray:2.46.0"
        job["status"] = {
            "jobDeploymentStatus": "ValidationFailed",
            "reason": "ValidationFailed",
            "message": message,
        }
        return [*_with_big_machine(now), job]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["verdict"]) == (2, "not-ready")
    (finding,) = [f for f in report["findings"] if f["code"] == "workloads.last-job-refused"]
    assert (finding["status"], finding["basis"]) == ("fail", "measured")
    assert finding["headline"] == (
        f"The last training job 'rj' was refused for its settings, so none of it ran: “{message}”."
    )
    assert finding["details"] == ["RayJob/rj failed (ValidationFailed)", message]
    remedy = finding["remedy"]
    assert remedy.startswith(
        "Correct the settings it names and submit the job again; the same settings are refused "
        "every time. `kubectl "
    )
    assert remedy.endswith(" describe rayjob rj` shows the job.")


_RAY_FAILED_MESSAGE = (
    "Job entrypoint command failed with exit code 1, last available logs (truncated to 20,000 "
    "chars):\nTraceback ... RuntimeError: CUDA error"
)


def test_a_ray_job_that_failed_under_kuberay_1_0_is_a_measured_failure(doctor: Doctor) -> None:
    """KubeRay v1.0 ends a RayJob whose Ray job failed at jobDeploymentStatus `Complete`, with
    the Ray job's own `jobStatus: FAILED` and its message, and no reason (ray-operator/
    controllers/ray/rayjob_controller.go v1.0.0 Reconcile: `isJobSucceedOrFailed` ->
    `JobDeploymentStatusComplete`; the `Failed` deployment status came with v1.1.0). The
    cluster is gone (shutdownAfterJobFinishes), so no pod says more."""
    doctor.server.install("ray.io")

    def build(now: datetime) -> list[Obj]:
        job = ray_job("rj", now, workers=1, gpus=1, age=timedelta(hours=1))
        job["status"].update(
            jobDeploymentStatus="Complete",
            jobStatus="FAILED",
            jobId="rj-abcde",
            message=_RAY_FAILED_MESSAGE,
        )
        return [*healthy(now), job]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["verdict"]) == (2, "not-ready")
    (finding,) = [f for f in report["findings"] if f["code"] == "workloads.last-job-failed"]
    assert (finding["status"], finding["basis"]) == ("fail", "measured")
    assert finding["headline"] == (
        "The last training job 'rj' failed: its program ended with an error."
    )
    assert finding["details"] == ["RayJob/rj failed (jobStatus FAILED)", _RAY_FAILED_MESSAGE]


@pytest.mark.parametrize(
    ("deployment", "ray_job_status"),
    [("Complete", "STOPPED"), ("Retrying", "FAILED")],
    ids=["stopped-by-a-person", "kuberay-tries-again"],
)
def test_a_ray_job_stopped_or_tried_again_is_no_failure(
    doctor: Doctor, deployment: str, ray_job_status: str
) -> None:
    """A Ray job a person stopped (`STOPPED`, "Job was intentionally stopped.") did not fail;
    one kuberay runs again on a new cluster (`Retrying`, its backoffLimit not reached:
    rayjob_controller.go checkBackoffLimitAndUpdateStatusIfNeeded) still shows the try's
    `FAILED` until kuberay resets it, and has not ended."""
    doctor.server.install("ray.io")

    def build(now: datetime) -> list[Obj]:
        job = ray_job("rj", now, workers=1, gpus=1, age=timedelta(hours=1))
        job["spec"]["backoffLimit"] = 2
        job["status"].update(
            jobDeploymentStatus=deployment,
            jobStatus=ray_job_status,
            message=_RAY_FAILED_MESSAGE
            if ray_job_status == "FAILED"
            else "Job was intentionally stopped.",
        )
        return [*healthy(now), job]

    doctor.load(build)
    report = doctor.live("-o", "json").json()
    codes = [f["code"] for f in report["findings"]]
    assert not [c for c in codes if c.startswith("workloads.last-job-")], codes


def test_a_job_file_is_judged_as_the_job_it_would_become(doctor: Doctor) -> None:
    """`--job-file` with a PyTorchJob manifest that is not submitted: its 1 + 3 pods of 8 GPUs
    are placed, not the namespace's newest job."""
    import yaml

    doctor.server.install("kubeflow.org")
    doctor.load(_with_big_machine)
    manifest = pytorch_job("planned", datetime.now(), workers=3, gpus=8, age=timedelta(0))
    path = doctor.tmp_path / "job.yaml"
    path.write_text(
        yaml.safe_dump_all(
            [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}, manifest]
        )
    )
    result = doctor.live("-o", "json", "--job-file", str(path))
    report = result.json()
    assert report["job"]["name"] == "planned"
    assert report["job"]["source"] == "job-file"
    (finding,) = _capacity(report)
    assert finding["code"] == "capacity.too-large"
    assert result.exit_code == 2


def _kind_file(doctor: Doctor, kind: str) -> Path:
    """A job file of `kind` that fits gpu-1 (one GPU a pod), with its name `bert`."""
    build = {
        "PyTorchJob": lambda: pytorch_job("bert", doctor.now, workers=1, gpus=1, age=timedelta(0)),
        "JobSet": lambda: jobset("bert", doctor.now, workers=1, gpus=1, age=timedelta(0)),
        "LeaderWorkerSet": lambda: leader_worker_set(
            "bert", doctor.now, size=2, gpus=1, age=timedelta(0)
        ),
    }[kind]()
    build.pop("status", None)
    _one_gpu_each(build)
    path = doctor.tmp_path / "job.yaml"
    path.write_text(json.dumps(build))
    return path


def _one_gpu_each(tree: Any) -> None:
    """Every container in `tree` asks for one GPU and nothing else (the reviewed files' shape):
    the job fits gpu-1 beside the namespace's running work."""
    if isinstance(tree, dict):
        for container in tree.get("containers", []):
            container["resources"] = {"limits": {"nvidia.com/gpu": "1"}}
        for value in tree.values():
            _one_gpu_each(value)
    elif isinstance(tree, list):
        for value in tree:
            _one_gpu_each(value)


@pytest.mark.parametrize(
    ("kind", "controller", "api_version"),
    [
        ("PyTorchJob", "the Kubeflow training operator", "kubeflow.org/v1"),
        ("JobSet", "the JobSet controller", "jobset.x-k8s.io/v1alpha2"),
        ("LeaderWorkerSet", "the LeaderWorkerSet controller", "leaderworkerset.x-k8s.io/v1"),
    ],
)
def test_a_job_file_of_a_kind_the_cluster_does_not_serve_can_never_be_created(
    doctor: Doctor, kind: str, controller: str, api_version: str
) -> None:
    """A job file whose group the cluster does not serve (its controller, and so its CRD, not
    installed): `kubectl create -f` fails before any request, `no matches for kind "PyTorchJob"
    in version "kubeflow.org/v1"` / `ensure CRDs are installed first` (apimachinery
    pkg/api/meta/errors.go `NoKindMatchError`, from cli-runtime's RESTMapper), and a raw POST
    gets the 404 apiextensions answers for a resource not served. Discovery (`GET /apis`)
    measured it, in the same run: never ready, live or from a snapshot."""
    doctor.load(healthy)
    result = doctor.live("-o", "json", "--job-file", str(_kind_file(doctor, kind)))
    report = result.json()
    assert result.exit_code == 2, report["headline"]
    found = report["headline"]
    assert (found["code"], report["verdict"]) == ("workloads.kind-not-installed", "not-ready")
    assert found["text"] == (
        f"The training job 'bert' can't be created: nothing installed in this cluster runs a "
        f"{kind}."
    )
    assert found["remedy"] == (
        f"Install {controller}, which adds the kind {kind} ({api_version}), or ask your "
        "cluster admin to; then check again."
    )
    (finding,) = [f for f in report["findings"] if f["code"] == "workloads.kind-not-installed"]
    assert finding["basis"] == "measured"
    assert f"{api_version} is not served (discovery: GET /apis" in " ".join(finding["details"])


def _mpi_file(doctor: Doctor, api_version: str) -> Path:
    """A job file of an MPIJob 'pi' at `api_version` (mpi-operator examples/v2beta1/pi/pi.yaml;
    the training operator's v1 MPIJob takes the same `mpiReplicaSpecs`), one GPU a worker."""
    launcher = {"replicas": 1, "template": _template({}, gpu_container("launcher", 1))}
    worker = {"replicas": 1, "template": _template({}, gpu_container("worker", 1))}
    job: dict[str, Any] = {
        "apiVersion": api_version,
        "kind": "MPIJob",
        "metadata": {"name": "pi", "namespace": NAMESPACE},
        "spec": {"slotsPerWorker": 1, "mpiReplicaSpecs": {"Launcher": launcher, "Worker": worker}},
    }
    _one_gpu_each(job)
    path = doctor.tmp_path / "mpijob.yaml"
    path.write_text(json.dumps(job))
    return path


@pytest.mark.parametrize(("asked", "served"), [("v1", "v2beta1"), ("v2beta1", "v1")])
def test_a_job_file_of_a_kind_the_cluster_runs_at_another_version_is_told_that_version(
    doctor: Doctor, asked: str, served: str
) -> None:
    """mpijobs.kubeflow.org is one CRD: mpi-operator's serves MPIJob at v2beta1, the training
    operator's at v1, and the two cannot be installed together (kubeflow/trainer#1930: the
    second fails with `status.storedVersions[0]: Invalid value: "v2beta1": must appear in
    spec.versions`). A file at the version not served fails as kubectl does (`no matches for
    kind "MPIJob" in version "kubeflow.org/v1"`), but the cluster does run MPIJobs: the remedy
    is the version it serves, never installing a second operator."""
    doctor.server.install("kubeflow.org", versions=[served])
    doctor.load(healthy)
    path = _mpi_file(doctor, f"kubeflow.org/{asked}")
    result = doctor.live("-o", "json", "--job-file", str(path))
    report = result.json()
    found = report["headline"]
    assert (result.exit_code, found["code"], report["verdict"]) == (
        2,
        "workloads.kind-version-not-served",
        "not-ready",
    ), found
    assert found["text"] == (
        f"The training job 'pi' can't be created: this cluster runs MPIJobs only at "
        f"kubeflow.org/{served}, not kubeflow.org/{asked}."
    )
    assert found["remedy"] == (
        f"Write the job for kubeflow.org/{served} (its apiVersion and the fields that version "
        "has); installing something else to run MPIJobs can't work beside what runs them "
        "here. Then check again."
    )
    (finding,) = [f for f in report["findings"] if f["code"] == found["code"]]
    assert finding["basis"] == "measured"
    assert f"MPIJob/pi: kubeflow.org/{asked} is not served" in " ".join(finding["details"])


def test_a_job_file_of_a_kind_no_version_of_which_is_served_names_what_installs_it(
    doctor: Doctor,
) -> None:
    """kubeflow.org/v1 is served (the training operator's PyTorchJob CRD), but the list of its
    MPIJobs answers 404 (the operator installed without its MPIJob CRD, as kubeflow/trainer#2090
    advises beside mpi-operator): no version of MPIJob is served, and the file's v2beta1 is
    mpi-operator's. "an MPIJob": the article of the sound its first letter makes."""
    doctor.server.install("kubeflow.org", versions=["v1"])
    doctor.server.inject(Fault.NOT_FOUND, r"/kubeflow\.org/v1/namespaces/[^/]+/mpijobs$")
    doctor.load(healthy)
    path = _mpi_file(doctor, "kubeflow.org/v2beta1")
    result = doctor.live("-o", "json", "--job-file", str(path))
    found = result.json()["headline"]
    assert (result.exit_code, found["code"]) == (2, "workloads.kind-not-installed"), found
    assert found["text"] == (
        "The training job 'pi' can't be created: nothing installed in this cluster runs an MPIJob."
    )
    assert found["remedy"].startswith("Install the MPI operator, which adds the kind MPIJob ")


def test_a_job_file_whose_own_kind_answers_404_in_a_served_group_is_not_installed(
    doctor: Doctor,
) -> None:
    """kubeflow.org/v1 is served (the PyTorchJob CRD is installed), but not the JAXJob CRD (a
    training operator before v1.8): its list answers 404, a measured absence."""
    doctor.server.install("kubeflow.org")
    doctor.server.inject(Fault.NOT_FOUND, r"/jaxjobs$")
    doctor.load(healthy)
    job = pytorch_job("bert", doctor.now, workers=1, gpus=1, age=timedelta(0))
    job.pop("status", None)
    _one_gpu_each(job)
    job["kind"] = "JAXJob"
    job["spec"] = {"jaxReplicaSpecs": job["spec"]["pytorchReplicaSpecs"]}
    path = doctor.tmp_path / "job.yaml"
    path.write_text(json.dumps(job))
    result = doctor.live("-o", "json", "--job-file", str(path))
    found = result.json()["headline"]
    assert (result.exit_code, found["code"]) == (2, "workloads.kind-not-installed")
    assert "runs a JAXJob" in found["text"]


def test_a_job_file_of_an_optional_kind_where_discovery_is_unread_is_unknown(
    doctor: Doctor,
) -> None:
    """Discovery could not be read: whether the cluster serves PyTorchJob is not known, so the
    verdict is unknown (never ready, never a measured failure)."""
    doctor.load(healthy)
    doctor.server.inject(Fault.FORBIDDEN, r"^/apis$")
    result = doctor.live("-o", "json", "--job-file", str(_kind_file(doctor, "PyTorchJob")))
    report = result.json()
    assert (result.exit_code, report["verdict"]) == (3, "unknown"), report["headline"]
    codes = {f["code"] for f in report["findings"]}
    assert "workloads.kind-not-installed" not in codes
    assert "workloads.cant-read" in codes


def test_a_job_file_of_a_served_kind_is_judged_as_usual(doctor: Doctor) -> None:
    """The same PyTorchJob where kubeflow.org is installed: it fits gpu-1, nothing says the
    kind is missing."""
    doctor.server.install("kubeflow.org")
    doctor.load(healthy)
    result = doctor.live("-o", "json", "--job-file", str(_kind_file(doctor, "PyTorchJob")))
    report = result.json()
    assert "workloads.kind-not-installed" not in {f["code"] for f in report["findings"]}
    assert [f["code"] for f in _capacity(report)] == ["capacity.fits"]


def test_a_job_file_without_a_training_job_is_bad_usage(doctor: Doctor) -> None:
    doctor.round_trip = False  # nothing was checked: there is no verdict to compare
    doctor.load("healthy")
    path = doctor.tmp_path / "job.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    result = doctor.live("--job-file", str(path))
    assert result.exit_code == 64
    assert result.stderr.strip().startswith(
        f"truegreen: the job file {path} holds no training job (its 1 document is of other kinds)."
    )
    assert "Traceback" not in result.stderr


def test_a_job_file_of_several_training_jobs_is_bad_usage_never_a_verdict_on_one(
    doctor: Doctor,
) -> None:
    """A Job of 1 CPU, then one of 4000 that fits no machine: a verdict on the first (READY)
    would say nothing of the second, whichever order they come in."""
    doctor.round_trip = False  # nothing was checked: there is no verdict to compare
    doctor.load("healthy")
    small = (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: t1}\nspec: {template: {spec: "
        "{restartPolicy: Never, containers: [{name: c, image: x/y:1, resources: {requests: "
        "{cpu: '1'}}}]}}}\n"
    )
    huge = small.replace("t1", "huge").replace("cpu: '1'", "cpu: '4000'")
    path = doctor.tmp_path / "jobs.yaml"
    path.write_text(f"{small}---\n{huge}")
    result = doctor.live("--job-file", str(path), "-o", "json")
    assert (result.exit_code, result.json()["headline"]["code"]) == (64, "bad-usage")
    assert result.stderr == (
        f"truegreen: the job file {path} holds 2 training jobs (Job/t1, Job/huge); doctor judges "
        "one. give a file that holds the one to judge, and run doctor once for each\n"
    )
    assert doctor.server.requests() == []


def test_a_parallel_job_whose_pods_start_one_by_one_partly_fits(doctor: Doctor) -> None:
    """A plain parallel Job (not Indexed: its pods need not meet) of 4 pods of 8 GPUs: one runs
    now on gpu-8, the others as room frees up. A warning, not a failure."""

    def build(now: datetime) -> list[Obj]:
        job = indexed_job("sweep", now, ranks=4, gpus=8, age=timedelta(minutes=1))
        del job["spec"]["completionMode"]
        return [*_with_big_machine(now), job]

    doctor.load(build)
    result = doctor.live("-o", "json")
    (finding,) = _capacity(result.json())
    assert (finding["status"], finding["code"]) == ("warn", "capacity.partly-fits")
    assert finding["headline"] == (
        "Only 1 of the 4 programs of the training job 'sweep' can run at once now; the others "
        "wait for room."
    )
    assert "Job/sweep: worker x4, each as room allows" in finding["details"]
    assert result.exit_code == 0


def _empty(kind: str, now: datetime) -> Obj:
    """The newest training job, asking for no pods: a Job of parallelism 0 (valid; its
    controller keeps it "effectively paused", kubernetes.io/docs concepts/workloads/controllers
    /job "Controlling parallelism"), a LeaderWorkerSet scaled to no replicas, a PyTorchJob
    whose replica specs are empty (its CRD schema sets no minProperties)."""
    if kind == "Job":
        job = indexed_job("empty", now, ranks=4, gpus=1, age=timedelta(minutes=1))
        job["spec"]["parallelism"] = 0
        job["status"] = {}
    elif kind == "LeaderWorkerSet":
        job = leader_worker_set("empty", now, size=2, gpus=1, age=timedelta(minutes=1))
        job["spec"]["replicas"] = 0
        job.pop("status", None)
    else:
        job = pytorch_job("empty", now, workers=1, gpus=1, age=timedelta(minutes=1))
        job["spec"]["pytorchReplicaSpecs"] = {}
        job.pop("status", None)
    return job


@pytest.mark.parametrize("kind", ["Job", "LeaderWorkerSet", "PyTorchJob"])
def test_a_job_that_asks_for_no_pods_is_said_and_places_nothing(doctor: Doctor, kind: str) -> None:
    """A job of no pod sets is said, live and from a snapshot: its size words and its
    priority come from no first pod set, and nothing is placed."""
    doctor.server.install(*ALL_GROUPS)
    doctor.load(lambda now: [*healthy(now), _empty(kind, now)])
    result = doctor.live("-o", "json")
    report = result.json()
    assert result.exit_code == 2
    assert report["headline"]["code"] == "workloads.job-empty"
    assert report["headline"]["text"] == (
        "The training job 'empty' asks for no programs, so none of it will run."
    )
    assert [f["code"] for f in _capacity(report)] == ["capacity.free-only"]


def test_a_job_file_that_asks_for_no_pods_is_said_with_the_file_as_its_settings(
    doctor: Doctor, tmp_path: Path
) -> None:
    """`--job-file` of a Job of parallelism 0: not submitted, so its settings are the file's;
    a job that would run nothing is never "ready"."""
    doctor.load(healthy)
    planned = tmp_path / "job.yaml"
    job = indexed_job("empty", doctor.now, ranks=4, gpus=1, age=timedelta(0))
    job["spec"]["parallelism"] = 0
    planned.write_text(json.dumps(job))
    result = doctor.live("--job-file", str(planned), "-o", "json")
    found = result.json()["headline"]
    assert (result.exit_code, found["code"]) == (2, "workloads.job-empty")
    assert found["remedy"] == (
        "If nobody set its size to zero on purpose, give it its programs again; the job file "
        "shows its settings."
    )


def _refused(doctor: Doctor, planned: Path, job: Obj, *args: str) -> CliResult:
    """doctor on `job` written to `planned`, given as --job-file: refused before any read, so
    it runs without the fixture's snapshot round trip."""
    planned.write_text(json.dumps(job))
    return run_cli(
        "doctor",
        "--kubeconfig",
        str(doctor.kubeconfig),
        "--no-registry",
        "--job-file",
        str(planned),
        *args,
    )


@pytest.mark.parametrize(
    ("change", "refusal"),
    [
        # pkg/apis/core/validation ValidateResourceRequirements: a GPU asked for without a limit
        (
            lambda c, s: c["resources"].pop("limits"),
            "spec.template.spec.containers[0].resources.limits: Required value: Limit must be "
            "set for non overcommitable resources",
        ),
        (
            lambda c, s: c["resources"]["limits"].update({"nvidia.com/gpu": "2"}),
            'spec.template.spec.containers[0].resources.requests: Invalid value: "1": must be '
            "equal to nvidia.com/gpu limit of 2",
        ),
        (
            lambda c, s: c["resources"]["limits"].update({"nvidia.com/gpu": "500m"}),
            "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "
            '"500m": must be an integer',
        ),
        (
            lambda c, s: c["resources"]["requests"].update({"cpu": "-8"}),
            'spec.template.spec.containers[0].resources.requests[cpu]: Invalid value: "-8": '
            "must be greater than or equal to 0",
        ),
        # pkg/apis/batch/validation validateJobSpec
        (
            lambda c, s: s["template"]["spec"].pop("restartPolicy"),
            'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
        ),
        (
            lambda c, s: s.update({"parallelism": -1}),
            "spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            lambda c, s: s["template"]["spec"].update({"containers": []}),
            "spec.template.spec.containers: Required value",
        ),
        (lambda c, s: c.pop("image"), "spec.template.spec.containers[0].image: Required value"),
        # pkg/apis/core/validation ValidatePodCreate: the Job is stored, each of its pods refused
        (
            lambda c, s: s["template"]["spec"].update(
                {"nodeName": "gpu-1", "schedulingGates": [{"name": "example.com/hold"}]}
            ),
            "spec.template.spec.nodeName: Forbidden: cannot be set until all schedulingGates "
            "have been cleared",
        ),
    ],
)
def test_a_job_file_the_api_server_would_refuse_is_bad_input_in_its_words(
    doctor: Doctor, tmp_path: Path, change: Any, refusal: str
) -> None:
    """A job file whose Job kube-apiserver refuses gets the server's words and exit 64, not a
    verdict (`requests: nvidia.com/gpu: 1` with no limit, a limit of 500m GPU, a negative cpu,
    no containers; the kubectl outputs quoted in upstream issues say these lines: `The Job "…"
    is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure",
    "Never"`)."""
    doctor.load(healthy)
    job = indexed_job("bad", doctor.now, ranks=1, gpus=1, age=timedelta(0))
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": "1"}  # valid as built
    change(container, job["spec"])
    planned = tmp_path / "job.yaml"
    result = _refused(doctor, planned, job)
    assert result.exit_code == 64, result.stdout + result.stderr
    assert result.stderr.startswith(
        f"truegreen: the cluster would refuse the training job in the job file {planned}: "
    ), result.stderr
    assert refusal in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""


_LONG = "llama-70b-pretraining-run-with-a-very-long-descriptive-name-0001"
"""A Job name of 64 characters: a valid DNS subdomain, one character past a label value."""
_SUBDOMAIN_RULE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)


def _job_file(doctor: Doctor, **metadata: str) -> Obj:
    """An Indexed Job of two ranks as a person writes it: `metadata` alone (no namespace, no
    labels on its template: the API server adds the job-name ones)."""
    job = indexed_job("x", doctor.now, ranks=2, gpus=1, age=timedelta(0))
    job["metadata"] = dict(metadata)
    job["spec"]["template"]["metadata"] = {}
    job.pop("status")
    return job


@pytest.mark.parametrize(
    ("metadata", "refusal"),
    [
        # apimachinery pkg/api/validation/objectmeta.go ValidateObjectMetaAccessor
        ({}, "metadata.name: Required value: name or generateName is required"),
        (
            {"name": "Train_Job"},
            f'metadata.name: Invalid value: "Train_Job": {_SUBDOMAIN_RULE}',
        ),
        (
            {"generateName": "Sweep_"},
            f'metadata.generateName: Invalid value: "Sweep_": {_SUBDOMAIN_RULE}',
        ),
        # pkg/registry/batch/job/strategy.go generateSelector copies the name into the
        # template's job-name labels, whose values are at most 63 characters
        (
            {"name": _LONG},
            f'spec.template.labels: Invalid value: "{_LONG}": must be no more than 63 characters',
        ),
        # pkg/apis/batch/validation ValidateJob: an Indexed Job's last pod's hostname
        (
            {"name": _LONG[:62]},
            f'metadata.name: Invalid value: "{_LONG[:62]}": will not able to create pod with '
            f"invalid DNS label: {_LONG[:62]}-1",
        ),
    ],
)
def test_a_job_file_whose_name_the_api_server_refuses_is_bad_input(
    doctor: Doctor, tmp_path: Path, metadata: dict[str, str], refusal: str
) -> None:
    """A Job with no name, with `Train_Job`, with a name of 64 characters: kube-apiserver
    refuses each (the kubectl outputs quoted in upstream issues, e.g. openkaiden/kaiden#543:
    `spec.template.labels: Invalid value: "…": must be no more than 63 characters`), so no
    verdict about its placement means anything: exit 64, in the server's words."""
    doctor.load(healthy)
    planned = tmp_path / "job.yaml"
    result = _refused(doctor, planned, _job_file(doctor, **metadata))
    assert result.exit_code == 64, result.stdout + result.stderr
    assert result.stderr.startswith(
        f"truegreen: the cluster would refuse the training job in the job file {planned}: "
    ), result.stderr
    assert refusal in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("job", "refusal"),
    [
        # pkg/apis/batch/validation ValidateCronJobCreate: its Jobs are `<name>-<time>`
        (
            lambda now: {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "metadata": {"name": "a" * 53},
                "spec": {
                    "schedule": "0 * * * *",
                    "jobTemplate": {
                        "spec": {
                            "template": {
                                "spec": {
                                    "restartPolicy": "Never",
                                    "containers": [{"name": "c", "image": "x/y:1"}],
                                }
                            }
                        }
                    },
                },
            },
            f'metadata.name: Invalid value: "{"a" * 53}": must be no more than 52 characters',
        ),
        # training-operator pkg/webhooks/pytorchjob validatePyTorchJob: a DNS-1035 label
        (
            lambda now: {
                **pytorch_job("bert", now, workers=1, gpus=1, age=timedelta(0)),
                "metadata": {"name": "bert.v2"},
            },
            'metadata.name: Invalid value: "bert.v2": should match: a DNS-1035 label must '
            "consist of lower case alphanumeric characters or '-', start with an alphabetic "
            "character, and end with an alphanumeric character",
        ),
    ],
)
def test_a_job_file_of_another_kind_is_held_to_that_kind_s_name_rule(
    doctor: Doctor, tmp_path: Path, job: Any, refusal: str
) -> None:
    """A CronJob's name leaves room for the time its Jobs' names add; a Kubeflow job's is a
    DNS-1035 label (the training operator's validating webhook refuses it at create)."""
    doctor.load(healthy)
    planned = tmp_path / "job.yaml"
    result = _refused(doctor, planned, job(doctor.now))
    assert result.exit_code == 64, result.stdout + result.stderr
    assert refusal in result.stderr, result.stderr


def test_a_job_file_named_by_generate_name_is_said_by_its_prefix(
    doctor: Doctor, tmp_path: Path
) -> None:
    """`generateName: sweep-` (which `kubectl create -f` accepts): the API server names it
    the prefix and five characters of its own (apiserver pkg/storage/names/generate.go
    `SimpleNameGenerator`). The job is `sweep-…` in words and JSON, never ''."""
    doctor.load(healthy)
    planned = tmp_path / "job.yaml"
    planned.write_text(json.dumps(_job_file(doctor, generateName="sweep-")))
    result = doctor.live("--job-file", str(planned), "-o", "json")
    report = result.json()
    assert report["job"]["name"] == "sweep-…"
    texts = [f["headline"] for f in report["findings"]] + [report["headline"]["text"]]
    assert not [t for t in texts if "''" in t], texts
    assert any("'sweep-…'" in t for t in texts), texts


def _in_namespace(doctor: Doctor, namespace: str) -> Obj:
    job = indexed_job("big", doctor.now, ranks=1, gpus=1, age=timedelta(0))
    job["metadata"]["namespace"] = namespace
    return job


def test_a_job_file_for_another_namespace_than_n_is_refused_as_kubectl_does(
    doctor: Doctor, tmp_path: Path
) -> None:
    """`kubectl create -f job.yaml -n train` of a Job whose metadata.namespace is `elsewhere`
    refuses: "the namespace from the provided object "elsewhere" does not match the namespace
    "train". You must pass '--namespace=elsewhere' to perform this operation." (k8s.io/cli-runtime
    pkg/resource/visitor.go `RequireNamespace`, which builder.go applies when -n was given).
    doctor refuses the same pair, before any read."""
    doctor.load(healthy)
    planned = tmp_path / "job.yaml"
    result = _refused(doctor, planned, _in_namespace(doctor, "elsewhere"), "-n", NAMESPACE)
    assert result.exit_code == 64, result.stdout + result.stderr
    assert result.stderr == (
        f"truegreen: the job file {planned} is for the namespace 'elsewhere', but doctor was "
        f"told to check '{NAMESPACE}'. pass -n elsewhere to check the namespace the job would "
        "be created in\n"
    )
    assert result.stdout == ""
    assert doctor.server.heard == []


@pytest.mark.parametrize(
    ("selection", "checked"),
    [
        (("--namespaces", f"elsewhere,{NAMESPACE}"), f"--namespaces names '{NAMESPACE}'"),
        (("-A",), "--all-namespaces checks other namespaces too"),
    ],
)
def test_a_job_file_for_one_namespace_is_refused_over_several(
    doctor: Doctor, tmp_path: Path, selection: tuple[str, ...], checked: str
) -> None:
    """The job would be created in its metadata.namespace alone (cli-runtime
    pkg/resource/visitor.go `RequireNamespace`): a run over other namespaces is refused."""
    doctor.load(healthy)
    planned = tmp_path / "job.yaml"
    result = _refused(doctor, planned, _in_namespace(doctor, "elsewhere"), *selection)
    assert result.exit_code == 64, result.stdout + result.stderr
    assert result.stderr == (
        f"truegreen: the job file {planned} is for the namespace 'elsewhere', but {checked}. "
        "pass -n elsewhere to check the namespace the job would be created in\n"
    )
    assert doctor.server.heard == []


def test_a_job_file_with_its_own_namespace_is_checked_there_without_n(
    doctor: Doctor, tmp_path: Path
) -> None:
    """`kubectl create -f job.yaml` with no -n creates the Job in its metadata.namespace, not
    the context's (k8s.io/cli-runtime pkg/resource/visitor.go `SetNamespace` sets only an empty
    namespace; clientcmd `DirectClientConfig.Namespace` says the context's namespace is not
    an override). doctor checks that namespace too: here it does not exist, which is the job's
    own measured failure."""
    doctor.load(healthy)
    planned = tmp_path / "job.yaml"
    result = _refused(doctor, planned, _in_namespace(doctor, "elsewhere"), "-o", "json")
    read = {r.path for r in doctor.server.heard}
    assert "/api/v1/namespaces/elsewhere/pods" in read
    assert not [path for path in read if f"/namespaces/{NAMESPACE}" in path]
    report = result.json()
    assert report["job"]["name"] == "big"
    assert (report["headline"]["code"], result.exit_code) == ("admission.namespace-missing", 2)
    assert report["headline"]["text"] == (
        "The environment's space 'elsewhere' doesn't exist, so nothing can start there."
    )
    assert f"-n {NAMESPACE}" not in result.stdout


def test_a_kubeflow_job_file_with_no_containers_names_its_replica_type(
    doctor: Doctor, tmp_path: Path
) -> None:
    """A PyTorchJob's pods meet the same pod validation when its operator creates them: a
    Worker template with no containers never runs, so it is never "ready"."""
    doctor.load(healthy)
    job = pytorch_job("pt", doctor.now, workers=2, gpus=1, age=timedelta(0))
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"] = []
    result = _refused(doctor, tmp_path / "job.yaml", job, "-o", "json")
    assert result.exit_code == 64, result.stderr
    assert "the template of Worker: spec.containers: Required value" in result.stderr
    assert json.loads(result.stdout)["headline"]["code"] == "bad-usage"
