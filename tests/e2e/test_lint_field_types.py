"""lint refuses values of the wrong type as the API server does, and never breaks on them.

The API server decodes an object into k8s.io/api's Go types and refuses a value of the wrong
JSON type whatever the field validation; `helm upgrade` printed `json: cannot unmarshal number
into Go struct field EnvVar.spec.template.spec.containers.env.value of type string` for an
unquoted env value (wandb/helm-charts pull request 168).
"""

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli

INCIDENT = Path(__file__).resolve().parents[2] / "examples" / "manifests" / "incident.yaml"


def _deployment(pod_spec: dict[str, Any]) -> str:
    return json.dumps(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "train"},
            "spec": {"template": {"spec": pod_spec}},
        }
    )


def _web(**fields: Any) -> dict[str, Any]:
    """A container that passes every rule: a declared port, probed for readiness."""
    container: dict[str, Any] = {
        "name": "web",
        "image": "registry.example.com/web:1",
        "ports": [{"containerPort": 8080, "name": "http"}],
        "readinessProbe": {"httpGet": {"port": "http", "path": "/ready"}},
    }
    container.update(fields)
    return container


def _wrong(pod_spec: dict[str, Any], tmp_path: Path) -> list[tuple[str, str | None]]:
    path = tmp_path / "web.json"
    path.write_text(_deployment(pod_spec))
    result = run_cli("lint", str(path), "-o", "json")
    findings = result.json()["findings"]
    assert result.exit_code == (2 if findings else 0), result.stdout
    assert all(f["rule"] == "wrong-field-type" for f in findings), findings
    return [(f["message"], f["container"]) for f in findings]


def test_an_unquoted_env_value_is_refused_in_the_api_server_s_terms(tmp_path: Path) -> None:
    assert _wrong({"containers": [_web()]}, tmp_path) == []  # the precondition: a clean pod
    spec = {
        "containers": [
            _web(env=[{"name": "WORKERS", "value": "4"}, {"name": "PORT", "value": 8080}])
        ]
    }
    assert _wrong(spec, tmp_path) == [
        (
            "container web: containers[0].env[1].value is a number, but Kubernetes takes a "
            "string there: the API server cannot decode it and refuses the object.",
            "web",
        )
    ]


@pytest.mark.parametrize(
    ("pod_spec", "path", "found", "expected"),
    [
        ({"containers": 5}, "containers", "a number", "a list of objects"),
        ({"containers": "web"}, "containers", "a string", "a list of objects"),
        ({"containers": [_web(), "sidecar"]}, "containers[1]", "a string", "an object"),
        ({"containers": [_web()], "initContainers": 7}, "initContainers", "a number", "a list"),
        (
            {"containers": [_web()], "hostNetwork": "true"},
            "hostNetwork",
            'the string "true"',
            "true or false",
        ),
        (
            {"containers": [_web(ports=[{"containerPort": "8080", "name": "http"}])]},
            "containers[0].ports[0].containerPort",
            'the string "8080"',
            "a whole number",
        ),
        (
            {"containers": [_web(ports=[{"containerPort": 2**31, "name": "http"}])]},
            "containers[0].ports[0].containerPort",
            "the number 2147483648",  # one past int32
            "a whole number",
        ),
        (
            {
                "containers": [
                    _web(readinessProbe={"httpGet": {"port": 8080}, "periodSeconds": 1.5})
                ]
            },
            "containers[0].readinessProbe.periodSeconds",
            "the number 1.5",
            "a whole number",
        ),
        (
            {"containers": [_web(readinessProbe={"httpGet": 8080})]},
            "containers[0].readinessProbe.httpGet",
            "a number",
            "an object",
        ),
        (
            {"containers": [_web(readinessProbe={"grpc": {"port": "http"}})]},
            "containers[0].readinessProbe.grpc.port",  # GRPCAction.Port is an int32, no name
            'the string "http"',
            "a whole number",
        ),
        (
            {"containers": [_web(args=["--port", 8080])]},
            "containers[0].args[1]",
            "a number",
            "a string",
        ),
        (
            {"containers": [_web(env=[{"name": "DEBUG", "value": True}])]},
            "containers[0].env[0].value",
            "a true/false value",
            "a string",
        ),
    ],
)
def test_each_wrong_type_is_named_with_its_path_and_the_type_kubernetes_takes(
    pod_spec: dict[str, Any], path: str, found: str, expected: str, tmp_path: Path
) -> None:
    [(message, _)] = _wrong(pod_spec, tmp_path)
    assert f": {path} is {found}, but Kubernetes takes {expected}" in message


# Each planted number is a password, token or image written unquoted where a string goes: the
# finding must name its field and type, and print none of them (docs/ci.md: the job's log, and
# the code scanning a SARIF upload feeds, are no place for a manifest's password).
_SECRETS = """\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: train}
spec:
  containers:
  - name: c
    image: 918273645006
    command: [run, 918273645005]
    args: ["--password", 918273645004]
    workingDir: 918273645009
    ports: [{containerPort: 8080}]
    readinessProbe:
      httpGet: {path: 918273645010, host: 918273645011, port: 8080}
    env:
    - {name: DB_PASSWORD, value: 918273645002}
    - {name: PIN_SECRET, value: 918273645003.5}
    - {name: TOKEN, value: [918273645012]}
  - name: d
    image: x
    env: "DB_PASSWORD=918273645008"
"""


