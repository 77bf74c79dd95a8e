"""Every probe rule: cases that must fire and cases that must not.

The must-not cases include the false positives users reported against other linters.
"""

import copy
from typing import Any

import pytest

from truegreen.lint.probes import Probe, ProbeKind, WorkloadModel, workload_models
from truegreen.lint.rules import Context, evaluate
from truegreen.lint.services import ServiceModel, routed_containers

Obj = dict[str, Any]


def workload_model(obj: Obj) -> WorkloadModel | None:
    """The model of an object with at most one pod template."""
    models = workload_models(obj)
    if not models:
        return None
    (model,) = models
    return model


def workload(
    kind: str = "Deployment",
    *containers: Obj,
    init: list[Obj] | None = None,
    annotations: dict[str, str] | None = None,
) -> Obj:
    annotations = annotations or {}
    spec: Obj = {"containers": list(containers) or [server()]}
    if init:
        spec["initContainers"] = init
    template = {"metadata": {"labels": {"app": "w"}}, "spec": spec}
    if kind == "Pod":
        return {
            "kind": "Pod",
            "metadata": {"name": "w", "annotations": annotations, "labels": {"app": "w"}},
            "spec": spec,
        }
    body: Obj = {"template": template}
    if kind == "CronJob":
        body = {"jobTemplate": {"spec": {"template": template}}}
    return {"kind": kind, "metadata": {"name": "w", "annotations": annotations}, "spec": body}


def server(
    name: str = "app", port: int | None = 8080, port_name: str | None = "http", **fields: Any
) -> Obj:
    container: Obj = {"name": name, "image": "x"}
    if port is not None:
        container["ports"] = [{"containerPort": port, **({"name": port_name} if port_name else {})}]
    container.update(fields)
    return container


TCP = {"tcpSocket": {"port": 8080}}
HTTP_NAMED = {"httpGet": {"port": "http", "path": "/healthz"}}
HTTP_NUMBER = {"httpGet": {"port": 8080, "path": "/healthz"}}
ALIVE = {"httpGet": {"port": 8080, "path": "/alive"}}


def hits(obj: Obj, services: list[Obj] | None = None) -> list[tuple[str, str | None]]:
    model = workload_model(obj)
    assert model is not None
    routed = routed_containers(model, [ServiceModel.parse(s) for s in services or []])
    return [(rule.id, hit.container) for rule, hit in evaluate(model, Context(routed))]


def service(selector: dict[str, str] | None, target: int | str = 8080, **fields: str) -> Obj:
    spec: Obj = {"ports": [{"port": 80, "targetPort": target}], **fields}
    if selector is not None:
        spec["selector"] = selector
    return {"kind": "Service", "metadata": {"name": "svc"}, "spec": spec}


# -- readiness-missing ---------------------------------------------------------------------


def test_readiness_missing_fires_for_a_server_without_readiness() -> None:
    assert hits(workload()) == [("readiness-missing", "app")]


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Pod"])
def test_readiness_missing_applies_to_long_running_kinds(kind: str) -> None:
    assert ("readiness-missing", "app") in hits(workload(kind))


@pytest.mark.parametrize("kind", ["Job", "CronJob"])
def test_batch_work_is_exempt_from_readiness(kind: str) -> None:
    assert hits(workload(kind)) == []


def test_run_to_completion_pod_is_exempt() -> None:
    pod = workload("Pod")
    pod["spec"]["restartPolicy"] = "Never"
    assert hits(pod) == []


def test_readiness_present_is_fine() -> None:
    assert hits(workload("Deployment", server(readinessProbe=TCP))) == []


def test_probe_on_a_sidecar_does_not_cover_the_main_container() -> None:
    sidecar = server("proxy", 9000, "proxy", readinessProbe={"tcpSocket": {"port": 9000}})
    sidecar["restartPolicy"] = "Always"
    assert hits(workload("Deployment", server(), init=[sidecar])) == [("readiness-missing", "app")]


def test_plain_init_container_with_a_port_is_not_long_running() -> None:
    init = server("migrate", 5432, "db")
    assert hits(workload("Deployment", server(readinessProbe=TCP), init=[init])) == []


def test_service_routing_to_a_container_without_ports_fires_and_names_the_service() -> None:
    obj = workload("Deployment", server(port=None))
    assert hits(obj, [service({"app": "w"})]) == [("readiness-missing", "app")]
    model = workload_model(obj)
    assert model is not None
    routed = routed_containers(model, [ServiceModel.parse(service({"app": "w"}))])
    ((_, hit),) = evaluate(model, Context(routed))
    assert "Service svc routes to it" in hit.message


@pytest.mark.parametrize(
    "svc",
    [
        service(None),  # no selector: selects nothing
        service({"app": "w", "tier": "api"}),  # partial match: every key must match
        service({"app": "other"}),
        # endpointslice_controller.go syncService: an ExternalName Service gets no endpoints
        service({"app": "w"}, type="ExternalName"),
    ],
)
def test_services_that_do_not_select_the_pods(svc: Obj) -> None:
    # no ports declared: only a Service could make this container a server
    assert hits(workload("Deployment", server(port=None)), [svc]) == [
        ("readiness-missing-no-port", "app")
    ]


@pytest.mark.parametrize("kind", ["ClusterIP", "NodePort", "LoadBalancer"])
def test_services_of_every_other_type_route_to_the_pods_they_select(kind: str) -> None:
    svc = service({"app": "w"}, type=kind)
    assert hits(workload("Deployment", server(port=None)), [svc]) == [("readiness-missing", "app")]


def test_named_target_port_picks_the_container_that_declares_it() -> None:
    obj = workload("Deployment", server(port=None), server("web", 8081, "web"))
    assert hits(obj, [service({"app": "w"}, "web")]) == [
        ("readiness-missing", "web"),
        ("readiness-missing-no-port", "app"),
    ]


