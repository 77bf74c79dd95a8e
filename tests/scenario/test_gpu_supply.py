"""A GPU machine's GPUs reach the scheduler only through its device plugin: a machine labelled
as a GPU machine that offers none has its GPU software down; one that offers fewer than it has
has unhealthy GPUs; a job that asks for whole GPUs where the machines offer MIG slices finds
none."""

from datetime import datetime, timedelta
from typing import Any

from tests.scenario.conftest import Doctor
from tests.support.scenarios import Obj, find, healthy, job_pod, node, training_job, ts

GPU_JOB = ("--job-requests", "cpu=1,memory=1Gi,nvidia.com/gpu=1")


def _capacity(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == "capacity"]


def _gpu_machine(now: datetime, *, allocatable: str, capacity: str = "2") -> list[Obj]:
    """gpu-1 as the GPU operator labels it (GPU feature discovery's `nvidia.com/gpu.present`,
    `nvidia.com/gpu.count`, `nvidia.com/gpu.product`), its device plugin's count in capacity and
    what the kubelet offers in allocatable (NVIDIA/k8s-device-plugin#58: capacity 1,
    allocatable 0 while the plugin is down)."""
    objects = healthy(now)
    gpu = find(objects, "Node", "gpu-1")
    gpu["metadata"]["labels"].update(
        {
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.count": capacity,
            "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
        }
    )
    gpu["status"]["capacity"]["nvidia.com/gpu"] = capacity
    gpu["status"]["allocatable"]["nvidia.com/gpu"] = allocatable
    return objects


def _device_plugin_pod(state: dict[str, Any]) -> Obj:
    """The GPU operator's device plugin on gpu-1 (gpu-operator's nvidia-device-plugin-daemonset,
    `kubectl get pods -n gpu-operator -o wide`)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "nvidia-device-plugin-daemonset-7xk2p",
            "namespace": "gpu-operator",
            "labels": {"app": "nvidia-device-plugin-daemonset"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "DaemonSet",
                    "name": "nvidia-device-plugin-daemonset",
                    "uid": "u",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "nodeName": "gpu-1",
            "containers": [
                {
                    "name": "nvidia-device-plugin",
                    "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.1",
                }
            ],
        },
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {"name": "nvidia-device-plugin", "ready": False, "restartCount": 14, "state": state}
            ],
        },
    }


def test_a_gpu_machine_that_offers_no_gpu_has_its_gpu_software_down(doctor: Doctor) -> None:
    doctor.load(
        lambda now: [
            *_gpu_machine(now, allocatable="0"),
            _device_plugin_pod(
                {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s"}}
            ),
        ]
    )
    result = doctor.live("-o", "json", *GPU_JOB)
    report = result.json()
    (finding,) = _capacity(report)
    assert (finding["status"], finding["basis"], finding["code"]) == (
        "fail",
        "measured",
        "capacity.gpu-software-down",
    )
    assert finding["headline"] == (
        "The GPU software on gpu-1 is not running, so its 2 GPUs can't be used."
    )
    assert finding["details"] == [
        "gpu-1 (nvidia.com/gpu.present=true): nvidia.com/gpu allocatable 0 of 2",
        "Pod/nvidia-device-plugin-daemonset-7xk2p on gpu-1: CrashLoopBackOff",
    ]
    assert "--field-selector spec.nodeName=gpu-1" in finding["remedy"]
    assert report["headline"]["code"] == "capacity.gpu-software-down"
    assert result.exit_code == 2


def test_unhealthy_gpus_are_a_warning_when_the_job_still_fits(doctor: Doctor) -> None:
    doctor.load(lambda now: _gpu_machine(now, allocatable="1"))
    result = doctor.live("-o", "json", *GPU_JOB)
    codes = [(f["code"], f["status"]) for f in _capacity(result.json())]
    assert codes == [("capacity.fits", "ok"), ("capacity.gpus-unhealthy", "warn")]
    (warning,) = [f for f in _capacity(result.json()) if f["code"] == "capacity.gpus-unhealthy"]
    assert warning["headline"] == (
        "Only 1 of the 2 GPUs on gpu-1 can be used: the others are reported unhealthy."
    )
    assert result.exit_code == 0


def test_whole_gpus_asked_where_the_machines_offer_mig_slices(doctor: Doctor) -> None:
    """gpu-1 split by the GPU operator's MIG manager under the mixed strategy (GPU feature
    discovery's `nvidia.com/mig.strategy=mixed`): it offers `nvidia.com/mig-1g.10gb`, no
    `nvidia.com/gpu`."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        gpu = find(objects, "Node", "gpu-1")
        gpu["metadata"]["labels"]["nvidia.com/mig.strategy"] = "mixed"
        for part in ("capacity", "allocatable"):
            gpu["status"][part].pop("nvidia.com/gpu")
            gpu["status"][part]["nvidia.com/mig-1g.10gb"] = "7"
        return objects

    doctor.load(build)
    result = doctor.live("-o", "json", *GPU_JOB)
    (finding,) = _capacity(result.json())
    assert (finding["status"], finding["code"]) == ("fail", "capacity.no-such-gpu")
    assert finding["headline"] == (
        "No machine offers nvidia.com/gpu, which the training job asks for; the machines offer "
        "nvidia.com/mig-1g.10gb."
    )
    assert result.exit_code == 2


