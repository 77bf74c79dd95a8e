"""Resolving image tags to digests with the OCI distribution API, on truegreen's own transport.

HEAD /v2/<name>/manifests/<tag> with the index and manifest Accept types; the digest comes from
Docker-Content-Digest, or from the body when a registry leaves it out. An index is read (GET)
only for its platform manifests, and not where its HEAD names a digest the caller needs none
for: Docker Hub counts each manifest GET as a pull against the rate limit, never a HEAD
(docs.docker.com/docker-hub/usage/pulls). Whenever the body is read (GET), every digest
claimed for it is checked against it. Auth is anonymous, basic, or the
bearer-token challenge flow, with each login of the workload that names the image in turn
(`in_turn`): credentials go only to the scheme, host and port they belong to (and to the token
realm that registry names): the URL is built from the reference's parsed host and port
(images.py), and a login goes with a request only when the URL dialled has that very host and
port. Every address a name resolves to is judged before it is dialled (http/address_policy.py):
never link-local, unspecified or multicast; loopback as `RegistryAccess.outside` says. Each
server (registry, token service, redirect target) the environment's HTTPS_PROXY or HTTP_PROXY
applies to, by Go's rules (NO_PROXY; never loopback), is reached through a tunnel the proxy
opens to it (CONNECT, or SOCKS5; http/proxy_dial.py `EnvironmentProxies`): the proxy resolves
its name, so only an address written in the URL is judged; a login travels inside the tunnel,
never to the proxy as its own, and only TLS keeps it from the proxy's eyes: to a plain-HTTP
registry (one the operator named insecure) the proxy carries it in the clear. Redirects
are followed without credentials elsewhere and never from https to http. One deadline bounds
each look-up, a cap each answer. Every failure is a value naming what went wrong; nothing here
raises on a registry's answer.

One module past 600 lines: one OCI distribution client (challenge, token, manifest and index,
digest verification, credentials per host), whose bounds are tested together.
"""

import base64
import ipaddress
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import StrEnum
from functools import partial
from typing import Final
from urllib.parse import urlencode, urljoin, urlsplit

from msgspec import Struct

from truegreen.cluster import throttle
from truegreen.cluster.schedule import ReadSchedule
from truegreen.docker_config import EntryError, EntryLogin, login_entries, read_entry
from truegreen.http.address_policy import AddressPolicy
from truegreen.http.deadline import Deadline
from truegreen.http.dial import Connector, DirectDialer, Resolver
from truegreen.http.errors import (
    AddressRefusedError,
    AnswerTooLargeError,
    ConnectFailedError,
    ConnectionDroppedError,
    Place,
    ProtocolViolationError,
    ProxyFailedError,
    TimedOutError,
    TlsFailedError,
    TransportError,
)
from truegreen.http.framing import Body
from truegreen.http.proxy_dial import EnvironmentProxies
from truegreen.http.tls import TlsSettings
from truegreen.http.transport import Response, Transport
from truegreen.images import ImageReference, keyring_key, keyring_lookup, split_domain

INDEX_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)
MANIFEST_TYPES = (
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)
SCHEMA1_TYPES = (
    "application/vnd.docker.distribution.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v1+prettyjws",
)
ACCEPT = ", ".join((*INDEX_TYPES, *MANIFEST_TYPES))
DIGEST_TEXT = r"sha256:[a-f0-9]{64}(?![a-f0-9])|sha512:[a-f0-9]{128}(?![a-f0-9])"
"""The digests truegreen can verify: the algorithms the OCI image spec registers
(opencontainers/image-spec descriptor.md: sha256, sha512), lower-case hex of their length."""
_DIGEST = re.compile(f"^(?:{DIGEST_TEXT})$")
MAX_ANSWER_BYTES = 4 << 20
"""A registry answer (manifest, index, token, error) may not exceed this. The OCI distribution
spec (opencontainers/distribution-spec spec.md) has clients and registries expect manifests of
at least 4 megabytes; a larger answer is refused unread rather than hashed."""
LOOKUPS_IN_FLIGHT = 8
"""Look-ups a tick keeps in flight, and so the connections it may hold open to one registry:
a look-up thread without a connection of its own would only wait for another's."""
_MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


