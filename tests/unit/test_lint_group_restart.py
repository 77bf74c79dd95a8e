"""A restart that recreates a whole group: a LeaderWorkerSet's probes on any container kill the
group's training (lint/kinds.py `_group_restart`, lint/probes.py `group_work`,
lint/rules/restarts.py).

sigs.k8s.io/lws pkg/controllers/pod_controller.go handleRestartPolicy deletes the group's leader
pod (foreground: its worker StatefulSet goes too) once pkg/utils/pod/pod_utils.go
ContainerRestarted finds a restartCount above 0 in any entry of InitContainerStatuses (native
sidecars are reported there) or ContainerStatuses, under restartPolicy RecreateGroupOnPodRestart
(the `+kubebuilder:default` of api/leaderworkerset/v1 leaderworkerset_types.go) or
RecreateGroupAfterStart; `None` and the deprecated `Default` restart only the failed pod. The
objects, shaped as that API type declares them, come from tests/unit/test_lws_group_restart.py.
"""

import pytest

from tests.unit.test_lws_group_restart import (
    LIVE,
    RESTART,
    TRAINER,
    Obj,
    exporter,
    lws,
    shipper,
)
from truegreen.lint.kinds import understand
from truegreen.lint.probes import WorkloadModel, group_work, workload_models
from truegreen.lint.rules import Context, evaluate


def models(obj: Obj) -> tuple[WorkloadModel, ...]:
    found = workload_models(obj)
    assert found is not None, "precondition: the kind is understood"
    return found


def restarts(obj: Obj) -> list[tuple[str, str | None, str]]:
    """(role, container, message) of every restart-probe-on-keep-running hit."""
    built = models(obj)
    context = Context(group_work=group_work([(model, {}) for model in built]))
    return [
        (model.role, hit.container, hit.message)
        for model in built
        for rule, hit in evaluate(model, context)
        if rule.id == RESTART
    ]


DEFAULT = (
    "a restart of any container makes the LeaderWorkerSet recreate the whole group "
    "(restartPolicy RecreateGroupOnPodRestart, the default), killing the work of container "
    "trainer (its command runs torchrun)"
)


@pytest.mark.parametrize(
    ("policy", "group"),
    [
        ({}, "RecreateGroupOnPodRestart, the default"),
        ({"restartPolicy": None}, "RecreateGroupOnPodRestart, the default"),
        ({"restartPolicy": "RecreateGroupOnPodRestart"}, "RecreateGroupOnPodRestart"),
        ({"restartPolicy": "RecreateGroupAfterStart"}, "RecreateGroupAfterStart"),
        ({"restartPolicy": "None"}, ""),
        ({"restartPolicy": "Default"}, ""),
    ],
)
def test_the_restart_policy_says_whether_the_group_is_recreated(policy: Obj, group: str) -> None:
    obj = lws([TRAINER], leader=[TRAINER], **policy)
    understood = understand(obj)
    assert understood is not None
    assert [(t.role, t.group_restart) for t in understood.templates] == [
        ("leader", group),
        ("worker", group),
    ]
    assert [(m.role, m.group_restart) for m in models(obj)] == [
        ("leader", group),
        ("worker", group),
    ]


def test_other_kinds_recreate_no_group() -> None:
    deployment: Obj = {"apiVersion": "apps/v1", "kind": "Deployment"}
    deployment["spec"] = {"template": {"spec": {"containers": [TRAINER]}}}
    (model,) = models(deployment)
    assert model.group_restart == ""
    assert group_work([(model, {})]) == ""


def test_an_app_wrapper_keeps_its_leader_worker_set_s_group_restart() -> None:
    wrapper: Obj = {"apiVersion": "workload.codeflare.dev/v1beta2", "kind": "AppWrapper"}
    wrapper["spec"] = {"components": [{"template": lws([TRAINER])}]}
    (model,) = models(wrapper)
    assert (model.role, model.group_restart) == (
        "component 1 (LeaderWorkerSet)",
        "RecreateGroupOnPodRestart, the default",
    )


def test_the_group_s_work_names_the_policy_and_the_first_container_that_keeps_work() -> None:
    (model,) = models(lws([exporter(), TRAINER], init=[shipper()]))
    assert group_work([(model, {})]) == DEFAULT
    after_start = lws([TRAINER], restartPolicy="RecreateGroupAfterStart")
    assert group_work([(m, {}) for m in models(after_start)]) == DEFAULT.replace(
        "RecreateGroupOnPodRestart, the default", "RecreateGroupAfterStart"
    )


def test_the_group_s_work_names_the_template_it_is_in() -> None:
    built = models(lws([TRAINER], leader=[exporter()]))
    assert group_work([(m, {}) for m in built]) == DEFAULT.replace(
        "container trainer", "container trainer of the worker"
    )


