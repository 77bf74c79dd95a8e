"""A real OCI registry for tests: Debian's `docker-registry`, started on loopback.

Tests push their own tiny images through the registry's HTTP API (config + layer + manifest,
and indexes of several platforms, or of one), move tags, and delete manifests.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import shutil
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import bcrypt
import httpx2
import pytest

from tests.support.hostile import issue, make_authority
from tests.support.proxies import HttpConnectProxy

if TYPE_CHECKING:
    from tests.support.hostile import ServerCertificate

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar"
SCHEMA1 = "application/vnd.docker.distribution.manifest.v1+prettyjws"


def registry_binary() -> str | None:
    """The registry binary, or None; under CI a missing binary is a failure, not a skip."""
    found = shutil.which("docker-registry")
    if found is None and os.environ.get("TRUEGREEN_REQUIRE_REAL_PARTS"):
        raise RuntimeError("docker-registry is required in CI (Debian package docker-registry)")
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def digest_of(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


@dataclass
class Registry:
    """A running registry; `host` is what image references name (127.0.0.1:PORT). Over TLS
    when `ca` is the authority that signed its certificate."""

    host: str
    process: subprocess.Popen[bytes]
    username: str | None
    password: str | None
    ca: Path | None = None

    @property
    def url(self) -> str:
        return f"{'https' if self.ca else 'http'}://{self.host}"

    def _client(self) -> httpx2.Client:
        auth = (self.username, self.password) if self.username and self.password else None
        verify = ssl.create_default_context(cafile=self.ca) if self.ca else True
        # trust_env off: a test's HTTPS_PROXY is for the client under test, not for the pushes
        return httpx2.Client(
            base_url=self.url, auth=auth, timeout=10, verify=verify, trust_env=False
        )

    def _push_blob(self, client: httpx2.Client, repository: str, content: bytes) -> str:
        digest = digest_of(content)
        started = client.post(f"/v2/{repository}/blobs/uploads/")
        started.raise_for_status()
        location = started.headers["location"]
        separator = "&" if "?" in location else "?"
        client.put(f"{location}{separator}digest={digest}", content=content).raise_for_status()
        return digest

    def push_image(
        self, repository: str, tag: str | None, *, content: str, arch: str = "amd64"
    ) -> str:
        """Push a one-layer image whose bytes depend on `content`; returns its manifest digest."""
        with self._client() as client:
            config = json.dumps(
                {"architecture": arch, "os": "linux", "config": {"Labels": {"c": content}}}
            ).encode()
            layer = f"layer {content} {arch}".encode()
            config_digest = self._push_blob(client, repository, config)
            layer_digest = self._push_blob(client, repository, layer)
            manifest = json.dumps(
                {
                    "schemaVersion": 2,
                    "mediaType": OCI_MANIFEST,
                    "config": {
                        "mediaType": OCI_CONFIG,
                        "digest": config_digest,
                        "size": len(config),
                    },
                    "layers": [
                        {"mediaType": OCI_LAYER, "digest": layer_digest, "size": len(layer)}
                    ],
                }
            ).encode()
            reference = tag or digest_of(manifest)
            response = client.put(
                f"/v2/{repository}/manifests/{reference}",
                content=manifest,
                headers={"Content-Type": OCI_MANIFEST},
            )
            response.raise_for_status()
            return digest_of(manifest)

    def push_index(
        self,
        repository: str,
        tag: str,
        *,
        content: str,
        arches: tuple[str, ...] = ("amd64", "arm64"),
    ) -> tuple[str, list[str]]:
        """Push an index under `tag`, one linux image per architecture of `arches` (two
        platforms unless told); returns (index digest, platform digests)."""
        children = [self.push_image(repository, None, content=content, arch=a) for a in arches]
        with self._client() as client:
            index = json.dumps(
                {
                    "schemaVersion": 2,
                    "mediaType": OCI_INDEX,
                    "manifests": [
                        {
                            "mediaType": OCI_MANIFEST,
                            "digest": d,
                            "size": 1,
                            "platform": {"architecture": a, "os": "linux"},
                        }
                        for d, a in zip(children, arches, strict=True)
                    ],
                }
            ).encode()
            client.put(
                f"/v2/{repository}/manifests/{tag}",
                content=index,
                headers={"Content-Type": OCI_INDEX},
            ).raise_for_status()
        return digest_of(index), children

    def delete_manifest(self, repository: str, digest: str) -> None:
        with self._client() as client:
            client.delete(f"/v2/{repository}/manifests/{digest}").raise_for_status()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()


@contextlib.contextmanager
def running_registry(
    workdir: Path,
    *,
    username: str | None = None,
    password: str | None = None,
    tls: ServerCertificate | None = None,
) -> Iterator[Registry]:
    """A real registry for the length of the block (`start_registry`); a skip where
    docker-registry is missing, a failure under CI (`registry_binary`)."""
    binary = registry_binary()
    if binary is None:
        pytest.skip("docker-registry is not installed (Debian package docker-registry)")
    running = start_registry(binary, workdir, username=username, password=password, tls=tls)
    try:
        yield running
    finally:
        running.stop()


def start_registry(
    binary: str,
    workdir: Path,
    *,
    username: str | None = None,
    password: str | None = None,
    tls: ServerCertificate | None = None,
) -> Registry:
    """Start a registry with its own storage; basic auth through htpasswd when a user is given,
    https with `tls`'s certificate when given."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    auth = ""
    if username and password:
        hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4)).decode()
        (workdir / "htpasswd").write_text(f"{username}:{hashed}\n")
        auth = f"auth:\n  htpasswd:\n    realm: test\n    path: {workdir / 'htpasswd'}\n"
    config = workdir / "config.yml"
    config.write_text(
        "version: 0.1\n"
        "log:\n  level: error\n  accesslog:\n    disabled: true\n"
        f"storage:\n  filesystem:\n    rootdirectory: {workdir / 'data'}\n"
        "  delete:\n    enabled: true\n"
        f"http:\n  addr: 127.0.0.1:{port}\n"
        + (f"  tls:\n    certificate: {tls.cert}\n    key: {tls.key}\n" if tls else "")
        + auth
    )
    log = (workdir / "registry.log").open("wb")
    process = subprocess.Popen([binary, "serve", str(config)], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                ca = tls.ca if tls else None
                return Registry(f"127.0.0.1:{port}", process, username, password, ca)
        except OSError:
            if process.poll() is not None:
                break
            time.sleep(0.05)
    process.kill()
    raise RuntimeError(
        f"docker-registry did not start: {(workdir / 'registry.log').read_text()[-500:]}"
    )


class TokenFront:
    """A bearer-token front for a registry: the challenge flow Docker Hub and others use.

    GET /token with the right basic login returns a token; /v2/ requests without it get a 401
    Bearer challenge. Requests with it are forwarded to the upstream registry. As
    distribution's token auth does (registry/auth/token/accesscontroller.go, Authorized), a
    token the service issued whose access list lacks the repository asked for is answered 401
    with `error="insufficient_scope"` in the challenge: the token service grants the robot a
    token with an empty access list for each repository of `no_access`, and, when `anonymous`
    (as Docker Hub does), a request without a login one that grants nothing. Faults can be
    set per path fragment: 429 with Retry-After, a missing Docker-Content-Digest, a schema-1
    answer, 403 DENIED, a redirect to `redirect_to` (another host), or an answer
    `slow_seconds` late. `seen` records each request's path and Authorization header;
    `manifest_asks` the method and path of each manifest request past the login check: what
    Docker Hub counts, each GET a pull (docs.docker.com/docker-hub/usage/pulls).

    With `tls`, it answers over https with that certificate; `realm` then names the token
    service as the challenge sends it (Docker Hub's `https://auth.docker.io/token`), and
    `public` the repositories the token handed out without a login may read (an official
    image), so that, as on Docker Hub, a repository that does not exist is refused to it as a
    private one is.
    """

    def __init__(
        self,
        upstream: Registry,
        username: str,
        password: str,
        *,
        tls: ServerCertificate | None = None,
    ) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.upstream = upstream
        self.username, self.password = username, password
        self.token = "tok-" + digest_of(os.urandom(8))[7:19]
        self.scopeless_token = "tok-none-" + digest_of(os.urandom(8))[7:19]
        """A token the service issued whose access list is empty."""
        self.no_access: set[str] = set()
        self.anonymous = False
        self.public: set[str] = set()
        """Repositories the token handed out without a login may read (where `anonymous`)."""
        self.realm: str | None = None
        """The token service the challenge names; None: this front's own `/token`."""
        self.faults: dict[str, str] = {}
        self.slow_seconds = 3.0
        self.seen: list[tuple[str, str | None]] = []
        self.manifest_asks: list[tuple[str, str]] = []
        front = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                """Quiet."""

            def _reply(
                self, status: int, body: bytes = b"", headers: dict[str, str] | None = None
            ) -> None:
                self.send_response(status)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _serve(self) -> None:
                front.seen.append((self.path, self.headers.get("Authorization")))
                if self.path.startswith("/token"):
                    self._token()
                    return
                name = self.path.split("/manifests/")[0].removeprefix("/v2/")
                authorization = self.headers.get("Authorization")
                if authorization != f"Bearer {front.token}" or name in front.no_access:
                    self._challenge(name, authorization)
                    return
                if "/manifests/" in self.path:
                    front.manifest_asks.append((self.command, self.path))
                fault = next((f for part, f in front.faults.items() if part in self.path), None)
                if fault == "429":
                    self._reply(429, b"{}", {"Retry-After": "120"})
                    return
                if fault == "redirect":
                    self._reply(307, b"", {"Location": f"{front.redirect_to}{self.path}"})
                    return
                if fault == "slow":
                    time.sleep(front.slow_seconds)  # past a client's timeout
                if fault == "denied":
                    denied = {
                        "code": "DENIED",
                        "message": "requested access to the resource is denied",
                    }
                    self._reply(
                        403,
                        json.dumps({"errors": [denied]}).encode(),
                        {"Content-Type": "application/json"},
                    )
                    return
                if fault == "schema1":
                    self._reply(
                        200,
                        b"{}",
                        {"Content-Type": SCHEMA1},
                    )
                    return
                with httpx2.Client(base_url=front.upstream.url, timeout=10) as client:
                    upstream = client.request(
                        self.command, self.path, headers={"Accept": self.headers.get("Accept", "")}
                    )
                headers = {
                    k: v
                    for k, v in upstream.headers.items()
                    if k.lower() in ("content-type", "docker-content-digest")
                }
                if fault == "low-remaining":
                    headers["RateLimit-Remaining"] = "2;w=21600"
                if fault == "no-digest":
                    headers.pop("docker-content-digest", None)
                    headers.pop("Docker-Content-Digest", None)
                self._reply(upstream.status_code, upstream.content, headers)

            def _token(self) -> None:
                """The robot's token; one that grants nothing for a repository of `no_access`,
                and without a login where `anonymous`; else 401."""
                from urllib.parse import parse_qs, urlsplit

                expected = (
                    "Basic "
                    + base64.b64encode(f"{front.username}:{front.password}".encode()).decode()
                )
                scope = parse_qs(urlsplit(self.path).query).get("scope", [""])[0]
                repository = scope.removeprefix("repository:").rpartition(":")[0]
                authorization = self.headers.get("Authorization")
                if authorization is None and front.anonymous:
                    token = front.token if repository in front.public else front.scopeless_token
                elif authorization != expected:
                    self._reply(401, b'{"errors":[{"code":"UNAUTHORIZED"}]}')
                    return
                else:
                    token = front.scopeless_token if repository in front.no_access else front.token
                self._reply(
                    200, json.dumps({"token": token}).encode(), {"Content-Type": "application/json"}
                )

            def _challenge(self, name: str, authorization: str | None) -> None:
                """401 with the Bearer challenge, and `error="insufficient_scope"` where the
                request carried a token the service issued (accesscontroller.go
                challengeParams); the body as distribution's registry/handlers/app.go writes it
                (UNAUTHORIZED, the access asked for in its detail)."""
                realm = front.realm or f"http://{front.host}/token"
                challenge = (
                    f'Bearer realm="{realm}",service="test-registry",scope="repository:{name}:pull"'
                )
                issued = (f"Bearer {front.token}", f"Bearer {front.scopeless_token}")
                if authorization in issued:
                    challenge += ',error="insufficient_scope"'
                detail = [{"Type": "repository", "Class": "", "Name": name, "Action": "pull"}]
                error = {"code": "UNAUTHORIZED", "message": "authentication required"}
                body = json.dumps({"errors": [{**error, "detail": detail}]}).encode()
                self._reply(
                    401, body, {"WWW-Authenticate": challenge, "Content-Type": "application/json"}
                )

            def do_GET(self) -> None:
                self._serve()

            def do_HEAD(self) -> None:
                self._serve()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(tls.cert), str(tls.key))
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self.host = f"127.0.0.1:{self._server.server_address[1]}"
        self.redirect_to = ""
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


