"""The capacity check on a hand-built environment: what a snapshot (or a lenient server) holds."""

from datetime import UTC, datetime
from typing import Any

import msgspec

from truegreen.cluster import CantRead, Folded, Kind, Listed
from truegreen.doctor.checks.capacity import check as capacity
from truegreen.doctor.environment import DoctorSettings, Environment
from truegreen.doctor.knowledge.usage import CapacityTally, ClusterUsage, PodView, cluster_usage
from truegreen.quantity import Resources

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _env(pods: list[dict[str, Any]]) -> Environment:
    gpu_node = {
        "metadata": {"name": "gpu-1"},
        "status": {
            "allocatable": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "2", "pods": "110"}
        },
    }
    return Environment(
        namespace="train",
        now=NOW,
        settings=DoctorSettings(job_requests=Resources.of({"nvidia.com/gpu": 1})),
        workloads={
            kind: Listed(()) for kind in (Kind.DEPLOYMENT, Kind.STATEFUL_SET, Kind.DAEMON_SET)
        },
        jobs=Listed(()),
        pods=Listed(()),
        limit_ranges=Listed(()),
        nodes=Listed((gpu_node,)),
        cluster_usage=_tally(pods),
    )


def _tally(pods: list[dict[str, Any]]) -> ClusterUsage | CantRead:
    """The fold a live read makes, over objects as a lenient server would send them."""
    tally = CapacityTally("train")
    for pod in pods:
        tally.add(msgspec.json.decode(msgspec.json.encode(pod), type=PodView))
    return cluster_usage(Folded(tally.summary()))


def _gpu_pod(phase: str) -> dict[str, Any]:
    return {
        "metadata": {"name": f"p-{phase}", "namespace": "other"},
        "spec": {
            "nodeName": "gpu-1",
            "containers": [{"name": "x", "resources": {"requests": {"nvidia.com/gpu": "2"}}}],
        },
        "status": {"phase": phase},
    }


def test_terminated_pods_in_the_list_hold_nothing() -> None:
    (finding,) = capacity.check(_env([_gpu_pod("Succeeded"), _gpu_pod("Failed")]))
    assert finding.code == "capacity.fits"


def test_running_pod_in_the_list_holds_its_room() -> None:
    (finding,) = capacity.check(_env([_gpu_pod("Running")]))
    assert finding.code == "capacity.blocked-by-other-work"


def test_a_taint_keyed_by_a_resource_the_job_asks_for_is_never_offered_for_removal() -> None:
    """`nvidia.com/gpu:NoSchedule` keeps other work off the GPU machines: the step is the
    toleration in the job's settings (or measuring what the cluster adds), never lifting it."""
    from truegreen.doctor.checks.capacity.machines import exclusion_remedy

    env = _env([])
    assert env.settings.job_requests is not None
    assert "nvidia.com/gpu" in env.settings.job_requests.names, "precondition: the job asks"
    excluded = {
        "taint nvidia.com/gpu=:NoSchedule not tolerated": ["gpu-1"],
        "taint dedicated=infra:NoSchedule not tolerated": ["cpu-1"],
    }
    remedy = exclusion_remedy(env, excluded)
    assert "nvidia.com/gpu-" not in remedy
    assert remedy == (
        "Let training jobs onto the machines kept for 'nvidia.com/gpu' (gpu-1) with "
        "`tolerations: [{key: nvidia.com/gpu, operator: Exists}]` in their settings; "
        "`truegreen doctor --admission-dry-run` shows whether the cluster adds it on its own; "
        "or let training jobs onto the reserved machines cpu-1 in their settings, or, if nobody "
        "reserved them on purpose, lift the reservation with "
        "`kubectl taint nodes cpu-1 dedicated-`"
    )