@pytest.mark.parametrize(
    "obj",
    [
        lws([TRAINER], restartPolicy="None"),  # only the failed pod restarts
        lws([exporter()], init=[shipper()]),  # no container keeps work
        lws([TRAINER], annotations={"truegreen.io/keep-running": ""}),  # declared: none does
    ],
)
def test_a_group_that_keeps_no_work_or_is_not_recreated_has_none(obj: Obj) -> None:
    assert group_work([(m, {}) for m in models(obj)]) == ""


def test_a_gpu_container_a_service_routes_to_keeps_no_work_for_the_group() -> None:
    """A Service that routes to it makes a GPU container a server (its GPUs alone say nothing
    then): pkg/api/v1/pod/util.go FindPort resolves a numeric targetPort with no containerPort."""
    gpu = {"name": "vllm", "image": "vllm", "resources": {"limits": {"nvidia.com/gpu": 8}}}
    (model,) = models(lws([gpu]))
    assert group_work([(model, {})]).endswith(
        "container vllm (it asks for nvidia.com/gpu and declares no port)"
    )
    assert group_work([(model, {"vllm": ("svc",)})]) == ""


def test_the_group_keeps_the_work_the_annotation_declares() -> None:
    obj = lws([exporter(), TRAINER], annotations={"truegreen.io/keep-running": "dcgm-exporter"})
    assert group_work([(m, {}) for m in models(obj)]).endswith(
        "killing the work of container dcgm-exporter (it is declared keep-running)"
    )


def test_a_sidecar_s_and_an_exporter_s_liveness_probes_kill_the_group_s_training() -> None:
    obj = lws([TRAINER, exporter(livenessProbe=LIVE)], init=[shipper(livenessProbe=LIVE)])
    kills = "when it fails the kubelet kills the container"
    assert restarts(obj) == [
        (
            "",
            "dcgm-exporter",
            f"container dcgm-exporter has a livenessProbe: {kills}, and {DEFAULT}.",
        ),
        ("", "log-shipper", f"container log-shipper has a livenessProbe: {kills}, and {DEFAULT}."),
    ]


def test_a_startup_probe_kills_the_group_s_training_and_a_readiness_probe_does_not() -> None:
    startup = shipper(startupProbe=LIVE, readinessProbe=LIVE)
    ((_, container, message),) = restarts(lws([TRAINER], init=[startup]))
    assert container == "log-shipper"
    assert message.startswith("container log-shipper has a startupProbe: ")


def test_the_leader_s_probe_kills_the_workers_training() -> None:
    obj = lws([TRAINER], leader=[exporter(livenessProbe=LIVE)])
    ((role, container, message),) = restarts(obj)
    assert (role, container) == ("leader", "dcgm-exporter")
    assert message.endswith(
        "killing the work of container trainer of the worker (its command runs torchrun)."
    )


def test_the_trainer_s_own_probe_keeps_its_own_words() -> None:
    trainer = {**TRAINER, "livenessProbe": LIVE}
    ((_, container, message),) = restarts(lws([trainer]))
    assert container == "trainer"
    assert message == (
        "container trainer runs work that a restart would kill (its command runs torchrun) but "
        "has a livenessProbe: when it fails the kubelet kills the container and the work in it."
    )


@pytest.mark.parametrize(
    "obj",
    [
        lws([TRAINER], init=[shipper(livenessProbe=LIVE)], restartPolicy="None"),
        lws([TRAINER], init=[shipper(livenessProbe=LIVE)], restartPolicy="Default"),
        lws([exporter(livenessProbe=LIVE)], init=[shipper(livenessProbe=LIVE)]),
        # a probe that never runs restarts nothing: probe-cannot-pass says why
        lws([TRAINER], init=[shipper(livenessProbe={"exec": {"command": ["exit", "0"]}})]),
        # a startup probe that cannot fail stops at its first try: probe-cannot-fail says so
        lws([TRAINER], init=[shipper(startupProbe={"exec": {"command": ["true"]}})]),
    ],
)
def test_probes_that_recreate_no_training_group_are_left_alone(obj: Obj) -> None:
    assert restarts(obj) == []


def test_a_liveness_probe_that_cannot_fail_still_kills_the_group_on_a_timeout() -> None:
    obj = lws([TRAINER], init=[shipper(livenessProbe={"exec": {"command": ["true"]}})])
    ((_, _, message),) = restarts(obj)
    assert message == (
        "container log-shipper has a livenessProbe: its command always succeeds, but a try that "
        "takes over 1 s (timeoutSeconds) fails, as on a busy machine, and 3 in a row kill the "
        f"container, and {DEFAULT}."
    )
