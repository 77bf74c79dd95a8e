"""An OnDelete workload's restart is refused, and its remedy works: where a container the
restart would change keeps an image its machine already has (imagePullPolicy not Always,
image_manager.go `shouldPullImage`), a copy deleted by hand and made again on that machine keeps
the old image, so the refusal says so and names what takes the newest digest in each mode.
Pinned value by value."""

from typing import Any

import pytest

from tests.support.refresh_kit import container, daemonset, statefulset
from truegreen.images import parse_image
from truegreen.refresh.plan import ContainerPlan, Decision, RefreshMode
from truegreen.refresh.report import Outcome
from truegreen.refresh.steps import Ending, restart_refusal

Obj = dict[str, Any]
IMAGE = "registry.example.com/team/db:stable"
NEW = "sha256:" + "1" * 64
SAID = (
    "a restart would change nothing: its pods take a new version only when deleted "
    "(updateStrategy OnDelete)"
)
KEPT = ", and a deleted copy made again on a machine that has the old image keeps it while "


def _plan(name: str, decision: Decision = Decision.RESTART) -> ContainerPlan:
    return ContainerPlan(
        name, IMAGE, "stable", NEW, None, (), decision, "", parse_image(IMAGE), frozenset({NEW})
    )


def _on_delete(make: Any, *policies: str | None) -> Obj:
    """A workload of `make` with one container per policy (`c0`, `c1`, …), OnDelete."""
    made: Obj = make("x", *(container(f"c{i}", IMAGE, p) for i, p in enumerate(policies)))
    made["spec"]["updateStrategy"] = {"type": "OnDelete"}
    return made


def _refused(reason: str) -> Ending:
    return Ending(Outcome.REFUSED, reason)


RESTART_REMEDY = (
    "; set imagePullPolicy: Always, then delete them or set updateStrategy RollingUpdate; or "
    "set updateStrategy RollingUpdate and use --mode pin"
)
PIN_REMEDY = "; set updateStrategy RollingUpdate, or set imagePullPolicy: Always and delete them"


@pytest.mark.parametrize("make", [statefulset, daemonset], ids=["statefulset", "daemonset"])
@pytest.mark.parametrize(
    ("policies", "plans", "mode", "reason"),
    [
        # Always pulls the tag again: deleting takes it.
        (
            ("Always",),
            [_plan("c0")],
            RefreshMode.RESTART,
            f"{SAID}; delete them to take it, or set updateStrategy RollingUpdate",
        ),
        (
            ("Always",),
            [_plan("c0")],
            RefreshMode.PIN,
            f"{SAID}; delete them to take it, or set updateStrategy RollingUpdate",
        ),
        (
            ("IfNotPresent",),
            [_plan("c0")],
            RefreshMode.RESTART,
            f"{SAID}{KEPT}imagePullPolicy is not Always for c0 (IfNotPresent){RESTART_REMEDY}",
        ),
        (
            ("IfNotPresent",),
            [_plan("c0")],
            RefreshMode.PIN,
            f"{SAID}{KEPT}imagePullPolicy is not Always for c0 (IfNotPresent){PIN_REMEDY}",
        ),
        (
            ("Never",),
            [_plan("c0")],
            RefreshMode.RESTART,
            f"{SAID}{KEPT}imagePullPolicy is not Always for c0 (Never){RESTART_REMEDY}",
        ),
        # Unset: the API server's default for a tag other than latest.
        (
            (None,),
            [_plan("c0")],
            RefreshMode.RESTART,
            f"{SAID}{KEPT}imagePullPolicy is not Always for c0 (IfNotPresent){RESTART_REMEDY}",
        ),
        # Only the containers the restart would change are named.
        (
            ("Always", "IfNotPresent", "Never"),
            [_plan("c0"), _plan("c1"), _plan("c2")],
            RefreshMode.RESTART,
            f"{SAID}{KEPT}imagePullPolicy is not Always for c1 (IfNotPresent), c2 (Never)"
            f"{RESTART_REMEDY}",
        ),
        (
            ("Always", "IfNotPresent"),
            [_plan("c0"), _plan("c1", Decision.UP_TO_DATE)],
            RefreshMode.RESTART,
            f"{SAID}; delete them to take it, or set updateStrategy RollingUpdate",
        ),
        (
            ("Always", "IfNotPresent"),
            [_plan("c0"), _plan("c1", Decision.RECORD_RUNNING)],
            RefreshMode.PIN,
            f"{SAID}; delete them to take it, or set updateStrategy RollingUpdate",
        ),
    ],
    ids=[
        "always",
        "always-pin",
        "if-not-present",
        "if-not-present-pin",
        "never",
        "unset",
        "named-ones",
        "not-restarted",
        "not-restarted-pin",
    ],
)
def test_an_on_delete_refusal_names_the_pull_policy_that_keeps_the_old_image(
    make: Any,
    policies: tuple[str | None, ...],
    plans: list[ContainerPlan],
    mode: RefreshMode,
    reason: str,
) -> None:
    workload = _on_delete(make, *policies)
    assert restart_refusal(workload, plans, mode, "") == _refused(reason)
