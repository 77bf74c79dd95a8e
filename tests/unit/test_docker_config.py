"""A registry login's entry as the kubelet reads it: kubernetes/kubernetes
pkg/credentialprovider/config.go (DockerConfigEntry.UnmarshalJSON, decodeDockerConfigFieldAuth,
v1.33), and what refresh's client sends from it (refresh/registry.py)."""

import base64
import json

import pytest

from truegreen.docker_config import EntryError, EntryLogin, go_base64, login_entries, read_entry
from truegreen.images import parse_image
from truegreen.refresh.registry import PullCredentials, RegistryLogin

SECRET = "s3cret-pw-9"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("field", "decoded"),
    [
        ("cm9ib3Q6cHc=", b"robot:pw"),  # padded: StdEncoding
        ("cm9ib3Q6cHc", b"robot:pw"),  # unpadded: RawStdEncoding
        ("YQ==", b"a"),
        ("YQ", b"a"),
        ("YR==", b"a"),  # Go's decoders are not strict: the bits past the last byte are ignored
        ("YWJj", b"abc"),  # no padding needed: either decoder
        ("YQ==\n", b"a"),  # `\r` and `\n` are skipped; TrimSpace sees the `=`
        ("Y\r\nQ", b"a"),
        ("", b""),
    ],
)
def test_base64_as_the_kubelet_decodes_an_auth(field: str, decoded: bytes) -> None:
    assert go_base64(field) == decoded


@pytest.mark.parametrize(
    "field",
    [
        "%%%",
        "YQ=",  # padded, but short of a quantum
        "YQ===",
        "====",
        "YQ==YQ==",  # data after the padding
        "Y",  # one character past a quantum: no byte
        "YQ=x",  # `=` inside: Raw refuses it
        "YQ== ",  # Std refuses the space TrimSpace looked past
        " YQ==",
        "Y Q",
        "YQ-_",  # the URL alphabet
        "YQé",
    ],
)
def test_base64_the_kubelet_refuses(field: str) -> None:
    assert go_base64(field) is None


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (
            {"username": "robot", "password": "NEW", "auth": _b64(b"robot:OLD")},
            EntryLogin("robot", "OLD", from_auth=True),
        ),
        ({"username": "robot", "password": "pw"}, EntryLogin("robot", "pw", from_auth=False)),
        ({"auth": _b64(b"robot:a:b")}, EntryLogin("robot", "a:b", from_auth=True)),
        ({"auth": _b64(b":pw")}, EntryLogin("", "pw", from_auth=True)),
        ({"auth": "", "username": "u"}, EntryLogin("u", "", from_auth=False)),
        ({"auth": None, "username": "u", "password": None}, EntryLogin("u", "", from_auth=False)),
        ({"Auth": _b64(b"robot:pw")}, EntryLogin("robot", "pw", from_auth=True)),  # any case
        ({"USERNAME": "u", "Password": "p"}, EntryLogin("u", "p", from_auth=False)),
        ({"u\u017fername": "u", "pa\u017f\u017fword": "p"}, EntryLogin("u", "p", from_auth=False)),
        ({"email": "a@example.com", "identitytoken": 7}, EntryLogin("", "", from_auth=False)),
        (None, EntryLogin("", "", from_auth=False)),
        ({"auth": _b64(b"robot:\xff")}, None),  # not UTF-8: not sendable from here
    ],
)
def test_what_the_kubelet_reads_from_an_entry(entry: object, expected: EntryLogin | None) -> None:
    assert read_entry(entry) == expected


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ({"auth": "%%%"}, "its auth is not base64"),
        ({"username": "robot", "password": "pw", "auth": "%%%"}, "its auth is not base64"),
        ({"auth": _b64(b"no-colon-here")}, "its auth is not base64 of a user name, ':'"),
        ({"username": 7}, "its username is not text"),
        ({"Password": ["x"]}, "its password is not text"),
        ({"email": True}, "its email is not text"),
        ("text", "is not a JSON object"),
        ([1], "is not a JSON object"),
    ],
)
def test_an_entry_the_kubelet_cannot_read(entry: object, reason: str) -> None:
    with pytest.raises(EntryError, match=reason) as raised:
        read_entry(entry)
    assert "no-colon-here" not in str(raised.value)


def test_an_entry_s_repr_hides_the_login() -> None:
    assert SECRET not in repr(EntryLogin("robot", SECRET, from_auth=True))


def _config(auths: dict[str, object]) -> tuple[str, str]:
    return ".dockerconfigjson", _b64(json.dumps({"auths": auths}).encode())


