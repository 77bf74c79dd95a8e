"""TLS in the transport: whom it trusts, which name it checks, which certificate it shows.

Certificates are made in the test with `openssl`; servers are `tests/support/hostile.py`'s.
"""

import contextlib
import os
import pty
import select
import signal
import ssl
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import hostile
from tests.support.hostile import HostileServer, ServerCertificate
from truegreen.http import tlsstream
from truegreen.http.deadline import Deadline
from truegreen.http.dial import CHUNK, DirectDialer, Stream
from truegreen.http.errors import CertificateNameError, ConnectionDroppedError, TlsFailedError
from truegreen.http.tls import ClientCertificate, TlsSettings
from truegreen.http.transport import Transport


@dataclass(frozen=True)
class Pki:
    authority: tuple[Path, Path]
    other_authority: tuple[Path, Path]
    server: ServerCertificate
    """For IP:127.0.0.1 and DNS:api.internal."""
    named_only: ServerCertificate
    """For DNS:api.internal only: connecting to 127.0.0.1 needs `server_name`."""
    client: ServerCertificate


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    folder = tmp_path_factory.mktemp("pki")
    authority = hostile.make_authority(folder, "ca")
    return Pki(
        authority,
        hostile.make_authority(folder, "other-ca"),
        hostile.issue(folder, authority, "server", "IP:127.0.0.1,DNS:api.internal"),
        hostile.issue(folder, authority, "named", "DNS:api.internal"),
        hostile.issue(folder, authority, "client", "DNS:robot", client=True),
    )


@pytest.fixture
def server(pki: Pki) -> Iterator[HostileServer]:
    with HostileServer(hostile.keep_alive, pki.server) as running:
        yield running


def _status(url: str, tls: TlsSettings, dialer: object = None) -> int:
    with Transport(tls, dialer) as transport:  # type: ignore[arg-type]
        answer = transport.request("GET", url + "/", deadline=Deadline.after(10), max_bytes=100)
    return answer.status


def test_the_named_authority_is_trusted(server: HostileServer, pki: Pki) -> None:
    assert _status(server.url, TlsSettings(ca_pem=pki.authority[0].read_bytes())) == 200


def test_a_certificate_from_another_authority_is_refused(server: HostileServer, pki: Pki) -> None:
    with pytest.raises(TlsFailedError, match=r"certificate verify failed|unable to get local"):
        _status(server.url, TlsSettings(ca_pem=pki.other_authority[0].read_bytes()))


def test_the_system_store_does_not_trust_a_private_authority(server: HostileServer) -> None:
    with pytest.raises(TlsFailedError):
        _status(server.url, TlsSettings())


def test_verification_off_only_when_asked(server: HostileServer, pki: Pki) -> None:
    settings = TlsSettings(ca_pem=pki.other_authority[0].read_bytes(), verify=False)
    assert _status(server.url, settings) == 200


def test_a_wrong_name_is_refused_and_server_name_overrides_it(pki: Pki) -> None:
    ca = pki.authority[0].read_bytes()
    with HostileServer(hostile.keep_alive, pki.named_only) as named:
        with pytest.raises(CertificateNameError, match=r"does not name 127\.0\.0\.1 in a subject"):
            _status(named.url, TlsSettings(ca_pem=ca))
        assert _status(named.url, TlsSettings(ca_pem=ca, server_name="api.internal")) == 200
        with pytest.raises(TlsFailedError):
            _status(named.url, TlsSettings(ca_pem=ca, server_name="other.internal"))


def _leftover_key_folders() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("truegreen-tls-*")}