def _four_gpu_job(now: datetime, *, shm: bool, host_ipc: bool = False) -> list[Obj]:
    """A 4-GPU training pod, as kubeflow/pipelines#6880 reports it failing ("bus error" from
    DataLoader workers on the 64 MiB default /dev/shm); with `shm`, the fix the PyTorch and
    Kubeflow docs give: an emptyDir of medium Memory mounted at /dev/shm; with `host_ipc`, in
    the machine's IPC namespace (`hostIPC: true`)."""
    from datetime import timedelta

    from tests.support.scenarios import training_job

    objects = healthy(now)
    find(objects, "Node", "gpu-1")["status"]["allocatable"]["nvidia.com/gpu"] = "4"
    job = training_job("train-004", now, gpus=4, cpu="8", memory="32Gi", age=timedelta(minutes=1))
    spec = job["spec"]["template"]["spec"]
    if shm:
        spec["volumes"].append(
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}
        )
        spec["containers"][0]["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}]
    if host_ipc:
        spec["hostIPC"] = True
    return [*objects, job]


def test_a_four_gpu_program_without_memory_backed_shared_memory_is_warned(doctor: Doctor) -> None:
    doctor.load(lambda now: _four_gpu_job(now, shm=False))
    result = doctor.live("-o", "json")
    report = result.json()
    (warning,) = [f for f in report["findings"] if f["code"] == "workloads.no-shared-memory"]
    assert (warning["status"], warning["basis"]) == ("warn", "inferred")
    assert warning["headline"] == (
        "The training job 'train-004' has the container default of 64 MiB of shared memory, too "
        "little for its programs (4 GPUs): they stop with a bus error when it fills."
    )
    assert warning["details"][-1].startswith(
        "fix: volumes: [{name: dshm, emptyDir: {medium: Memory"
    )
    assert result.exit_code == 0


def test_with_shared_memory_mounted_there_is_no_warning(doctor: Doctor) -> None:
    doctor.load(lambda now: _four_gpu_job(now, shm=True))
    codes = {f["code"] for f in doctor.live("-o", "json").json()["findings"]}
    assert "workloads.no-shared-memory" not in codes
    assert "capacity.fits" in codes, "precondition: the job was judged"


def test_a_program_in_the_machine_s_ipc_namespace_has_the_machine_s_shared_memory(
    doctor: Doctor,
) -> None:
    """With `hostIPC: true` the runtime mounts the machine's own /dev/shm in the container, not
    a 64 MiB one of the pod's (containerd internal/cri/server/container_create.go
    `linuxContainerMounts`; CRI-O server/sandbox_run_linux.go `setupSandboxShm`): no warning."""
    doctor.load(lambda now: _four_gpu_job(now, shm=False, host_ipc=True))
    codes = {f["code"] for f in doctor.live("-o", "json").json()["findings"]}
    assert "workloads.no-shared-memory" not in codes
    assert "capacity.fits" in codes, "precondition: the job was judged"


def _waiting_job(now: datetime) -> list[Obj]:
    """A training job's pod that kube-scheduler found no room for, ten minutes old, in its
    words (schedule_one.go's FitError, then the preemption plugin's verdict)."""
    job = training_job("train-002", now, gpus=1, finished=False, age=timedelta(minutes=10))
    pod = job_pod(job, now, suffix="w0", node_name=None, phase="Pending", age=timedelta(minutes=10))
    assert pod["status"]["conditions"][0]["message"].startswith(
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
    )
    return [job, pod]


def test_the_scheduler_s_lack_of_gpus_is_the_gpu_software_that_is_down(doctor: Doctor) -> None:
    """The device plugin is crash-looping, so gpu-1 offers 0 of its 2 GPUs and kube-scheduler
    says `Insufficient nvidia.com/gpu`: the job would fit on gpu-1 with its GPUs usable, so the
    GPU software is the cause, not a lack of room ("wait, free some or add a machine")."""
    doctor.load(
        lambda now: [
            *_gpu_machine(now, allocatable="0"),
            _device_plugin_pod(
                {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s"}}
            ),
            *_waiting_job(now),
        ]
    )
    result = doctor.live("-o", "json")
    report = result.json()
    assert [(f["code"], f["status"]) for f in _capacity(report)] == [
        ("capacity.gpu-software-down", "fail")
    ]
    headline = report["headline"]
    assert (headline["code"], result.exit_code) == ("capacity.gpu-software-down", 2)
    assert (
        headline["text"] == "The GPU software on gpu-1 is not running, so its 2 GPUs can't be used."
    )
    (finding,) = _capacity(report)
    assert finding["details"][-1] == (
        "scheduler on train-002-w0: 0/2 nodes are available: 2 Insufficient nvidia.com/gpu. "
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )
    assert "add a machine" not in headline["remedy"]


def test_the_scheduler_s_lack_of_whole_gpus_is_the_mig_split(doctor: Doctor) -> None:
    """gpu-1 offers only MIG slices; the scheduler's `Insufficient nvidia.com/gpu` is that."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        gpu = find(objects, "Node", "gpu-1")
        for part in ("capacity", "allocatable"):
            gpu["status"][part].pop("nvidia.com/gpu")
            gpu["status"][part]["nvidia.com/mig-1g.10gb"] = "7"
        return [*objects, *_waiting_job(now)]

    doctor.load(build)
    result = doctor.live("-o", "json")
    assert [(f["code"], f["status"]) for f in _capacity(result.json())] == [
        ("capacity.no-such-gpu", "fail")
    ]
    assert result.json()["headline"]["code"] == "capacity.no-such-gpu"


def _joined_gpu_machine(now: datetime, ago: timedelta) -> list[Obj]:
    """gpu-1 as Karpenter and Node Feature Discovery label a machine that joined `ago`, before
    the GPU operator's driver is installed: no `nvidia.com/gpu` in its capacity or allocatable
    yet (the device plugin has not registered), the driver pod still initialising
    (`kubectl get pods -n gpu-operator`: `nvidia-driver-daemonset-… Init:0/1`)."""
    objects = healthy(now)
    gpu = find(objects, "Node", "gpu-1")
    gpu["metadata"]["creationTimestamp"] = (now - ago).strftime("%Y-%m-%dT%H:%M:%SZ")
    gpu["metadata"]["labels"].update(
        {
            "feature.node.kubernetes.io/pci-10de.present": "true",
            "karpenter.k8s.aws/instance-gpu-count": "4",
        }
    )
    for part in ("capacity", "allocatable"):
        gpu["status"][part].pop("nvidia.com/gpu")
    driver = _device_plugin_pod({"waiting": {"reason": "PodInitializing"}})
    driver["metadata"]["name"] = "nvidia-driver-daemonset-m4x9q"
    driver["status"]["phase"] = "Pending"
    return [*objects, driver, *_waiting_job(now)]


def test_a_gpu_machine_that_has_just_joined_is_starting_not_down(doctor: Doctor) -> None:
    """Four minutes after joining, gpu-1's driver is still being installed: cluster-autoscaler
    counts such a machine as not started for `--max-node-startup-time` (15 minutes by default;
    processors/customresources/gpu_processor.go `FilterOutNodesWithUnreadyResources`,
    clusterstate/clusterstate.go `updateReadinessStats`). The job waits for it: a warning, not
    a measured failure of the GPU software."""
    doctor.load(lambda now: _joined_gpu_machine(now, timedelta(minutes=4)))
    result = doctor.live("-o", "json")
    report = result.json()
    assert [(f["code"], f["status"], f["basis"]) for f in _capacity(report)] == [
        ("capacity.gpu-software-starting", "warn", "measured")
    ]
    (finding,) = _capacity(report)
    assert finding["headline"] == (
        "The GPU software on gpu-1 is still starting, 4 minutes after joining the cluster, so "
        "its 4 GPUs can't be used yet."
    )
    assert finding["remedy"].startswith(
        "Nothing to do yet: a new machine's GPU software takes a few minutes to start. If it "
        "still isn't running 15 minutes after the machine joined, look at it ("
    )
    assert finding["details"][:2] == [
        "gpu-1 (feature.node.kubernetes.io/pci-10de.present=true): nvidia.com/gpu allocatable "
        "0 of 4",
        "Pod/nvidia-driver-daemonset-m4x9q on gpu-1: PodInitializing",
    ]
    assert result.exit_code == 0


def test_past_the_autoscaler_s_startup_time_the_gpu_software_is_down(doctor: Doctor) -> None:
    doctor.load(lambda now: _joined_gpu_machine(now, timedelta(minutes=16)))
    result = doctor.live("-o", "json")
    assert [(f["code"], f["status"]) for f in _capacity(result.json())] == [
        ("capacity.gpu-software-down", "fail")
    ]
    assert result.exit_code == 2


def test_a_new_machine_whose_device_plugin_registered_and_stopped_is_down(doctor: Doctor) -> None:
    """Four minutes old, but its device plugin registered 2 GPUs in capacity and now
    crash-loops, so none is allocatable: the kubelet measured the plugin stopped
    (devicemanager `GetCapacity`), which is no start."""

    def build(now: datetime) -> list[Obj]:
        objects = _gpu_machine(now, allocatable="0")
        gpu = find(objects, "Node", "gpu-1")
        gpu["metadata"]["creationTimestamp"] = (now - timedelta(minutes=4)).strftime(
            "%Y-%m-%dT%H:%M:%SZ"
        )
        plugin = _device_plugin_pod(
            {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s"}}
        )
        return [*objects, plugin, *_waiting_job(now)]

    doctor.load(build)
    result = doctor.live("-o", "json")
    assert [(f["code"], f["status"]) for f in _capacity(result.json())] == [
        ("capacity.gpu-software-down", "fail")
    ]
    assert result.exit_code == 2


def test_an_eks_gpu_machine_known_by_the_autoscaler_s_label_that_offers_no_gpu_is_named(
    doctor: Doctor,
) -> None:
    """An EKS GPU machine as cluster-autoscaler's AWS provider knows it: the label
    `k8s.amazonaws.com/accelerator` with its GPU type (cloudprovider/aws/aws_cloud_provider.go
    GPULabel, `availableGPUTypes`), set on the node group, and nothing else that says GPU: the
    NVIDIA device plugin was never installed, so no `nvidia.com/gpu` in its capacity or
    allocatable, an hour after it joined. cluster-autoscaler counts it as a GPU machine whose
    GPUs are not ready (utils/gpu/gpu.go NodeHasGpu); doctor names it beside the job that fits
    on gpu-1."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        eks = node("ip-10-0-3-17.ec2.internal", "4", "16Gi")
        eks["metadata"]["creationTimestamp"] = ts(now - timedelta(hours=1))
        eks["metadata"]["labels"].update(
            {
                "node.kubernetes.io/instance-type": "g5.xlarge",
                "eks.amazonaws.com/nodegroup": "gpu",
                "k8s.amazonaws.com/accelerator": "nvidia-a10g",
            }
        )
        return [*objects, eks]

    doctor.load(build)
    result = doctor.live("-o", "json", *GPU_JOB)
    found = [(f["code"], f["status"]) for f in _capacity(result.json())]
    assert found == [("capacity.fits", "ok"), ("capacity.gpu-software-down", "warn")], found
    (warning,) = [f for f in _capacity(result.json()) if f["code"] == "capacity.gpu-software-down"]
    assert warning["details"][0] == (
        "ip-10-0-3-17.ec2.internal (k8s.amazonaws.com/accelerator=nvidia-a10g): nvidia.com/gpu "
        "allocatable 0 of 0"
    )
    assert result.exit_code == 0