class LookupFailure(StrEnum):
    """Why a registry lookup returned no digest."""

    NOT_FOUND = "not-found"
    """The registry answered that the tag or digest does not exist: a measurement."""
    UNAUTHORIZED = "unauthorized"
    """The login was refused (the token service's 401, a 401 to basic auth or to a token
    with no `error` of insufficient scope), or the registry wants one and none was sent."""
    NOT_ALLOWED = "not-allowed"
    """The registry took the login, or handed out an anonymous token, and refused this
    repository: 401 with `error="insufficient_scope"` to a token the token service granted
    (distribution registry/auth/token/accesscontroller.go, Authorized: the token's access
    list lacks pull on it), or 403 (distribution-spec spec.md: DENIED). Docker Hub answers so
    for a private repository the account may not read and for one that does not exist
    alike."""
    RATE_LIMITED = "rate-limited"
    SERVER_ERROR = "server-error"
    TIMEOUT = "timeout"
    UNREACHABLE = "unreachable"
    MALFORMED = "malformed"
    TOO_LARGE = "too-large"
    """The answer was larger than MAX_ANSWER_BYTES; it was not read further."""
    DIGEST_MISMATCH = "digest-mismatch"
    """The manifest's content does not hash to the digest claimed for it."""
    UNSUPPORTED = "unsupported"
    """A Docker schema-1 manifest, which has no stable content digest."""
    INSECURE_REFUSED = "insecure-refused"
    """Plain HTTP to a registry that is neither on loopback nor named with --insecure-registry,
    or a redirect from https to http."""
    OWN_ADDRESS = "own-address"
    """The registry's name resolves to this machine's own address (loopback), which the
    access does not let it dial: nothing was dialled."""
    ADDRESS_REFUSED = "address-refused"
    """The registry's name resolves to a link-local, metadata, unspecified or multicast
    address, which is never dialled."""
    PRIVATE_ADDRESS = "private-address"
    """The registry's name resolves to a private network's address, which the access does not
    let it dial unless named: nothing was dialled."""


class Resolved(Struct, frozen=True):
    """A digest the registry serves for a reference, and the platform manifests under an index."""

    digest: str
    media_type: str
    children: tuple[str, ...] | None = ()
    """The index's platform manifests (none for an image manifest); None for an index that was
    not read: its HEAD named a digest whose platform manifests nobody wanted (the caller's
    `known`, or the pinned digest looked up: `RegistryClient.lookup`)."""

    @property
    def all_digests(self) -> frozenset[str]:
        """The digest and its platform children: any of them proves a pod runs this image
        (only the digest where the children were not read)."""
        return frozenset((self.digest, *(self.children or ())))


class LookupFailed(Struct, frozen=True):
    """A lookup that returned no digest, and why, in one plain line."""

    failure: LookupFailure
    reason: str


DigestLookup = Resolved | LookupFailed


class Manifest(Struct, frozen=True):
    """What the registry serves for a reference: its media type, the digest it claims (checked
    against the bytes when they were read), and the bytes when they were asked for (a GET)."""

    media_type: str
    digest: str | None = None
    content: bytes | None = None


class RegistryLogin(Struct, frozen=True):
    """Credentials for one registry host. `repr` never shows the secret."""

    registry: str
    username: str
    password: str

    def __repr__(self) -> str:
        return f"RegistryLogin(registry={self.registry!r}, username=<hidden>, password=<hidden>)"


class PullCredentials(Struct, frozen=True):
    """Registry logins from one workload's image pull secrets, filed as the kubelet's keyring
    files them (keyring.go BasicDockerKeyring.Add): (key, login) in the order read, every
    entry kept. An entry without a login that can be sent (None) still holds its key: it
    keeps Lookup from falling back to `index.docker.io`'s login, as the kubelet's does."""

    entries: tuple[tuple[str, RegistryLogin | None], ...] = ()

    def applying_to(self, reference: ImageReference) -> list[RegistryLogin]:
        """Every login the kubelet tries for `reference`, in its order (keyring.go Lookup:
        `images.keyring_lookup`), each addressed to the reference's registry alone; those
        without a user name and password to send left out."""
        return [
            RegistryLogin(reference.registry, login.username, login.password)
            for login in keyring_lookup(self.entries, reference.name)
            if login is not None
        ]

    @classmethod
    def joined(cls, many: Iterable["PullCredentials"]) -> "PullCredentials":
        """One keyring of several logins, in the order given, as MakeDockerKeyring adds every
        pull secret of a pod to one (pkg/credentialprovider/secrets/secrets.go)."""
        return cls(tuple(entry for credentials in many for entry in credentials.entries))

    @classmethod
    def from_docker_configs(cls, configs: Iterable[tuple[str, str]]) -> "PullCredentials":
        """Logins from (secret data key, base64 value) pairs, each entry under its keyring key
        (`images.keyring_key`; one url.Parse refuses is ignored, as Add ignores it), an empty
        or `null` one too, as Add files it; and none of a login the kubelet cannot read whole
        (docker_config.py)."""
        entries: list[tuple[str, RegistryLogin | None]] = []
        for key, value in configs:
            try:
                parsed = json.loads(base64.b64decode(value, validate=True))
            except ValueError:
                continue
            try:
                read = [(host, read_entry(e)) for host, e in login_entries(key, parsed).items()]
            except EntryError:
                continue  # one entry the kubelet cannot read fails the whole login
            for host, entry in read:
                filed = keyring_key(host)
                if filed is not None:
                    entries.append((filed, _login(filed, entry)))
        return cls(tuple(entries))