DOCKER_HUB_NAMES = ("registry-1.docker.io", "auth.docker.io")
"""Docker Hub's registry (where containerd and doctor send `docker.io` look-ups) and its token
service (the realm its challenge names)."""


@dataclass
class DockerHub:
    """Docker Hub for a test: `front` answers as registry-1.docker.io and as its token service
    auth.docker.io, over https, and `proxy` is the only way there: it takes every tunnel to
    either name on port 443 to the front. A client trusts `authority` to accept the front's
    certificate, and goes through `proxy` (HTTPS_PROXY), as it would reach the real one."""

    front: TokenFront
    proxy: HttpConnectProxy
    authority: Path


@contextlib.contextmanager
def docker_hub(
    upstream: Registry, folder: Path, username: str, password: str
) -> Iterator[DockerHub]:
    """A Docker Hub whose images are `upstream`'s, and whose one account is `username`: a token
    without a login reads only the repositories of `front.public` (an official image), and a
    repository it may not read, or that does not exist, is answered 401 `insufficient_scope`
    (TokenFront), as Docker Hub answers both."""
    authority = make_authority(folder, "hub-ca")
    names = ",".join(f"DNS:{name}" for name in DOCKER_HUB_NAMES)
    front = TokenFront(upstream, username, password, tls=issue(folder, authority, "hub", names))
    front.anonymous = True
    front.realm = f"https://{DOCKER_HUB_NAMES[1]}/token"
    port = int(front.host.rsplit(":", 1)[1])
    routes = {f"{name}:443": ("127.0.0.1", port) for name in DOCKER_HUB_NAMES}
    try:
        with HttpConnectProxy(routes=routes) as proxy:
            yield DockerHub(front, proxy, authority[0])
    finally:
        front.stop()


