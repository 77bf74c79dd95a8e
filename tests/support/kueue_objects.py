"""Kueue's objects as a real Kueue holds them, in either served version.

Shapes follow kubernetes-sigs/kueue apis/kueue/v1beta2 and v1beta1 (`*_types.go`), the
examples in site/static/examples/admin (single-clusterqueue-setup.yaml, shared-quota-setup.yaml)
and the objects pasted in kubernetes-sigs/kueue#2391 (GPU flavors, a Workload per job named
`job-<name>-<hash>`) and #1276 (flavors tried in order). A Workload's name is the one
pkg/controller/jobframework/workload_names.go gives it; its status is what Kueue writes:
conditions QuotaReserved / Admitted / Evicted with the messages of flavorassigner.go and
workload_controller.go, `admission` with per-pod-set flavors and usage, `admissionChecks`.
"""

import hashlib
from typing import Any

from tests.support.scenarios import NAMESPACE, Obj

GROUP = "kueue.x-k8s.io"
V1BETA2 = "v1beta2"
V1BETA1 = "v1beta1"
Quotas = dict[str, str | tuple[str, str | None, str | None]]
"""Per resource: its nominal quota, or (nominal, borrowingLimit, lendingLimit)."""


def api(version: str) -> str:
    return f"{GROUP}/{version}"


def resource_flavor(
    name: str,
    *,
    version: str = V1BETA2,
    node_labels: dict[str, str] | None = None,
    node_taints: list[Obj] | None = None,
) -> Obj:
    spec: Obj = {}
    if node_labels:
        spec["nodeLabels"] = node_labels
    if node_taints:
        spec["nodeTaints"] = node_taints
    return {
        "apiVersion": api(version),
        "kind": "ResourceFlavor",
        "metadata": {"name": name},
        "spec": spec,
    }


def _quota(name: str, value: str | tuple[str, str | None, str | None]) -> Obj:
    nominal, borrowing, lending = value if isinstance(value, tuple) else (value, None, None)
    quota: Obj = {"name": name, "nominalQuota": nominal}
    if borrowing is not None:
        quota["borrowingLimit"] = borrowing
    if lending is not None:
        quota["lendingLimit"] = lending
    return quota


def resource_groups(groups: list[tuple[list[str], list[tuple[str, Quotas]]]]) -> list[Obj]:
    return [
        {
            "coveredResources": covered,
            "flavors": [
                {"name": flavor, "resources": [_quota(r, q) for r, q in quotas.items()]}
                for flavor, quotas in flavors
            ],
        }
        for covered, flavors in groups
    ]


