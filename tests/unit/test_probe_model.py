"""The probe model the lint rules read (probes.py): what each field becomes, including the
fallbacks for fields a manifest leaves out or fills wrongly."""

from typing import Any

import pytest

from tests.unit.test_lint_rules import workload_model
from truegreen.lint.commands import always_succeeds as command_always_succeeds
from truegreen.lint.probes import (
    DISABLED_BY,
    IGNORE,
    KEEP_RUNNING,
    ContainerModel,
    DeclaredPort,
    DisabledServer,
    EnvSetting,
    Intent,
    Probe,
    ProbeKind,
    parse_intent,
    port_of,
    same_check,
    same_port,
)

READY = ProbeKind.READINESS


def _container(**spec: Any) -> ContainerModel:
    return ContainerModel.parse({"name": "app", **spec}, is_sidecar=False)


@pytest.mark.parametrize(
    ("spec", "probe"),
    [
        (
            {"httpGet": {"port": 8080, "path": "/ready"}},
            Probe(READY, "httpGet", 8080, "/ready", scheme="HTTP"),
        ),
        # defaults.go SetDefaults_HTTPGetAction: path "/", scheme HTTP
        ({"httpGet": {"port": "8080"}}, Probe(READY, "httpGet", 8080, "/", scheme="HTTP")),
        ({"httpGet": {"port": "http"}}, Probe(READY, "httpGet", "http", "/", scheme="HTTP")),
        ({"httpGet": {"port": ""}}, Probe(READY, "httpGet", None, "/", scheme="HTTP")),
        ({"httpGet": {"port": 80.5}}, Probe(READY, "httpGet", None, "/", scheme="HTTP")),
        ({"httpGet": {"port": True}}, Probe(READY, "httpGet", None, "/", scheme="HTTP")),
        (
            {
                "httpGet": {
                    "port": 443,
                    "path": "/h",
                    "scheme": "HTTPS",
                    "host": "10.0.0.1",
                    "httpHeaders": [
                        {"name": "B", "value": "2"},
                        {"name": "A", "value": "1"},
                        "junk",
                    ],
                }
            },
            Probe(
                READY,
                "httpGet",
                443,
                "/h",
                scheme="HTTPS",
                host="10.0.0.1",
                headers=(("A", "1"), ("B", "2")),
            ),
        ),
        ({"tcpSocket": {"port": 5432}}, Probe(READY, "tcpSocket", 5432, "")),
        ({"tcpSocket": {"port": 5432, "host": "db"}}, Probe(READY, "tcpSocket", 5432, host="db")),
        ({"grpc": {"port": 9090}}, Probe(READY, "grpc", 9090, "")),
        ({"grpc": {"port": 9090, "service": "live"}}, Probe(READY, "grpc", 9090, service="live")),
        ({"exec": {"command": ["cat", "/ready"]}}, Probe(READY, "exec", command=("cat", "/ready"))),
        ({"periodSeconds": 5}, Probe(READY, "", period=5)),  # no handler: the API refuses it
    ],
)
def test_a_probe_is_its_handler_and_target(spec: dict[str, Any], probe: Probe) -> None:
    assert Probe.parse(READY, spec) == probe


def test_a_shell_command_that_does_not_parse_can_fail() -> None:
    assert command_always_succeeds(["sh", "-c", "true"])
    assert not command_always_succeeds(["sh", "-c", "'true"])  # unbalanced quote