def _gpu_trainer_beside_an_exporter(**probes: Obj) -> Obj:
    """A trainer asking for 8 GPUs, serving nothing, beside a native sidecar that serves its
    metrics on 9400."""
    trainer = server(
        "trainer",
        port=None,
        command=["python", "train.py"],
        resources={"limits": {"nvidia.com/gpu": 8}},
    )
    trainer.update(probes)
    exporter = server("exporter", 9400, "metrics", readinessProbe={"httpGet": {"port": "metrics"}})
    exporter["restartPolicy"] = "Always"
    return workload("StatefulSet", trainer, init=[exporter])


def test_a_port_a_sidecar_declares_is_the_sidecar_s_not_the_main_container_s() -> None:
    """The endpoints send traffic to the pod's IP on 9400 (pkg/api/v1/pod/util.go FindPort),
    where the exporter that declares it listens: the trainer still serves nothing, keeps its
    GPU training signal, and its liveness probe would kill 8-GPU work."""
    obj = _gpu_trainer_beside_an_exporter(
        readinessProbe={"exec": {"command": ["cat", "/tmp/ready"]}},
        livenessProbe={"exec": {"command": ["cat", "/tmp/healthy"]}},
    )
    model = workload_model(obj)
    assert model is not None
    svc = service({"app": "w"}, 9400)
    assert routed_containers(model, [ServiceModel.parse(svc)]) == {"exporter": ("svc",)}
    assert hits(obj, [svc]) == [("restart-probe-on-keep-running", "trainer")]
    # without a readiness probe, the trainer is no server that readiness-missing asks about
    alone = _gpu_trainer_beside_an_exporter(livenessProbe={"exec": {"command": ["cat", "/x"]}})
    assert hits(alone, [svc]) == [("restart-probe-on-keep-running", "trainer")]


def test_a_number_no_container_declares_in_a_pod_of_two_is_credited_to_none() -> None:
    obj = _gpu_trainer_beside_an_exporter()
    model = workload_model(obj)
    assert model is not None
    assert routed_containers(model, [ServiceModel.parse(service({"app": "w"}, 7000))]) == {}


def test_a_named_target_only_a_sidecar_declares_is_the_sidecar_s() -> None:
    """FindPort looks a named targetPort up in the main containers, then in the sidecars."""
    model = workload_model(_gpu_trainer_beside_an_exporter())
    assert model is not None
    svc = ServiceModel.parse(service({"app": "w"}, "metrics"))
    assert routed_containers(model, [svc]) == {"exporter": ("svc",)}


def test_server_disabled_by_its_env_needs_no_readiness() -> None:
    container = server(env=[{"name": "HTTP_OFF", "value": ""}])
    assert hits(
        workload("Deployment", container, annotations={"truegreen.io/disabled-by": "8080=HTTP_OFF"})
    ) == [("readiness-missing", "app")]
    container["env"][0]["value"] = "1"
    found = hits(
        workload("Deployment", container, annotations={"truegreen.io/disabled-by": "8080=HTTP_OFF"})
    )
    assert ("readiness-missing", "app") not in found


CANNOT_FAIL = {"exec": {"command": ["sh", "-c", "curl -fs localhost || true"]}}


def test_a_readiness_probe_that_cannot_fail_is_no_readiness_probe() -> None:
    """The kubelet sets the result to Success at the probe's first run (pkg/kubelet/prober/
    worker.go doProbe): the container is Ready as soon as it runs, as with no probe at all."""
    model = workload_model(workload("Deployment", server(readinessProbe=CANNOT_FAIL)))
    assert model is not None
    found = {rule.id: hit.message for rule, hit in evaluate(model, Context({}))}
    assert set(found) == {"readiness-missing", "probe-cannot-fail"}
    assert found["readiness-missing"] == (
        "container app serves port 8080 (http) but its readinessProbe runs "
        "'sh -c curl -fs localhost || true', which always succeeds: it counts as Ready as soon "
        "as it runs, so a rollout over a crash loop reports success."
    )


def test_a_startup_probe_that_cannot_fail_as_the_only_gate_is_no_gate() -> None:
    """It passes at its first try; with no readiness probe the started container is then Ready
    (pkg/kubelet/prober/prober_manager.go UpdatePodStatus)."""
    container = server(startupProbe={"exec": {"command": ["true"]}})
    assert hits(workload("Deployment", container)) == [
        ("readiness-missing", "app"),
        ("probe-cannot-fail", "app"),
    ]


def test_a_probe_that_cannot_fail_next_to_a_gate_that_can_is_only_a_warning() -> None:
    startup_true = {"exec": {"command": ["true"]}}
    both = server(readinessProbe=TCP, startupProbe=startup_true)
    assert hits(workload("Deployment", both)) == [("probe-cannot-fail", "app")]
    model = workload_model(
        workload("Deployment", server(readinessProbe=CANNOT_FAIL, startupProbe=STARTUP))
    )
    assert model is not None
    found = {rule.id: hit.message for rule, hit in evaluate(model, Context({}))}
    assert set(found) == {"probe-cannot-fail", "readiness-missing-after-startup"}
    assert found["readiness-missing-after-startup"].startswith(
        "container app serves port 8080 (http) with a startupProbe but its readinessProbe runs "
        "'sh -c curl -fs localhost || true', which always succeeds: the startupProbe holds"
    )


# -- restart-probe-on-keep-running -----------------------------------------------------------


