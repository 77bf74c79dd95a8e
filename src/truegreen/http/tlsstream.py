"""TLS over any `Stream`, with SSL contexts built once per `TlsSettings`.

TLS runs through memory buffers (`ssl.MemoryBIO`) rather than a wrapped socket, so it works
the same over a plain TCP stream and over a stream that is itself TLS (a proxy reached over
https); every byte still moves through the inner stream's deadline-bounded calls.
"""

import os
import ssl
import threading
from pathlib import Path

from truegreen.http.certname import CertificateNames, names_host, only_common_name_names, sni_name
from truegreen.http.deadline import Deadline
from truegreen.http.dial import CHUNK, Stream
from truegreen.http.errors import (
    CertificateNameError,
    CommonNameOnlyError,
    ConnectionDroppedError,
    SendFailedError,
    TlsClosedError,
    TlsFailedError,
)
from truegreen.http.pem import PemBlock, pem_encode
from truegreen.http.tls import (
    KEY_MISMATCH,
    KEY_NOT_PARSED,
    MALFORMED_CERTIFICATE,
    ClientCertificate,
    PairProblem,
    TlsSettings,
)

_contexts: dict[TlsSettings, ssl.SSLContext] = {}
_contexts_lock = threading.Lock()


def ssl_context(settings: TlsSettings) -> ssl.SSLContext:
    """The client SSL context for `settings`, built on first use and cached.

    The system trust store is loaded only here, that is only when an https server is used
    without a certificate authority of its own; plain http never pays for it.
    """
    with _contexts_lock:
        cached = _contexts.get(settings)
        if cached is not None:
            return cached
        context = _build(settings)
        _contexts[settings] = context
        return context


def _build(settings: TlsSettings) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    # OpenSSL checks the chain only; the name is checked as Go checks it (certname.py),
    # after the handshake, where OpenSSL's X509_check_host would refuse names Go accepts.
    context.check_hostname = False
    if not settings.verify:
        context.verify_mode = ssl.CERT_NONE
    elif settings.ca_pem is not None:
        try:
            context.load_verify_locations(cadata=settings.ca_pem.decode("ascii", "replace"))
        except (ssl.SSLError, ValueError):
            raise TlsFailedError("the certificate authority is not a PEM certificate") from None
    else:
        context.load_default_certs(ssl.Purpose.SERVER_AUTH)
    if settings.client_certificate is not None:
        _load_client_certificate(context, settings.client_certificate)
    return context


class _PassphraseAskedError(Exception):
    """OpenSSL asked for the client key's passphrase."""


def _no_passphrase() -> bytes:
    # Given as load_cert_chain's password, this is what OpenSSL asks instead of prompting
    # "Enter PEM pass phrase:" on the terminal (and waiting there, under _contexts_lock).
    # kubectl never asks either: Go's crypto/tls reads no encrypted key.
    raise _PassphraseAskedError


def _load_client_certificate(context: ssl.SSLContext, certificate: ClientCertificate) -> None:
    try:
        _load_pair(context, certificate.chain, certificate.key)
    except _PassphraseAskedError:
        raise TlsFailedError(
            "the client key is protected by a passphrase, which cannot be asked for"
        ) from None
    except (ssl.SSLError, ValueError):
        raise TlsFailedError("the client certificate or its key is not usable") from None


def _load_pair(context: ssl.SSLContext, chain: list[PemBlock], key_block: PemBlock | None) -> None:
    """`ssl` reads client keys only from files: write the certificates and the key Go's
    `X509KeyPair` takes to a private folder, as Go's pem.Encode writes them (so OpenSSL's PEM
    reader, which differs in corners, reads what Go read), load, delete; OpenSSL's own error
    (or _PassphraseAskedError) is raised."""
    # Imported here, not at the top: tempfile brings shutil, random and the compression
    # modules, which every run against a cluster that takes a token would load for nothing.
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="truegreen-tls-"))  # mkdtemp makes it 0700
    cert, key = folder / "client.crt", folder / "client.key"
    contents = (
        (cert, b"".join(pem_encode(block) for block in chain)),
        (key, b"" if key_block is None else pem_encode(key_block)),
    )
    try:
        for path, content in contents:
            handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(handle, "wb") as file:
                file.write(content)
        context.load_cert_chain(str(cert), str(key), password=_no_passphrase)
    finally:
        for path in (cert, key):
            path.unlink(missing_ok=True)
        folder.rmdir()


def client_certificate_problem(certificate: ClientCertificate) -> PairProblem | None:
    """Why kubectl could not use `certificate`, in Go's words and in `X509KeyPair`'s order, or
    None: the PEM blocks (`ClientCertificate.pem_problem`), then the certificate parsed, then
    the key loaded beside it as every connection loads it. A key behind a passphrase is asked
    about before (`key_is_encrypted`): here it is a key that cannot be read."""
    problem = certificate.pem_problem()
    if problem is not None:
        return problem
    # Go parses the first certificate only (the client's own); the others of a chain are
    # sent as they are, for the server to judge.
    leaf = certificate.chain[:1]
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cadata=leaf[0].der)
    except (ssl.SSLError, ValueError):
        return PairProblem("certificate", MALFORMED_CERTIFICATE)
    try:
        _load_pair(ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT), leaf, certificate.key)
    except ssl.SSLError as error:
        # OpenSSL's X509_check_private_key: the certificate read, the key read, not its key
        mismatch = error.reason == "KEY_VALUES_MISMATCH"
        return PairProblem("pair", KEY_MISMATCH) if mismatch else PairProblem("key", KEY_NOT_PARSED)
    except (ValueError, _PassphraseAskedError):
        return PairProblem("key", KEY_NOT_PARSED)
    return None


