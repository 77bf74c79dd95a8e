"""cluster-autoscaler's status ConfigMap: each machine group's scale-up state, in the YAML of
1.30 and later and in the older text, read as hostile text (clusterstate/api/types.go,
clusterstate/utils/status.go)."""

from datetime import UTC, datetime
from typing import Any

from truegreen.doctor.checks.capacity.autoscaling import (
    AutoscalerHealth,
    GroupScaleUp,
    autoscaler_health,
    group_scale_ups,
    status_time,
)


def _config_map(status: str) -> dict[str, Any]:
    return {"data": {"status": status}}


def test_the_yaml_form_gives_each_group_its_state_and_its_backoff_error() -> None:
    text = (
        "time: 2026-12-05 07:00:00.000000000 +0000 UTC\n"
        "autoscalerStatus: Running\n"
        "nodeGroups:\n"
        "- name: gpu-a\n"
        "  scaleUp:\n"
        "    status: Backoff\n"
        "    backoffInfo:\n"
        "      errorCode: QUOTA_EXCEEDED\n"
        "      errorMessage: 'Instance ''gke-x'' creation failed: Quota "
        "''NVIDIA_A100_GPUS'' exceeded.'\n"
        "- name: gpu-b\n"
        "  scaleUp:\n"
        "    status: InProgress\n"
        '    lastTransitionTime: "2026-12-05T11:40:00Z"\n'
    )
    assert group_scale_ups(_config_map(text)) == {
        "gpu-a": GroupScaleUp(
            "gpu-a",
            "Backoff",
            error=(
                "QUOTA_EXCEEDED: Instance 'gke-x' creation failed: Quota 'NVIDIA_A100_GPUS' "
                "exceeded."
            ),
        ),
        "gpu-b": GroupScaleUp("gpu-b", "InProgress", datetime(2026, 12, 5, 11, 40, tzinfo=UTC)),
    }


def test_the_time_the_status_was_written_is_its_first_line_s() -> None:
    """Go's time format, as clusterstate/api/types.go `ClusterAutoscalerStatus.Time` prints."""
    written = _config_map(
        "time: 2026-12-05 12:00:07.123456789 +0000 UTC\nautoscalerStatus: Running\n"
    )
    assert status_time(written) == datetime(2026, 12, 5, 12, 0, 7, tzinfo=UTC)
    older = _config_map("Cluster-autoscaler status at 2023-05-02 10:00:00.000000000 +0000 UTC:\n")
    assert status_time(older) is None
    assert status_time(_config_map("time: 2026-13-45 99:00:00 +0000 UTC\n")) is None


def test_the_older_text_form_gives_the_state_alone() -> None:
    text = (
        "Cluster-autoscaler status at 2023-05-02 10:00:00.000000000 +0000 UTC:\n"
        "Cluster-wide:\n"
        "  Health:      Healthy (ready=3 unready=0 notStarted=0 longNotStarted=0 registered=3)\n"
        "  ScaleUp:     NoActivity (ready=3 registered=3)\n"
        "\n"
        "NodeGroups:\n"
        "  Name:        eks-gpu-ng\n"
        "  Health:      Healthy (ready=0 unready=0 cloudProviderTarget=1 (minSize=0, maxSize=4))\n"
        "  ScaleUp:     Backoff (ready=0 cloudProviderTarget=1)\n"
    )
    assert group_scale_ups(_config_map(text)) == {
        "eks-gpu-ng": GroupScaleUp("eks-gpu-ng", "Backoff")
    }


def test_hostile_text_reads_as_no_group() -> None:
    bomb = "time: x\na: &a [1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(9)
    )
    assert group_scale_ups(_config_map(bomb)) == {}
    assert group_scale_ups(_config_map("time: [unclosed")) == {}
    assert group_scale_ups({"data": None}) == {}


