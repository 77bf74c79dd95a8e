"""A gang scheduler's objects as a real cluster holds them: Volcano's scheduler pod, its
PodGroup and Queue, and a PyTorchJob whose pods it places. Each builder names its source."""

import copy
import json
from datetime import datetime, timedelta

from tests.support.scenarios import REGISTRY, Obj, job_pod, node, running_containers, ts
from tests.support.training_kinds import pytorch_job, pytorch_pod

VOLCANO_GROUP = "scheduling.volcano.sh"
GPU = "nvidia.com/gpu"
UNPLACED = (
    "4/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 4 minAvailable; "
    "Pending: 4 Unschedulable"
)
"""What Volcano's gang plugin writes on a PodGroup none of whose 4 pods fit: `"%v/%v tasks in
gang unschedulable: %v"` with `JobInfo.FitError()` (volcano pkg/scheduler/plugins/gang/gang.go
`OnSessionClose`; pkg/scheduler/api/job_info.go `FitError`: `pod group is not ready`, the
task-status histogram sorted, then `Pending:` and the pending tasks' reasons, `Unschedulable`
for those with fit errors, `PodReasonUnschedulable`)."""


def volcano_job(name: str, now: datetime, *, scheduler: str, age: timedelta) -> list[Obj]:
    """A PyTorchJob of a Master and 3 Workers (4 pods, 2 GPUs each) handed to `scheduler`, and
    its pods, Pending and never looked at. The training operator with gang scheduling sets
    each pod's `schedulerName` and the annotation `scheduling.k8s.io/group-name: <job>`
    (kubeflow/training-operator pkg/controller.v1/common/pod.go, `gangSchedulingPodGroupAnnotation`;
    volcano-sh/apis pkg/apis/scheduling/v1beta1/labels.go `KubeGroupNameAnnotationKey`)."""
    job = pytorch_job(name, now, workers=3, gpus=2, age=age)
    job["metadata"]["uid"] = f"uid-{name}"
    job["spec"]["runPolicy"] = {"schedulingPolicy": {"queue": "default", "minAvailable": 4}}
    job["status"] = {"conditions": [{"type": "Created", "status": "True"}]}
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        template = replica["template"]
        template["spec"]["schedulerName"] = scheduler
        # A memory-backed /dev/shm, as multi-GPU PyTorch needs (docs/scheduling.md).
        template["spec"]["volumes"] = [{"name": "shm", "emptyDir": {"medium": "Memory"}}]
        for each in template["spec"]["containers"]:
            each["volumeMounts"] = [{"name": "shm", "mountPath": "/dev/shm"}]
        template["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": name}
    pods = [pytorch_pod(job, "Master", 0, now, node_name=None)] + [
        pytorch_pod(job, "Worker", i, now, node_name=None) for i in range(3)
    ]
    for pod in pods:
        role = pod["metadata"]["labels"]["training.kubeflow.org/replica-type"]
        template = job["spec"]["pytorchReplicaSpecs"][role.capitalize()]["template"]
        pod["metadata"]["annotations"] = dict(template["metadata"]["annotations"])
        pod["metadata"]["creationTimestamp"] = ts(now - age)
        # Never looked at by any scheduler: no PodScheduled condition (only a scheduler writes
        # it: kubernetes/kubernetes pkg/scheduler/schedule_one.go `handleSchedulingFailure`).
        pod["status"] = {"phase": "Pending", "qosClass": "Burstable"}
    return [job, *pods]


def looked_at(pods: list[Obj], message: str) -> list[Obj]:
    """The pods as Volcano leaves them when it cannot place the gang: `PodScheduled` False,
    reason `Unschedulable` (volcano pkg/scheduler/cache/cache.go `taskUnschedulable`)."""
    marked = copy.deepcopy(pods)
    for pod in marked:
        pod["status"]["conditions"] = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": message,
            }
        ]
    return marked


