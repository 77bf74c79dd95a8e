"""What the autoscalers' own settings say: cluster-autoscaler's provision time from its command
line, as Go's flag packages read it (config/flags/flags.go `max-node-provision-time`, 15
minutes by default), and Karpenter's NodePool limits against their use."""

from datetime import timedelta

import msgspec
import pytest

from truegreen.doctor.checks.capacity.autoscaler_flags import (
    DEFAULT_PROVISION_TIME,
    AutoscalerFlags,
    AutoscalerPodView,
    flag_value,
    provision_time,
)
from truegreen.doctor.checks.capacity.autoscaling import limited_pools, pool_use, unready_pools
from truegreen.doctor.knowledge.reports import MESSAGE_CAP

FLAG = "max-node-provision-time"


@pytest.mark.parametrize(
    ("words", "value"),
    [
        (["./cluster-autoscaler", "--max-node-provision-time=30m"], "30m"),
        (["--max-node-provision-time", "45m"], "45m"),
        (["-max-node-provision-time=1h"], "1h"),  # Go's own flag package takes one dash
        (["--max-node-provision-time=1h", "--max-node-provision-time=20m"], "20m"),
        (["--max-node-provision-time-extra=1h", "--v=4"], None),
        (["max-node-provision-time=1h"], None),  # not a flag: no dash
        (["--max-node-provision-time"], None),  # no value follows
    ],
)
def test_the_flag_reads_as_go_reads_it(words: list[str], value: str | None) -> None:
    assert flag_value(words, FLAG) == value


def _pod(container: dict[str, object]) -> AutoscalerPodView:
    pod = {
        "metadata": {"name": "ca-1", "namespace": "autoscaling"},
        "spec": {"containers": [container]},
    }
    return msgspec.convert(pod, AutoscalerPodView)


@pytest.mark.parametrize(
    ("container", "found"),
    [
        # The image's entrypoint runs the program; the flags come as args.
        (
            {
                "image": "registry.k8s.io/autoscaling/cluster-autoscaler:v1.30.2",
                "args": ["--max-node-provision-time=40m"],
            },
            {"pod": "autoscaling/ca-1", "flag": "40m"},
        ),
        (
            {"image": "mirror.example/ca@sha256:" + "0" * 64, "command": ["/cluster-autoscaler"]},
            {"pod": "autoscaling/ca-1", "flag": None},
        ),
        ({"image": "registry.k8s.io/autoscaling/vpa-recommender:1.2.0"}, {}),
    ],
)
def test_the_autoscaler_is_known_by_its_image_or_its_program(
    container: dict[str, object], found: dict[str, object]
) -> None:
    fold = AutoscalerFlags()
    fold.add(_pod(container))
    assert fold.summary() == found


@pytest.mark.parametrize(
    ("summary", "wait"),
    [
        ({"pod": "kube-system/ca", "flag": "40m"}, timedelta(minutes=40)),
        ({"pod": "kube-system/ca", "flag": "1h30m"}, timedelta(minutes=90)),
        ({"pod": "kube-system/ca", "flag": None}, DEFAULT_PROVISION_TIME.wait),
        ({"pod": "kube-system/ca", "flag": "forever"}, DEFAULT_PROVISION_TIME.wait),
        ({"pod": "kube-system/ca", "flag": "0s"}, DEFAULT_PROVISION_TIME.wait),
        ({}, DEFAULT_PROVISION_TIME.wait),
        (None, DEFAULT_PROVISION_TIME.wait),
    ],
)
def test_the_provision_time_is_the_flag_s_or_the_default(summary: object, wait: timedelta) -> None:
    assert DEFAULT_PROVISION_TIME.wait == timedelta(minutes=15)
    assert provision_time(summary).wait == wait