@pytest.mark.parametrize("probe", ["livenessProbe", "startupProbe"])
def test_restart_probe_on_keep_running_container(probe: str) -> None:
    container = server(readinessProbe=TCP)
    container[probe] = ALIVE
    found = hits(
        workload("Deployment", container, annotations={"truegreen.io/keep-running": "app"})
    )
    assert found == [("restart-probe-on-keep-running", "app")]


@pytest.mark.parametrize("probe", ["livenessProbe", "startupProbe"])
def test_a_restart_probe_that_never_runs_restarts_nothing(probe: str) -> None:
    """`["exit", "0"]` without a shell: the runtime finds no program `exit`, the kubelet throws
    each try's result away (prober/worker.go doProbe), so the probe never fails and never
    restarts the container; probe-cannot-pass alone says what is wrong."""
    container = server(readinessProbe=TCP)
    container[probe] = {"exec": {"command": ["exit", "0"]}}
    found = hits(
        workload("Deployment", container, annotations={"truegreen.io/keep-running": "app"})
    )
    assert found == [("probe-cannot-pass", "app")]


def test_a_startup_probe_that_cannot_fail_restarts_nothing() -> None:
    """`echo started` passes at its first try and a startup probe stops there, before the work
    has any progress to lose (kubernetes-sigs/jobset's depends-on example): probe-cannot-fail
    alone says it checks nothing."""
    container = server(readinessProbe=TCP, startupProbe={"exec": {"command": ["echo", "ok"]}})
    found = hits(workload("Job", container))
    assert found == [("probe-cannot-fail", "app")]


def test_a_liveness_probe_that_cannot_fail_still_kills_the_work_when_it_times_out() -> None:
    """A liveness probe runs for the container's whole life, and the kubelet counts an exec
    that does not answer within timeoutSeconds as a failure (pkg/probe/exec/errors.go
    TimeoutError; ExecProbeTimeout, on since 1.20): on a busy machine it kills the work."""
    container = server(readinessProbe=TCP, livenessProbe={"exec": {"command": ["echo", "ok"]}})
    model = workload_model(workload("Job", container))
    assert model is not None
    found = {rule.id: hit.message for rule, hit in evaluate(model, Context({}))}
    assert set(found) == {"probe-cannot-fail", "restart-probe-on-keep-running"}
    assert found["restart-probe-on-keep-running"] == (
        "container app runs work that a restart would kill (the workload is a Job) but has a "
        "livenessProbe: its command always succeeds, but a try that takes over 1 s "
        "(timeoutSeconds) fails, as on a busy machine, and 3 in a row kill the container and "
        "the work in it."
    )


def test_keep_running_on_the_pod_template_counts_too() -> None:
    obj = workload("Deployment", server(readinessProbe=TCP, livenessProbe=ALIVE))
    obj["spec"]["template"]["metadata"]["annotations"] = {"truegreen.io/keep-running": "app"}
    assert hits(obj) == [("restart-probe-on-keep-running", "app")]


def test_restart_probes_on_other_containers_are_fine() -> None:
    container = server(
        readinessProbe=TCP, livenessProbe={"tcpSocket": {"port": 8080}, "periodSeconds": 30}
    )
    assert "restart-probe-on-keep-running" not in [
        r
        for r, _ in hits(
            workload("Deployment", container, annotations={"truegreen.io/keep-running": "other"})
        )
    ]


def test_readiness_alone_on_keep_running_is_the_fix() -> None:
    assert (
        hits(
            workload(
                "Deployment",
                server(readinessProbe=TCP),
                annotations={"truegreen.io/keep-running": "app"},
            )
        )
        == []
    )


# -- probe-port-undeclared -------------------------------------------------------------------


def test_probe_on_an_undeclared_named_port_is_an_error() -> None:
    container = server(readinessProbe={"tcpSocket": {"port": "metrics"}})
    assert hits(workload("Deployment", container)) == [("probe-port-undeclared", "app")]


@pytest.mark.parametrize("probe", ["livenessProbe", "startupProbe"])
def test_a_restart_probe_on_an_undeclared_named_port_restarts_nothing(probe: str) -> None:
    """The kubelet cannot resolve the name (pkg/kubelet/prober/prober.go runProbe), counts the
    try as errored and throws it away (worker.go doProbe): the probe never fails, so it never
    kills the training run; probe-port-undeclared alone says what is wrong."""
    container = server(port=None, command=["torchrun", "train.py"])
    container[probe] = {"httpGet": {"port": "metrics", "path": "/healthz"}}
    model = workload_model(workload("Job", container))
    assert model is not None
    found = {rule.id: hit.message for rule, hit in evaluate(model, Context({}))}
    assert set(found) == {"probe-port-undeclared"}
    if probe == "livenessProbe":
        assert found["probe-port-undeclared"] == (
            "container app's livenessProbe targets named port metrics, which the container does "
            "not declare: the kubelet cannot run it, and the probe can never pass or fail, so it "
            "never restarts the container, whatever its state."
        )


def test_probe_on_an_unlisted_port_number_is_only_a_warning() -> None:
    """kubebuilder's scaffold probes :8081 without listing it, and it works: a numeric port
    needs no `ports` entry (the kubelet dials it as it is)."""
    container = server(readinessProbe={"tcpSocket": {"port": 9090}})
    assert hits(workload("Deployment", container)) == [("probe-port-unlisted", "app")]


@pytest.mark.parametrize("port", [8080, "http"])
def test_probe_on_declared_port_by_number_or_name(port: int | str) -> None:
    assert hits(workload("Deployment", server(readinessProbe={"tcpSocket": {"port": port}}))) == []


def test_sidecar_probe_on_undeclared_port() -> None:
    sidecar = server("proxy", 9000, "proxy", readinessProbe={"httpGet": {"port": "admin"}})
    sidecar["restartPolicy"] = "Always"
    found = hits(workload("Deployment", server(readinessProbe=TCP), init=[sidecar]))
    assert found == [("probe-port-undeclared", "proxy")]


