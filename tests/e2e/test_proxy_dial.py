"""The transport through real loopback proxies (`tests/support/proxies.py`): CONNECT over plain
TCP and over TLS (TLS in TLS), SOCKS5 with the server's name, logins, refusals, and hostile
proxies that stall, drip or overflow, each ending as one plain reason within the deadline.
"""

import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import hostile
from tests.support.hostile import Behaviour, HostileServer, Peer, ServerCertificate
from tests.support.proxies import HttpConnectProxy, Passage, Socks5Proxy
from truegreen.http.deadline import Deadline
from truegreen.http.errors import ProxyFailedError, TimedOutError, TlsFailedError
from truegreen.http.proxy import Proxy, parse_proxy_url
from truegreen.http.proxy_dial import ProxyDialer
from truegreen.http.tls import TlsSettings
from truegreen.http.transport import Transport

API_NAME = "api.internal"
"""The server's name: only the proxies know it is 127.0.0.1."""


@dataclass(frozen=True)
class Pki:
    ca: bytes
    server: ServerCertificate
    """For DNS:api.internal and IP:127.0.0.1; the https proxy uses it too."""


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    folder = tmp_path_factory.mktemp("pki")
    authority = hostile.make_authority(folder, "ca")
    server = hostile.issue(folder, authority, "server", f"IP:127.0.0.1,DNS:{API_NAME}")
    return Pki(authority[0].read_bytes(), server)


@pytest.fixture
def api(pki: Pki) -> Iterator[HostileServer]:
    with HostileServer(hostile.keep_alive, pki.server) as server:
        yield server


def _get(url: str, pki: Pki, proxy: Proxy, seconds: float = 10.0) -> int:
    tls = TlsSettings(ca_pem=pki.ca)
    with Transport(tls, ProxyDialer(proxy, tls)) as transport:
        answer = transport.request("GET", url, deadline=Deadline.after(seconds), max_bytes=100)
    return answer.status


def _login(proxy_url: str, login: str) -> Proxy:
    scheme, _, rest = proxy_url.partition("://")
    return parse_proxy_url(f"{scheme}://{login}@{rest}")


# -- http and https proxies ------------------------------------------------------------------


def test_a_connect_tunnel_carries_tls_to_the_server_s_name(api: HostileServer, pki: Pki) -> None:
    with HttpConnectProxy(names={API_NAME: "127.0.0.1"}) as proxy:
        status = _get(f"https://{API_NAME}:{api.port}/version", pki, parse_proxy_url(proxy.url))
    assert status == 200
    assert proxy.passages == [Passage("CONNECT", f"{API_NAME}:{api.port}", "authority", None, True)]


def test_an_https_proxy_is_tls_inside_tls(api: HostileServer, pki: Pki) -> None:
    certificate = (pki.server.cert, pki.server.key)
    with HttpConnectProxy(names={API_NAME: "127.0.0.1"}, tls=certificate) as proxy:
        assert proxy.url.startswith("https://127.0.0.1:")
        status = _get(f"https://{API_NAME}:{api.port}/", pki, _login(proxy.url, "al%40ice:pw"))
    assert status == 200
    assert proxy.passages == [
        Passage("CONNECT", f"{API_NAME}:{api.port}", "authority", ("al@ice", "pw"), True)
    ]


def test_an_https_proxy_with_an_unknown_certificate_is_refused(
    api: HostileServer, pki: Pki, tmp_path: Path
) -> None:
    other = hostile.make_authority(tmp_path, "other")
    stranger = hostile.issue(tmp_path, other, "stranger", "IP:127.0.0.1")
    with (
        HttpConnectProxy(tls=(stranger.cert, stranger.key)) as proxy,
        pytest.raises(ProxyFailedError) as caught,
    ):
        _get(api.url, pki, parse_proxy_url(proxy.url))
    assert caught.value.cause.startswith(
        f"TLS with the proxy 127.0.0.1:{proxy.port} failed: the server's certificate was not "
        "accepted"
    )
    assert proxy.passages == []


def test_a_proxy_login_is_sent_and_its_refusal_quoted(api: HostileServer, pki: Pki) -> None:
    with HttpConnectProxy(login=("alice", "s3cret")) as proxy:
        assert _get(api.url, pki, _login(proxy.url, "alice:s3cret")) == 200
        with pytest.raises(ProxyFailedError) as caught:
            _get(api.url, pki, _login(proxy.url, "alice:wrong"))
    assert caught.value.cause == (
        f"the proxy 127.0.0.1:{proxy.port} refused the tunnel: 407 Proxy Authentication Required"
    )
    assert "wrong" not in str(caught.value)
    assert [(p.login, p.opened) for p in proxy.passages] == [
        (("alice", "s3cret"), True),
        (("alice", "wrong"), False),
    ]


