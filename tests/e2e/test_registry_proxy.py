"""The registry client through the proxy the environment names, by Go's rules
(golang.org/x/net `http/httpproxy`, src/truegreen/http/proxy.py: HTTPS_PROXY for https,
HTTP_PROXY for http, NO_PROXY, never loopback), against a real loopback CONNECT proxy
(tests/support/proxies.py) and the real registry (Debian's docker-registry), over https and
over plain HTTP.

The registries listen on loopback, which is never proxied (httpproxy `useProxy`), so an image
names them `registry.test:PORT`: only the proxy knows that name is 127.0.0.1 (`.test` names no
host anywhere: RFC 2606), and the client's own resolver records every name it is asked; a
look-up through the proxy resolves nothing here.
"""

import base64
import socket
from collections.abc import Iterator, Sequence

import pytest

from tests.conftest import REGISTRY_PASSWORD
from tests.support import hostile
from tests.support.proxies import HttpConnectProxy, Passage
from tests.support.registry import Registry, running_registry
from truegreen.http.deadline import Deadline
from truegreen.http.dial import resolve_name
from truegreen.http.errors import ConnectRefusedError
from truegreen.http.racing import Address, connect_first
from truegreen.images import parse_image
from truegreen.refresh.registry import (
    LookupFailed,
    LookupFailure,
    RegistryAccess,
    RegistryClient,
    RegistryLogin,
    Resolved,
)

NAME = "registry.test"
"""The registries' name: only the proxies (and a test's own resolver) know it is 127.0.0.1."""
PROXY_LOGIN = ("ops", "pr0xy-s3cret")
_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy")


@pytest.fixture(scope="module")
def tls_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """A real registry over https with basic auth (user `robot`), its certificate for
    registry.test and 127.0.0.1 from a test authority (no system trusts it: the look-ups that
    reach it skip verification, as refresh's --registry-skip-tls-verify does)."""
    folder = tmp_path_factory.mktemp("tls-registry")
    authority = hostile.make_authority(folder, "ca")
    certificate = hostile.issue(folder, authority, "registry", f"DNS:{NAME},IP:127.0.0.1")
    with running_registry(
        folder / "registry", username="robot", password=REGISTRY_PASSWORD, tls=certificate
    ) as running:
        yield running