def test_a_client_certificate_is_shown_and_its_files_are_gone(
    pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A temporary folder of this test's own: another test's client certificate, shown at the
    # same moment in the shared one, is not this run's leftover.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    ca = pki.authority[0].read_bytes()
    certificate = ClientCertificate(pki.client.cert.read_bytes(), pki.client.key.read_bytes())
    before = _leftover_key_folders()
    assert before == set(), "precondition: nothing shown yet in the test's own folder"
    with HostileServer(hostile.keep_alive, pki.server, client_ca=pki.authority[0]) as mutual:
        with pytest.raises((TlsFailedError, ConnectionDroppedError)):
            _status(mutual.url, TlsSettings(ca_pem=ca))
        assert _status(mutual.url, TlsSettings(ca_pem=ca, client_certificate=certificate)) == 200
    assert _leftover_key_folders() == before


_UNDER_A_TERMINAL = """
from pathlib import Path
from truegreen.http import tlsstream
from truegreen.http.errors import TlsFailedError
from truegreen.http.tls import ClientCertificate, TlsSettings

pair = ClientCertificate(Path({cert!r}).read_bytes(), Path({key!r}).read_bytes())
try:
    tlsstream.ssl_context(TlsSettings(client_certificate=pair))
except TlsFailedError as error:
    print("refused:", error)
"""


def _run_under_a_terminal(program: str, limit: float = 30.0) -> tuple[str, int | None]:
    """What `program` wrote and its exit code (None: still running at `limit`, then killed),
    run with a pseudo-terminal as its controlling terminal, where OpenSSL's prompts go."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: a new session whose controlling terminal is the pty
        os.execv(sys.executable, [sys.executable, "-c", program])
    output, ends = b"", time.monotonic() + limit
    try:
        while time.monotonic() < ends:
            if select.select([fd], [], [], 0.2)[0]:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:  # EIO: the child closed its end
                    break
                if not chunk:
                    break
                output += chunk
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return output.decode(errors="replace"), os.waitstatus_to_exitcode(status)
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return output.decode(errors="replace"), None
        _, status = os.waitpid(pid, 0)
        return output.decode(errors="replace"), os.waitstatus_to_exitcode(status)
    finally:
        os.close(fd)


def test_a_client_key_behind_a_passphrase_is_refused_without_a_prompt(
    pki: Pki, tmp_path: Path
) -> None:
    """OpenSSL asks a key's passphrase on the controlling terminal ("Enter PEM pass phrase:")
    and waits, unless the caller answers for it; Go's crypto/tls (`X509KeyPair`), and so
    kubectl, never asks. Run where a terminal is there to prompt on: no prompt, one refusal."""
    key = tmp_path / "client-enc.key"
    subprocess.run(
        [
            *("openssl", "pkcs8", "-topk8", "-passout", "pass:hunter2"),
            *("-in", str(pki.client.key), "-out", str(key)),
        ],
        check=True,
        capture_output=True,
    )
    program = textwrap.dedent(_UNDER_A_TERMINAL).format(cert=str(pki.client.cert), key=str(key))
    output, exit_code = _run_under_a_terminal(program)
    assert (output.replace("\r\n", "\n"), exit_code) == (
        "refused: the client key is protected by a passphrase, which cannot be asked for\n",
        0,
    )


def test_contexts_are_built_once_per_settings(pki: Pki) -> None:
    settings = TlsSettings(ca_pem=pki.authority[0].read_bytes())
    assert tlsstream.ssl_context(settings) is tlsstream.ssl_context(settings)
    # Only the authority named: the system store is not loaded beside it.
    assert tlsstream.ssl_context(settings).cert_store_stats()["x509_ca"] == 1


def test_plain_http_builds_no_tls_context() -> None:
    built = len(tlsstream._contexts)
    with HostileServer(hostile.keep_alive) as plain:
        assert _status(plain.url, TlsSettings(server_name="never.used")) == 200
    assert len(tlsstream._contexts) == built


class _TlsProxyDialer:
    """Reaches every target through a TLS-terminating relay, as an https proxy would."""

    def __init__(self, relay_port: int, relay_tls: TlsSettings) -> None:
        self._port = relay_port
        self._tls = relay_tls
        self.used = 0

    def connect(self, host: str, port: int, deadline: Deadline) -> Stream:
        self.used += 1
        stream = DirectDialer().connect("127.0.0.1", self._port, deadline)
        return tlsstream.start_tls(stream, self._tls, "127.0.0.1", deadline)

    def describe(self) -> str:
        return "through a test relay"


def test_tls_runs_inside_a_dialer_that_is_itself_tls(server: HostileServer, pki: Pki) -> None:
    """The seam for https proxies: the target's TLS over the dialer's own TLS stream."""
    ca = pki.authority[0].read_bytes()
    with HostileServer(hostile.relay_to(server.port), pki.server) as relay:
        dialer = _TlsProxyDialer(relay.port, TlsSettings(ca_pem=ca))
        assert _status(server.url, TlsSettings(ca_pem=ca), dialer) == 200
        with pytest.raises(TlsFailedError):
            _status(server.url, TlsSettings(ca_pem=pki.other_authority[0].read_bytes()), dialer)
    assert dialer.used == 2
    assert relay.counts["connections"] == 2
    assert server.counts["requests"] == 1


class _ServerInMemory:
    """A TLS server held in memory as the client's inner stream: what the client sends reaches
    it at once, and all it has written arrives in the client's next receive."""

    def __init__(self, certificate: ServerCertificate) -> None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate.cert, certificate.key)
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self.tls = context.wrap_bio(self._incoming, self._outgoing, server_side=True)

    def send_all(self, data: bytes, deadline: Deadline) -> None:
        self._incoming.write(data)
        with contextlib.suppress(ssl.SSLWantReadError):
            self.tls.do_handshake()

    def receive(self, deadline: Deadline) -> bytes:
        return self._outgoing.read(CHUNK)

    def is_reusable(self) -> bool:
        return True

    def close(self) -> None:
        pass


def test_one_receive_takes_every_record_already_here(pki: Pki) -> None:
    """A TLS record holds 16 KiB at most; taking only one per receive made the HTTP parser step
    four times per 64 KiB read (a third of the time to read a large list over TLS)."""
    server = _ServerInMemory(pki.server)
    settings = TlsSettings(ca_pem=pki.authority[0].read_bytes())
    client = tlsstream.start_tls(server, settings, "127.0.0.1", Deadline.after(10))
    server.tls.write(b"x" * 3 * 16384)  # three full records, all delivered by one inner receive

    first = client.receive(Deadline.after(10))

    assert len(first) == 3 * 16384
