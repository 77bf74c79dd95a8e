"""Resolving image tags to digests with the OCI distribution API.

HEAD /v2/<name>/manifests/<tag> with the index and manifest Accept types; the digest comes from
Docker-Content-Digest, or from hashing the body when a registry leaves it out. Auth is anonymous,
basic, or the bearer-token challenge flow. Credentials go only to the registry they belong to
(and to the token realm that registry names): a redirect to another host is followed without
them. Every failure is a value naming what went wrong; nothing here raises on a registry answer.
"""

import base64
import hashlib
import ipaddress
import json
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlencode, urlsplit

import httpx2

from truegreen.images import ImageReference, registry_key

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
_DIGEST = re.compile(r"^sha256:[a-f0-9]{64}$")
_MAX_REDIRECTS = 5
_RETRY_AFTER_LIMIT = 10.0
"""Longest Retry-After (seconds) worth waiting for inside one tick; longer ones end the lookup."""


class LookupFailure(StrEnum):
    """Why a registry lookup returned no digest."""

    NOT_FOUND = "not-found"
    """The registry answered that the tag or digest does not exist: a measurement."""
    UNAUTHORIZED = "unauthorized"
    RATE_LIMITED = "rate-limited"
    SERVER_ERROR = "server-error"
    TIMEOUT = "timeout"
    UNREACHABLE = "unreachable"
    MALFORMED = "malformed"
    UNSUPPORTED = "unsupported"
    """A Docker schema-1 manifest, which has no stable content digest."""
    INSECURE_REFUSED = "insecure-refused"
    """Plain HTTP to a registry that is neither on loopback nor named with --insecure-registry."""


@dataclass(frozen=True)
class Resolved:
    """A digest the registry serves for a reference, and the platform manifests under an index."""

    digest: str
    media_type: str
    children: tuple[str, ...] = ()

    @property
    def all_digests(self) -> frozenset[str]:
        """The digest and its platform children: any of them proves a pod runs this image."""
        return frozenset((self.digest, *self.children))


@dataclass(frozen=True)
class LookupFailed:
    """A lookup that returned no digest, and why, in one plain line."""

    failure: LookupFailure
    reason: str


DigestLookup = Resolved | LookupFailed


@dataclass(frozen=True)
class RegistryLogin:
    """Credentials for one registry host. `repr` never shows the secret."""

    registry: str
    username: str
    password: str

    def __repr__(self) -> str:
        return f"RegistryLogin(registry={self.registry!r}, username=<hidden>, password=<hidden>)"


@dataclass(frozen=True)
class PullCredentials:
    """Registry logins by registry host, from image pull secrets."""

    logins: Mapping[str, RegistryLogin]

    def for_registry(self, registry: str) -> RegistryLogin | None:
        """The login for `registry`, if any."""
        return self.logins.get(registry)

    @classmethod
    def from_docker_configs(cls, configs: Iterable[tuple[str, str]]) -> "PullCredentials":
        """Logins from (secret data key, base64 value) pairs; the first login per host wins."""
        logins: dict[str, RegistryLogin] = {}
        for key, value in configs:
            try:
                parsed = json.loads(base64.b64decode(value, validate=True))
            except ValueError:
                continue
            auths = (
                parsed.get("auths")
                if key == ".dockerconfigjson" and isinstance(parsed, dict)
                else parsed
            )
            if not isinstance(auths, dict):
                continue
            for host, entry in auths.items():
                login = _login(registry_key(str(host)), entry)
                if login is not None:
                    logins.setdefault(login.registry, login)
        return cls(logins)


def _login(registry: str, entry: object) -> RegistryLogin | None:
    if not isinstance(entry, dict):
        return None
    if entry.get("username") and entry.get("password"):
        return RegistryLogin(registry, str(entry["username"]), str(entry["password"]))
    if entry.get("auth"):
        try:
            user, _, password = base64.b64decode(str(entry["auth"])).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return None
        return RegistryLogin(registry, user, password) if user else None
    return None


def is_loopback(host: str) -> bool:
    """Whether a registry host (with optional port) is on this machine."""
    name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    name = name.strip("[]")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _challenge(header: str) -> tuple[str, dict[str, str]]:
    scheme, _, rest = header.partition(" ")
    params = dict(re.findall(r'(\w+)="([^"]*)"', rest))
    return scheme.lower(), params


def _digest_of(body: bytes) -> str:
    return "sha256:" + hashlib.sha256(body).hexdigest()


@dataclass(frozen=True)
class RegistryAccess:
    """How the operator lets refresh talk to registries."""

    timeout: float = 10.0
    """Seconds for each registry request."""
    insecure_registries: frozenset[str] = frozenset()
    """Hosts that may be reached over plain HTTP (loopback always may)."""
    verify_tls: bool = True