def _login(registry: str, read: EntryLogin | None) -> RegistryLogin | None:
    """The login the kubelet sends from one entry as it reads it (docker_config.py: a
    non-empty `auth` wins over `username` and `password`); None where it holds no user name,
    no password (whichever field gave them: containerd asks a token service for a token with
    credentials only when the password is not empty, core/remotes/docker/authorizer.go
    doBearerAuth, and sends a basic-auth registry none, `no basic auth credentials`), or one
    doctor cannot send."""
    if read is None or not read.username or not read.password:
        return None
    return RegistryLogin(registry, read.username, read.password)


class LookupKey(Struct, frozen=True):
    """One look-up: a reference as the logins tried for it in turn see it (none: anonymously).
    Two workloads share a look-up only when they would send the same credentials for it, in
    the same order."""

    reference: str
    logins: tuple[RegistryLogin, ...] = ()


def in_turn(
    look_up: Callable[[RegistryLogin | None], DigestLookup], logins: Sequence[RegistryLogin]
) -> DigestLookup:
    """What a pull trying each of `logins` in turn finds, as the kubelet tries every login the
    keyring returns until one pull succeeds, and pulls anonymously with none
    (pkg/kubelet/kuberuntime/kuberuntime_image.go PullImage): the first digest found. A rate
    limit ends the turn (the registry asked to wait). With no digest, the first failure that is
    not NOT_FOUND: that login might have been shown the image, so nothing is measured; NOT_FOUND
    only where every login tried was told so."""
    failures: list[LookupFailed] = []
    for login in logins or (None,):
        found = look_up(login)
        if isinstance(found, Resolved):
            return found
        failures.append(found)
        if found.failure is LookupFailure.RATE_LIMITED:
            break
    unmeasured = [f for f in failures if f.failure is not LookupFailure.NOT_FOUND]
    return (unmeasured or failures)[0]


def is_loopback(host: str) -> bool:
    """Whether a host, as a URL names it (lower case, an IPv6 address without brackets, no
    port), is this machine by its text (`localhost`, 127.0.0.0/8, ::1). What the name resolves
    to is judged again before dialling (http/address_policy.py)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def named_registries(names: Iterable[str]) -> frozenset[tuple[str, int | None]]:
    """(host, port) of each registry an operator named (`HOST`, `HOST:PORT`, `[IPv6]:PORT`);
    port None: any port. Raises ImageReferenceError for one that is not a registry name."""
    return frozenset(split_domain(name) for name in names)


def _challenge(header: str) -> tuple[str, dict[str, str]]:
    scheme, _, rest = header.partition(" ")
    params = dict(re.findall(r'(\w+)="([^"]*)"', rest))
    return scheme.lower(), params


def digest_of(body: Body, algorithm: str = "sha256") -> str:
    """`algorithm:hex` of `body` (sha256 or sha512)."""
    import hashlib  # loading it initialises OpenSSL: 2-3 ms a tick with nothing to look up skips

    return f"{algorithm}:{hashlib.new(algorithm, body).hexdigest()}"


class _Origin(Struct, frozen=True):
    """Where a credential may go: scheme, host and port, as a browser's same-origin rule."""

    scheme: str
    host: str
    port: int

    @classmethod
    def of(cls, url: str) -> "_Origin | None":
        """None for a URL that is not http(s) with a host, or does not parse (a registry's
        redirect or token realm is hostile text: `http://[evil/`)."""
        try:
            parts = urlsplit(url)
            scheme = parts.scheme.lower()
            port = parts.port or (443 if scheme == "https" else 80)
        except ValueError:
            return None
        if scheme not in ("http", "https") or not parts.hostname:
            return None
        return cls(scheme, parts.hostname.lower(), port)


class RegistryAccess(Struct, frozen=True):
    """How the operator lets refresh talk to registries."""

    timeout: float = 10.0
    """Seconds for each look-up: every request it makes (login, redirects, retries) included."""
    insecure_registries: frozenset[str] = frozenset()
    """Registries (`HOST` or `HOST:PORT`) that may be reached over plain HTTP (refresh:
    loopback always may)."""
    verify_tls: bool = True
    outside: bool = False
    """True where the client runs outside the cluster (doctor, on the operator's computer): a
    loopback registry in an image names each machine's own address, which this computer is
    not, and a private network's address chosen by whoever wrote the workload may lead into
    the operator's own network, so loopback, private addresses and plain HTTP are allowed only
    to a registry in `insecure_registries` (`--registry-allow`). False (refresh, which runs
    beside the workloads, in their network): loopback and plain HTTP to it as docker allows,
    private addresses always."""


_DEFAULT_ACCESS = RegistryAccess()
_REFUSED_PLACES: Final = {
    Place.NEVER: LookupFailure.ADDRESS_REFUSED,
    Place.OWN: LookupFailure.OWN_ADDRESS,
    Place.PRIVATE: LookupFailure.PRIVATE_ADDRESS,
}