def recorded_warning(
    pod: Obj, now: datetime, *, component: str, reason: str, message: str, uid: str | None = None
) -> Obj:
    """A Warning Event on `pod` as client-go's core/v1 recorder posts it, which Volcano's
    scheduler uses: its recorder's source is `{component: <its scheduler name>}` (`volcano`
    unless started with one other `--scheduler-name`: volcano pkg/scheduler/cache/cache.go
    `newSchedulerCache`, pkg/util/util.go `GenerateComponentName`), and it posts
    `FailedScheduling` with the task's words on each pod it cannot place, before it writes the
    pod's condition (cache.go `taskUnschedulable`). client-go tools/record/event.go
    `generateEvent` copies the source's component into `reportingComponent` and its host
    (none here) into `reportingInstance`; `makeEvent` names the Event `<pod>.<hex ns>` and
    refers to the pod with its uid (`uid`: another pod of the same name, made before)."""
    name = pod["metadata"]["name"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{name}.18a2b3c4d5e6f708",
            "namespace": pod["metadata"]["namespace"],
            "creationTimestamp": ts(now - timedelta(minutes=1, seconds=40)),
        },
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": name,
            "namespace": pod["metadata"]["namespace"],
            "uid": uid if uid is not None else pod["metadata"]["uid"],
            "resourceVersion": "4711",
        },
        "reason": reason,
        "message": message,
        "source": {"component": component},
        "firstTimestamp": ts(now - timedelta(minutes=1, seconds=40)),
        "lastTimestamp": ts(now - timedelta(seconds=10)),
        "count": 11,
        "type": "Warning",
        "eventTime": None,
        "reportingComponent": component,
        "reportingInstance": "",
    }


def scheduler_profile_warning(pod: Obj, now: datetime, *, profile: str, message: str) -> Obj:
    """kube-scheduler's `FailedScheduling` on a pod it cannot place, as the API server shows it
    in core/v1: kube-scheduler posts events.k8s.io/v1 Events (pkg/scheduler/schedule_one.go
    `handleSchedulingFailure`, action `Scheduling`) through one recorder per profile, named
    after the profile's `schedulerName` (pkg/scheduler/profile/profile.go `newProfile`,
    `NewRecorderFactory`); client-go tools/events sets `reportingController` and
    `reportingInstance` `<name>-<host>` (event_broadcaster.go `NewRecorder`) and no deprecated
    source, so core/v1 reads `reportingComponent`, an empty `source` and no timestamps but
    `eventTime` (event_recorder.go `makeEvent`)."""
    name = pod["metadata"]["name"]
    at = now - timedelta(seconds=20)
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{name}.18a2b3c4d5e6f709",
            "namespace": pod["metadata"]["namespace"],
            "creationTimestamp": ts(at),
        },
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": name,
            "namespace": pod["metadata"]["namespace"],
            "uid": pod["metadata"]["uid"],
            "resourceVersion": "4712",
        },
        "reason": "FailedScheduling",
        "action": "Scheduling",
        "message": message,
        "type": "Warning",
        "source": {},
        "eventTime": at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "firstTimestamp": None,
        "lastTimestamp": None,
        "reportingComponent": profile,
        "reportingInstance": f"{profile}-control-plane-1",
    }


