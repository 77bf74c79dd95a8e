"""Which registry login the kubelet sends for an image, rule by rule, as its keyring decides:
kubernetes/kubernetes pkg/credentialprovider/keyring.go (v1.33: BasicDockerKeyring.Add, Lookup,
isDefaultRegistryMatch, ParseSchemelessURL, SplitURL, URLsMatch), over the name
pkg/util/parsers.ParseImageName gives it (distribution/reference ParseNormalizedNamed's
`Name()`: the domain as written, never lower-cased). doctor's coverage (image_presence.py),
its look-ups (doctor/reads/registry_lookups.py) and refresh's client (refresh/registry.py) all
read the one model in images.py."""

import base64
import json

import pytest

from truegreen.cluster import Got
from truegreen.doctor.knowledge.image_presence import pod_logins, registries_with_credentials
from truegreen.images import (
    DEFAULT_REGISTRY_KEY,
    is_default_registry_match,
    keyring_key,
    keyring_lookup,
    login_covers,
    parse_image,
)
from truegreen.refresh.registry import PullCredentials, RegistryLogin


@pytest.mark.parametrize(
    ("server", "key"),
    [
        ("registry.example.com", "registry.example.com"),
        ("registry.example.com:5000", "registry.example.com:5000"),
        # Only a `/v1/` or `/v2/` path is the API's; any other path is a repository prefix.
        ("https://index.docker.io/v1/", "index.docker.io"),
        ("https://index.docker.io/v1", "index.docker.io/v1"),  # no `/` after v1: a path
        ("http://r.example:5000/v2/team", "r.example:5000/team"),
        ("https://r.example:5000/v2/", "r.example:5000"),
        # Docker Hub's names are kept as written: Add rewrites none of them.
        ("index.docker.io", "index.docker.io"),
        ("docker.io", "docker.io"),
        ("registry-1.docker.io", "registry-1.docker.io"),
        # url.Parse keeps a host's case, and a path's trailing `/`.
        ("Quay.io/team/", "Quay.io/team/"),
        ("LOCALHOST:5000", "LOCALHOST:5000"),
        # Only `https://` and `http://` in lower case are taken off; another scheme is then
        # the host `oci:` and a path, which no image matches.
        ("oci://quay.io", "oci://quay.io"),
        ("HTTPS://quay.io", "HTTPS://quay.io"),
        # url.Parse: `?` starts the query and `#` the fragment, `user@` is user information.
        ("reg?.example.com", "reg"),
        ("a.example.com#x", "a.example.com"),
        ("robot@quay.io", "quay.io"),
        ("a.example.com?x#y", "a.example.com"),
        ("a.example.com/team%2Fx", "a.example.com/team/x"),  # Path is unescaped
        ("", ""),
        # url.Parse refuses these, and Add ignores the entry ("Entry %q in dockercfg invalid").
        ("quay.io:abc", None),
        ("a b.example.com", None),
        ("a.example.com/%zz", None),
        ("a.example.com\n", None),
        ("[::1", None),  # missing ']' in host
        ("[::1]x", None),
        ("a.example.com#%zz", None),
        ("us er@quay.io", None),  # validUserinfo
    ],
)
def test_a_login_is_filed_under_the_key_add_makes_of_it(server: str, key: str | None) -> None:
    """keyring.go BasicDockerKeyring.Add: `https://` put before a key without `https://` or
    `http://`, url.Parse, `/v1/` or `/v2/` dropped from the path, the key Host + path."""
    assert keyring_key(server) == key


@pytest.mark.parametrize(
    ("key", "image", "matched"),
    [
        # filepath.Match compares each host part as written: upper case is another name.
        ("localhost:5000", "LOCALHOST:5000/trainer", False),
        ("LOCALHOST:5000", "localhost:5000/trainer", False),
        ("LOCALHOST:5000", "LOCALHOST:5000/trainer", True),
        ("Registry.Example.com", "registry.example.com/team/app", False),
        ("*.Example.com", "a.example.com/team/app", False),
        # As many host parts: Docker Hub's other names never match `docker.io`.
        ("registry-1.docker.io", "docker.io/team/private-trainer", False),
        ("index.docker.io", "docker.io/team/private-trainer", False),
        ("docker.io", "docker.io/team/private-trainer", True),
        ("*.io", "docker.io/team/private-trainer", True),
        # The key's path is a prefix of the image's path, as text.
        ("quay.io/team/", "quay.io/team/app", True),
        ("quay.io/team/", "quay.io/teamster/app", False),
        ("quay.io/team", "quay.io/teamster/app", True),
        # `?` is no glob: url.Parse makes it the start of a query, leaving the host `reg`.
        ("reg?.example", "regs.example/x", False),
        ("reg", "regs.example/x", False),
        # SplitURL: net.SplitHostPort of `::1` fails, so its host is `::1`, never `[::1]`.
        ("::1", "[::1]/x", False),
        ("[::1]:5443", "[::1]:5443/team/app", True),
        ("[::1]:5443", "[::1]:5444/team/app", False),
        ("localhost:", "localhost/trainer", True),  # SplitHostPort: an empty port
        ("oci://quay.io", "quay.io/team/app", False),
    ],
)
def test_a_key_matches_an_image_as_urls_match_compares_them(
    key: str, image: str, matched: bool
) -> None:
    """keyring.go URLsMatchStr: both through ParseSchemelessURL; the same port, as many
    dot-separated host parts, each matched by filepath.Match (case-sensitive), the key's path
    a prefix of the image's."""
    assert login_covers(key, image) is matched


