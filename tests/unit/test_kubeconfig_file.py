"""One kubeconfig file is read as client-go's loader reads it: a value of the wrong type anywhere,
or two entries of one name, refuses the whole file; nulls, unknown keys and a key spelled in
another case are what Go's decoding makes of them. Each refusal here was checked against
kubectl 1.32 on the same file (its words in the comment); tests/e2e/test_kubeconfig_kubectl.py
runs the real kubectl on a sample of them."""

from pathlib import Path
from typing import Any

import pytest
import yaml

from truegreen.cluster.kubeconfig import resolve
from truegreen.cluster.kubeconfig_file import duplicate_name, load_kubeconfig, type_problem
from truegreen.cluster.settings import ConnectionSettings
from truegreen.errors import ConnectionSetupError
from truegreen.exitcodes import ExitCode


def _config(
    cluster: dict[str, Any] | None = None,
    user: dict[str, Any] | None = None,
    context: dict[str, Any] | None = None,
    **top: Any,
) -> dict[str, Any]:
    return {
        "clusters": [{"name": "c", "cluster": {"server": "https://c.example", **(cluster or {})}}],
        "users": [{"name": "u", "user": {"token": "t", **(user or {})}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u", **(context or {})}}],
        "current-context": "x",
        **top,
    }


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        # json: cannot unmarshal number into Go struct field AuthInfo.users.user.token of type
        # string
        (_config(user={"token": 12345}), "user 'u': token is a number, where kubectl reads text"),
        (
            _config(user={"password": 1.5}),
            "user 'u': password is a number, where kubectl reads text",
        ),
        # json: cannot unmarshal bool into Go struct field Context.contexts.context.namespace …
        (
            _config(context={"namespace": True}),
            "context 'x': namespace is true (YAML reads an unquoted yes, no, on or off as true or "
            "false), where kubectl reads text",
        ),
        # … Cluster.clusters.cluster.insecure-skip-tls-verify of type bool
        (
            _config(cluster={"insecure-skip-tls-verify": "true"}),
            "cluster 'c': insecure-skip-tls-verify is text, where kubectl reads true or false",
        ),
        # … AuthInfo.users.user.as-groups of type []string
        (
            _config(user={"as": "a", "as-groups": "admins"}),
            "user 'u': as-groups is text, where kubectl reads a list of text",
        ),
        (
            _config(user={"as": "a", "as-groups": ["ok", 7]}),
            "user 'u': as-groups[1] is a number, where kubectl reads text",
        ),
        # … AuthInfo.users.user.as-user-extra of type []string
        (
            _config(user={"as": "a", "as-user-extra": {"scopes": "one"}}),
            "user 'u': as-user-extra.scopes is text, where kubectl reads a list of text",
        ),
        # … ExecConfig.users.user.exec.args of type string
        (
            _config(user={"exec": {"command": "x", "args": [1]}}),
            "user 'u': exec.args[0] is a number, where kubectl reads text",
        ),
        (
            _config(user={"exec": {"env": [{"name": "A", "value": 1}]}}),
            "user 'u': exec.env[0].value is a number, where kubectl reads text",
        ),
        (
            _config(user={"auth-provider": {"name": "oidc", "config": {"id-token": 5}}}),
            "user 'u': auth-provider.config.id-token is a number, where kubectl reads text",
        ),
        (_config(user={"exec": "login"}), "user 'u': exec is text, where kubectl reads a mapping"),
        # … Config.clusters of type []v1.NamedCluster
        ({"clusters": {}}, "clusters is a mapping, where kubectl reads a list of entries"),
        # … NamedCluster.clusters.name of type string
        ({"clusters": [{"name": 5}]}, "clusters[0].name is a number, where kubectl reads text"),
        (
            {"users": [{"name": "u", "user": []}]},
            "user 'u' is a list, where kubectl reads a mapping",
        ),
        # … Config.current-context of type string
        (
            {**_config(), "current-context": 5},
            "current-context is a number, where kubectl reads text",
        ),
        # … Preferences.preferences.colors of type bool
        (
            _config(preferences={"colors": "x"}),
            "preferences.colors is text, where kubectl reads true or false",
        ),
        # illegal base64 data at input byte 0 (in a cluster no context uses)
        (
            {"clusters": [{"name": "d", "cluster": {"certificate-authority-data": "abc"}}]},
            "cluster 'd': certificate-authority-data is not base64",
        ),
        # json: unsupported value: +Inf (anywhere, even under a key kubectl ignores)
        (
            _config(cluster={"extensions": [{"name": "e", "extension": {"a": [float("inf")]}}]}),
            "cluster 'c': extensions[0].extension holds inf, which kubectl cannot read",
        ),
        (_config(unknown={"deep": [float("nan")]}), "unknown holds nan, which kubectl cannot read"),
    ],
)
def test_a_value_of_the_wrong_type_refuses_the_file_as_kubectl_does(
    config: dict[str, Any], expected: str
) -> None:
    assert type_problem(config) == expected