def test_a_proxy_that_cannot_reach_the_server_says_so(pki: Pki) -> None:
    with HttpConnectProxy() as proxy, pytest.raises(ProxyFailedError) as caught:
        _get("https://nowhere.invalid:443/", pki, parse_proxy_url(proxy.url))
    assert caught.value.cause == (
        f"the proxy 127.0.0.1:{proxy.port} refused the tunnel: 502 Bad Gateway"
    )


def test_a_proxy_nobody_listens_on_is_named(pki: Pki) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
    with pytest.raises(ProxyFailedError) as caught:
        _get("https://127.0.0.1:1/", pki, Proxy("http", "127.0.0.1", port))
    assert caught.value.cause == f"the proxy 127.0.0.1:{port} refused the connection"


def test_the_server_s_tls_is_still_checked_inside_the_tunnel(api: HostileServer, pki: Pki) -> None:
    with (
        HttpConnectProxy(names={"wrong.name": "127.0.0.1"}) as proxy,
        pytest.raises(TlsFailedError),
    ):
        _get(f"https://wrong.name:{api.port}/", pki, parse_proxy_url(proxy.url))
    assert [p.opened for p in proxy.passages] == [True]


# -- socks5 ----------------------------------------------------------------------------------


def test_socks5_sends_the_server_s_name_for_the_proxy_to_resolve(
    api: HostileServer, pki: Pki
) -> None:
    with Socks5Proxy(names={API_NAME: "127.0.0.1"}) as proxy:
        assert _get(f"https://{API_NAME}:{api.port}/", pki, parse_proxy_url(proxy.url)) == 200
        assert _get(api.url + "/", pki, parse_proxy_url(proxy.url)) == 200
    assert proxy.passages == [
        Passage("SOCKS5", f"{API_NAME}:{api.port}", "name", None, True),
        Passage("SOCKS5", f"127.0.0.1:{api.port}", "ipv4", None, True),
    ]


def test_socks5_logs_in_by_rfc_1929(api: HostileServer, pki: Pki) -> None:
    with Socks5Proxy(login=("bob", "pw")) as proxy:
        assert _get(api.url, pki, _login(proxy.url, "bob:pw")) == 200
        with pytest.raises(ProxyFailedError) as refused:
            _get(api.url, pki, _login(proxy.url, "bob:nope"))
        with pytest.raises(ProxyFailedError) as no_login:
            _get(api.url, pki, parse_proxy_url(proxy.url))
    where = f"the SOCKS5 proxy 127.0.0.1:{proxy.port} could not be used"
    assert refused.value.cause == f"{where}: it refused the login (username/password)"
    assert no_login.value.cause == f"{where}: it accepts none of the login methods offered"
    assert [(p.login, p.opened) for p in proxy.passages] == [
        (("bob", "pw"), True),
        (("bob", "nope"), False),
    ]


def test_socks5_relays_the_proxy_s_refusal(pki: Pki) -> None:
    with Socks5Proxy() as proxy, pytest.raises(ProxyFailedError) as caught:
        _get("https://nowhere.invalid:443/", pki, parse_proxy_url(proxy.url))
    assert caught.value.cause == (
        f"the SOCKS5 proxy 127.0.0.1:{proxy.port} could not be used: it could not connect to "
        "nowhere.invalid:443 (host unreachable)"
    )


# -- hostile proxies -------------------------------------------------------------------------


def _silent(peer: Peer, _: int) -> None:
    peer.wait_for_hang_up()


def _endless_head(peer: Peer, _: int) -> None:
    peer.read_request()
    peer.send(b"HTTP/1.1 200 OK\r\n")
    while peer.send(b"X-Filler: " + b"a" * 1000 + b"\r\n"):
        pass


def _socks_overflow(peer: Peer, _: int) -> None:
    peer.sock.recv(3)
    peer.send(bytes([5, 0]))
    peer.sock.recv(300)
    peer.send(bytes([5, 0, 0, 1, 127, 0, 0, 1, 0, 80]) + b"unasked bytes")
    peer.wait_for_hang_up()


def _not_socks(peer: Peer, _: int) -> None:
    peer.sock.recv(3)
    peer.send(b"HTTP/1.1 400 Bad Request\r\n\r\n")
    peer.wait_for_hang_up()