def test_exec_probe_has_no_port() -> None:
    container = server(readinessProbe={"exec": {"command": ["pg_isready"]}})
    assert hits(workload("Deployment", container)) == []


# -- probe-targets-disabled-server ----------------------------------------------------------


def _disabled(value: str, probes: Obj) -> Obj:
    container = server(env=[{"name": "HTTP_OFF", "value": value}])
    container.update(probes)
    return workload(
        "Deployment", container, annotations={"truegreen.io/disabled-by": "http=HTTP_OFF"}
    )


def test_probe_on_a_disabled_server() -> None:
    found = hits(_disabled("true", {"readinessProbe": HTTP_NUMBER}))
    # the probe (by number, the annotation by name) and the declared port both fire
    assert found == [
        ("probe-targets-disabled-server", "app"),
        ("probe-targets-disabled-server", "app"),
    ]


@pytest.mark.parametrize("value", ["1", "false", "0", "no"])
def test_any_non_empty_value_disables(value: str) -> None:
    assert ("probe-targets-disabled-server", "app") in hits(
        _disabled(value, {"readinessProbe": TCP})
    )


def test_empty_value_leaves_the_server_on() -> None:
    assert hits(_disabled("", {"readinessProbe": TCP})) == []


def test_value_from_elsewhere_cannot_be_judged() -> None:
    container = server(
        env=[{"name": "HTTP_OFF", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}],
        readinessProbe=TCP,
    )
    assert (
        hits(
            workload(
                "Deployment", container, annotations={"truegreen.io/disabled-by": "8080=HTTP_OFF"}
            )
        )
        == []
    )


# -- liveness-same-as-readiness ---------------------------------------------------------------


def test_liveness_identical_to_readiness_by_name_and_number() -> None:
    container = server(readinessProbe=HTTP_NAMED, livenessProbe=HTTP_NUMBER)
    assert hits(workload("Deployment", container)) == [("liveness-same-as-readiness", "app")]


def test_different_paths_are_not_identical() -> None:
    container = server(
        readinessProbe=HTTP_NAMED, livenessProbe={"httpGet": {"port": 8080, "path": "/alive"}}
    )
    assert hits(workload("Deployment", container)) == []


def test_probes_are_compared_after_the_api_server_s_defaults() -> None:
    """pkg/apis/core/v1/defaults.go SetDefaults_HTTPGetAction: a path left out is "/" and a scheme
    left out is HTTP, so `{port: http}` and `{port: 8080, path: /, scheme: HTTP}` are one check."""
    container = server(
        readinessProbe={"httpGet": {"port": "http"}},
        livenessProbe={"httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"}},
    )
    assert hits(workload("Deployment", container)) == [("liveness-same-as-readiness", "app")]


def _header_probe(port: int | str, name: str, value: str) -> Obj:
    return {
        "httpGet": {"path": "/h", "port": port, "httpHeaders": [{"name": name, "value": value}]}
    }


def test_header_names_are_compared_as_the_kubelet_sends_them() -> None:
    """pkg/probe/http/request.go v1HeaderToHTTPHeader: Go's http.Header.Add canonicalises each
    name (textproto.CanonicalMIMEHeaderKey), so `x-probe` goes out as `X-Probe`; a value goes
    out as written."""
    same = server(
        readinessProbe=_header_probe("http", "X-PROBE", "1"),
        livenessProbe=_header_probe(8080, "x-probe", "1"),
    )
    assert hits(workload("Deployment", same)) == [("liveness-same-as-readiness", "app")]
    sent = Probe.parse(ProbeKind.LIVENESS, _header_probe(80, "x-probe-2id", "v"))
    assert sent.headers == (("X-Probe-2id", "v"),)
    other_value = server(
        readinessProbe=_header_probe("http", "X-Probe", "a"),
        livenessProbe=_header_probe(8080, "X-Probe", "A"),
    )
    assert hits(workload("Deployment", other_value)) == []


@pytest.mark.parametrize(
    ("readiness", "liveness"),
    [
        (
            {"grpc": {"port": 8080, "service": "readiness"}},
            {"grpc": {"port": 8080, "service": "liveness"}},
        ),
        ({"grpc": {"port": 8080}}, {"grpc": {"port": 8080, "service": "liveness"}}),
        ({"httpGet": {"port": 8080}}, {"httpGet": {"port": 8080, "scheme": "HTTPS"}}),
        ({"httpGet": {"port": 8080}}, {"httpGet": {"port": 8080, "host": "127.0.0.1"}}),
        ({"tcpSocket": {"port": 8080}}, {"tcpSocket": {"port": 8080, "host": "127.0.0.1"}}),
        (
            {"httpGet": {"port": 8080, "httpHeaders": [{"name": "X-Check", "value": "ready"}]}},
            {"httpGet": {"port": 8080, "httpHeaders": [{"name": "X-Check", "value": "live"}]}},
        ),
    ],
)
def test_probes_that_ask_for_something_else_are_not_identical(
    readiness: Obj, liveness: Obj
) -> None:
    """k8s.io/api core/v1 GRPCAction.service, HTTPGetAction scheme, host and httpHeaders: the
    kubelet's prober sends each, so a different one is a different check."""
    container = server(readinessProbe=readiness, livenessProbe=liveness)
    assert hits(workload("Deployment", container)) == []


# -- probe-cannot-fail -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["true"],
        ["/bin/true"],
        ["sh", "-c", "exit 0"],
        ["/bin/sh", "-c", "true"],
        ["bash", "-ec", "true"],
        ["sh", "-ce", "exit 0"],
    ],
)
def test_exec_probe_that_cannot_fail(command: list[str]) -> None:
    container = server(port=None, readinessProbe={"exec": {"command": command}})
    assert hits(workload("Deployment", container)) == [("probe-cannot-fail", "app")]