@pytest.mark.parametrize(
    ("message", "pools"),
    [
        (
            'incompatible with nodepool "system", incompatible requirements; all available '
            'instance types exceed limits for nodepool "gpu"',
            ["gpu"],
        ),
        ("all available instance types exceed limits for nodepool (NodePool=a100)", ["a100"]),
        ('node limits have been exhausted for nodepool: "spot"', ["spot"]),
        ("all available instance types exceed limits for nodepool", [""]),
        ('incompatible with nodepool "gpu", did not tolerate taint', []),
    ],
)
def test_karpenter_names_the_pools_its_limits_stopped(message: str, pools: list[str]) -> None:
    assert limited_pools(message) == pools


def test_a_pool_s_use_against_its_limits() -> None:
    pool = {
        "spec": {"limits": {"cpu": "1k", "nvidia.com/gpu": "8", "memory": "lots"}},
        "status": {"resources": {"cpu": "999", "nvidia.com/gpu": "9"}},
    }
    assert [(u.resource, u.used, u.limit, u.reached) for u in pool_use(pool)] == [
        ("cpu", "999", "1k", False),
        ("nvidia.com/gpu", "9", "8", True),  # past the limit (a pool shrunk under its use)
    ], "a value that is no quantity is left out"
    assert [u.used for u in pool_use({"spec": {"limits": {"cpu": "4"}}})] == ["0"]


def test_a_pool_s_limits_are_read_up_to_a_bound() -> None:
    many = {f"example.com/r{i}": "1" for i in range(10_000)}
    assert len(pool_use({"spec": {"limits": many}})) == 16


def _pool(
    name: str, ready: str | None, *, replicas: int | None = None, deleted: bool = False
) -> dict[str, object]:
    """A karpenter.sh/v1 NodePool stating `ready` as its Ready condition (None: no condition)."""
    metadata: dict[str, object] = {"name": name}
    if deleted:
        metadata["deletionTimestamp"] = "2026-12-01T00:00:00Z"
    return {
        "kind": "NodePool",
        "metadata": metadata,
        "spec": {} if replicas is None else {"replicas": replicas},
        "status": {
            "conditions": []
            if ready is None
            else [{"type": "Ready", "status": ready, "reason": "R"}]
        },
    }


def test_which_pools_karpenter_passes_over() -> None:
    """Karpenter's provisioner skips static pools (`spec.replicas`), deleting ones and those
    whose Ready is not True (Unknown included: `ReconcilingDependents`); every pool is down only
    when each dynamic one says so."""
    static = _pool("static", "False", replicas=2)
    deleting = _pool("old", "True", deleted=True)
    unknown = _pool("new", "Unknown")
    unready, none_ready = unready_pools([static, deleting, unknown])
    assert [(p.name, p.said) for p in unready] == [
        ("old", "being deleted"),
        ("new", "Ready=Unknown (R)"),
    ]
    assert none_ready is True
    assert unready_pools([static])[1] is False, "no dynamic pool: nothing to say"
    assert unready_pools([unknown, _pool("silent", None)])[1] is False, "one states nothing"
    assert unready_pools([unknown, _pool("up", "True")])[1] is False


def test_a_pool_s_words_are_one_bounded_line_with_control_characters_escaped() -> None:
    """The NodePool is the cluster's: its condition's reason and message reach the terminal as
    one line of at most MESSAGE_CAP characters each, escape sequences shown, not run."""
    pool = _pool("gpu", "False")
    pool["status"] = {
        "conditions": [
            {"type": "Ready", "status": "False", "reason": "UnhealthyDependents"},
            {
                "type": "NodeClassReady",
                "status": "False",
                "reason": "Bad\x1b[31m",
                "message": "line one\nline two \x1b[2J" + "x" * 5000,
            },
        ]
    }
    [down], _ = unready_pools([pool])
    assert down.said.startswith("NodeClassReady=False (Bad\\x1b[31m): line one line two \\x1b[2J")
    assert "\x1b" not in down.said + down.plain
    assert "\n" not in down.said + down.plain
    assert len(down.plain) == MESSAGE_CAP