def test_refresh_sends_the_login_the_kubelet_reads() -> None:
    auths: dict[str, object] = {
        "a.example.com": {"username": "robot", "password": "NEW", "auth": _b64(b"robot:OLD")},
        "b.example.com": {"auth": _b64(b"robot:pw").rstrip("=")},
        # An empty password, as `auth` gives it: as spelt out, nothing to send (containerd's
        # doBearerAuth sends credentials only with a password; basic auth: none at all).
        "c.example.com": {"auth": _b64(b"robot:")},
        "d.example.com": {"username": "robot"},  # a user name alone: no login
        "e.example.com": {"auth": _b64(b":pw")},  # no user name: no login
    }
    logins = PullCredentials.from_docker_configs([_config(auths)])
    assert logins.entries == (
        ("a.example.com", RegistryLogin("a.example.com", "robot", "OLD")),
        ("b.example.com", RegistryLogin("b.example.com", "robot", "pw")),
        ("c.example.com", None),
        ("d.example.com", None),
        ("e.example.com", None),
    )
    image = parse_image("b.example.com/team/app:1")
    assert logins.applying_to(image) == [RegistryLogin("b.example.com", "robot", "pw")]
    assert logins.applying_to(parse_image("d.example.com/team/app:1")) == []


def test_refresh_sends_nothing_from_a_login_the_kubelet_cannot_read_whole() -> None:
    """One entry the kubelet cannot read fails json.Unmarshal of the whole login
    (pkg/credentialprovider/secrets/secrets.go, MakeDockerKeyring): none of it is sent."""
    damaged = _config(
        {"a.example.com": {"auth": _b64(b"robot:pw")}, "b.example.com": {"auth": "%%%"}}
    )
    good = _config({"c.example.com": {"auth": _b64(b"robot:pw")}})
    logins = PullCredentials.from_docker_configs([damaged, good]).entries
    assert logins == (("c.example.com", RegistryLogin("c.example.com", "robot", "pw")),)


@pytest.mark.parametrize(
    ("key", "parsed", "entries"),
    [
        (".dockerconfigjson", {}, {}),  # no `auths`: a login of no entries
        (".dockerconfigjson", None, {}),
        (".dockerconfigjson", {"auths": None}, {}),
        (".dockerconfigjson", {"credHelpers": {"a.example.com": "ecr"}}, {}),
        (".dockerconfigjson", {"AUTHS": {"a.example.com": {}}}, {"a.example.com": {}}),
        (
            ".dockerconfigjson",
            {"auths": {"a.example.com": {}}, "Auths": {"b.example.com": None}},
            {"a.example.com": {}, "b.example.com": None},
        ),
        (".dockerconfigjson", {"auths": {"a.example.com": {}}, "AUTHS": None}, {}),
        (".dockercfg", None, {}),
        (".dockercfg", {"a.example.com": {}}, {"a.example.com": {}}),
    ],
)
def test_a_login_s_entries_as_json_unmarshal_fills_the_kubelet_s_struct(
    key: str, parsed: object, entries: dict[str, object]
) -> None:
    """kubernetes/kubernetes pkg/credentialprovider/secrets/secrets.go MakeDockerKeyring
    unmarshals a `.dockerconfigjson` into DockerConfigJSON{Auths `json:"auths"`}: encoding/json
    matches the member in any case, each such member in turn (null empties the map, an object
    adds to it), and a missing one leaves no entries, which is no error."""
    assert login_entries(key, parsed) == entries


@pytest.mark.parametrize(
    ("key", "parsed", "reason"),
    [
        (".dockerconfigjson", [1, 2], "is not a JSON object"),
        (".dockerconfigjson", "text", "is not a JSON object"),
        (".dockerconfigjson", {"auths": [1]}, "its auths is not a JSON object"),
        (".dockerconfigjson", {"Auths": "x"}, "its auths is not a JSON object"),
        (".dockercfg", [1], "is not a JSON object"),
    ],
)
def test_a_login_json_unmarshal_refuses(key: str, parsed: object, reason: str) -> None:
    with pytest.raises(EntryError, match=f"^{reason}$"):
        login_entries(key, parsed)


def test_refresh_reads_a_login_without_auths_as_none() -> None:
    """`{}` is a valid `.dockerconfigjson` (the API server checks only that it is JSON:
    pkg/apis/core/validation ValidateSecret) that holds no login."""
    empty = (".dockerconfigjson", _b64(b"{}"))
    upper = (
        ".dockerconfigjson",
        _b64(json.dumps({"AUTHS": {"c.example.com": {"auth": _b64(b"r:p")}}}).encode()),
    )
    assert PullCredentials.from_docker_configs([empty, upper]).entries == (
        ("c.example.com", RegistryLogin("c.example.com", "r", "p")),
    )