class RegistryClient:
    """Looks up digests; one per tick. Thread-safe: lookups run concurrently."""

    def __init__(
        self,
        access: RegistryAccess = _DEFAULT_ACCESS,
        *,
        rate_limit_reserve: int = 5,
        transport: Transport | None = None,
        resolver: Resolver | None = None,
        connector: Connector | None = None,
    ) -> None:
        """`resolver` finds a registry name's addresses (`resolve_name` unless given);
        `connector` dials them once the policy passed every one (`connect_first` unless
        given): a test's resolve and record without dialling anything but loopback. A server
        the environment's HTTPS_PROXY or HTTP_PROXY applies to (NO_PROXY and loopback aside)
        is reached through that proxy, which resolves its name (`EnvironmentProxies`)."""
        self._timeout = access.timeout
        self._named = named_registries(access.insecure_registries)
        self._outside = access.outside
        self._reserve = rate_limit_reserve
        policy = AddressPolicy(self._named if access.outside else None)
        tls = TlsSettings(verify=access.verify_tls)
        direct = DirectDialer(resolver, check=policy.check, connector=connector)
        proxies = EnvironmentProxies(os.environ, tls, direct, check=policy.check)
        self._transport = transport or Transport(
            tls, direct, per_host=LOOKUPS_IN_FLIGHT, route=proxies.dialer
        )
        # Keyed by the login too: one workload's token never answers for another's login.
        self._tokens: dict[tuple[RegistryLogin | None, str, str], str] = {}
        self._exhausted: dict[str, str] = {}
        self._lock = threading.Lock()
        self.requests_made = 0

    def close(self) -> None:
        """Release connections."""
        self._transport.close()

    @property
    def below_reserve(self) -> tuple[str, ...]:
        """Why look-ups stopped: registries whose remaining rate limit fell below the reserve."""
        with self._lock:
            return tuple(sorted(self._exhausted.values()))

    def resolve_all(
        self,
        wanted: Iterable[tuple[ImageReference, tuple[RegistryLogin, ...]]],
        on_each: Callable[[], None] | None = None,
        known: Mapping[LookupKey, str] | None = None,
    ) -> dict[LookupKey, DigestLookup]:
        """Each distinct (reference, logins) looked up once (`lookup_each`), concurrently.
        `on_each` is called after every look-up (a progress bar); `known`: per look-up, the
        digest whose platform manifests nobody needs (`lookup`)."""
        distinct = {LookupKey(str(r), logins): (r, logins) for r, logins in wanted}
        stopped = threading.Event()
        settled = known or {}

        def lookup(item: tuple[ImageReference, tuple[RegistryLogin, ...]]) -> DigestLookup:
            reference, logins = item
            result = self.lookup_each(
                reference, logins, known=settled.get(LookupKey(str(reference), logins))
            )
            if on_each is not None and not stopped.is_set():
                on_each()
            return result

        # Daemon threads, as doctor's look-ups run (a ReadSchedule): a signal (Ctrl-C,
        # SIGTERM) goes up from the main thread's wait at once, and a look-up still in flight
        # keeps no process alive until its --request-timeout. concurrent.futures' workers
        # would be joined at exit (concurrent/futures/thread.py `_python_exit`), however the
        # pool was shut down. A look-up only reads, so ending with one in flight leaves nothing
        # half written; the ones not started are dropped, and none draws progress any more.
        try:
            with ReadSchedule(LOOKUPS_IN_FLIGHT) as schedule:
                pending = {
                    key: schedule.submit(partial(lookup, item)) for key, item in distinct.items()
                }
                return {key: each.result() for key, each in pending.items()}
        finally:
            stopped.set()

    def lookup_each(
        self,
        reference: ImageReference,
        logins: Sequence[RegistryLogin],
        *,
        known: str | None = None,
    ) -> DigestLookup:
        """`lookup` with each of `logins` in turn (`in_turn`): the workload's logins that the
        kubelet tries for `reference`, in its order (`PullCredentials.applying_to`)."""
        return in_turn(partial(self.lookup, reference, known=known), logins)

    def lookup(
        self,
        reference: ImageReference,
        login: RegistryLogin | None = None,
        *,
        known: str | None = None,
    ) -> DigestLookup:
        """The digest a tag points to, or whether a pinned digest still exists, as `login`
        (the workload's own login for this registry, or None) sees it.

        The HEAD's Docker-Content-Digest names the digest. The manifest is read (GET) where
        the HEAD names none, or names an index whose platform manifests are wanted: every
        index but `known` (a digest the caller judges without them) and, looked up by digest,
        that digest itself (only whether it exists is asked); the children of an index not
        read are None. Docker Hub counts each GET of a manifest as a pull, and no HEAD
        (docs.docker.com/docker-hub/usage/pulls: "A pull is defined as a GET request to
        /v2/<name>/manifests/<reference>"), so a tag that did not move costs no pull."""
        deadline = Deadline.after(self._timeout)
        if login is not None and login.registry != reference.registry:
            login = None  # a login goes only to the registry it belongs to
        with self._lock:
            stop = self._exhausted.get(reference.registry)
        if stop:
            return LookupFailed(LookupFailure.RATE_LIMITED, stop)
        target = reference.digest or reference.tag or "latest"
        url = self._manifest_url(reference, target)
        head = self._request("HEAD", url, reference, login, deadline)
        if isinstance(head, LookupFailed):
            return head
        digest = head.header("docker-content-digest") or ""
        media_type = _media_type(head, "")
        if media_type in SCHEMA1_TYPES:
            return _schema1(reference)
        children: tuple[str, ...] | None = ()
        if digest and media_type in INDEX_TYPES and digest == (reference.digest or known):
            children = None  # the index's platform manifests are not wanted: no GET, no pull
        elif not digest or media_type in INDEX_TYPES:
            got = self._request("GET", url, reference, login, deadline)
            if isinstance(got, LookupFailed):
                return got
            media_type = _media_type(got, media_type)
            if media_type in SCHEMA1_TYPES:
                return _schema1(reference)
            claims = [
                d for d in (digest, got.header("docker-content-digest"), reference.digest) if d
            ]
            verified = _verified(got.body, claims, reference.registry)
            if isinstance(verified, LookupFailed):
                return verified
            digest = verified
            if media_type in INDEX_TYPES:
                found = _children(got.body)
                if found is None:
                    return LookupFailed(
                        LookupFailure.MALFORMED, f"{reference.name}: index is not valid"
                    )
                children = found
        if media_type not in _SERVED_TYPES:  # the answer's whose media type containerd takes
            return _not_a_manifest(reference.registry, media_type)
        if not _DIGEST.match(digest):
            return LookupFailed(
                LookupFailure.MALFORMED, f"{reference.registry} answered an invalid digest"
            )
        if reference.digest and digest != reference.digest:
            return LookupFailed(
                LookupFailure.MALFORMED,
                f"{reference.registry} served another digest than asked for",
            )
        return Resolved(digest, media_type, children)

    def manifest(
        self,
        reference: ImageReference,
        login: RegistryLogin | None = None,
        *,
        content: bool = False,
        deadline: Deadline | None = None,
    ) -> Manifest | LookupFailed:
        """Whether the registry serves `reference` to `login`: a HEAD, or with `content` (or a
        HEAD naming no digest) a GET whose bytes are checked against every digest claimed for
        them and must be a JSON document. Either answer must carry a manifest's or an index's
        media type. `deadline` bounds every request of the look-up (several manifests of one
        image may share it)."""
        deadline = deadline or Deadline.after(self._timeout)
        if login is not None and login.registry != reference.registry:
            login = None  # a login goes only to the registry it belongs to
        with self._lock:
            stop = self._exhausted.get(reference.registry)
        if stop:
            return LookupFailed(LookupFailure.RATE_LIMITED, stop)
        target = reference.digest or reference.tag or "latest"
        url = self._manifest_url(reference, target)
        answer = self._request("GET" if content else "HEAD", url, reference, login, deadline)
        if isinstance(answer, LookupFailed):
            return answer
        media_type = _media_type(answer, "")
        claimed = answer.header("docker-content-digest")
        if not content and not claimed:
            # containerd reads the manifest itself when a HEAD names no digest, and takes the
            # media type of that answer (remotes/docker/resolver.go, Resolve): so does doctor.
            return self.manifest(reference, login, content=True, deadline=deadline)
        if media_type not in _SERVED_TYPES:
            return _not_a_manifest(reference.registry, media_type)
        if media_type in SCHEMA1_TYPES or not content:
            # A schema-1 body is signed, not hashed as sent: it exists, and nothing more is said.
            digest = claimed if claimed and _DIGEST.match(claimed) else None
            if reference.digest and digest and digest != reference.digest:
                return LookupFailed(
                    LookupFailure.MALFORMED,
                    f"{reference.registry} served another digest than asked for",
                )
            return Manifest(media_type, digest)
        claims = [d for d in (claimed, reference.digest) if d]
        verified = _verified(answer.body, claims, reference.registry)
        if isinstance(verified, LookupFailed):
            return verified
        if not _is_document(answer.body):
            return LookupFailed(
                LookupFailure.MALFORMED,
                f"{reference.registry} sent a manifest that is not a JSON document",
            )
        return Manifest(media_type, verified, bytes(answer.body))

    def _manifest_url(self, reference: ImageReference, target: str) -> str:
        """The manifest's URL, built from the reference's parsed host and port (never its
        text: a `#` or `?` there would cut the host short)."""
        if reference.registry == "docker.io":
            return f"https://registry-1.docker.io/v2/{reference.repository}/manifests/{target}"
        host, port = reference.host, reference.port
        scheme = "http" if self._plain_http_allowed(host, port or 80) else "https"
        authority = f"[{host}]" if ":" in host else host
        if port is not None:
            authority += f":{port}"
        return f"{scheme}://{authority}/v2/{reference.repository}/manifests/{target}"

    def _plain_http_allowed(self, host: str, port: int) -> bool:
        """Plain HTTP only to a registry the operator named; beside the workloads (refresh),
        also on loopback, as docker allows."""
        named = (host, None) in self._named or (host, port) in self._named
        return named or (not self._outside and is_loopback(host))

    def _send(
        self, method: str, url: str, headers: list[tuple[str, str]], deadline: Deadline
    ) -> Response | LookupFailed:
        """One exchange on the transport; a transport failure becomes a plain reason."""
        with self._lock:
            self.requests_made += 1
        host = urlsplit(url).netloc
        try:
            return self._transport.request(
                method, url, deadline=deadline, max_bytes=MAX_ANSWER_BYTES, headers=headers
            )
        except TimedOutError:
            return LookupFailed(LookupFailure.TIMEOUT, f"{host} did not answer in time")
        except AddressRefusedError as error:
            failure = _REFUSED_PLACES[error.place]
            return LookupFailed(failure, f"not connected to {host}: {error}")
        except AnswerTooLargeError as error:
            return LookupFailed(
                LookupFailure.TOO_LARGE,
                f"{host}'s answer was larger than {error.limit:,} bytes",
            )
        except ProxyFailedError as error:
            return LookupFailed(LookupFailure.UNREACHABLE, f"could not connect to {host}: {error}")
        except TlsFailedError:
            return LookupFailed(
                LookupFailure.UNREACHABLE,
                f"could not connect to {host}: its TLS certificate was not accepted",
            )
        except ConnectFailedError:
            return LookupFailed(LookupFailure.UNREACHABLE, f"could not connect to {host}")
        except ConnectionDroppedError:
            return LookupFailed(
                LookupFailure.UNREACHABLE, f"{host} closed the connection before answering"
            )
        except ProtocolViolationError:
            return LookupFailed(LookupFailure.MALFORMED, f"{host} did not answer in HTTP")
        except TransportError:
            return LookupFailed(LookupFailure.UNREACHABLE, f"no usable answer from {host}")

    def _request(
        self,
        method: str,
        url: str,
        reference: ImageReference,
        login: RegistryLogin | None,
        deadline: Deadline,
    ) -> Response | LookupFailed:
        """One request with auth, safe redirects, and client-go's throttling retry."""
        registry = reference.registry
        scope = f"repository:{reference.repository}:pull"
        home = _Origin.of(url)
        if login is not None and not _is_home_of(home, reference):
            login = None  # belt and braces: a login goes only to its image's host and port
        retried_auth = False
        retries = redirects = 0
        current = url
        while True:
            headers = [("accept", ACCEPT)]
            at_home = _Origin.of(current) == home
            authorization = self._authorization(login, registry, scope) if at_home else None
            if authorization:
                headers.append(("authorization", authorization))
            response = self._send(method, current, headers, deadline)
            if isinstance(response, LookupFailed):
                return response
            self._note_rate_limit(registry, response)
            status = response.status
            location = response.header("location")
            if status in _REDIRECTS and location:
                redirects += 1
                if redirects > _MAX_REDIRECTS:
                    return LookupFailed(LookupFailure.MALFORMED, f"{registry} redirects in a loop")
                try:
                    target = urljoin(current, location.strip())
                except ValueError:
                    target = ""  # not a URL: refused below as an address that is not web
                refused = self._redirect_refusal(current, target, registry)
                if refused is not None:
                    return refused
                current = target
                continue
            if status == 401 and at_home and not retried_auth:
                retried_auth = True
                failed = self._authenticate(registry, scope, login, response, deadline)
                if failed is not None:
                    return failed
                continue
            wait = throttle.retry_wait(status, response.header("retry-after"))
            if wait is not None and throttle.may_retry(retries, wait, deadline.remaining()):
                retries += 1
                time.sleep(wait)
                continue
            if status == 429:
                asked = f" (asked to wait {wait:.0f}s)" if wait else ""
                return LookupFailed(
                    LookupFailure.RATE_LIMITED, f"{registry} is rate limiting{asked}"
                )
            if status in (401, 403):
                return _refusal(response, registry, reference.repository, authorization)
            if status == 404:
                return LookupFailed(
                    LookupFailure.NOT_FOUND, f"{reference} does not exist in the registry"
                )
            if not 200 <= status < 300:
                return LookupFailed(LookupFailure.SERVER_ERROR, f"{registry} answered {status}")
            return response

    def _redirect_refusal(self, source: str, target: str, registry: str) -> LookupFailed | None:
        """Why a redirect is not followed: never to plain HTTP from HTTPS, and plain HTTP only
        where the registry itself could be plain HTTP."""
        origin = _Origin.of(target)
        if origin is None:
            return LookupFailed(
                LookupFailure.MALFORMED, f"{registry} redirected to an address that is not web"
            )
        if origin.scheme == "http" and urlsplit(source).scheme.lower() == "https":
            return LookupFailed(
                LookupFailure.INSECURE_REFUSED,
                f"{registry} redirected from https to plain http; not followed",
            )
        if origin.scheme == "http" and not self._plain_http_allowed(origin.host, origin.port):
            return LookupFailed(
                LookupFailure.INSECURE_REFUSED,
                f"{registry} redirected to plain http at {origin.host}; not followed",
            )
        return None

    def _authorization(self, login: RegistryLogin | None, registry: str, scope: str) -> str | None:
        with self._lock:
            return self._tokens.get((login, registry, scope)) or self._tokens.get(
                (login, registry, "basic")
            )

    def _authenticate(
        self,
        registry: str,
        scope: str,
        login: RegistryLogin | None,
        response: Response,
        deadline: Deadline,
    ) -> LookupFailed | None:
        scheme, params = _challenge(response.header("www-authenticate") or "")
        if scheme == "basic":
            if login is None:
                return LookupFailed(
                    LookupFailure.UNAUTHORIZED,
                    f"{registry} needs a login; the workload's pull secrets hold none for it",
                )
            basic = base64.b64encode(f"{login.username}:{login.password}".encode()).decode()
            with self._lock:
                self._tokens[(login, registry, "basic")] = f"Basic {basic}"
            return None
        if scheme == "bearer" and params.get("realm"):
            token = self._token(registry, scope, login, params, deadline)
            if isinstance(token, LookupFailed):
                return token
            with self._lock:
                self._tokens[(login, registry, scope)] = f"Bearer {token}"
            return None
        return LookupFailed(
            LookupFailure.UNAUTHORIZED, f"{registry} asks for an unknown kind of login"
        )

    def _token(
        self,
        registry: str,
        scope: str,
        login: RegistryLogin | None,
        params: Mapping[str, str],
        deadline: Deadline,
    ) -> str | LookupFailed:
        """A bearer token from the realm the registry named (the login goes there, and only
        over https unless the realm is on loopback or named insecure). No redirect is followed."""
        realm = params["realm"]
        origin = _Origin.of(realm)
        if origin is None:
            return LookupFailed(
                LookupFailure.MALFORMED, f"{registry} names a token service that is not web"
            )
        if origin.scheme != "https" and not self._plain_http_allowed(origin.host, origin.port):
            return LookupFailed(
                LookupFailure.INSECURE_REFUSED,
                f"{registry} names a token service over plain HTTP",
            )
        query = urlencode(
            {"service": params.get("service", ""), "scope": params.get("scope", scope)}
        )
        headers = [("accept", "application/json")]
        if login is not None:
            basic = base64.b64encode(f"{login.username}:{login.password}".encode()).decode()
            headers.append(("authorization", f"Basic {basic}"))
        answer = self._send(
            "GET", f"{realm}{'&' if '?' in realm else '?'}{query}", headers, deadline
        )
        if isinstance(answer, LookupFailed):
            return answer
        if answer.status in (401, 403):
            return LookupFailed(
                LookupFailure.UNAUTHORIZED, f"{registry}'s token service refused the login"
            )
        if answer.status != 200:
            return LookupFailed(
                LookupFailure.SERVER_ERROR,
                f"{registry}'s token service answered {answer.status}",
            )
        try:
            body = json.loads(bytes(answer.body))  # json reads no memoryview
            token = body.get("token") or body.get("access_token")
        except (ValueError, AttributeError, RecursionError):
            token = None
        if not isinstance(token, str) or not token:
            return LookupFailed(
                LookupFailure.MALFORMED, f"{registry}'s token service sent no token"
            )
        return token

    def _note_rate_limit(self, registry: str, response: Response) -> None:
        """Below the reserve of `ratelimit-remaining`, stop looking up at this registry."""
        remaining = response.header("ratelimit-remaining")
        if remaining is None:
            return
        match = re.match(r"\s*(\d{1,9})", remaining)
        if match and int(match.group(1)) < self._reserve:
            with self._lock:
                self._exhausted[registry] = (
                    f"{registry} has {match.group(1)} lookups left, "
                    f"below the reserve of {self._reserve}"
                )


