"""refresh and an OnDelete workload whose pull policy keeps the image its machines have: its
restart is refused (a template change replaces no copy), and the remedy it gives works. A copy
deleted by hand comes back from the template on the same machine (a DaemonSet's always, a
StatefulSet's most often, its volume there), whose kubelet keeps the image it has for the tag
under IfNotPresent (pkg/kubelet/images/image_manager.go `shouldPullImage`), so "delete them"
alone would keep the old digest: the refusal says so, and what takes the newest one.

The fake API server and rollout simulator play the cluster, a real docker-registry the tag.
"""

from typing import Any

import pytest

from tests.scenario import test_refresh_kinds
from tests.scenario.test_refresh import RefreshEnv
from tests.scenario.test_refresh_kinds import RUNNER, _annotations, _settled, _tick, _workload
from tests.support.refresh_kit import container, daemonset, statefulset

env = test_refresh_kinds.env
"""The fake API server and a real registry, a replaced copy terminating for one read."""

SAID = (
    "a restart would change nothing: its pods take a new version only when deleted "
    "(updateStrategy OnDelete), and a deleted copy made again on a machine that has the old "
    "image keeps it while imagePullPolicy is not Always for runner (IfNotPresent); "
)
REMEDY = {
    "restart": "set imagePullPolicy: Always, then delete them or set updateStrategy "
    "RollingUpdate; or set updateStrategy RollingUpdate and use --mode pin",
    "pin": "set updateStrategy RollingUpdate, or set imagePullPolicy: Always and delete them",
}


@pytest.mark.parametrize("make", [statefulset, daemonset], ids=["statefulset", "daemonset"])
def test_an_on_delete_refusal_says_the_pull_policy_keeps_the_old_image(
    env: RefreshEnv, make: Any
) -> None:
    runner = container("runner", env.image("r/ondelete", "stable"), "IfNotPresent")
    workload = make("ondelete", runner)
    workload["spec"]["updateStrategy"] = {"type": "OnDelete"}
    first = _settled(env, workload, "r/ondelete")
    env.registry.push_image("r/ondelete", "stable", content="v2")
    for mode in ("restart", "pin"):
        report, code = _tick(env, "--mode", mode)
        found = _workload(report, "ondelete")
        assert (found["outcome"], code) == ("refused", 2)
        assert found["reason"] == SAID + REMEDY[mode]
        assert found["writes"] == []
    assert env.restarts("ondelete") == 0
    assert _annotations(env, workload["kind"], "ondelete")[RUNNER] == first