@pytest.mark.parametrize(
    "command",
    [
        ["pg_isready"],
        ["sh", "-c", "test -f /tmp/ready"],
        ["true", "x"],
        ["cat", "/tmp/ready", "true"],  # three words, but not a shell running `true`
        ["sh", "-x", "true"],  # a script file named true, not the command
    ],
)
def test_exec_probe_that_can_fail(command: list[str]) -> None:
    container = server(port=None, readinessProbe={"exec": {"command": command}})
    assert hits(workload("Deployment", container)) == []


# -- probe-cannot-pass -------------------------------------------------------------------------
# The kubelet runs an exec probe without a shell; a shell's special built-in is no program, the
# runtime cannot start it, and the kubelet throws each try away (lint/commands.py's docstring).


@pytest.mark.parametrize("kind", ["readinessProbe", "livenessProbe", "startupProbe"])
@pytest.mark.parametrize("command", [["exit", "0"], [":"], ["exit"], ["set", "-e"]])
def test_exec_probe_of_a_shell_s_own_command_cannot_pass(kind: str, command: list[str]) -> None:
    probes: dict[str, Any] = {kind: {"exec": {"command": command}}}
    if kind != "readinessProbe":  # keep readiness-missing-no-port out of the way
        probes["readinessProbe"] = {"exec": {"command": ["pg_isready"]}}
    container = server(port=None, **probes)
    assert hits(workload("Deployment", container)) == [("probe-cannot-pass", "app")]


@pytest.mark.parametrize(
    "command", [["true"], ["sh", "-c", "exit 0"], ["sh", "-c", ":"], ["nohup", "exit", "0"]]
)
def test_exec_probe_of_a_program_or_a_shell_can_pass(command: list[str]) -> None:
    container = server(port=None, readinessProbe={"exec": {"command": command}})
    assert "probe-cannot-pass" not in [rule for rule, _ in hits(workload("Deployment", container))]


def test_a_probe_that_cannot_pass_is_not_also_one_that_cannot_fail() -> None:
    container = server(port=None, readinessProbe={"exec": {"command": ["exit", "0"]}})
    assert hits(workload("Deployment", container)) == [("probe-cannot-pass", "app")]


# -- readiness-missing-no-port and ignore ------------------------------------------------------


def test_no_listener_no_readiness_is_info() -> None:
    assert hits(workload("Deployment", server(port=None))) == [("readiness-missing-no-port", "app")]


def test_ignore_annotation_silences_only_the_named_rules() -> None:
    obj = workload("Deployment", server(readinessProbe=HTTP_NAMED, livenessProbe=HTTP_NAMED))
    assert hits(obj) == [("liveness-same-as-readiness", "app")]
    silenced = copy.deepcopy(obj)
    silenced["metadata"]["annotations"]["truegreen.io/ignore"] = "liveness-same-as-readiness"
    assert hits(silenced) == []


def test_sidecar_serving_a_port_is_not_asked_for_readiness() -> None:
    """Readiness is judged on the main containers; a proxy sidecar gates nothing on its own."""
    sidecar = server("proxy", 9000, "proxy")
    sidecar["restartPolicy"] = "Always"
    assert hits(workload("Deployment", server(readinessProbe=TCP), init=[sidecar])) == []


def test_a_null_probe_is_no_probe() -> None:
    assert hits(workload("Deployment", server(readinessProbe=None))) == [
        ("readiness-missing", "app")
    ]


def test_a_handler_written_with_no_value_hides_no_other_handler() -> None:
    """`httpGet:` with no value is JSON null, a nil pointer: pkg/apis/core/validation
    validateHandler counts only the non-nil handlers, so the one that holds an object is the
    probe's, and its defects are reported."""
    container = server(
        readinessProbe={"httpGet": None, "tcpSocket": {"port": "metrics"}},
        livenessProbe={"tcpSocket": None, "exec": {"command": ["exit", "0"]}},
    )
    assert hits(workload("Deployment", container)) == [
        ("probe-port-undeclared", "app"),
        ("probe-cannot-pass", "app"),
    ]


@pytest.mark.parametrize("null", ["httpGet", "tcpSocket", "grpc"])
def test_no_network_handler_written_with_no_value_hides_an_exec(null: str) -> None:
    container = server(readinessProbe={null: None, "exec": {"command": ["exit", "0"]}})
    assert hits(workload("Deployment", container)) == [("probe-cannot-pass", "app")]


def test_an_exec_written_with_no_value_is_no_handler() -> None:
    kind = ProbeKind.LIVENESS
    assert Probe.parse(kind, {"exec": None}) == Probe.parse(kind, {})
    assert Probe.parse(kind, {"exec": {}}).handler == "exec"


def test_the_service_index_offers_every_service_that_could_select_and_keeps_input_order() -> None:
    from truegreen.lint.services import ServiceIndex

    def named(name: str, selector: dict[str, str] | None) -> ServiceModel:
        obj = service(selector)
        obj["metadata"]["name"] = name
        return ServiceModel.parse(obj)

    model = workload_model(workload("Deployment", server(port=None)))
    assert model is not None
    assert dict(model.labels) == {"app": "w"}, "precondition: the pods carry app=w only"
    index = ServiceIndex(
        [
            named("zeta", {"app": "w"}),
            named("two-keys", {"tier": "api", "app": "w"}),  # indexed by app=w, still checked
            named("none", None),
            named("other", {"app": "x"}),
            named("alpha", {"app": "w"}),
        ]
    )
    assert [s.name for s in index.candidates(model)] == ["zeta", "two-keys", "alpha"]
    assert routed_containers(model, index.candidates(model)) == {"app": ("zeta", "alpha")}