def _answers(answer: bytes) -> Behaviour:
    def behaviour(peer: Peer, _: int) -> None:
        peer.read_request()
        peer.send(answer)
        peer.wait_for_hang_up()

    return behaviour


def test_only_a_200_opens_the_tunnel_as_in_go(pki: Pki) -> None:
    with HostileServer(_answers(b"HTTP/1.1 204 No Content\r\n\r\n")) as proxy:
        port = proxy.port
        with pytest.raises(ProxyFailedError) as caught:
            _get("https://api.internal/", pki, Proxy("http", "127.0.0.1", port))
    assert caught.value.cause == f"the proxy 127.0.0.1:{port} refused the tunnel: 204 No Content"


def test_a_silent_proxy_ends_at_the_deadline_unconnected(pki: Pki) -> None:
    with HostileServer(_silent) as proxy:
        port = proxy.port
        with pytest.raises(TimedOutError) as caught:
            _get("https://api.internal/", pki, Proxy("http", "127.0.0.1", port), seconds=0.5)
    assert caught.value.connected is False
    assert str(caught.value) == (
        f"the proxy 127.0.0.1:{port} did not open the way before the deadline"
    )


def test_an_endless_proxy_answer_is_cut_at_its_cap(pki: Pki) -> None:
    with HostileServer(_endless_head) as proxy:
        port = proxy.port
        with pytest.raises(ProxyFailedError) as caught:
            _get("https://api.internal/", pki, Proxy("http", "127.0.0.1", port))
    assert caught.value.cause == (
        f"the proxy 127.0.0.1:{port} did not answer the tunnel request in HTTP"
    )
    # Ended by the cap on the answer's head: at the deadline it would be a TimedOutError.


@pytest.mark.parametrize(
    ("behaviour", "why"),
    [
        (_socks_overflow, "it sent more than its answer"),
        (_not_socks, "it answered protocol version 72, not 5"),
    ],
)
def test_a_proxy_that_breaks_socks5_is_refused(
    pki: Pki, behaviour: hostile.Behaviour, why: str
) -> None:
    with HostileServer(behaviour) as proxy:
        port = proxy.port
        with pytest.raises(ProxyFailedError) as caught:
            _get("https://api.internal/", pki, Proxy("socks5", "127.0.0.1", port))
    assert caught.value.cause == f"the SOCKS5 proxy 127.0.0.1:{port} could not be used: {why}"


def test_an_interim_answer_is_passed_over_for_the_proxy_s_real_one(pki: Pki) -> None:
    interim = b"HTTP/1.1 100 Continue\r\n\r\n"
    refused = b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n"
    with HostileServer(_answers(interim + refused)) as proxy:
        port = proxy.port
        with pytest.raises(ProxyFailedError) as caught:
            _get("https://api.internal/", pki, Proxy("http", "127.0.0.1", port))
    assert caught.value.cause == (
        f"the proxy 127.0.0.1:{port} refused the tunnel: 407 Proxy Authentication Required"
    )


def test_a_proxy_switching_protocols_did_not_answer_in_http(pki: Pki) -> None:
    with HostileServer(_answers(b"HTTP/1.1 101 Switching Protocols\r\n\r\n")) as proxy:
        port = proxy.port
        with pytest.raises(ProxyFailedError) as caught:
            _get("https://api.internal/", pki, Proxy("http", "127.0.0.1", port))
    assert caught.value.cause == (
        f"the proxy 127.0.0.1:{port} did not answer the tunnel request in HTTP"
    )


def _hangs_up(peer: Peer, _: int) -> None:
    peer.read_request()


def test_a_proxy_that_hangs_up_unanswered_says_so(pki: Pki) -> None:
    with HostileServer(_hangs_up) as proxy:
        port = proxy.port
        with pytest.raises(ProxyFailedError) as caught:
            _get("https://api.internal/", pki, Proxy("http", "127.0.0.1", port))
    assert caught.value.cause == f"the proxy 127.0.0.1:{port} closed the connection unanswered"


def test_a_proxy_sending_too_many_interim_answers_is_refused(pki: Pki) -> None:
    interim = b"HTTP/1.1 100 Continue\r\n\r\n" * 6
    with HostileServer(_answers(interim + b"HTTP/1.1 200 OK\r\n\r\n")) as proxy:
        port = proxy.port
        with pytest.raises(ProxyFailedError) as caught:
            _get("https://api.internal/", pki, Proxy("http", "127.0.0.1", port))
    assert caught.value.cause == (
        f"the proxy 127.0.0.1:{port} did not answer the tunnel request in HTTP"
    )