def start_tls(stream: Stream, settings: TlsSettings, host: str, deadline: Deadline) -> Stream:
    """A TLS stream to `host` over `stream`, its handshake done by `deadline`.

    The certificate is checked against `settings.server_name` when set (`tls-server-name`),
    else against `host`; that name is also the one sent in SNI, as crypto/tls sends it.
    """
    tls = TlsStream(stream, ssl_context(settings), settings.server_name or host)
    tls.handshake(deadline)
    return tls


class TlsStream:
    """A `Stream` that encrypts through memory buffers and moves bytes through another one."""

    def __init__(self, inner: Stream, context: ssl.SSLContext, server_name: str) -> None:
        self._inner = inner
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._server_name = server_name
        self._check_name = context.verify_mode == ssl.CERT_REQUIRED
        announced = sni_name(server_name)
        try:
            # As bytes, `ssl` takes the name as it is (Go's crypto/tls does too); as text it
            # would pass through the idna codec, which loads stringprep's tables on every run
            # and raises UnicodeError for a name such as `a..b`.
            self._tls = context.wrap_bio(
                self._incoming,
                self._outgoing,
                server_side=False,
                server_hostname=None if announced is None else announced.encode("ascii"),
            )
        except (UnicodeEncodeError, ValueError, TypeError):
            # A name `ssl` cannot announce (not ASCII, a NUL, a leading dot). Go would send it
            # and match it, as no valid host name, only letter for letter: a DNS name outside
            # ASCII no certificate Go reads holds, and the others no issuer writes for a server.
            raise CertificateNameError(
                f"the server's certificate cannot name {server_name!r}, which is not a host name"
            ) from None

    def _flush(self, deadline: Deadline) -> None:
        pending = self._outgoing.read()
        if pending:
            self._inner.send_all(pending, deadline)

    def _fill(self, deadline: Deadline) -> None:
        data = self._inner.receive(deadline)
        if data:
            self._incoming.write(data)
        else:
            self._incoming.write_eof()

    def handshake(self, deadline: Deadline) -> None:
        """Run the TLS handshake; TlsFailedError when the peer or its certificate is refused."""
        while True:
            try:
                self._tls.do_handshake()
            except ssl.SSLWantReadError:
                self._flush(deadline)
                self._fill(deadline)
                continue
            except ssl.SSLCertVerificationError as error:
                raise TlsFailedError(
                    f"the server's certificate was not accepted ({error.verify_message})"
                ) from None
            except (ssl.SSLEOFError, ssl.SSLZeroReturnError):
                raise TlsClosedError("the server closed the connection during TLS setup") from None
            except ssl.SSLError as error:
                raise TlsFailedError(f"TLS setup failed ({error.reason or 'unknown'})") from None
            if self._check_name:
                # Before the handshake's last bytes go out: a certificate for another name
                # ends the connection there, as Go's handshake ends it.
                self._refuse_unless_named()
            self._flush(deadline)
            return

    def _refuse_unless_named(self) -> None:
        try:
            # None only without a certificate, which the verified handshake has refused.
            names = CertificateNames.of_peer(self._tls.getpeercert() or {})
        except ValueError:
            # A name not in ASCII (which `ssl` may not even decode, as UTF-8): Go's parser
            # refuses such a certificate whole ("x509: SAN dNSName is malformed").
            raise TlsFailedError("the server's certificate could not be read") from None
        if names_host(names, self._server_name):
            return
        if only_common_name_names(names, self._server_name):
            raise CommonNameOnlyError(
                f"the server's certificate names {self._server_name} only in its Common Name"
            )
        raise CertificateNameError(
            f"the server's certificate does not name {self._server_name} in a "
            "subject alternative name"
        )

    def send_all(self, data: bytes, deadline: Deadline) -> None:
        """Encrypt and send all of `data`."""
        view = memoryview(data)
        while view:
            try:
                written = self._tls.write(view[:CHUNK])
            except ssl.SSLError as error:
                raise SendFailedError(
                    f"TLS failed while sending ({error.reason or 'unknown'})"
                ) from None
            view = view[written:]
            self._flush(deadline)

    def receive(self, deadline: Deadline) -> bytes:
        """The next decrypted bytes; b"" once the peer closed (cleanly or not)."""
        while True:
            try:
                return self._with_what_is_decrypted(self._tls.read(CHUNK))
            except ssl.SSLWantReadError:
                self._flush(deadline)
                self._fill(deadline)
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                return b""
            except ssl.SSLError as error:
                raise ConnectionDroppedError(
                    f"TLS failed while receiving ({error.reason or 'unknown'})"
                ) from None

    def _with_what_is_decrypted(self, first: bytes) -> bytes:
        # One read gives one TLS record (16 KiB at most); the records already received are
        # taken too, so the HTTP parser steps once per receive, not once per record.
        pieces = [first]
        size = len(first)
        while first and size < CHUNK:
            try:
                more = self._tls.read(CHUNK - size)
            except ssl.SSLError:
                break  # no whole record waiting, or the end: the next receive says which
            if not more:
                break
            pieces.append(more)
            size += len(more)
        return b"".join(pieces)

    def is_reusable(self) -> bool:
        """Open and idle. Bytes waiting may be TLS 1.3 session tickets, which do not count."""
        if self._inner.is_reusable():
            return True
        try:
            self._fill(Deadline.after(1.0))  # readable now, so this does not wait
            self._tls.read(CHUNK)
        except ssl.SSLWantReadError:
            return True  # only handshake messages (session tickets) were waiting
        except Exception:  # noqa: BLE001 - any failure here means: do not reuse
            return False
        return False  # application bytes nobody asked for, or the end of the stream

    def close(self) -> None:
        """Close the inner stream (no close_notify: the connection is being dropped)."""
        self._inner.close()