_ERROR_CODE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}", re.ASCII)
"""A registry's error code as it may be shown: `insufficient_scope`, `DENIED` (the
distribution spec's codes and RFC 6750's are of this form); any other text is the registry's
and is not repeated."""


def _refusal(
    response: Response, registry: str, repository: str, authorization: str | None
) -> LookupFailed:
    """What a 401 or 403 to the manifest, after the login flow, says. NOT_ALLOWED where the
    registry took the request's credentials and refused the repository: a 401 to a bearer
    token the token service granted whose challenge says `error="insufficient_scope"` (as
    containerd reads it: remotes/docker/authorizer.go invalidAuthorization, and resolver.go
    Resolve then says `pull access denied, repository does not exist or may require
    authorization: server message: insufficient_scope`), or a 403 (RFC 9110 15.5.4: the
    credentials were understood and are not enough; distribution-spec DENIED). Any other 401
    refused the credentials, or wants some. The registry's own code is named when it is one
    (`_ERROR_CODE`)."""
    if response.status == 403:
        code = _body_error_code(response.body)
        said = f"403 {code}" if code else "403"
        return LookupFailed(
            LookupFailure.NOT_ALLOWED, f"{registry} refused pull access to {repository} ({said})"
        )
    _, params = _challenge(response.header("www-authenticate") or "")
    bearer = authorization is not None and authorization.startswith("Bearer ")
    if bearer and params.get("error") == "insufficient_scope":
        return LookupFailed(
            LookupFailure.NOT_ALLOWED,
            f"{registry} granted a token, then refused pull access to {repository} with it "
            "(insufficient_scope)",
        )
    return LookupFailed(
        LookupFailure.UNAUTHORIZED, f"{registry} refused the credentials for {repository}"
    )