@pytest.mark.parametrize("output", ["text", "json", "sarif"])
def test_a_value_that_may_be_a_secret_is_named_by_its_type_and_never_printed(
    tmp_path: Path, output: str
) -> None:
    (tmp_path / "a.yaml").write_text(_SECRETS)
    result = run_cli("lint", str(tmp_path / "a.yaml"), "-o", output)
    assert result.exit_code == 2, result.stdout
    assert "91827364" not in result.stdout + result.stderr


def test_the_secret_fields_findings_name_each_field_and_type(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(_SECRETS)
    result = run_cli("lint", str(tmp_path / "a.yaml"), "-o", "json")
    said = sorted(
        (f["container"], f["message"].partition(", but")[0])
        for f in result.json()["findings"]
        if f["rule"] == "wrong-field-type"
    )
    assert said == [
        ("c", "container c: containers[0].args[1] is a number"),
        ("c", "container c: containers[0].command[1] is a number"),
        ("c", "container c: containers[0].env[0].value is a number"),
        ("c", "container c: containers[0].env[1].value is a number"),
        ("c", "container c: containers[0].env[2].value is a list"),
        ("c", "container c: containers[0].image is a number"),
        ("c", "container c: containers[0].readinessProbe.httpGet.host is a number"),
        ("c", "container c: containers[0].readinessProbe.httpGet.path is a number"),
        ("c", "container c: containers[0].workingDir is a number"),
        ("d", "container d: containers[1].env is a string"),
    ]


def test_null_and_whole_floats_are_what_the_api_server_takes(tmp_path: Path) -> None:
    """Go's decoder reads a JSON null as the zero value; a YAML `8080.0` reaches the API server
    as the JSON number 8080 (sigs.k8s.io/yaml marshals the float it read)."""
    spec = {
        "containers": [
            _web(ports=[{"containerPort": 8080.0, "name": "http"}], env=None, args=None)
        ],
        "initContainers": None,
    }
    assert _wrong(spec, tmp_path) == []


def test_a_wrong_type_is_a_finding_and_the_other_files_are_still_linted(tmp_path: Path) -> None:
    """`initContainers: 7` beside a container another rule names is one finding; no file's
    findings are lost."""
    (tmp_path / "a.yaml").write_text(
        _deployment(
            {
                "initContainers": 7,
                "containers": [{"name": "api", "image": "x:1", "ports": [{"containerPort": 80}]}],
            }
        )
    )
    (tmp_path / "b.yaml").write_text(INCIDENT.read_text())
    result = run_cli("lint", str(tmp_path), "-o", "json")
    assert result.exit_code == 2, result.stderr
    found = sorted(
        (Path(f["file"]).name, f["rule"], f["container"]) for f in result.json()["findings"]
    )
    assert found == [
        ("a.yaml", "readiness-missing", "api"),
        ("a.yaml", "wrong-field-type", None),
        ("b.yaml", "readiness-missing", "runner"),
        ("b.yaml", "restart-probe-on-keep-running", "runner"),
    ]


@pytest.mark.parametrize(
    ("document", "where"),
    [
        ({"kind": "Pod", "apiVersion": "v1", "spec": 5}, "spec is a number"),
        ({"kind": "Deployment", "apiVersion": "apps/v1", "spec": 5}, "spec is a number"),
        (
            {"kind": "Deployment", "apiVersion": "apps/v1", "spec": {"template": 5}},
            "spec.template is a number",
        ),
        (
            {"kind": "StatefulSet", "apiVersion": "apps/v1", "spec": {"template": {"spec": 5}}},
            "spec.template.spec is a number",
        ),
        (
            {"kind": "Job", "apiVersion": "batch/v1", "spec": {"template": {"spec": "x"}}},
            "spec.template.spec is a string",
        ),
        (
            {"kind": "CronJob", "apiVersion": "batch/v1", "spec": {"jobTemplate": [1]}},
            "spec.jobTemplate is a list",
        ),
    ],
)
def test_a_field_on_the_way_to_the_pod_spec_that_is_no_object_is_refused(
    tmp_path: Path, document: dict[str, Any], where: str
) -> None:
    """The API server cannot decode `spec: 5` into a PodSpec and refuses the object; lint
    says so, never counts it checked with nothing found."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**document, "metadata": {"name": "x", "namespace": "train"}}))
    result = run_cli("lint", str(path), "-o", "json")
    findings = result.json()["findings"]
    assert [(f["rule"], f["message"]) for f in findings] == [
        (
            "wrong-field-type",
            f"the object: {where}, but Kubernetes takes an object (key: value pairs) there: the "
            "API server cannot decode it and refuses the object.",
        )
    ]
    assert result.exit_code == 2