@pytest.mark.parametrize(
    "config",
    [
        _config(user={"Token": 5}),  # keys match case by case: `Token` is not `token`
        _config(cluster={"unknown": [1, {"a": True}]}),  # unknown keys are ignored
        {"clusters": [None, {"name": "d"}], "users": None},  # nulls are zero values
        _config(cluster={"certificate-authority-data": "YWJj\nZA=="}),  # Go skips line breaks
        _config(user={"as": "a", "as-user-extra": {"scopes": None}, "as-groups": [None]}),
    ],
)
def test_what_kubectl_reads_is_read(config: dict[str, Any]) -> None:
    assert type_problem(config) is None
    assert duplicate_name(config) is None


@pytest.mark.parametrize("section", ["clusters", "users", "contexts"])
def test_two_entries_of_one_name_refuse_the_file(section: str) -> None:
    # error converting *[]NamedCluster into *map[string]*api.Cluster: duplicate name "c" in list
    config = _config()
    config[section] = [*config[section], *config[section]]
    name = config[section][0]["name"]
    assert duplicate_name(config) == f"two {section} are named {name!r}"
    across = _config()
    across[section] = [{"name": "one"}, {"name": "two"}]
    assert duplicate_name(across) is None


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_refused_file_is_one_line_naming_it(tmp_path: Path) -> None:
    path = _write(tmp_path / "kc", yaml.safe_dump(_config(user={"token": 12345})))
    with pytest.raises(ConnectionSetupError) as caught:
        resolve(ConnectionSettings(kubeconfig=path))
    assert caught.value.line() == (
        f"kubeconfig {path} is not usable: user 'u': token is a number, where kubectl reads "
        "text. check the file, or pass another with --kubeconfig"
    )
    assert caught.value.exit_code is ExitCode.UNKNOWN


def test_a_billion_laughs_is_refused_before_it_grows(tmp_path: Path) -> None:
    """go-yaml's alias ratio (kubectl: `yaml: document contains excessive aliasing`): nine
    levels of ten aliases each would be a billion values."""
    levels = ["    a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"    a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 9)]
    text = "clusters:\n- name: c\n  cluster:\n    server: https://c\n    extensions:\n"
    text += "    - name: e\n      extension:\n" + "\n".join("    " + line for line in levels)
    path = _write(tmp_path / "kc", text + "\n")
    assert path.stat().st_size < 1200, "precondition: a small file"
    with pytest.raises(ConnectionSetupError) as caught:
        load_kubeconfig(path)
    assert caught.value.line().startswith(f"kubeconfig {path} cannot be read at line ")
    assert ": document contains excessive aliasing. " in caught.value.line()


def test_an_alias_holding_itself_is_one_line_not_a_crash(tmp_path: Path) -> None:
    """kubectl: `yaml: anchor 'a' value contains itself`; a recursive value would send the
    checks (and a plugin's cluster information) round for ever."""
    text = "clusters:\n- name: c\n  cluster:\n    extensions:\n    - name: e\n"
    path = _write(tmp_path / "kc", text + "      extension: &a\n        - *a\n")
    with pytest.raises(ConnectionSetupError) as caught:
        load_kubeconfig(path)
    assert caught.value.line() == (
        f"kubeconfig {path} cannot be read: it is nested too deeply, or an alias holds itself. "
        "fix the file, or pass another with --kubeconfig"
    )


def test_a_repeated_key_takes_its_last_value_and_only_the_first_document_is_read(
    tmp_path: Path,
) -> None:
    """go-yaml's lenient decoding, as kubectl's loader uses it (both connect to the second
    server, and a broken second document goes unread)."""
    text = (
        "clusters:\n- name: c\n  cluster:\n    server: https://first\n    server: https://second\n"
    )
    loaded = load_kubeconfig(_write(tmp_path / "kc", text + "---\nkind: [\n"))
    assert loaded["clusters"][0]["cluster"] == {"server": "https://second"}


def test_an_empty_file_is_an_empty_kubeconfig(tmp_path: Path) -> None:
    assert load_kubeconfig(_write(tmp_path / "kc", "# nothing yet\n")) == {}