def _body_error_code(body: Body) -> str | None:
    """The first error code of a distribution error body (`{"errors": [{"code": "DENIED"}]}`,
    distribution-spec spec.md, Error Codes), when it has the form of one."""
    try:
        code = json.loads(bytes(body))["errors"][0]["code"]  # json reads no memoryview
    except (ValueError, KeyError, IndexError, TypeError, RecursionError):
        return None
    return code if isinstance(code, str) and _ERROR_CODE.fullmatch(code) else None


def _is_home_of(origin: "_Origin | None", reference: ImageReference) -> bool:
    """Whether `origin` (the URL dialled) has the reference's parsed host and port."""
    if origin is None:
        return False
    if reference.registry == "docker.io":
        return origin.host == "registry-1.docker.io"
    default = 443 if origin.scheme == "https" else 80
    return origin.host == reference.host and origin.port == (reference.port or default)


def _media_type(response: Response, default: str) -> str:
    found = response.header("content-type")
    return found.split(";")[0].strip() if found is not None else default


_SERVED_TYPES = frozenset((*INDEX_TYPES, *MANIFEST_TYPES, *SCHEMA1_TYPES))
"""The media types a manifest answer may carry. containerd takes an answer's Content-Type as
the manifest's media type (remotes/docker/resolver.go, Resolve and getManifestMediaType) and
refuses any other (core/images/image.go, Manifest: "unexpected media type"); `text/plain`,
which it reads as schema 1, is no answer doctor can measure by either."""
_MEDIA_TYPE = re.compile(r"[a-z0-9][a-z0-9.+_-]{0,63}/[a-z0-9][a-z0-9.+_-]{0,126}", re.ASCII)