@pytest.fixture
def environ(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """The process environment with no proxy variable but those a test sets."""
    for name in _VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


class Here:
    """The client's own resolver and connector: every name it resolves itself is recorded
    (registry.test resolves to 127.0.0.1 here too, for the look-ups NO_PROXY sends direct), and
    only loopback is ever dialled (anything else is recorded and refused)."""

    def __init__(self) -> None:
        self.resolved: list[str] = []
        self.dialled: list[tuple[str, int] | tuple[str, int, int, int]] = []

    def resolve(self, host: str, port: int, deadline: Deadline) -> list[Address]:
        self.resolved.append(host)
        if host == NAME:
            return [(socket.AF_INET, ("127.0.0.1", port))]
        return resolve_name(host, port, deadline)

    def connect(self, addresses: Sequence[Address], name: str, deadline: Deadline) -> socket.socket:
        self.dialled += [address for _, address in addresses]
        if all(address[0] == "127.0.0.1" for _, address in addresses):
            return connect_first(addresses, name, deadline)
        raise ConnectRefusedError(f"the test never dials {name}")

    def client(self, access: RegistryAccess) -> RegistryClient:
        return RegistryClient(access, resolver=self.resolve, connector=self.connect)


def _port(registry: Registry) -> str:
    return registry.host.rsplit(":", 1)[1]


def _proxy_url(proxy: HttpConnectProxy, login: tuple[str, str] | None = PROXY_LOGIN) -> str:
    userinfo = f"{login[0]}:{login[1]}@" if login else ""
    return f"http://{userinfo}127.0.0.1:{proxy.port}"


def _robot(registry: str) -> RegistryLogin:
    return RegistryLogin(registry, "robot", REGISTRY_PASSWORD)


def _carries_no_registry_login(proxy: HttpConnectProxy) -> None:
    """Nothing the proxy itself was sent holds the registry's login: no Authorization, no
    trace of the robot's password (its own Proxy-Authorization is its own login)."""
    robot = base64.b64encode(f"robot:{REGISTRY_PASSWORD}".encode()).decode()
    for head in proxy.heads:
        assert "authorization" not in head, head
        assert not any(REGISTRY_PASSWORD in v or robot in v for v in head.values()), head


# -- through the proxy -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "access",
    [
        RegistryAccess(timeout=20, verify_tls=False),
        RegistryAccess(timeout=20, verify_tls=False, outside=True),
    ],
    ids=["refresh", "doctor"],
)
def test_an_https_registry_is_asked_through_https_proxy_with_its_login_inside_the_tunnel(
    tls_registry: Registry, environ: pytest.MonkeyPatch, access: RegistryAccess
) -> None:
    """HTTPS_PROXY for an https registry (HTTP_PROXY names another proxy, never asked): one
    CONNECT to the registry's name and port, the proxy's login as Proxy-Authorization, the
    registry's login only inside the TLS tunnel. doctor's rule on this computer's own address
    judges the registry's address, not the proxy's (which is on loopback here)."""
    digest = tls_registry.push_image("team/app", "v1", content="proxied-tls")
    host = f"{NAME}:{_port(tls_registry)}"
    here = Here()
    names = {NAME: "127.0.0.1"}
    with HttpConnectProxy(login=PROXY_LOGIN, names=names) as proxy, HttpConnectProxy() as other:
        environ.setenv("HTTPS_PROXY", _proxy_url(proxy))
        environ.setenv("HTTP_PROXY", _proxy_url(other, None))
        reference = parse_image(f"{host}/team/app:v1")
        found = here.client(access).lookup(reference, _robot(host))
    assert found == Resolved(digest, "application/vnd.oci.image.manifest.v1+json", ())
    assert set(proxy.passages) == {Passage("CONNECT", host, "authority", PROXY_LOGIN, True)}
    assert other.passages == []
    assert here.resolved == [], "the proxy resolves the registry's name, not this computer"
    _carries_no_registry_login(proxy)


def test_a_plain_http_registry_is_asked_through_http_proxy_named_in_lower_case(
    registry: Registry, environ: pytest.MonkeyPatch
) -> None:
    """HTTP_PROXY (here `http_proxy`, read after the upper-case name) for a plain-HTTP
    registry the operator named; HTTPS_PROXY names another proxy, never asked."""
    digest = registry.push_image("team/app", "v1", content="proxied-http")
    host = f"{NAME}:{_port(registry)}"
    here = Here()
    names = {NAME: "127.0.0.1"}
    with HttpConnectProxy(names=names) as proxy, HttpConnectProxy() as other:
        environ.setenv("http_proxy", _proxy_url(proxy, None))
        environ.setenv("HTTPS_PROXY", _proxy_url(other, None))
        access = RegistryAccess(timeout=20, insecure_registries=frozenset({host}), outside=True)
        found = here.client(access).lookup(parse_image(f"{host}/team/app:v1"), _robot(host))
    assert isinstance(found, Resolved), found
    assert found.digest == digest
    assert set(proxy.passages) == {Passage("CONNECT", host, "authority", None, True)}
    assert other.passages == []
    assert here.resolved == []
    _carries_no_registry_login(proxy)