@pytest.mark.parametrize(
    ("image", "default"),
    [
        ("docker.io/team/private-trainer", True),
        ("index.docker.io/team/private-trainer", True),
        ("localhost/trainer", True),  # no `.` and no `:`: keyring.go takes it for Docker Hub
        ("MYREGISTRY/trainer", True),
        ("localhost:5000/trainer", False),
        ("quay.io/team/app", False),
    ],
)
def test_docker_hub_images_as_the_keyring_tells_them(image: str, default: bool) -> None:
    """keyring.go isDefaultRegistryMatch, on the name ParseImageName gives Lookup."""
    assert is_default_registry_match(image) is default


@pytest.mark.parametrize(
    ("entries", "image", "sent"),
    [
        # No key matches Docker Hub's `docker.io`: Lookup falls back to the key
        # `index.docker.io` alone (defaultRegistryHost), never `registry-1.docker.io`.
        ([("registry-1.docker.io", "A")], "docker.io/team/private-trainer", []),
        ([("index.docker.io", "A")], "docker.io/team/private-trainer", ["A"]),
        ([("index.docker.io/v1", "A")], "docker.io/team/private-trainer", []),
        ([("docker.io", "A")], "docker.io/team/private-trainer", ["A"]),
        # The fallback is for Docker Hub names only (isDefaultRegistryMatch)...
        ([("index.docker.io", "A")], "quay.io/team/app", []),
        ([("index.docker.io", "A")], "localhost:5000/trainer", []),
        # ...which, by keyring.go's rule, a registry named without `.` or `:` is.
        ([("index.docker.io", "A")], "localhost/trainer", ["A"]),
        # A key that matches leaves the fallback unread: `docker.io`'s login alone is sent,
        # whichever comes first in the login.
        ([("index.docker.io", "B"), ("docker.io", "A")], "docker.io/team/x", ["A"]),
        ([("docker.io", "A"), ("index.docker.io", "B")], "docker.io/team/x", ["A"]),
        # Every matching key, in the index's reverse order (the longer path first), each
        # key's logins in the order added.
        ([("quay.io", "A"), ("quay.io/team", "B")], "quay.io/team/app", ["B", "A"]),
        ([("*.example.com", "A"), ("a.example.com", "B")], "a.example.com/x", ["B", "A"]),
        ([("quay.io", "A"), ("quay.io", "B")], "quay.io/team/app", ["A", "B"]),
        ([("quay.io", "A"), ("ghcr.io", "B")], "ghcr.io/team/app", ["B"]),
        ([("localhost:5000", "A")], "LOCALHOST:5000/trainer", []),
    ],
)
def test_the_logins_lookup_returns_for_an_image(
    entries: list[tuple[str, str]], image: str, sent: list[str]
) -> None:
    """keyring.go BasicDockerKeyring.Lookup: every key URLsMatch matches, over the index Add
    sorts in reverse; with none, the `index.docker.io` key's logins for a Docker Hub image."""
    assert keyring_lookup(entries, image) == sent
    assert DEFAULT_REGISTRY_KEY == "index.docker.io"


def _login(name: str, auths: dict[str, str]) -> Got:
    entries = {
        host: {"auth": base64.b64encode(f"robot:{pw}".encode()).decode()}
        for host, pw in auths.items()
    }
    value = base64.b64encode(json.dumps({"auths": entries}).encode()).decode()
    data = {".dockerconfigjson": value}
    return Got(
        {
            "kind": "Secret",
            "metadata": {"name": name},
            "type": "kubernetes.io/dockerconfigjson",
            "data": data,
        }
    )


