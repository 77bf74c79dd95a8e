"""A server that quotes the request's own Authorization header in its refusal never gets the
kubeconfig's secret printed: the message is shown (it says why the login was refused), with the
credential it was sent with taken out, in every form (a token; a Basic login's encoded value,
its `user:password` and its password)."""

import base64
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.auth_echo import write_plugin
from tests.support.cli import run_cli
from tests.support.hostile import (
    Answer,
    Received,
    ScriptedApi,
    ServerCertificate,
    issue,
    make_authority,
)

TOKEN = "kubeconfig-SECRET-TOKEN-qwerty12345"
PASSWORD = "hunter2-SECRET-PASSWORD"


def _echo(status: int, reason: str) -> Callable[[Received, int], Answer]:
    def answer(request: Received, _: int) -> Answer:
        auth = request.headers.get("authorization", "")
        decoded = ""
        if auth.startswith("Basic "):
            decoded = base64.b64decode(auth.removeprefix("Basic ")).decode()
        message = f"{reason}: Authorization: {auth} (login {decoded or '-'})"
        body = json.dumps(
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": message,
                "reason": reason,
                "code": status,
            }
        ).encode()
        return status, {"Content-Type": "application/json"}, body

    return answer


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> ServerCertificate:
    """TLS for the loopback server: truegreen sends no login over plain http."""
    folder = tmp_path_factory.mktemp("pki")
    return issue(folder, make_authority(folder), "api", "IP:127.0.0.1")


def _kubeconfig(path: Path, url: str, user: str, ca: Path) -> Path:
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f'clusters: [{{name: c, cluster: {{server: "{url}", certificate-authority: {ca}}}}}]\n'
        f"users: [{{name: u, user: {user}}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u, namespace: train}}]\n"
        "current-context: c\n"
    )
    return path


@pytest.mark.parametrize(
    ("user", "secrets"),
    [
        (f"{{token: {TOKEN}}}", (TOKEN,)),
        (
            f"{{username: admin, password: {PASSWORD}}}",
            (PASSWORD, base64.b64encode(f"admin:{PASSWORD}".encode()).decode()),
        ),
    ],
    ids=["token", "basic"],
)
@pytest.mark.parametrize(
    "command",
    [
        ("doctor", "--no-registry"),
        ("doctor", "--no-registry", "-o", "json"),
        ("doctor", "--no-registry", "--namespaces", "a,b", "-o", "json"),
        ("snapshot", "--no-registry", "-o", "json"),
        ("refresh",),
    ],
    ids=["doctor", "doctor-json", "fleet-json", "snapshot-json", "refresh"],
)
def test_a_refusal_that_quotes_the_login_never_prints_it(
    tmp_path: Path,
    certificate: ServerCertificate,
    user: str,
    secrets: tuple[str, ...],
    command: tuple[str, ...],
) -> None:
    with ScriptedApi(_echo(401, "Unauthorized"), certificate) as server:
        kubeconfig = _kubeconfig(tmp_path / "kubeconfig", server.url, user, certificate.ca)
        extra = ("--output-directory", str(tmp_path / "snap")) if command[0] == "snapshot" else ()
        result = run_cli(command[0], "--kubeconfig", str(kubeconfig), *extra, *command[1:])
        sent = [r.headers.get("authorization", "") for r in server.received]
    assert any(secrets[-1] in header for header in sent), "precondition: the login was sent"
    assert result.exit_code == 3, (result.exit_code, result.stderr)
    printed = result.stdout + result.stderr
    for secret in secrets:
        assert secret not in printed, printed
    if command[0] != "refresh":  # refresh names the failed read, not the server's words
        assert "Authorization: " in printed, f"precondition: the words are quoted: {printed}"
        assert "<redacted>" in printed, printed


def test_a_forbidden_answer_that_quotes_the_token_never_prints_it(
    tmp_path: Path, certificate: ServerCertificate
) -> None:
    """403 is quoted in the finding's details (a refused read names its grant)."""
    with ScriptedApi(_echo(403, "Forbidden"), certificate) as server:
        kubeconfig = _kubeconfig(
            tmp_path / "kubeconfig", server.url, f"{{token: {TOKEN}}}", certificate.ca
        )
        result = run_cli(
            "doctor", "--no-registry", "--verbose", "-o", "json", "--kubeconfig", str(kubeconfig)
        )
    assert result.exit_code == 3, (result.exit_code, result.stderr)
    assert TOKEN not in result.stdout + result.stderr


JWT = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJlLXNlY3JldA"


@pytest.mark.parametrize(
    "command",
    [
        ("doctor", "--no-registry"),
        ("doctor", "--no-registry", "-o", "json"),
        ("snapshot", "--no-registry", "-o", "json"),
    ],
    ids=["doctor", "doctor-json", "snapshot-json"],
)
def test_a_failing_plugin_that_echoes_its_token_is_quoted_without_it(
    tmp_path: Path, certificate: ServerCertificate, command: tuple[str, ...]
) -> None:
    """A login plugin's first line of error output is quoted in the failure line; a plugin may
    print the bearer token it failed with (kubectl passes its stderr through whole). The token
    is taken out; the plugin's own words around it stay."""
    plugin = write_plugin(tmp_path / "plugins")
    plugin.plan({"stderr": f"error: the API rejected Bearer {JWT}\n", "exit": 1})
    user = (
        "{exec: {apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never, "
        f"command: {plugin.path}}}}}"
    )
    with ScriptedApi(_echo(401, "Unauthorized"), certificate) as server:
        kubeconfig = _kubeconfig(tmp_path / "kubeconfig", server.url, user, certificate.ca)
        extra = ("--output-directory", str(tmp_path / "snap")) if command[0] == "snapshot" else ()
        result = run_cli(command[0], "--kubeconfig", str(kubeconfig), *extra, *command[1:])
        assert server.received == [], "nothing is sent without a login"
    assert result.exit_code == 3, (result.exit_code, result.stderr)
    printed = result.stdout + result.stderr
    assert JWT not in printed
    assert "eyJ" not in printed
    assert (
        f"cannot log in as user 'u': exec: executable {plugin.path} failed with exit code 1, "
        "saying: error: the API rejected Bearer <redacted>." in printed
    ), printed