# -- NO_PROXY and loopback -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("no_proxy", "proxied"),
    [
        (NAME, False),
        (".test", False),
        ("*.test", False),
        ("other.example, REGISTRY.TEST", False),
        (f"{NAME}:{{port}}", False),
        ("*", False),
        (f"{NAME}:1", True),  # another port
        ("other.test", True),
        ("istry.test", True),  # a suffix that is not a whole name
        ("127.0.0.1", True),  # an address exempts that address, not a name resolving to it
        ("", True),
    ],
)
def test_no_proxy_sends_a_registry_it_names_direct(
    open_registry: Registry, environ: pytest.MonkeyPatch, no_proxy: str, proxied: bool
) -> None:
    """NO_PROXY as httpproxy reads it: a name matches itself and the names under it, a
    leading `.` or `*.` only those under it, `:port` that port alone, `*` everything. Exempted,
    the client resolves the name itself and dials it; else the proxy does."""
    digest = open_registry.push_image("team/app", "v1", content="no-proxy")
    port = _port(open_registry)
    host = f"{NAME}:{port}"
    here = Here()
    with HttpConnectProxy(names={NAME: "127.0.0.1"}) as proxy:
        environ.setenv("HTTP_PROXY", _proxy_url(proxy, None))
        environ.setenv("NO_PROXY", no_proxy.replace("{port}", port))
        access = RegistryAccess(timeout=20, insecure_registries=frozenset({host}))
        found = here.client(access).lookup(parse_image(f"{host}/team/app:v1"))
    assert isinstance(found, Resolved), found
    assert found.digest == digest
    if proxied:
        assert set(proxy.passages) == {Passage("CONNECT", host, "authority", None, True)}
        assert here.resolved == []
    else:
        assert proxy.passages == []
        assert set(here.resolved) == {NAME}


@pytest.mark.parametrize(
    ("no_proxy", "proxied"),
    [("10.0.0.0/8", False), ("10.1.2.3", False), ("10.1.2.3:{port}", False), ("10.1.2.4", True)],
)
def test_no_proxy_exempts_an_address_by_itself_or_its_network(
    open_registry: Registry, environ: pytest.MonkeyPatch, no_proxy: str, proxied: bool
) -> None:
    """A registry written as an address: NO_PROXY's IP, CIDR and IP:port entries decide. The
    proxy takes 10.1.2.3 to the loopback registry; exempted, the client dials 10.1.2.3 itself
    (recorded here, never really dialled)."""
    digest = open_registry.push_image("team/app", "v1", content="no-proxy-ip")
    port = _port(open_registry)
    host = f"10.1.2.3:{port}"
    here = Here()
    with HttpConnectProxy(names={"10.1.2.3": "127.0.0.1"}) as proxy:
        environ.setenv("HTTP_PROXY", _proxy_url(proxy, None))
        environ.setenv("NO_PROXY", no_proxy.replace("{port}", port))
        access = RegistryAccess(timeout=20, insecure_registries=frozenset({host}))
        found = here.client(access).lookup(parse_image(f"{host}/team/app:v1"))
    if proxied:
        assert isinstance(found, Resolved), found
        assert found.digest == digest
        assert set(proxy.passages) == {Passage("CONNECT", host, "authority", None, True)}
        assert here.dialled == []
    else:
        assert found == LookupFailed(LookupFailure.UNREACHABLE, f"could not connect to {host}")
        assert proxy.passages == []
        assert here.dialled == [("10.1.2.3", int(port))]


def test_a_registry_on_loopback_is_never_proxied(
    open_registry: Registry, environ: pytest.MonkeyPatch
) -> None:
    """httpproxy `useProxy`: `localhost` and loopback addresses are never proxied."""
    digest = open_registry.push_image("team/app", "v1", content="loopback")
    port = _port(open_registry)
    with HttpConnectProxy() as proxy:
        environ.setenv("HTTP_PROXY", _proxy_url(proxy, None))
        environ.setenv("HTTPS_PROXY", _proxy_url(proxy, None))
        client = RegistryClient(RegistryAccess(timeout=20))
        for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            found = client.lookup(parse_image(f"{host}/team/app:v1"))
            assert isinstance(found, Resolved), (host, found)
            assert found.digest == digest
    assert proxy.passages == []


# -- which addresses may be asked, through a proxy -------------------------------------------