MANIFEST_LAYER_BYTES = 1_234_567
"""The one layer's size in the manifest `serving_manifests` answers."""


def serving_manifests(request: object, _: int) -> tuple[int, dict[str, str], bytes]:
    """A scripted registry (tests/support/hostile.py ScriptedApi) that serves every manifest
    asked for: one image of one layer of MANIFEST_LAYER_BYTES, its digest in the header as a
    registry sends it (distribution spec: Docker-Content-Digest)."""
    body = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {"mediaType": OCI_CONFIG, "digest": digest_of(b"{}"), "size": 2},
            "layers": [
                {"mediaType": OCI_LAYER, "digest": digest_of(b"x"), "size": MANIFEST_LAYER_BYTES}
            ],
        }
    ).encode()
    return 200, {"Content-Type": OCI_MANIFEST, "Docker-Content-Digest": digest_of(body)}, body


def served_from(objects: list[dict[str, Any]], host: str) -> list[dict[str, Any]]:
    """`objects` (a scenario) with every image served from the registry at `host`: the
    scenarios' registry.example.com images, and Docker Hub's mysql as `library/mysql`."""
    text = json.dumps(objects).replace("registry.example.com/", f"{host}/")
    served: list[dict[str, Any]] = json.loads(
        text.replace('"mysql:8.0"', f'"{host}/library/mysql:8.0"')
    )
    return served


def pull_login(host: str, username: str, password: str, name: str = "regcred") -> dict[str, Any]:
    """A registry login (a dockerconfigjson Secret of namespace `train`) for `host`."""
    auth = base64.b64encode(f"{username}:{password}".encode()).decode()
    config = json.dumps({"auths": {host: {"auth": auth}}}).encode()
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/dockerconfigjson",
        "metadata": {"name": name, "namespace": "train"},
        "data": {".dockerconfigjson": base64.b64encode(config).decode()},
    }
