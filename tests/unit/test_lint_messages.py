"""The exact message of every rule: lint's JSON `message` field is what a reviewer reads."""

from typing import Any

import pytest

from tests.unit.test_lint_rules import (
    ALIVE,
    HTTP_NAMED,
    HTTP_NUMBER,
    TCP,
    server,
    workload,
    workload_model,
)
from truegreen.lint.rules import Context, evaluate

CASES: list[tuple[dict[str, Any], str, str, dict[str, str]]] = [
    (
        workload("Deployment", server()),
        "readiness-missing",
        "container app serves port 8080 (http) but has no readinessProbe: it counts as Ready as "
        "soon as it runs, so a rollout over a crash loop reports success.",
        {"port": "port 8080 (http)"},
    ),
    (
        workload(
            "Deployment",
            server(readinessProbe=TCP, livenessProbe=ALIVE),
            annotations={"truegreen.io/keep-running": "app"},
        ),
        "restart-probe-on-keep-running",
        "container app is declared keep-running but has a livenessProbe: when it fails the kubelet "
        "kills the container and the work it keeps running.",
        {},
    ),
    (
        workload("Deployment", server(readinessProbe={"tcpSocket": {"port": "metrics"}})),
        "probe-port-undeclared",
        "container app's readinessProbe targets named port metrics, which the container does not "
        "declare: the kubelet cannot run it, and the probe can never pass, so the container "
        "never becomes ready.",
        {"port": "metrics"},
    ),
    (
        workload("Deployment", server(readinessProbe={"tcpSocket": {"port": 9090}})),
        "probe-port-unlisted",
        "container app's readinessProbe targets port 9090, which no container of the pod lists: "
        "the probe works if the server listens there, but nothing in the manifest says it does.",
        {"port": "9090"},
    ),
    (
        workload("Deployment", server(readinessProbe=HTTP_NAMED, livenessProbe=HTTP_NUMBER)),
        "liveness-same-as-readiness",
        "container app's livenessProbe checks exactly what its readinessProbe checks, and gives "
        "up no later (3 x 10 s against 3 x 10 s): a moment of overload restarts the container "
        "instead of pausing its traffic.",
        {},
    ),
    (
        workload(
            "Deployment",
            server(port=None, readinessProbe={"exec": {"command": ["sh", "-c", "exit 0"]}}),
        ),
        "probe-cannot-fail",
        "container app's readinessProbe runs 'sh -c exit 0', which always succeeds: the probe "
        "reports healthy whatever the state.",
        {},
    ),
    (
        workload(
            "Deployment", server(port=None, readinessProbe={"exec": {"command": ["exit", "0"]}})
        ),
        "probe-cannot-pass",
        "container app's readinessProbe runs 'exit 0' without a shell, and 'exit' is a shell's "
        "own command, not a program: the probe can never pass, so the container never becomes "
        "ready.",
        {},
    ),
    (
        workload(
            "Deployment",
            server(
                port=None,
                readinessProbe={"exec": {"command": ["pg_isready"]}},
                startupProbe={"exec": {"command": [":"]}},
            ),
        ),
        "probe-cannot-pass",
        "container app's startupProbe runs ':' without a shell, and ':' is a shell's own "
        "command, not a program: the probe can never pass, so the container never counts as "
        "started and never becomes ready.",
        {},
    ),
    (
        workload(
            "Deployment",
            server(
                port=None,
                readinessProbe={"exec": {"command": ["pg_isready"]}},
                livenessProbe={"exec": {"command": ["set", "-e"]}},
            ),
        ),
        "probe-cannot-pass",
        "container app's livenessProbe runs 'set -e' without a shell, and 'set' is a shell's own "
        "command, not a program: the probe can never pass or fail, so it never restarts the "
        "container, whatever its state.",
        {},
    ),
    (
        workload("Deployment", server(port=None)),
        "readiness-missing-no-port",
        "container app declares no port and has no readinessProbe: rollout status only means the "
        "process started.",
        {},
    ),
]


@pytest.mark.parametrize(("obj", "rule_id", "message", "values"), CASES)
def test_message(obj: dict[str, Any], rule_id: str, message: str, values: dict[str, str]) -> None:
    model = workload_model(obj)
    assert model is not None
    hits = [(rule.id, hit.message, dict(hit.values)) for rule, hit in evaluate(model, Context())]
    assert hits == [(rule_id, message, values)]


def test_disabled_server_messages() -> None:
    obj = workload(
        "Deployment",
        server(env=[{"name": "OFF", "value": "1"}], readinessProbe=HTTP_NAMED),
        annotations={"truegreen.io/disabled-by": "8080=OFF"},
    )
    model = workload_model(obj)
    assert model is not None
    assert [(hit.message, dict(hit.values)) for _, hit in evaluate(model, Context())] == [
        (
            "container app's readinessProbe targets port http, but its env sets OFF, which turns "
            "that server off: the pod never becomes Ready.",
            {"setting": "OFF", "port": "http"},
        ),
        (
            "container app declares port http, but its env sets OFF, which turns that server off.",
            {"setting": "OFF", "port": "http"},
        ),
    ]


def _messages(obj: dict[str, Any], routed: dict[str, tuple[str, ...]] | None = None) -> list[str]:
    model = workload_model(obj)
    assert model is not None
    return [f"{rule.id}: {hit.message}" for rule, hit in evaluate(model, Context(routed or {}))]