def _not_a_manifest(registry: str, media_type: str) -> LookupFailed:
    """What a registry answered instead of a manifest, in plain words (a media type is
    quoted only when it is one: the answer is the registry's text)."""
    if media_type == "text/html":
        what = "a web page (text/html)"
    elif not media_type:
        what = "something it did not name (no Content-Type)"
    elif _MEDIA_TYPE.fullmatch(media_type.lower()):
        what = media_type.lower()
    else:
        what = "something that is not a media type"
    return LookupFailed(
        LookupFailure.MALFORMED, f"{registry} answered with {what}, not an image manifest"
    )


def _is_document(body: Body) -> bool:
    """Whether a manifest's bytes are a JSON object, as every manifest and index is."""
    try:
        return isinstance(json.loads(bytes(body)), dict)  # json reads no memoryview
    except (ValueError, RecursionError):
        return False


def _schema1(reference: ImageReference) -> LookupFailed:
    return LookupFailed(
        LookupFailure.UNSUPPORTED,
        f"{reference.name} serves a Docker schema-1 manifest (no stable digest)",
    )


def _verified(body: Body, claims: list[str], registry: str) -> str | LookupFailed:
    """The body's digest: the first digest claimed for it, once every claim is checked against
    the bytes; sha256 of the bytes when nothing was claimed."""
    for claim in claims:
        if not _DIGEST.match(claim):
            return LookupFailed(
                LookupFailure.MALFORMED,
                f"{registry} answered a digest truegreen cannot verify (sha256 or sha512 only)",
            )
        if digest_of(body, claim.partition(":")[0]) != claim:
            return LookupFailed(
                LookupFailure.DIGEST_MISMATCH,
                f"{registry} sent a manifest whose content does not match its digest",
            )
    return claims[0] if claims else digest_of(body)


def _children(content: Body) -> tuple[str, ...] | None:
    try:
        parsed = json.loads(bytes(content))  # json reads no memoryview (a list page's body)
        manifests = parsed["manifests"]
        digests = tuple(str(m["digest"]) for m in manifests)
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    return digests if all(_DIGEST.match(d) for d in digests) else None