@pytest.mark.parametrize(
    ("obj", "identity", "is_batch"),
    [
        (
            {**workload("Deployment"), "metadata": {"name": "api", "namespace": "apps"}},
            ("Deployment", "api", "apps"),
            False,
        ),
        (workload("Job"), ("Job", "w", None), True),
        (workload("CronJob"), ("CronJob", "w", None), True),
        (workload("Pod"), ("Pod", "w", None), False),
    ],
)
def test_the_workload_model_names_the_object(
    obj: Obj, identity: tuple[str, str, str | None], is_batch: bool
) -> None:
    model = workload_model(obj)
    assert model is not None
    assert (model.kind, model.name, model.namespace) == identity
    assert model.is_batch is is_batch
    assert [c.is_sidecar for c in model.containers] == [False]


@pytest.mark.parametrize(
    ("policy", "is_batch"), [("Never", True), ("OnFailure", True), ("Always", False)]
)
def test_a_bare_pod_runs_to_completion_unless_it_always_restarts(
    policy: str, is_batch: bool
) -> None:
    obj = workload("Pod")
    obj["spec"]["restartPolicy"] = policy
    model = workload_model(obj)
    assert model is not None
    assert model.is_batch is is_batch


def test_objects_without_a_pod_template_have_no_model() -> None:
    assert workload_model({"kind": "Service", "metadata": {"name": "s"}}) is None
    assert workload_model({"metadata": {"name": "nameless-kind"}}) is None


def test_grpc_probes_have_ports_and_are_compared_by_port() -> None:
    # GRPCAction.Port is an int32 (k8s.io/api core/v1), not an IntOrString: a name is refused.
    typo = server(readinessProbe={"grpc": {"port": "grcp"}})
    assert hits(workload("Deployment", typo)) == [
        ("probe-port-undeclared", "app"),
        ("wrong-field-type", "app"),
    ]
    same = {"grpc": {"port": 8080}}
    twin = server(readinessProbe=same, livenessProbe={"grpc": {"port": 8080}})
    assert hits(workload("Deployment", twin)) == [("liveness-same-as-readiness", "app")]


def test_http_probes_on_different_ports_are_different_checks() -> None:
    app = server(
        readinessProbe=HTTP_NAMED, livenessProbe={"httpGet": {"port": 9090, "path": "/healthz"}}
    )
    app["ports"].append({"containerPort": 9090, "name": "admin"})
    assert hits(workload("Deployment", app)) == []


def test_keep_running_names_several_containers_separated_by_commas() -> None:
    first = server("first", readinessProbe=TCP, livenessProbe=ALIVE)
    second = server("second", 8081, "api", readinessProbe={"tcpSocket": {"port": 8081}})
    second["livenessProbe"] = {"tcpSocket": {"port": 8081}, "periodSeconds": 30}
    obj = workload(
        "Deployment", first, second, annotations={"truegreen.io/keep-running": "first, second"}
    )
    assert sorted(h for h in hits(obj) if h[0] == "restart-probe-on-keep-running") == [
        ("restart-probe-on-keep-running", "first"),
        ("restart-probe-on-keep-running", "second"),
    ]


# -- startup probes gate readiness --------------------------------------------------------------

STARTUP = {"exec": {"command": ["cat", "/tmp/started"]}, "failureThreshold": 120}


def test_a_startup_probe_holds_the_rollout_of_a_port_less_container() -> None:
    """The GPU driver DaemonSet's shape: the kubelet keeps the container not Ready until the
    startup probe passes, so the rollout waits for it."""
    assert hits(workload("DaemonSet", server(port=None, startupProbe=STARTUP))) == []
    assert hits(workload("DaemonSet", server(port=None))) == [("readiness-missing-no-port", "app")]


def test_a_server_gated_only_by_its_startup_probe_is_a_warning() -> None:
    found = hits(workload("Deployment", server(startupProbe=STARTUP)))
    assert found == [("readiness-missing-after-startup", "app")]
    assert hits(workload("Deployment", server(startupProbe=STARTUP, readinessProbe=TCP))) == []


# -- liveness-same-as-readiness weighs thresholds and periods ----------------------------------


@pytest.mark.parametrize(
    ("liveness", "fires"),
    [
        ({}, True),
        ({"failureThreshold": 3, "periodSeconds": 10}, True),
        ({"failureThreshold": 2}, True),  # gives up sooner than readiness
        ({"failureThreshold": 6}, False),  # kube-score#339: more lenient, the usual pattern
        ({"periodSeconds": 30}, False),
        ({"timeoutSeconds": 5}, False),  # waits longer for each answer
        ({"failureThreshold": 6, "periodSeconds": 5}, True),  # 30 s, as readiness's 3 x 10 s
    ],
)
def test_liveness_as_lenient_as_readiness_is_fine(liveness: Obj, fires: bool) -> None:
    container = server(readinessProbe=HTTP_NAMED, livenessProbe={**HTTP_NUMBER, **liveness})
    assert hits(workload("Deployment", container)) == (
        [("liveness-same-as-readiness", "app")] if fires else []
    )


# -- ports: names are the container's own, numbers are the pod's ---------------------------------


def test_a_named_port_of_another_container_does_not_resolve() -> None:
    """kubelet prober.go findPortByName looks in the probed container's ports only."""
    proxy = server("proxy", 9000, "metrics")
    app = server(readinessProbe={"httpGet": {"port": "metrics"}})
    obj = workload("Deployment", app, proxy)
    assert hits(obj) == [("readiness-missing", "proxy"), ("probe-port-undeclared", "app")]
    model = workload_model(obj)
    assert model is not None
    (_, (_, hit)) = evaluate(model, Context())
    assert "(container proxy declares it, but the kubelet looks a probe's named port up" in (
        hit.message
    )