def test_an_unnamed_port_is_named_by_its_number_alone() -> None:
    assert _messages(workload("Deployment", server(port_name=None))) == [
        "readiness-missing: container app serves port 8080 but has no readinessProbe: it counts "
        "as Ready as soon as it runs, so a rollout over a crash loop reports success."
    ]


def test_services_routing_to_a_container_without_declared_ports_are_all_named() -> None:
    obj = workload("Deployment", server(port=None))
    assert _messages(obj, {"app": ("api", "internal")}) == [
        "readiness-missing: container app serves the port its Service targets but has no "
        "readinessProbe: Service api, internal routes to it, and it counts as Ready as soon as it "
        "runs, so a rollout over a crash loop reports success."
    ]


def test_only_the_port_a_setting_turns_off_is_dropped() -> None:
    app = server(env=[{"name": "OFF", "value": "1"}])
    app["ports"].append({"containerPort": 9090, "name": "metrics"})
    obj = workload("Deployment", app, annotations={"truegreen.io/disabled-by": "metrics=OFF"})
    assert _messages(obj) == [
        "readiness-missing: container app serves port 8080 (http) but has no readinessProbe: it "
        "counts as Ready as soon as it runs, so a rollout over a crash loop reports success.",
        "probe-targets-disabled-server: container app declares port metrics, but its env sets "
        "OFF, which turns that server off.",
    ]


def test_every_container_is_judged_not_only_those_before_a_clean_one() -> None:
    # A clean container first, then one each rule must still reach.
    clean = server("clean", readinessProbe=TCP)
    quiet = server("quiet", port=None)
    keeper = server("keeper", readinessProbe=TCP, livenessProbe=ALIVE)
    typo = server("typo", readinessProbe=TCP, livenessProbe={"tcpSocket": {"port": 9999}})
    obj = workload(
        "Deployment",
        clean,
        quiet,
        keeper,
        typo,
        annotations={"truegreen.io/keep-running": "keeper"},
    )
    model = workload_model(obj)
    assert model is not None
    assert sorted((rule.id, hit.container) for rule, hit in evaluate(model, Context())) == [
        ("probe-port-unlisted", "typo"),
        ("readiness-missing-no-port", "quiet"),
        ("restart-probe-on-keep-running", "keeper"),
    ]


def test_every_served_port_is_named_and_a_quiet_container_after_them_is_reached() -> None:
    app = server()
    app["ports"].append({"containerPort": 9090, "name": "metrics"})
    obj = workload("Deployment", app, server("quiet", port=None))
    assert _messages(obj) == [
        "readiness-missing: container app serves port 8080 (http), port 9090 (metrics) but has no "
        "readinessProbe: it counts as Ready as soon as it runs, so a rollout over a crash loop "
        "reports success.",
        "readiness-missing-no-port: container quiet declares no port and has no readinessProbe: "
        "rollout status only means the process started.",
    ]


def test_a_pod_without_a_rollout_is_told_what_really_happens() -> None:
    """A bare Pod (or a ReplicaSet) has no rollout to report success over a crash loop."""
    assert _messages(workload("Pod", server())) == [
        "readiness-missing: container app serves port 8080 (http) but has no readinessProbe: it "
        "counts as Ready as soon as it runs, so traffic reaches it before it listens and a crash "
        "loop looks like a working server."
    ]
    assert _messages(workload("ReplicaSet", server(port=None))) == [
        "readiness-missing-no-port: container app declares no port and has no readinessProbe: "
        "Ready only means the process started."
    ]


def test_a_startup_probe_is_said_to_hold_the_rollout_and_to_restart() -> None:
    startup = {"exec": {"command": ["cat", "/tmp/started"]}}
    assert _messages(workload("Deployment", server(startupProbe=startup))) == [
        "readiness-missing-after-startup: container app serves port 8080 (http) with a "
        "startupProbe but no readinessProbe: the startupProbe holds the rollout until it first "
        "passes (and restarts the container when it fails), but after that nothing takes the "
        "container out of its Service when it stops answering."
    ]


def test_an_unknown_field_is_named_with_the_field_it_resembles() -> None:
    assert _messages(workload("Deployment", server(readinessProbe=TCP, readinesProbe=TCP))) == [
        "unknown-field: container app has a field readinesProbe, which Kubernetes does not know "
        "(did you mean readinessProbe?): the API server refuses the object, or drops the field."
    ]
    assert _messages(workload("Deployment", server(readinessProbe=TCP, zzz=1))) == [
        "unknown-field: container app has a field zzz, which Kubernetes does not know: the API "
        "server refuses the object, or drops the field."
    ]


def test_a_startup_probe_holds_a_pod_not_ready_and_its_service_is_named() -> None:
    startup = {"exec": {"command": ["cat", "/tmp/started"]}}
    model = workload_model(workload("Pod", server(startupProbe=startup)))
    assert model is not None
    ((_, hit),) = evaluate(model, Context({"app": ("api",)}))
    assert (hit.message, dict(hit.values)) == (
        "container app serves port 8080 (http) with a startupProbe but no readinessProbe: "
        "Service api routes to it, and the startupProbe holds it not Ready until it first passes "
        "(and restarts the container when it fails), but after that nothing takes the container "
        "out of its Service when it stops answering.",
        {"port": "port 8080 (http)"},
    )