def pod_group(
    name: str,
    now: datetime,
    *,
    phase: str,
    message: str | None,
    gpus: int = 8,
    queue: str = "default",
    reason: str = "NotEnoughResources",
    min_member: int = 4,
) -> Obj:
    """The PodGroup the training operator creates for the job (name: the job's; minMember: its
    pods, or `runPolicy.schedulingPolicy.minAvailable`, kubeflow/training-operator
    pkg/controller.v1/common/job.go `ReconcileJobs`; minResources: their requests summed;
    pkg/controller.v1/common/scheduling.go), with the status Volcano writes: `phase`, and the
    `Unschedulable` condition of gang.go `OnSessionClose` (reason `NotEnoughResources`), or,
    v1.9 to v1.11, of session.go `openSession` with the gang plugin's `validJobFn` reason
    (`NotEnoughTasks`, `NotEnoughPodsOfTask`)."""
    status: Obj = {"phase": phase}
    if message is not None:
        status["conditions"] = [
            {
                "type": "Unschedulable",
                "status": "True",
                "reason": reason,
                "message": message,
                "transitionID": "606145d1-660f-4e01-850d-ed556cebc098",
                "lastTransitionTime": ts(now - timedelta(seconds=30)),
            }
        ]
    return {
        "apiVersion": f"{VOLCANO_GROUP}/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": name,
            "namespace": "train",
            "creationTimestamp": ts(now - timedelta(minutes=2)),
            "ownerReferences": [
                {
                    "apiVersion": "kubeflow.org/v1",
                    "kind": "PyTorchJob",
                    "name": name,
                    "uid": f"uid-{name}",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "minMember": min_member,
            "queue": queue,
            "minResources": {"cpu": "32", "memory": "256Gi", GPU: str(gpus)},
        },
        "status": status,
    }


def volcano_queue(name: str, *, gpus: int, state: str = "Open") -> Obj:
    """A Volcano Queue capped at `gpus` GPUs (volcano-sh/apis types.go `QueueSpec.Capability`,
    `QueueStatus.State`; the installer's `default` queue: installer/helm/chart/volcano/
    templates/default-queue.yaml with `reclaimable: true`, `weight: 1`)."""
    return {
        "apiVersion": f"{VOLCANO_GROUP}/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {
            "weight": 1,
            "reclaimable": True,
            "capability": {"cpu": "64", "memory": "512Gi", GPU: str(gpus)},
        },
        "status": {"state": state, "pending": 1, "allocated": {"cpu": "0", "memory": "0"}},
    }