# cluster-autoscaler writes its status with sigs.k8s.io/yaml (pkg/clusterstate/utils/status.go
# WriteStatusConfigMap -> marshalAndTruncateStatus -> yaml.Marshal): JSON, then YAML with every
# mapping's keys sorted, so `time` comes last and `health` opens with `lastProbeTime`; the
# fields and their json names are clusterstate/api/types.go's, metav1.Time quoted by go-yaml v2.
_SORTED = (
    "autoscalerStatus: Running\n"
    "clusterWide:\n"
    "  health:\n"
    '    lastProbeTime: "2026-12-05T11:59:30Z"\n'
    '    lastTransitionTime: "2026-12-05T11:50:00Z"\n'
    "    nodeCounts:\n"
    "      longUnregistered: 0\n"
    "      registered:\n"
    "        notStarted: 0\n"
    "        ready: 1\n"
    "        total: 5\n"
    "        unready:\n"
    "          resourceUnready: 0\n"
    "          total: 4\n"
    "      unregistered: 0\n"
    "    status: Unhealthy\n"
    "  scaleDown:\n"
    '    lastProbeTime: "2026-12-05T11:59:30Z"\n'
    '    lastTransitionTime: "2026-12-05T11:00:00Z"\n'
    "    status: NoCandidates\n"
    "  scaleUp:\n"
    '    lastProbeTime: "2026-12-05T11:59:30Z"\n'
    '    lastTransitionTime: "2026-12-05T11:58:00Z"\n'
    "    status: Backoff\n"
    "nodeGroups:\n"
    "- health:\n"
    "    cloudProviderTarget: 0\n"
    '    lastProbeTime: "2026-12-05T11:59:30Z"\n'
    '    lastTransitionTime: "2026-12-05T11:00:00Z"\n'
    "    maxSize: 4\n"
    "    minSize: 0\n"
    "    nodeCounts:\n"
    "      longUnregistered: 0\n"
    "      registered:\n"
    "        notStarted: 0\n"
    "        ready: 0\n"
    "        total: 0\n"
    "        unready:\n"
    "          resourceUnready: 0\n"
    "          total: 0\n"
    "      unregistered: 0\n"
    "    status: Healthy\n"
    "  name: eks-gpu-ng\n"
    "  scaleDown:\n"
    '    lastProbeTime: "2026-12-05T11:59:30Z"\n'
    '    lastTransitionTime: "2026-12-05T11:00:00Z"\n'
    "    status: NoCandidates\n"
    "  scaleUp:\n"
    "    backoffInfo:\n"
    "      errorCode: QUOTA_EXCEEDED\n"
    "      errorMessage: 'Quota ''GPUS_ALL_REGIONS'' exceeded. Limit: 0.0 globally.'\n"
    '    lastProbeTime: "2026-12-05T11:59:30Z"\n'
    '    lastTransitionTime: "2026-12-05T11:58:00Z"\n'
    "    status: Backoff\n"
    "time: 2026-12-05 12:00:07.123456789 +0000 UTC\n"
)


def test_the_status_with_its_keys_sorted_is_read_by_its_structure() -> None:
    status = _config_map(_SORTED)
    assert group_scale_ups(status) == {
        "eks-gpu-ng": GroupScaleUp(
            "eks-gpu-ng",
            "Backoff",
            datetime(2026, 12, 5, 11, 58, tzinfo=UTC),
            "QUOTA_EXCEEDED: Quota 'GPUS_ALL_REGIONS' exceeded. Limit: 0.0 globally.",
        )
    }
    assert autoscaler_health(status) == AutoscalerHealth(
        False, "cluster-autoscaler health: Unhealthy"
    )
    assert status_time(status) == datetime(2026, 12, 5, 12, 0, 7, tzinfo=UTC)


def test_the_health_is_read_in_either_form_and_said_as_not_understood_otherwise() -> None:
    healthy = _SORTED.replace("status: Unhealthy", "status: Healthy")
    assert autoscaler_health(_config_map(healthy)) == AutoscalerHealth(
        True, "cluster-autoscaler health: Healthy"
    )
    older = (
        "Cluster-autoscaler status at 2023-05-02 10:00:00.000000000 +0000 UTC:\n"
        "Cluster-wide:\n"
        "  Health:      Unhealthy (ready=1 unready=4 notStarted=0 longNotStarted=0 registered=5)\n"
    )
    assert autoscaler_health(_config_map(older)) == AutoscalerHealth(
        False, "cluster-autoscaler health: Unhealthy"
    )
    initializing = "autoscalerStatus: Initializing\ntime: 2026-12-05 12:00:07 +0000 UTC\n"
    unknown = AutoscalerHealth(None, "cluster-autoscaler status: not understood")
    assert autoscaler_health(_config_map(initializing)) == unknown
    assert autoscaler_health(_config_map("clusterWide:\n  health:\n    status: [1]\n")) == unknown
    assert autoscaler_health(_config_map("a: [unclosed")) == unknown
