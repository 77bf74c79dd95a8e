"""Connection settings resolve like kubectl's, and a broken kubeconfig is one clear error."""

from pathlib import Path

import pytest
import yaml

from truegreen.cluster.kubeconfig import resolve
from truegreen.cluster.settings import ConnectionSettings
from truegreen.errors import ConnectionSetupError
from truegreen.exitcodes import ExitCode


def _config(
    server: str = "https://a.example:6443", namespace: str | None = None
) -> dict[str, object]:
    context: dict[str, str] = {"cluster": "a", "user": "a"}
    if namespace:
        context["namespace"] = namespace
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "a", "cluster": {"server": server}}],
        "users": [{"name": "a", "user": {"token": "s3cr3t-token-value"}}],
        "contexts": [{"name": "ctx-a", "context": context}],
        "current-context": "ctx-a",
    }


def _write(path: Path, content: object) -> Path:
    path.write_text(yaml.safe_dump(content) if not isinstance(content, str) else content)
    return path


@pytest.fixture(autouse=True)
def _no_ambient_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def test_namespace_precedence(tmp_path: Path) -> None:
    with_ns = _write(tmp_path / "a", _config(namespace="train"))
    without = _write(tmp_path / "b", _config())
    assert resolve(ConnectionSettings(kubeconfig=with_ns)).namespace == "train"
    assert resolve(ConnectionSettings(kubeconfig=with_ns, namespace="x")).namespace == "x"
    assert resolve(ConnectionSettings(kubeconfig=without)).namespace == "default"


def test_kubeconfig_env_merges_first_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _config(server="https://first.example")
    first.pop("current-context")
    second = _config(server="https://second.example", namespace="ns2")
    monkeypatch.setenv(
        "KUBECONFIG", f"{_write(tmp_path / '1', first)}:{_write(tmp_path / '2', second)}"
    )
    resolved = resolve(ConnectionSettings())
    # Cluster "a" comes from the first file; the current context only from the second.
    assert resolved.server == "https://first.example"
    assert resolved.namespace == "default"  # context ctx-a is the first file's, without namespace


def test_home_kubeconfig_is_the_fallback(tmp_path: Path) -> None:
    home_config = tmp_path / "home" / ".kube" / "config"
    home_config.parent.mkdir(parents=True)
    _write(home_config, _config(server="https://home.example"))
    assert resolve(ConnectionSettings()).server == "https://home.example"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("clusters: [unclosed", "is not valid YAML at line 1"),
        ("just a string", "is not a kubeconfig"),
        ({"clusters": "nope"}, "its clusters entry is not a list"),
        ({"clusters": [{"name": "a"}]}, "an entry under clusters has no cluster settings"),
    ],
)
def test_broken_kubeconfig_is_one_clear_line(
    tmp_path: Path, content: object, expected: str
) -> None:
    path = _write(tmp_path / "broken", content)
    with pytest.raises(ConnectionSetupError) as caught:
        resolve(ConnectionSettings(kubeconfig=path))
    line = caught.value.line()
    assert expected in line
    assert str(path) in line
    assert "\n" not in line
    assert caught.value.exit_code is ExitCode.UNKNOWN


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConnectionSetupError, match=r"cannot read kubeconfig .*No such file"):
        resolve(ConnectionSettings(kubeconfig=tmp_path / "absent"))


def test_missing_context_lists_the_known_ones(tmp_path: Path) -> None:
    path = _write(tmp_path / "kc", _config())
    with pytest.raises(ConnectionSetupError) as caught:
        resolve(ConnectionSettings(kubeconfig=path, context="prod"))
    assert caught.value.line() == (
        f"context 'prod' is not in kubeconfig {path}: it has ctx-a. "
        "pass one of those with --context"
    )


def test_no_configuration_at_all() -> None:
    with pytest.raises(ConnectionSetupError, match="no cluster is configured"):
        resolve(ConnectionSettings())


def test_errors_never_quote_credentials(tmp_path: Path) -> None:
    config = _config()
    config["contexts"] = [{"name": "ctx-a", "context": {"cluster": "missing", "user": "a"}}]
    path = _write(tmp_path / "kc", config)
    with pytest.raises(ConnectionSetupError) as caught:
        resolve(ConnectionSettings(kubeconfig=path))
    assert "s3cr3t-token-value" not in caught.value.line()