def volcano_scheduler_pod(now: datetime) -> Obj:
    """The scheduler's own pod as Volcano's installer runs it: Deployment `volcano-scheduler`
    in `volcano-system`, pods labelled `app: volcano-scheduler` (volcano installer/README.md
    `pod/volcano-scheduler-94998fc64-86hzn`; installer/helm/chart/volcano/templates/
    scheduler.yaml)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "volcano-scheduler-94998fc64-86hzn",
            "namespace": "volcano-system",
            "labels": {"app": "volcano-scheduler", "pod-template-hash": "94998fc64"},
            "creationTimestamp": ts(now - timedelta(days=3)),
        },
        "spec": {
            "nodeName": "cpu-1",
            "serviceAccountName": "volcano-scheduler",
            "containers": [
                {
                    "name": "volcano-scheduler",
                    "image": f"{REGISTRY}/volcanosh/vc-scheduler:v1.12.1",
                    "args": ["--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf"],
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                }
            ],
        },
        "status": {"phase": "Running"},
    }


def running_on(pods: list[Obj], machine: str, now: datetime, *, since: timedelta) -> list[Obj]:
    """The pods as the scheduler binds them (`spec.nodeName`) and the kubelet then writes
    them: phase Running, `PodScheduled` and `Ready` True, each container running the image it
    pulled (its `imageID`) (kubernetes/kubernetes pkg/kubelet/status/status_manager.go)."""
    started = ts(now - since)
    placed = copy.deepcopy(pods)
    for pod in placed:
        pod["spec"]["nodeName"] = machine
        pod["status"] = {
            "phase": "Running",
            "qosClass": "Burstable",
            "conditions": [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": started},
                {"type": "Ready", "status": "True", "lastTransitionTime": started},
            ],
            "containerStatuses": running_containers(
                pod["metadata"]["name"], pod["spec"]["containers"], started
            ),
        }
    return placed


def gpu_machine() -> Obj:
    """An idle 8-GPU machine: the arithmetic finds room for the 4 pods of 2 GPUs."""
    return node("gpu-8", "64", "512Gi", gpus=8)


KAI_GROUP = "scheduling.run.ai"
COSCHEDULING_GROUP = "scheduling.x-k8s.io"
GANG_GROUPS = (VOLCANO_GROUP, COSCHEDULING_GROUP, KAI_GROUP)


def kai_group_name(job: str) -> str:
    """KAI's pod grouper names a job's group `pg-<top owner>-<its uid>`
    (pkg/podgrouper/podgrouper/plugins/defaultgrouper `CalcPodGroupName`,
    constants.PodGroupNamePrefix `pg`)."""
    return f"pg-{job}-uid-{job}"


def kai_job(name: str, now: datetime, *, age: timedelta) -> list[Obj]:
    """The PyTorchJob of `volcano_job` handed to KAI (`schedulerName: kai-scheduler`); its pods
    carry the `pod-group-name` annotation KAI's pod grouper writes
    (pkg/common/constants `PodGroupAnnotationForPod`)."""
    job, *pods = volcano_job(name, now, scheduler="kai-scheduler", age=age)
    for pod in pods:
        pod["metadata"]["annotations"] = {"pod-group-name": kai_group_name(name)}
    return [job, *pods]


def kai_pod_group(name: str, now: datetime, *, reasons: list[tuple[str, str]]) -> Obj:
    """KAI's PodGroup of the job, as the scheduler leaves one it cannot place: a scheduling
    condition `UnschedulableOnNodePool` on the node pool `default` with its `reasons`
    (NVIDIA/KAI-Scheduler pkg/apis/scheduling/v2alpha2/podgroup_types.go)."""
    return {
        "apiVersion": f"{KAI_GROUP}/v2alpha2",
        "kind": "PodGroup",
        "metadata": {
            "name": kai_group_name(name),
            "namespace": "train",
            "creationTimestamp": ts(now - timedelta(minutes=2)),
        },
        "spec": {"minMember": 4, "queue": "team-a", "priorityClassName": "train"},
        "status": {
            "pending": 4,
            "schedulingConditions": [
                {
                    "type": "UnschedulableOnNodePool",
                    "nodePool": "default",
                    "status": "True",
                    "reason": "Unschedulable",
                    "message": "; ".join(m for _, m in reasons),
                    "reasons": [{"reason": r, "message": m} for r, m in reasons],
                    "transitionID": "1",
                    "lastTransitionTime": ts(now - timedelta(seconds=40)),
                }
            ],
        },
    }


def kai_queue(
    name: str,
    *,
    parent: str | None = None,
    gpu_limit: float = -1,
    gpu_quota: float = -1,
    allocated: dict[str, str] | None = None,
) -> Obj:
    """A KAI Queue as docs/queues/README.md writes one (`scheduling.run.ai/v2`, cluster-scoped,
    every resource with quota, limit and overQuotaWeight; -1 unlimited; GPUs in devices, CPU
    in millicores, memory in MB), with its parent where it has one, and what it holds where
    given: `status.allocated` as KAI's queue controller writes it, Kubernetes quantities
    (pkg/queuecontroller/controllers/resource_updater/resource_updater.go)."""
    spec: Obj = {
        "resources": {
            "cpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
            "gpu": {"quota": gpu_quota, "limit": gpu_limit, "overQuotaWeight": 1},
            "memory": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
        }
    }
    if parent is not None:
        spec["parentQueue"] = parent
    queue: Obj = {
        "apiVersion": f"{KAI_GROUP}/v2",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": spec,
    }
    if allocated is not None:
        queue["status"] = {"allocated": allocated, "requested": allocated}
    return queue


def kai_scheduler_pod(now: datetime) -> Obj:
    """KAI's scheduler pod: its operator's Deployment `kai-scheduler-default` in the namespace
    `kai-scheduler` (NVIDIA/KAI-Scheduler deployments/kai-scheduler, the SchedulingShard
    `default`)."""
    pod = volcano_scheduler_pod(now)
    pod["metadata"].update(
        name="kai-scheduler-default-6b8f7c9d4-q2wxs",
        namespace="kai-scheduler",
        labels={"app": "kai-scheduler-default", "pod-template-hash": "6b8f7c9d4"},
    )
    pod["spec"]["serviceAccountName"] = "kai-scheduler"
    pod["spec"]["containers"][0].update(name="scheduler", args=[])
    return pod


def coscheduling_pod_group(name: str, now: datetime, *, phase: str) -> Obj:
    """A coscheduling PodGroup (scheduler-plugins apis/scheduling/v1alpha1/types.go)."""
    return {
        "apiVersion": f"{COSCHEDULING_GROUP}/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "train", "creationTimestamp": ts(now)},
        "spec": {"minMember": 4, "scheduleTimeoutSeconds": 60},
        "status": {"phase": phase},
    }


def every_gang_read(objects: list[Obj], name: str, now: datetime) -> list[Obj]:
    """`objects` with the Job `name` handed to Volcano (its template's `schedulerName`) and
    three pods of it, one in a group of each kind (Volcano's, coscheduling's, KAI's), with
    each group, placed, and the Volcano Queue: every gang read is made and none fails (for the
    RBAC tests; a real job's pods are in one group)."""
    job = next(o for o in objects if o.get("kind") == "Job" and o["metadata"]["name"] == name)
    job["spec"]["template"]["spec"]["schedulerName"] = "volcano"
    pods = [job_pod(job, now, suffix=f"g4n{i}", node_name=None, phase="Pending") for i in range(3)]
    pods[0]["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": name}
    pods[1]["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = name
    pods[2]["metadata"]["annotations"] = {"pod-group-name": kai_group_name(name)}
    group = pod_group(name, now, phase="Running", message=None)
    group["metadata"]["ownerReferences"] = []
    kai = kai_pod_group(name, now, reasons=[])
    kai["status"] = {"running": 4}
    return [
        *objects,
        *pods,
        group,
        coscheduling_pod_group(name, now, phase="Running"),
        kai,
        volcano_queue("default", gpus=8),
        kai_queue("default"),
        kai_queue("team-a", parent="default"),
    ]


YUNIKORN_NAMESPACE = "yunikorn"


def yunikorn_job(name: str, now: datetime, *, age: timedelta) -> list[Obj]:
    """The PyTorchJob of `volcano_job` (4 pods, 2 GPUs each) handed to YuniKorn: its pods name
    `schedulerName: yunikorn` and carry YuniKorn's application id and queue as labels
    (yunikorn-k8shim pkg/common/constants/constants.go `CanonicalLabelApplicationID`,
    `CanonicalLabelQueueName`); YuniKorn keeps no group object, so no group annotation."""
    job, *pods = volcano_job(name, now, scheduler="yunikorn", age=age)
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        replica["template"]["metadata"].pop("annotations", None)
    for pod in pods:
        pod["metadata"].pop("annotations", None)
        pod["metadata"]["uid"] = f"uid-{pod['metadata']['name']}"
        pod["metadata"]["labels"] |= {
            "yunikorn.apache.org/app-id": name,
            "yunikorn.apache.org/queue": "root.train",
        }
    return [job, *pods]


def yunikorn_scheduler_pod(now: datetime) -> Obj:
    """YuniKorn's own pod as its Helm chart runs it: Deployment `yunikorn-scheduler` in the
    release's namespace, pods labelled `app: yunikorn`, `component: yunikorn-scheduler`
    (apache/yunikorn-release helm-charts/yunikorn/templates/deployment.yaml)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "yunikorn-scheduler-6b7c8d9f5-x2lqp",
            "namespace": YUNIKORN_NAMESPACE,
            "labels": {
                "app": "yunikorn",
                "component": "yunikorn-scheduler",
                "release": "yunikorn",
                "pod-template-hash": "6b7c8d9f5",
            },
            "creationTimestamp": ts(now - timedelta(days=3)),
        },
        "spec": {
            "nodeName": "cpu-1",
            "serviceAccountName": "yunikorn-admin",
            "containers": [
                {
                    "name": "yunikorn-scheduler-k8s",
                    "image": f"{REGISTRY}/apache/yunikorn:scheduler-1.6.3",
                    "resources": {"requests": {"cpu": "200m", "memory": "1Gi"}},
                }
            ],
        },
        "status": {"phase": "Running"},
    }


def yunikorn_note(pod: Obj, message: str, at: datetime, index: int = 0) -> Obj:
    """A note of YuniKorn's on a request, as the API server serves it on core/v1: recorded
    through client-go's events.k8s.io recorder for `yunikorn` (pkg/shim/scheduler.go
    `NewRecorder(..., constants.SchedulerName)`), a Normal Event of reason and action
    `Informational` (pkg/cache/context.go `PublishEvents`), so `eventTime` and the reporting
    fields are set and the core/v1 timestamps and source are empty."""
    name = pod["metadata"]["name"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{name}.18a1f2c3d4e5f6{index:02d}",
            "namespace": pod["metadata"]["namespace"],
            "creationTimestamp": ts(at),
        },
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": name,
            "namespace": pod["metadata"]["namespace"],
            "uid": pod["metadata"].get("uid", ""),
        },
        "reason": "Informational",
        "action": "Informational",
        "message": message,
        "type": "Normal",
        "source": {},
        "eventTime": at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "firstTimestamp": None,
        "lastTimestamp": None,
        "reportingComponent": "yunikorn",
        "reportingInstance": "yunikorn-yunikorn-scheduler-6b7c8d9f5-x2lqp",
    }


def yunikorn_placeholder(originator: Obj, group: str, index: int) -> Obj:
    """A placeholder pod YuniKorn makes for a task group: owned by the originator pod, its
    flags in annotations, the pause image (yunikorn-k8shim pkg/cache/placeholder.go
    `newPlaceholder`; metadata.go `getOwnerReference`; gang_utils.go
    `GeneratePlaceholderName`, here with a fixed suffix)."""
    app = originator["metadata"]["labels"]["yunikorn.apache.org/app-id"]
    name = f"tg-{app}-{group}-{index}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": originator["metadata"]["namespace"],
            "uid": f"uid-{name}",
            "labels": {
                "yunikorn.apache.org/app-id": app,
                "yunikorn.apache.org/queue": "root.train",
                "placeholder": "true",
            },
            "annotations": {
                "yunikorn.apache.org/placeholder": "true",
                "yunikorn.apache.org/task-group-name": group,
            },
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": originator["metadata"]["name"],
                    "uid": originator["metadata"]["uid"],
                    "controller": False,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "schedulerName": "yunikorn",
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.7",
                    "resources": {"requests": {"cpu": "8", "memory": "64Gi", GPU: "2"}},
                }
            ],
        },
        "status": {"phase": "Pending", "qosClass": "Burstable"},
    }


def does_not_fit(pod: Obj, queue: str, gpus: int, available: int) -> str:
    """A pod of `yunikorn_job` (8 CPUs, 64 GiB) over its queue's headroom (yunikorn-core
    pkg/scheduler/objects/events/ask_events.go `SendRequestExceedsQueueHeadroom`): the key is
    the pod's uid, resources print as Go maps (memory in bytes, vcore in millicores, one `pods`
    per pod)."""
    return (
        f"Request '{pod['metadata']['uid']}' does not fit in queue '{queue}' (requested "
        f"map[memory:68719476736 nvidia.com/gpu:{gpus} pods:1 vcore:8000], available "
        f"map[nvidia.com/gpu:{available}])"
    )


def exceeds_user_quota(pod: Obj, gpus: int, available: int) -> str:
    """A pod of `yunikorn_job` over its user's headroom (yunikorn-core
    pkg/scheduler/objects/events/ask_events.go `SendRequestExceedsUserQuota`): no queue named."""
    return (
        f"Request '{pod['metadata']['uid']}' exceeds the available user quota (requested "
        f"map[memory:68719476736 nvidia.com/gpu:{gpus} pods:1 vcore:8000], available "
        f"map[nvidia.com/gpu:{available}])"
    )


def yunikorn_user(pods: list[Obj], user: str, groups: list[str]) -> None:
    """The submitter YuniKorn's admission controller writes on each pod it admits: the
    annotation `yunikorn.apache.org/user.info`, Go's json.Marshal of si.UserGroupInformation
    (yunikorn-k8shim pkg/admission/metadata/usergroup.go `getPatchOperation`)."""
    info = json.dumps({"user": user, "groups": groups}, separators=(",", ":"))
    for pod in pods:
        pod["metadata"].setdefault("annotations", {})["yunikorn.apache.org/user.info"] = info


def yunikorn_configs(queues_yaml: str, name: str = "yunikorn-configs") -> Obj:
    """YuniKorn's configuration ConfigMap in its namespace, its queues under `queues.yaml`
    (yunikorn-k8shim deployments/scheduler/yunikorn-configs.yaml)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": YUNIKORN_NAMESPACE},
        "data": {"queues.yaml": queues_yaml},
    }
