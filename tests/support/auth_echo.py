"""A tiny loopback API server that records who knocked: the oracle's ear for credential plugins.

The real `kubectl get --raw /version` needs only `/version` to answer; this server answers it and
keeps each request's Authorization header and client certificate subject, so a test can see
exactly what kubectl presented after running a plugin; a request with neither is answered 401.
"""

import json
import shutil
import ssl
import subprocess
import sys
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

VERSION = {"major": "1", "minor": "32", "gitVersion": "v1.32.0", "platform": "linux/amd64"}


@dataclass(frozen=True)
class Knock:
    """One request as the server saw it."""

    path: str
    authorization: str | None
    client_subject: str | None
    """The client certificate's subject (`CN=…`), when one was presented over TLS."""


@dataclass(frozen=True)
class Pki:
    """A throwaway CA with a server certificate for 127.0.0.1 and one client certificate."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    client_subject: str


def make_pki(folder: Path, client_cn: str = "plugin-user") -> Pki:
    """Make the certificates with the real `openssl` (no Python crypto dependency)."""
    openssl = shutil.which("openssl")
    assert openssl is not None, "openssl is required (.ci/run installs it)"
    folder.mkdir(parents=True, exist_ok=True)

    def run(*args: str) -> None:
        subprocess.run([openssl, *args], check=True, capture_output=True, cwd=folder)

    run(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=echo-ca",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
    )
    for name, subject, extension in (
        ("server", "/CN=127.0.0.1", "subjectAltName=IP:127.0.0.1"),
        ("client", f"/CN={client_cn}", "extendedKeyUsage=clientAuth"),
    ):
        (folder / f"{name}.ext").write_text(extension + "\n")
        run(
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            subject,
            "-keyout",
            f"{name}.key",
            "-out",
            f"{name}.csr",
        )
        run(
            "x509",
            "-req",
            "-in",
            f"{name}.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            f"{name}.ext",
            "-out",
            f"{name}.crt",
        )
    return Pki(
        folder / "ca.crt",
        folder / "server.crt",
        folder / "server.key",
        folder / "client.crt",
        folder / "client.key",
        f"commonName={client_cn}",
    )


class AuthEcho:
    """Answers `/version` over TLS on 127.0.0.1 and records every request's credentials.

    client-go reads a kubeconfig user's credentials (plugins included) only when the transport
    is TLS (`tools/clientcmd/client_config.go`, `IsConfigTransportTLS`), so this is always HTTPS.
    """

    def __init__(self, pki: Pki) -> None:
        """Serve with `pki`'s server certificate; accept client certificates its CA signed."""
        self.knocks: list[Knock] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(pki.server_cert), str(pki.server_key))
        context.load_verify_locations(str(pki.ca))
        context.verify_mode = ssl.CERT_OPTIONAL
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The server's address, as a kubeconfig names it."""
        return f"https://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> "AuthEcho":
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _record(self, knock: Knock) -> None:
        with self._lock:
            self.knocks.append(knock)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        echo = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                knock = Knock(
                    self.path, self.headers.get("Authorization"), _subject(self.connection)
                )
                echo._record(knock)
                if knock.authorization is None and knock.client_subject is None:
                    self._answer(401, _status(401, "Unauthorized"))
                elif urlsplit(self.path).path == "/version":
                    self._answer(200, VERSION)
                else:
                    self._answer(404, _status(404, "NotFound"))

            def _answer(self, code: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler


def _subject(connection: object) -> str | None:
    if not isinstance(connection, ssl.SSLSocket):
        return None
    peer = connection.getpeercert()
    if not peer:
        return None
    subject: Any = peer.get("subject", ())
    return ",".join(f"{key}={value}" for rdn in subject for key, value in rdn)


def _status(code: int, reason: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": reason,
        "reason": reason,
        "code": code,
    }


_PLUGIN = '''#!{python}
"""A credential plugin written by a test: answers from plan.json, records each run."""
import json, os, signal, sys, time

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "plan.json")) as f:
    plan = json.load(f)
runs = os.path.join(here, "runs.jsonl")
done = sum(1 for _ in open(runs)) if os.path.exists(runs) else 0
null = os.stat(os.devnull)
stdin = os.fstat(0)
with open(runs, "a") as f:
    f.write(json.dumps({{
        "info": os.environ.get("KUBERNETES_EXEC_INFO"),
        "argv": sys.argv[1:],
        "env": {{name: os.environ.get(name) for name in plan.get("record_env", [])}},
        "stdin_tty": os.isatty(0),
        "stdin_null": (stdin.st_dev, stdin.st_ino) == (null.st_dev, null.st_ino),
    }}) + "\\n")
answer = plan["answers"][min(done, len(plan["answers"]) - 1)]
if "kind" in answer:
    answer = {{"stdout": answer}}
sys.stderr.write(answer.get("stderr", ""))
sys.stderr.flush()
os.write(2, bytes.fromhex(answer.get("stderr_hex", "")))
time.sleep(answer.get("sleep", 0))
if answer.get("signal"):
    os.kill(os.getpid(), answer["signal"])
if "stdout_bytes" in answer:
    chunk = "x" * 65536
    for _ in range(answer["stdout_bytes"] // len(chunk)):
        sys.stdout.write(chunk)
elif isinstance(answer.get("stdout"), str):
    sys.stdout.write(answer["stdout"])
elif "stdout" in answer:
    sys.stdout.write(json.dumps(answer["stdout"]))
sys.exit(answer.get("exit", 0))
'''


@dataclass(frozen=True)
class RecordingPlugin:
    """A real plugin program in its own folder, its answers planned by the test."""

    path: Path

    def plan(self, *answers: dict[str, Any], record_env: tuple[str, ...] = ()) -> None:
        """What the plugin does on each run (the last answer repeats).

        An answer is an ExecCredential to print, or a dict of `stdout` (text or JSON to print),
        `stdout_bytes`, `stderr` (or raw bytes as `stderr_hex`), `sleep`, `signal` (to kill
        itself with), `exit`.
        """
        plan = {"answers": list(answers), "record_env": list(record_env)}
        (self.path.parent / "plan.json").write_text(json.dumps(plan))

    def runs(self) -> list[dict[str, Any]]:
        """What each run received: KUBERNETES_EXEC_INFO, arguments, chosen env, its stdin."""
        log = self.path.parent / "runs.jsonl"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text().splitlines()]


def write_plugin(folder: Path, name: str = "plugin") -> RecordingPlugin:
    """Write an executable plugin `folder/name` run by this very Python interpreter."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(_PLUGIN.format(python=sys.executable))
    path.chmod(0o755)
    return RecordingPlugin(path)


def exec_credential(api_version: str = "client.authentication.k8s.io/v1", **status: str) -> Any:
    """A plugin's answer: an ExecCredential with `status`."""
    return {"apiVersion": api_version, "kind": "ExecCredential", "status": status}