def test_an_address_never_dialled_is_not_asked_of_the_proxy_either(
    environ: pytest.MonkeyPatch,
) -> None:
    """A registry written as a link-local (metadata) address is refused before the proxy is
    reached, as it is refused before any dial without one (http/address_policy.py)."""
    with HttpConnectProxy() as proxy:
        environ.setenv("HTTPS_PROXY", _proxy_url(proxy, None))
        found = RegistryClient(RegistryAccess(timeout=5)).lookup(
            parse_image("169.254.169.254/team/app:1")
        )
    assert found == LookupFailed(
        LookupFailure.ADDRESS_REFUSED,
        "not connected to 169.254.169.254: 169.254.169.254 resolves to 169.254.169.254, an "
        "address truegreen never connects to",
    )
    assert proxy.passages == []
    assert proxy.heads == []


def test_doctor_asks_a_private_address_through_the_proxy_only_when_named(
    open_registry: Registry, environ: pytest.MonkeyPatch
) -> None:
    """From outside the cluster a private network's address is asked only when the operator
    names it, proxy or not: unnamed, the proxy is never asked."""
    digest = open_registry.push_image("team/app", "v1", content="private")
    host = f"10.1.2.3:{_port(open_registry)}"
    reference = parse_image(f"{host}/team/app:v1")
    with HttpConnectProxy(names={"10.1.2.3": "127.0.0.1"}) as proxy:
        environ.setenv("HTTP_PROXY", _proxy_url(proxy, None))
        environ.setenv("HTTPS_PROXY", _proxy_url(proxy, None))
        unnamed = RegistryClient(RegistryAccess(timeout=20, outside=True)).lookup(reference)
        assert isinstance(unnamed, LookupFailed), unnamed
        assert unnamed.failure is LookupFailure.PRIVATE_ADDRESS, unnamed
        assert proxy.heads == []
        named = RegistryAccess(timeout=20, outside=True, insecure_registries=frozenset({host}))
        found = RegistryClient(named).lookup(reference)
    assert isinstance(found, Resolved), found
    assert found.digest == digest
    assert set(proxy.passages) == {Passage("CONNECT", host, "authority", None, True)}


# -- a proxy that cannot be used ---------------------------------------------------------------


def test_a_proxy_refusing_its_login_is_one_plain_reason_naming_the_proxy(
    open_registry: Registry, environ: pytest.MonkeyPatch
) -> None:
    host = f"{NAME}:{_port(open_registry)}"
    with HttpConnectProxy(login=PROXY_LOGIN, names={NAME: "127.0.0.1"}) as proxy:
        environ.setenv("HTTP_PROXY", _proxy_url(proxy, ("ops", "wrong")))
        access = RegistryAccess(timeout=20, insecure_registries=frozenset({host}))
        found = RegistryClient(access).lookup(parse_image(f"{host}/team/app:v1"))
    assert found == LookupFailed(
        LookupFailure.UNREACHABLE,
        f"could not connect to {host}: the proxy 127.0.0.1:{proxy.port} refused the tunnel: "
        "407 Proxy Authentication Required",
    )


def test_a_proxy_variable_of_an_unknown_kind_fails_the_look_up_without_dialling(
    environ: pytest.MonkeyPatch,
) -> None:
    """Go keeps `ftp://…` as the proxy and fails every request through it; nothing is
    dialled, and the reason never quotes the variable's login."""
    environ.setenv("HTTPS_PROXY", "ftp://ops:pr0xy-s3cret@proxy.corp:21")
    here = Here()
    found = here.client(RegistryAccess(timeout=5)).lookup(parse_image(f"{NAME}/team/app:1"))
    assert found == LookupFailed(
        LookupFailure.UNREACHABLE,
        f"could not connect to {NAME}: HTTPS_PROXY (or https_proxy) names a proxy that cannot "
        'be used: unsupported scheme "ftp", must be http, https, or socks5',
    )
    assert (here.resolved, here.dialled) == ([], [])