def test_a_container_model_keeps_names_ports_and_where_env_values_come_from() -> None:
    model = ContainerModel.parse(
        {
            "name": "app",
            "ports": [{"containerPort": 8080, "name": "http"}, {"containerPort": 9090}],
            "env": [
                {"name": "MODE", "value": "serve"},
                {"name": "EMPTY"},
                {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
                {"value": "nameless"},
            ],
        },
        is_sidecar=True,
    )
    assert model == ContainerModel(
        "app",
        (DeclaredPort(8080, "http"), DeclaredPort(9090, None)),
        (),
        (EnvSetting("MODE", "serve"), EnvSetting("EMPTY", ""), EnvSetting("TOKEN", None)),
        True,
    )
    assert (model.env_value("MODE"), model.env_value("TOKEN"), model.env_value("UNSET")) == (
        "serve",
        None,
        "",
    )
    assert (model.resolve("http"), model.resolve("metrics"), model.resolve(7000)) == (
        8080,
        None,
        7000,
    )


def test_a_container_without_a_name_is_named_empty_not_none() -> None:
    assert ContainerModel.parse({}, is_sidecar=False).name == ""


def test_no_annotations_declare_no_intent() -> None:
    assert parse_intent({}, {}) == Intent()
    assert parse_intent({KEEP_RUNNING: " a, ,b ", IGNORE: "x"}, {KEEP_RUNNING: "c"}) == Intent(
        frozenset({"a", "b", "c"}), (), frozenset({"x"})
    )


@pytest.mark.parametrize(
    ("value", "servers"),
    [
        ("8080=METRICS_OFF", (DisabledServer(8080, "METRICS_OFF"),)),
        ("http = OFF", (DisabledServer("http", "OFF"),)),
        ("8080", ()),
        ("8080=", ()),
        ("=OFF", ()),
        ("8080=A=B", ()),
    ],
)
def test_disabled_by_entries_need_a_port_and_one_env_var(
    value: str, servers: tuple[DisabledServer, ...]
) -> None:
    assert parse_intent({DISABLED_BY: value}).disabled_by == servers


def test_a_port_nobody_names_is_the_same_as_no_other_port() -> None:
    model = _container(ports=[{"containerPort": 8080, "name": "http"}])
    assert same_port(model, "http", 8080)
    assert not same_port(model, None, None)
    assert not same_port(model, None, 8080)
    assert not same_port(model, "metrics", "admin")  # both unknown: not the same port


def test_same_check_compares_ports_for_network_probes_only() -> None:
    model = _container()
    for handler in ("httpGet", "tcpSocket", "grpc"):
        assert not same_check(model, Probe(READY, handler, 8080), Probe(READY, handler, 9090))
        assert same_check(model, Probe(READY, handler, 8080), Probe(READY, handler, 8080))
    for other in (
        Probe(READY, "httpGet", 8080, scheme="HTTPS"),
        Probe(READY, "httpGet", 8080, host="10.0.0.1"),
        Probe(READY, "httpGet", 8080, headers=(("A", "1"),)),
        Probe(READY, "httpGet", 8080, service="x"),
    ):
        assert not same_check(model, Probe(READY, "httpGet", 8080), other)
        assert same_check(model, other, other)
    ready = Probe(READY, "exec", command=("cat", "/ready"))
    assert same_check(model, ready, Probe(ProbeKind.LIVENESS, "exec", command=("cat", "/ready")))
    assert not same_check(model, ready, Probe(READY, "exec", command=("cat", "/live")))


def test_a_bare_pod_s_labels_and_name_are_its_own() -> None:
    pod = {
        "kind": "Pod",
        "metadata": {"name": "trainer", "labels": {"app": "train"}},
        "spec": {"containers": [{"name": "app"}], "restartPolicy": "Never"},
    }
    model = workload_model(pod)
    assert model is not None
    assert (model.name, model.labels, model.is_batch) == ("trainer", {"app": "train"}, True)
    unnamed = workload_model({**pod, "metadata": {}})
    assert unnamed is not None
    assert unnamed.name == ""


@pytest.mark.parametrize(
    ("written", "port"),
    [
        (8080, 8080),
        ("8080", 8080),
        ("http", "http"),
        ("9999999999", 9999999999),
        ("99999999999", "99999999999"),  # more digits than any int32: text, never int()
        ("1" + "0" * 5000, "1" + "0" * 5000),  # int() refuses past 4,300 digits
        ("\u00b2", "\u00b2"),  # `²` is a digit to str.isdigit(), not to int()
        ("\u0661", "\u0661"),  # Arabic-Indic one: no port number either
        ("", None),
        (True, None),
        (None, None),
    ],
)
def test_a_port_is_a_number_only_when_written_in_a_few_ascii_digits(
    written: object, port: object
) -> None:
    assert port_of(written) == port