def cluster_queue(
    name: str,
    groups: list[tuple[list[str], list[tuple[str, Quotas]]]],
    *,
    version: str = V1BETA2,
    cohort: str | None = None,
    reserved: dict[tuple[str, str], str] | None = None,
    stop_policy: str | None = None,
    active: tuple[str, str, str] = ("True", "Ready", "Can admit new workloads"),
    namespace_selector: Obj | None = None,
    admission_checks: list[str] | None = None,
    pending: list[str] | None = None,
    extra_spec: Obj | None = None,
) -> Obj:
    """A ClusterQueue; `reserved`: (flavor, resource) → quantity its workloads reserve."""
    spec: Obj = {
        "namespaceSelector": {} if namespace_selector is None else namespace_selector,
        "resourceGroups": resource_groups(groups),
        "queueingStrategy": "BestEffortFIFO",
        **(extra_spec or {}),
    }
    if cohort:
        spec["cohortName" if version == V1BETA2 else "cohort"] = cohort
    if stop_policy:
        spec["stopPolicy"] = stop_policy
    if admission_checks:
        if version == V1BETA2:
            spec["admissionChecksStrategy"] = {
                "admissionChecks": [{"name": c} for c in admission_checks]
            }
        else:
            spec["admissionChecks"] = admission_checks
    by_flavor: dict[str, list[Obj]] = {}
    for (flavor, resource), total in (reserved or {}).items():
        by_flavor.setdefault(flavor, []).append({"name": resource, "total": total, "borrowed": "0"})
    usage = [{"name": f, "resources": r} for f, r in by_flavor.items()]
    status: Obj = {
        "conditions": [
            {
                "type": "Active",
                "status": active[0],
                "reason": active[1],
                "message": active[2],
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ],
        "flavorsReservation": usage,
        "flavorsUsage": usage,
        "pendingWorkloads": len(pending or []),
        "reservingWorkloads": len(by_flavor),
        "admittedWorkloads": len(by_flavor),
    }
    if pending and version == V1BETA1:
        status["pendingWorkloadsStatus"] = {
            "clusterQueuePendingWorkload": [{"name": w, "namespace": NAMESPACE} for w in pending],
            "lastChangeTime": "2026-01-01T00:00:00Z",
        }
    return {
        "apiVersion": api(version),
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": spec,
        "status": status,
    }


def cohort(
    name: str,
    *,
    version: str = V1BETA2,
    parent: str | None = None,
    groups: list[tuple[list[str], list[tuple[str, Quotas]]]] | None = None,
) -> Obj:
    spec: Obj = {}
    if parent:
        spec["parentName"] = parent
    if groups:
        spec["resourceGroups"] = resource_groups(groups)
    return {"apiVersion": api(version), "kind": "Cohort", "metadata": {"name": name}, "spec": spec}


def local_queue(
    name: str, cluster_queue_name: str, *, version: str = V1BETA2, stop_policy: str | None = None
) -> Obj:
    spec: Obj = {"clusterQueue": cluster_queue_name}
    if stop_policy:
        spec["stopPolicy"] = stop_policy
    return {
        "apiVersion": api(version),
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": spec,
        "status": {
            "conditions": [
                {
                    "type": "Active",
                    "status": "True",
                    "reason": "Ready",
                    "message": "Can submit new workloads to localQueue",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ],
            "pendingWorkloads": 0,
            "reservingWorkloads": 0,
            "admittedWorkloads": 0,
        },
    }


def admission_check(name: str, *, version: str = V1BETA2) -> Obj:
    """A ProvisioningRequest admission check (site/static/examples/admin/provisioning/
    provisioning-setup.yaml)."""
    return {
        "apiVersion": api(version),
        "kind": "AdmissionCheck",
        "metadata": {"name": name},
        "spec": {
            "controllerName": "kueue.x-k8s.io/provisioning-request",
            "parameters": {
                "apiGroup": GROUP,
                "kind": "ProvisioningRequestConfig",
                "name": "prov-config",
            },
        },
        "status": {
            "conditions": [
                {
                    "type": "Active",
                    "status": "True",
                    "reason": "Active",
                    "message": "The admission check is active",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ]
        },
    }


def workload_name(job: Obj) -> str:
    """Kueue's name for a job's Workload (jobframework/workload_names.go
    `GetWorkloadNameForOwnerWithGVK`): `<kind>-<name>-<first 5 of sha1(kind, group, name,
    uid)>`."""
    kind = job["kind"]
    group = job["apiVersion"].rpartition("/")[0] if "/" in job["apiVersion"] else ""
    name = job["metadata"]["name"]
    uid = job["metadata"]["uid"]
    digest = hashlib.sha1(f"{kind}\n{group}\n{name}\n{uid}".encode()).hexdigest()
    return f"{kind.lower()}-{name}"[:247] + f"-{digest[:5]}"


def condition(kind: str, status: str, reason: str, message: str) -> Obj:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": "2026-01-01T00:00:00Z",
        "observedGeneration": 1,
    }


def workload(
    job: Obj,
    queue: str,
    *,
    version: str = V1BETA2,
    conditions: list[Obj] | None = None,
    admitted_to: str | None = None,
    flavors: dict[str, str] | None = None,
    usage: dict[str, str] | None = None,
    checks: list[Obj] | None = None,
    active: bool = True,
) -> Obj:
    """The Workload Kueue made for `job` (a Job: one pod set `main` of `parallelism` pods),
    owned by it and labelled with its uid; `admitted_to` a ClusterQueue: its admission, with
    `flavors` per resource and the pod set's total `usage`."""
    template = job["spec"]["template"]
    count = job["spec"].get("parallelism", 1)
    status: Obj = {"conditions": conditions or []}
    if admitted_to:
        status["admission"] = {
            "clusterQueue": admitted_to,
            "podSetAssignments": [
                {
                    "name": "main",
                    "flavors": flavors or {},
                    "resourceUsage": usage or {},
                    "count": count,
                }
            ],
        }
    if checks:
        status["admissionChecks"] = checks
    spec: Obj = {
        "queueName": queue,
        "podSets": [{"name": "main", "count": count, "template": template}],
        "priority": 0,
        "active": active,
    }
    if version == V1BETA2:
        spec["priorityClassRef"] = None
        spec.pop("priorityClassRef")
    else:
        spec["priorityClassSource"] = ""
    return {
        "apiVersion": api(version),
        "kind": "Workload",
        "metadata": {
            "name": workload_name(job),
            "namespace": NAMESPACE,
            "labels": {"kueue.x-k8s.io/job-uid": job["metadata"]["uid"]},
            "ownerReferences": [
                {
                    "apiVersion": job["apiVersion"],
                    "kind": job["kind"],
                    "name": job["metadata"]["name"],
                    "uid": job["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
        "status": status,
    }


def admitted(cluster_queue_name: str) -> list[Obj]:
    """The conditions of a Workload Kueue admitted and whose pods run."""
    return [
        condition(
            "QuotaReserved",
            "True",
            "QuotaReserved",
            f"Quota reserved in ClusterQueue {cluster_queue_name}",
        ),
        condition("Admitted", "True", "Admitted", "The workload is admitted"),
        condition(
            "PodsReady", "True", "Started", "All pods reached readiness and the workload is running"
        ),
    ]


def waiting(message: str, reason: str = "Pending") -> list[Obj]:
    """The QuotaReserved condition of a Workload Kueue could not admit (reason `Pending` before
    the granular reasons of UnadmittedWorkloadsObservability)."""
    return [condition("QuotaReserved", "False", reason, message)]


def queued_job(job: Obj, queue: str, uid: str) -> Obj:
    """`job` handed to `queue` and suspended by Kueue's webhook until admitted."""
    job["metadata"].setdefault("labels", {})["kueue.x-k8s.io/queue-name"] = queue
    job["metadata"]["uid"] = uid
    job["spec"]["suspend"] = True
    job["status"] = {
        "conditions": [
            {
                "type": "Suspended",
                "status": "True",
                "reason": "JobSuspended",
                "message": "Job suspended",
            }
        ]
    }
    return job


def any_version(obj: dict[str, Any], version: str) -> dict[str, Any]:
    """`obj` at another version of the group."""
    return {**obj, "apiVersion": api(version)}


def every_queue_read(now: Any) -> list[Obj]:
    """Objects that make doctor read every Kueue kind (install kueue.x-k8s.io): the newest
    job handed to a LocalQueue whose ClusterQueue belongs to a cohort and names an admission
    check."""
    from datetime import timedelta

    from tests.support.scenarios import training_job

    job = queued_job(
        training_job("queued-7", now, age=timedelta(minutes=1), finished=False), "team-a", "uid-q7"
    )
    queue = cluster_queue(
        "team-a-cq",
        [
            (
                ["cpu", "memory", "nvidia.com/gpu"],
                [("gpu", {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8"})],
            )
        ],
        cohort="research",
        admission_checks=["provision"],
    )
    return [
        job,
        local_queue("team-a", "team-a-cq"),
        queue,
        resource_flavor("gpu"),
        cohort("research"),
        admission_check("provision"),
        workload(job, "team-a", conditions=waiting("couldn't assign flavors")),
    ]


def handed_to_team_a(objects: list[Obj]) -> list[Obj]:
    """`objects` with each Job handed to every_queue_read's LocalQueue `team-a`: the newest job
    of another builder is then judged through the queue too, so both builders' reads happen."""
    for obj in objects:
        if obj.get("kind") == "Job":
            queued_job(obj, "team-a", f"uid-{obj['metadata']['name']}")
    return objects
