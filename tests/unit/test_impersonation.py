"""The impersonation headers, as client-go's NewImpersonatingRoundTripper writes them
(transport/round_trippers_test.go TestImpersonationRoundTripper and TestHeaderEscapeRoundTrip
hold the cases below), and whom a kubeconfig user with kubectl's flags over it acts as."""

from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import yaml

from truegreen.cluster.impersonation import Impersonation, escaped_key, impersonation
from truegreen.cluster.kubeconfig import resolve
from truegreen.cluster.settings import ActAs, ConnectionSettings
from truegreen.errors import ConnectionSetupError, UsageError
from truegreen.exitcodes import ExitCode


def _lowered(headers: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    """Header names compare without case (Go canonicalizes them, the server lowers them)."""
    return [(name.lower(), value) for name, value in headers]


def test_every_part_is_a_header_and_a_group_or_an_extra_value_one_each() -> None:
    acting = Impersonation(
        "user", "uid-a", ("one", "two"), (("first", ("A", "a")), ("second", ("B", "b")))
    )
    assert _lowered(acting.headers()) == [
        ("impersonate-user", "user"),
        ("impersonate-uid", "uid-a"),
        ("impersonate-group", "one"),
        ("impersonate-group", "two"),
        ("impersonate-extra-first", "A"),
        ("impersonate-extra-first", "a"),
        ("impersonate-extra-second", "B"),
        ("impersonate-extra-second", "b"),
    ]
    assert Impersonation("user").headers() == (("Impersonate-User", "user"),)


@pytest.mark.parametrize(
    ("key", "header"),
    [
        ("test.example.com/thing.thing", "test.example.com%2Fthing.thing"),
        (
            "test.example.com/thing.thing%20another.thing",
            "test.example.com%2Fthing.thing%2520another.thing",
        ),
        ("alph4num3r1c", "alph4num3r1c"),
        ("example.com/ᛒᚥ", "example.com%2F%E1%9B%92%E1%9A%A5"),
        ("with space", "with%20space"),
    ],
)
def test_an_extra_s_key_is_escaped_as_client_go_escapes_it(key: str, header: str) -> None:
    assert escaped_key(key) == header
    assert unquote(escaped_key(key)) == key  # the server's url.PathUnescape gets it back


def test_the_kubeconfig_user_acts_as_it_says_and_each_flag_replaces_its_part() -> None:
    user: dict[str, Any] = {
        "as": "bob",
        "as-uid": "9",
        "as-groups": ["ops"],
        "as-user-extra": {"scopes": ["view", "edit"]},
    }
    assert impersonation("u", user, ActAs()) == Impersonation(
        "bob", "9", ("ops",), (("scopes", ("view", "edit")),)
    )
    flagged = impersonation("u", user, ActAs("jane", groups=("a", "b")))
    assert flagged == Impersonation("jane", "9", ("a", "b"), (("scopes", ("view", "edit")),))
    assert impersonation("u", {}, ActAs()) is None
    assert impersonation("u", {}, ActAs("jane")) == Impersonation("jane")


def test_groups_or_a_uid_without_a_user_are_refused_as_kubectl_refuses_them() -> None:
    # validation.go: "requesting uid, groups or user-extra for u without impersonating a user"
    with pytest.raises(UsageError) as flagged:
        impersonation("u", {}, ActAs(uid="7", groups=("g",)))
    assert flagged.value.line() == (
        "--as-uid and --as-group without --as: kubectl acts as a uid or groups only together "
        "with a user. add --as USER"
    )
    assert flagged.value.exit_code is ExitCode.USAGE
    with pytest.raises(ConnectionSetupError) as written:
        impersonation("u", {"as-user-extra": {"scopes": ["x"]}}, ActAs())
    assert written.value.line() == (
        "the kubeconfig user 'u' names a uid, groups or extras to act as, but no user: kubectl "
        "refuses that too. add `as:` to the user in the kubeconfig, or pass --as"
    )


def _kubeconfig(path: Path, server: str, user: dict[str, Any]) -> Path:
    config = {
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize("server", ["https://c.example", "http://c.example"])
def test_impersonation_is_kept_whatever_the_scheme(tmp_path: Path, server: str) -> None:
    """client_config.go sets Impersonate before it reads credentials, which only https gets."""
    path = _kubeconfig(tmp_path / "kc", server, {"token": "t", "as": "bob"})
    resolved = resolve(ConnectionSettings(kubeconfig=path, act_as=ActAs(groups=("g",))))
    assert resolved.impersonation == Impersonation("bob", groups=("g",))