def test_a_port_number_any_container_of_the_pod_lists_is_declared() -> None:
    proxy = server("proxy", 9000, "proxy", readinessProbe={"tcpSocket": {"port": 9000}})
    app = server(readinessProbe={"tcpSocket": {"port": 9000}})
    assert hits(workload("Deployment", app, proxy)) == []


def test_on_the_machine_s_network_an_unlisted_port_number_is_not_judged() -> None:
    obj = workload("DaemonSet", server(port=None, readinessProbe={"httpGet": {"port": 9100}}))
    assert hits(obj) == [("probe-port-unlisted", "app")]
    obj["spec"]["template"]["spec"]["hostNetwork"] = True
    assert hits(obj) == []


@pytest.mark.parametrize("handler", ["httpGet", "tcpSocket"])
def test_a_probe_aimed_at_another_host_is_not_judged_on_the_pod_s_ports(handler: str) -> None:
    """pkg/kubelet/prober/prober.go runProbe: `host` is dialled as written, the pod's IP only
    when it is empty; the port is that host's, which no container of the pod lists."""
    elsewhere = {handler: {"host": "upstream.internal", "port": 443}}
    obj = workload("Deployment", server(readinessProbe=TCP, livenessProbe=elsewhere))
    assert hits(obj) == []
    del elsewhere[handler]["host"]
    assert hits(obj) == [("probe-port-unlisted", "app")]


def test_each_hit_names_the_probe_it_is_about() -> None:
    """Two findings of one rule on one container (on two probes) are told apart by the probe:
    SARIF's fingerprint keeps them two alerts."""
    job = workload(
        "Job",
        server(
            startupProbe={"tcpSocket": {"port": "admin"}},
            livenessProbe={"exec": {"command": ["true"]}},
            readinessProbe={"exec": {"command": ["exit", "0"]}},
        ),
    )
    served = workload(
        "Deployment",
        server(
            readinessProbe={"tcpSocket": {"port": 9090}},
            livenessProbe={"tcpSocket": {"port": 8080}},
            env=[{"name": "OFF", "value": "1"}],
        ),
        annotations={"truegreen.io/disabled-by": "8080=OFF"},
    )
    about = []
    for obj in (job, served):
        model = workload_model(obj)
        assert model is not None
        about += [(rule.id, hit.probe) for rule, hit in evaluate(model, Context())]
    assert sorted(about) == [
        ("probe-cannot-fail", "livenessProbe"),
        ("probe-cannot-pass", "readinessProbe"),
        ("probe-port-undeclared", "startupProbe"),
        ("probe-port-unlisted", "readinessProbe"),
        ("probe-targets-disabled-server", ""),  # the port the container declares
        ("probe-targets-disabled-server", "livenessProbe"),
        ("restart-probe-on-keep-running", "livenessProbe"),
        # the startup probe on an undeclared name never runs, so it restarts nothing
    ]


# -- unknown fields ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"readinesProbe": TCP}, "readinesProbe"),
        (
            {"readinessProbe": {"httpGet": {"port": 8080, "paht": "/"}}},
            "readinessProbe.httpGet.paht",
        ),
        ({"readinessProbe": {"tcpSocket": {"port": 8080}, "period": 5}}, "readinessProbe.period"),
        ({"ports": [{"containerport": 8080}]}, "ports[0].containerport"),
        ({"livenessprobe": ALIVE}, "livenessprobe"),  # the API server's fields match by case
    ],
)
def test_a_field_kubernetes_does_not_know_is_an_error(fields: Obj, path: str) -> None:
    container = server(readinessProbe=TCP)
    container.update(fields)
    model = workload_model(workload("Deployment", container))
    assert model is not None
    unknown = [
        hit.values["field"]
        for rule, hit in evaluate(model, Context())
        if rule.id == "unknown-field"
    ]
    assert unknown == [path]


def test_a_regular_init_container_s_unknown_fields_are_errors_too() -> None:
    """The API server validates every initContainers entry as a Container (strict validation
    refuses `spec.template.spec.initContainers[0].comand`); leniently it drops the field and
    the init container runs its image's own command."""
    init = {"name": "fetch", "image": "busybox", "comand": ["wget"], "volumeMount": []}
    model = workload_model(workload("Job", server(port=None), init=[init]))
    assert model is not None
    unknown = [
        (hit.container, hit.values["field"])
        for rule, hit in evaluate(model, Context())
        if rule.id == "unknown-field"
    ]
    assert unknown == [("fetch", "comand"), ("fetch", "volumeMount")]
    assert [c.name for c in model.containers] == ["app"], "no probe rule reads it"


def test_every_field_a_container_may_have_is_known() -> None:
    from truegreen.lint.probes import CONTAINER_FIELDS, PROBE_FIELDS

    container: Obj = dict.fromkeys(CONTAINER_FIELDS) | {"name": "app"}
    container["readinessProbe"] = dict.fromkeys(PROBE_FIELDS) | {"tcpSocket": {"port": 1}}
    assert "unknown-field" not in [r for r, _ in hits(workload("Deployment", container))]


def test_every_container_is_judged_for_readiness_whatever_the_ones_before_it() -> None:
    """A startup-gated container, port or none, must not stop the others being looked at."""
    obj = workload(
        "Deployment",
        server("a", startupProbe=STARTUP),
        server("d", port=None, startupProbe=STARTUP),
        server("b", 8081, "b"),
        server("e", port=None),
        server("c", 8082, "c", startupProbe=STARTUP),
    )
    assert sorted(hits(obj)) == [
        ("readiness-missing", "b"),
        ("readiness-missing-after-startup", "a"),
        ("readiness-missing-after-startup", "c"),
        ("readiness-missing-no-port", "e"),
    ]