_DEFAULT_ACCESS = RegistryAccess()


class RegistryClient:
    """Looks up digests; one per tick. Thread-safe: lookups run concurrently."""

    def __init__(
        self,
        credentials: PullCredentials,
        access: RegistryAccess = _DEFAULT_ACCESS,
        *,
        rate_limit_reserve: int = 5,
    ) -> None:
        self._credentials = credentials
        self._insecure = access.insecure_registries
        self._reserve = rate_limit_reserve
        self._client = httpx2.Client(
            timeout=access.timeout, follow_redirects=False, verify=access.verify_tls
        )
        self._tokens: dict[tuple[str, str], str] = {}
        self._exhausted: dict[str, str] = {}
        self._lock = threading.Lock()
        self.requests_made = 0

    def close(self) -> None:
        """Release connections."""
        self._client.close()

    @property
    def below_reserve(self) -> tuple[str, ...]:
        """Why look-ups stopped: registries whose remaining rate limit fell below the reserve."""
        with self._lock:
            return tuple(sorted(self._exhausted.values()))

    def resolve_all(
        self,
        references: Iterable[ImageReference],
        on_each: Callable[[], None] | None = None,
    ) -> dict[str, DigestLookup]:
        """Each distinct reference looked up once, concurrently; keyed by `str(reference)`.
        `on_each` is called after every look-up (a progress bar)."""
        distinct = {str(r): r for r in references}

        def lookup(reference: ImageReference) -> DigestLookup:
            result = self.lookup(reference)
            if on_each is not None:
                on_each()
            return result

        with ThreadPoolExecutor(max_workers=8) as pool:
            results = pool.map(lookup, distinct.values())
            return dict(zip(distinct, results, strict=True))

    def lookup(self, reference: ImageReference) -> DigestLookup:
        """The digest a tag points to, or whether a pinned digest still exists."""
        target = reference.digest or reference.tag or "latest"
        base = self._base_url(reference.registry)
        if isinstance(base, LookupFailed):
            return base
        with self._lock:
            stop = self._exhausted.get(reference.registry)
        if stop:
            return LookupFailed(LookupFailure.RATE_LIMITED, stop)
        url = f"{base}/v2/{reference.repository}/manifests/{target}"
        try:
            response = self._request("HEAD", url, reference)
            if isinstance(response, LookupFailed):
                return response
            digest = response.headers.get("docker-content-digest", "")
            media_type = response.headers.get("content-type", "").split(";")[0].strip()
            if media_type in SCHEMA1_TYPES:
                return LookupFailed(
                    LookupFailure.UNSUPPORTED,
                    f"{reference.name} serves a Docker schema-1 manifest (no stable digest)",
                )
            if not digest or media_type in INDEX_TYPES:
                body = self._request("GET", url, reference)
                if isinstance(body, LookupFailed):
                    return body
                content = body.content
                digest = digest or _digest_of(content)
                media_type = body.headers.get("content-type", media_type).split(";")[0].strip()
                if media_type in SCHEMA1_TYPES:
                    return LookupFailed(
                        LookupFailure.UNSUPPORTED,
                        f"{reference.name} serves a Docker schema-1 manifest",
                    )
                children = _children(content) if media_type in INDEX_TYPES else ()
                if children is None:
                    return LookupFailed(
                        LookupFailure.MALFORMED, f"{reference.name}: index is not valid"
                    )
            else:
                children = ()
        except httpx2.TimeoutException:
            return LookupFailed(
                LookupFailure.TIMEOUT, f"{reference.registry} did not answer in time"
            )
        except httpx2.TransportError as error:
            return LookupFailed(
                LookupFailure.UNREACHABLE,
                f"could not connect to {reference.registry} ({type(error).__name__})",
            )
        if not _DIGEST.match(digest):
            return LookupFailed(
                LookupFailure.MALFORMED, f"{reference.registry} answered an invalid digest"
            )
        if reference.digest and digest != reference.digest:
            return LookupFailed(
                LookupFailure.MALFORMED,
                f"{reference.registry} served another digest than asked for",
            )
        return Resolved(digest, media_type, tuple(children))

    def _base_url(self, registry: str) -> str | LookupFailed:
        if registry == "docker.io":
            return "https://registry-1.docker.io"
        if is_loopback(registry) or registry in self._insecure:
            return f"http://{registry}"
        return f"https://{registry}"

    def _request(
        self, method: str, url: str, reference: ImageReference
    ) -> httpx2.Response | LookupFailed:
        """One request with auth, redirects that drop credentials, and 429 handling."""
        registry = reference.registry
        scope = f"repository:{reference.repository}:pull"
        retried_auth = False
        waited = False
        redirects = 0
        current = url
        while True:
            same_host = urlsplit(current).netloc == urlsplit(url).netloc
            headers = {"Accept": ACCEPT}
            if same_host:
                authorization = self._authorization(registry, scope)
                if authorization:
                    headers["Authorization"] = authorization
            with self._lock:
                self.requests_made += 1
            response = self._client.request(method, current, headers=headers)
            self._note_rate_limit(registry, response)
            status = response.status_code
            if status in (301, 302, 303, 307, 308) and "location" in response.headers:
                redirects += 1
                if redirects > _MAX_REDIRECTS:
                    return LookupFailed(LookupFailure.MALFORMED, f"{registry} redirects in a loop")
                current = str(httpx2.URL(current).join(response.headers["location"]))
                continue
            if status == 401 and same_host and not retried_auth:
                retried_auth = True
                failed = self._authenticate(registry, scope, response)
                if failed is not None:
                    return failed
                continue
            if status == 429:
                retry_after = _seconds(response.headers.get("retry-after"))
                if not waited and retry_after is not None and retry_after <= _RETRY_AFTER_LIMIT:
                    waited = True
                    time.sleep(retry_after)
                    continue
                return LookupFailed(
                    LookupFailure.RATE_LIMITED,
                    f"{registry} is rate limiting "
                    f"(retry after {response.headers.get('retry-after', '?')}s)",
                )
            if status in (401, 403):
                return LookupFailed(
                    LookupFailure.UNAUTHORIZED,
                    f"{registry} refused the credentials for {reference.repository}",
                )
            if status == 404:
                return LookupFailed(
                    LookupFailure.NOT_FOUND, f"{reference} does not exist in the registry"
                )
            if status >= 400:
                return LookupFailed(LookupFailure.SERVER_ERROR, f"{registry} answered {status}")
            return response

    def _authorization(self, registry: str, scope: str) -> str | None:
        with self._lock:
            return self._tokens.get((registry, scope)) or self._tokens.get((registry, "basic"))

    def _authenticate(
        self, registry: str, scope: str, response: httpx2.Response
    ) -> LookupFailed | None:
        scheme, params = _challenge(response.headers.get("www-authenticate", ""))
        login = self._credentials.for_registry(registry)
        if scheme == "basic":
            if login is None:
                return LookupFailed(
                    LookupFailure.UNAUTHORIZED, f"{registry} needs a login; none is set"
                )
            basic = base64.b64encode(f"{login.username}:{login.password}".encode()).decode()
            with self._lock:
                self._tokens[(registry, "basic")] = f"Basic {basic}"
            return None
        if scheme == "bearer" and params.get("realm"):
            realm = params["realm"]
            realm_host = urlsplit(realm).netloc
            if urlsplit(realm).scheme != "https" and not is_loopback(realm_host):
                return LookupFailed(
                    LookupFailure.INSECURE_REFUSED,
                    f"{registry} names a token service over plain HTTP",
                )
            query = {"service": params.get("service", ""), "scope": params.get("scope", scope)}
            auth = (login.username, login.password) if login else None
            with self._lock:
                self.requests_made += 1
            token_response = self._client.get(f"{realm}?{urlencode(query)}", auth=auth)
            if token_response.status_code in (401, 403):
                return LookupFailed(
                    LookupFailure.UNAUTHORIZED, f"{registry}'s token service refused the login"
                )
            if token_response.status_code >= 400:
                return LookupFailed(
                    LookupFailure.SERVER_ERROR,
                    f"{registry}'s token service answered {token_response.status_code}",
                )
            try:
                body = token_response.json()
                token = body.get("token") or body.get("access_token")
            except (ValueError, AttributeError):
                token = None
            if not isinstance(token, str) or not token:
                return LookupFailed(
                    LookupFailure.MALFORMED, f"{registry}'s token service sent no token"
                )
            with self._lock:
                self._tokens[(registry, scope)] = f"Bearer {token}"
            return None
        return LookupFailed(
            LookupFailure.UNAUTHORIZED, f"{registry} asks for an unknown kind of login"
        )

    def _note_rate_limit(self, registry: str, response: httpx2.Response) -> None:
        """Below the reserve of `ratelimit-remaining`, stop looking up at this registry."""
        remaining = response.headers.get("ratelimit-remaining")
        if remaining is None:
            return
        match = re.match(r"\s*(\d+)", remaining)
        if match and int(match.group(1)) < self._reserve:
            with self._lock:
                self._exhausted[registry] = (
                    f"{registry} has {match.group(1)} lookups left, "
                    f"below the reserve of {self._reserve}"
                )


def _seconds(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _children(content: bytes) -> tuple[str, ...] | None:
    try:
        parsed = json.loads(content)
        manifests = parsed["manifests"]
        digests = tuple(str(m["digest"]) for m in manifests)
    except (ValueError, KeyError, TypeError):
        return None
    return digests if all(_DIGEST.match(d) for d in digests) else None