def test_doctor_files_a_pod_s_logins_as_the_keyring_does() -> None:
    """One keyring of every login the pod names (pkg/credentialprovider/secrets/secrets.go
    MakeDockerKeyring): the Docker Hub fallback is read only when no login of any of them
    matches."""
    secrets = {
        "hub": _login("hub", {"https://index.docker.io/v1/": "a"}),
        "hub-1": _login("hub-1", {"registry-1.docker.io": "b"}),
        "io": _login("io", {"docker.io": "c"}),
        "local": _login("local", {"localhost:5000": "d"}),
    }
    assert registries_with_credentials(secrets["hub"].obj) == frozenset({"index.docker.io"})

    def applying(names: list[str], image: str) -> tuple[str, ...]:
        spec = {"imagePullSecrets": [{"name": n} for n in names]}
        return pod_logins(spec, None, secrets).applying_to(image)

    assert applying(["hub-1"], "docker.io/team/private-trainer") == ()
    assert applying(["hub"], "docker.io/team/private-trainer") == ("hub",)
    assert applying(["hub", "io"], "docker.io/team/private-trainer") == ("io",)
    assert applying(["io", "hub"], "docker.io/team/private-trainer") == ("io",)
    assert applying(["local"], "LOCALHOST:5000/trainer") == ()
    assert applying(["local"], "localhost:5000/trainer") == ("local",)


def _config(auths: dict[str, str]) -> tuple[str, str]:
    entries = {
        host: {"auth": base64.b64encode(f"robot:{pw}".encode()).decode()}
        for host, pw in auths.items()
    }
    return ".dockerconfigjson", base64.b64encode(json.dumps({"auths": entries}).encode()).decode()


def test_refresh_sends_the_login_the_kubelet_sends_and_no_other() -> None:
    """refresh's client asks with each login Lookup returns, in its order, addressed to the
    image's registry; none where the kubelet sends none."""
    hub = parse_image("team/private-trainer:2.1")
    both = PullCredentials.from_docker_configs(
        [_config({"https://index.docker.io/v1/": "index", "docker.io": "io"})]
    )
    assert both.applying_to(hub) == [RegistryLogin("docker.io", "robot", "io")]
    legacy = PullCredentials.from_docker_configs([_config({"https://index.docker.io/v1/": "x"})])
    assert legacy.applying_to(hub) == [RegistryLogin("docker.io", "robot", "x")]
    other = PullCredentials.from_docker_configs([_config({"registry-1.docker.io": "x"})])
    assert other.applying_to(hub) == []
    local = PullCredentials.from_docker_configs([_config({"localhost:5000": "x"})])
    assert local.applying_to(parse_image("LOCALHOST:5000/trainer:2.1")) == []
    upper = parse_image("LOCALHOST:5000/trainer:2.1")
    upper_login = PullCredentials.from_docker_configs([_config({"LOCALHOST:5000": "x"})])
    assert upper_login.applying_to(upper) == [RegistryLogin("LOCALHOST:5000", "robot", "x")]
    # Two logins: the one whose key matches, in the keyring's order, each one's entries kept.
    many = PullCredentials.joined(
        [
            PullCredentials.from_docker_configs([_config({"quay.io": "wide"})]),
            PullCredentials.from_docker_configs([_config({"quay.io/team": "narrow"})]),
        ]
    )
    assert many.applying_to(parse_image("quay.io/team/app:1")) == [
        RegistryLogin("quay.io", "robot", "narrow"),
        RegistryLogin("quay.io", "robot", "wide"),
    ]


def test_an_entry_without_a_login_to_send_still_holds_its_key() -> None:
    """An entry the kubelet files with no user name (here an identity token alone, which the
    keyring drops) still matches `docker.io`, so Lookup never reaches `index.docker.io`'s
    login: refresh sends neither."""
    entries = {
        "docker.io": {"identitytoken": "tok"},
        "https://index.docker.io/v1/": {"auth": base64.b64encode(b"robot:pw").decode()},
    }
    value = base64.b64encode(json.dumps({"auths": entries}).encode()).decode()
    logins = PullCredentials.from_docker_configs([(".dockerconfigjson", value)])
    assert logins.applying_to(parse_image("team/private-trainer:2.1")) == []


@pytest.mark.parametrize("empty", [{}, None])
def test_an_empty_entry_still_holds_its_key(empty: object) -> None:
    """keyring.go BasicDockerKeyring.Add files every entry of a login, an empty one too (`{}`,
    or `null`, which DockerConfigEntry.UnmarshalJSON reads as nothing: config.go): `docker.io`
    then matches a Docker Hub image, so Lookup never reaches `index.docker.io`'s login, and
    the kubelet pulls with the empty entry, that is anonymously: refresh sends no login."""
    entries = {
        "docker.io": empty,
        "https://index.docker.io/v1/": {"auth": base64.b64encode(b"robot:pw").decode()},
    }
    value = base64.b64encode(json.dumps({"auths": entries}).encode()).decode()
    logins = PullCredentials.from_docker_configs([(".dockerconfigjson", value)])
    assert logins.entries == (
        ("docker.io", None),
        ("index.docker.io", RegistryLogin("index.docker.io", "robot", "pw")),
    )
    assert logins.applying_to(parse_image("team/private-trainer:2.1")) == []