def test_ignores_silence_nothing_when_they_are_not_honoured() -> None:
    obj = workload("Deployment", server(), annotations={"truegreen.io/ignore": "readiness-missing"})
    model = workload_model(obj)
    assert model is not None
    assert evaluate(model, Context()) == [], "precondition: the annotation is honoured"
    assert [rule.id for rule, _ in evaluate(model, Context(), honour_ignores=False)] == [
        "readiness-missing"
    ]


def _wrong_types(obj: Obj) -> list[tuple[str | None, str, dict[str, str]]]:
    model = workload_model(obj)
    assert model is not None
    return [
        (hit.container, hit.message, dict(hit.values))
        for rule, hit in evaluate(model, Context())
        if rule.id == "wrong-field-type"
    ]


def test_wrong_field_types_are_named_in_the_api_server_s_types() -> None:
    """Each JSON type found, in words; the container (or the pod spec) that holds it; the
    field's path for doctor's wording. k8s.io/api core/v1: env value a string, hostNetwork a
    bool, ports a list of objects, a probe an object, containerPort an int32."""
    assert _wrong_types(workload("Deployment", server())) == []  # the precondition
    app = server(
        env=[{"name": "PORT", "value": 8080}, {"name": "DEBUG", "value": False}],
        readinessProbe={"httpGet": ["x"]},
        livenessProbe={"exec": {"command": {"a": "b"}}},
    )
    app["ports"][0]["containerPort"] = "8080"
    obj = workload("Deployment", app)
    obj["spec"]["template"]["spec"]["hostNetwork"] = "yes"
    said = "but Kubernetes takes {} there: the API server cannot decode it and refuses the object."
    assert _wrong_types(obj) == [
        (
            None,
            f'the pod spec: hostNetwork is the string "yes", {said.format("true or false")}',
            {"field": "hostNetwork"},
        ),
        (
            "app",
            'container app: containers[0].ports[0].containerPort is the string "8080", '
            + said.format("a whole number"),
            {"field": "containers[0].ports[0].containerPort"},
        ),
        (
            "app",
            "container app: containers[0].env[0].value is a number, " + said.format("a string"),
            {"field": "containers[0].env[0].value"},
        ),
        (
            "app",
            "container app: containers[0].env[1].value is a true/false value, "
            + said.format("a string"),
            {"field": "containers[0].env[1].value"},
        ),
        (
            "app",
            "container app: containers[0].readinessProbe.httpGet is a list, "
            + said.format("an object (key: value pairs)"),
            {"field": "containers[0].readinessProbe.httpGet"},
        ),
        (
            "app",
            "container app: containers[0].livenessProbe.exec.command is an object, "
            + said.format("a list of strings"),
            {"field": "containers[0].livenessProbe.exec.command"},
        ),
    ]


@pytest.mark.parametrize(
    ("kind", "api_version", "spec", "path", "found"),
    [
        ("Pod", "v1", 5, "spec", "a number"),
        ("Deployment", "apps/v1", [1], "spec", "a list"),
        ("StatefulSet", "apps/v1", {"template": "x"}, "spec.template", "a string"),
        (
            "DaemonSet",
            "apps/v1",
            {"template": {"spec": True}},
            "spec.template.spec",
            "a true/false value",
        ),
        ("ReplicaSet", "apps/v1", {"template": {"spec": 7}}, "spec.template.spec", "a number"),
        ("Job", "batch/v1", {"template": {"spec": 5}}, "spec.template.spec", "a number"),
        ("CronJob", "batch/v1", {"jobTemplate": 5}, "spec.jobTemplate", "a number"),
        (
            "CronJob",
            "batch/v1",
            {"jobTemplate": {"spec": 5}},
            "spec.jobTemplate.spec",
            "a number",
        ),
        (
            "CronJob",
            "batch/v1",
            {"jobTemplate": {"spec": {"template": 5}}},
            "spec.jobTemplate.spec.template",
            "a number",
        ),
        (
            "CronJob",
            "batch/v1",
            {"jobTemplate": {"spec": {"template": {"spec": 5}}}},
            "spec.jobTemplate.spec.template.spec",
            "a number",
        ),
    ],
)
def test_a_field_on_the_way_to_the_pod_spec_that_is_no_object_is_the_object_s(
    kind: str, api_version: str, spec: object, path: str, found: str
) -> None:
    """The API server cannot decode it into its Go type; the finding names the object, not a
    pod spec or a container (there is none to name), and nothing else is judged."""
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}, "spec": spec}
    assert _wrong_types(obj) == [
        (
            None,
            f"the object: {path} is {found}, but Kubernetes takes an object (key: value pairs) "
            "there: the API server cannot decode it and refuses the object.",
            {"field": path},
        )
    ]
    model = workload_model(obj)
    assert model is not None
    assert model.containers == ()
    assert model.pod_spec == {}


@pytest.mark.parametrize(
    ("kind", "api_version", "spec"),
    [
        ("Pod", "v1", None),
        ("Deployment", "apps/v1", {"template": None}),
        ("Job", "batch/v1", {"template": {"spec": None}}),
        ("CronJob", "batch/v1", {"jobTemplate": {"spec": None}}),
    ],
)
def test_a_field_left_out_on_the_way_to_the_pod_spec_is_no_wrong_type(
    kind: str, api_version: str, spec: object
) -> None:
    """null is what the API server takes for a field left out: nothing to refuse."""
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}, "spec": spec}
    model = workload_model(obj)
    assert model is None or _wrong_types(obj) == []
