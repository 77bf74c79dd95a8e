"""A login plugin that hangs or fails is named as the cause, never the cluster.

The plugins here are real programs (shell scripts) run by truegreen's real exec path, against
the fake API server over TLS: client-go hands a login only to a TLS transport.
"""

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from msgspec.structs import replace

from tests.support.auth_echo import make_pki
from tests.support.cli import run_cli
from tests.support.fake_apiserver import FakeApiServer
from tests.support.scenarios import healthy
from truegreen.cluster.exec_plugin import ExecCredentialSource
from truegreen.cluster.kubeconfig import resolve
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.settings import ConnectionSettings
from truegreen.doctor.diagnose import Where
from truegreen.doctor.environment import DoctorSettings
from truegreen.doctor.rollup import Verdict
from truegreen.kubectl import for_connection
from truegreen.monitor.engine import Monitor, MonitorSettings
from truegreen.plain_words import Login
from truegreen.refresh.annotations import OPT_IN_LABEL
from truegreen.refresh.render import Cluster, to_json, to_text
from truegreen.refresh.tick import RefreshSettings, run_tick

# --request-timeout 0.2 gives the run (30 + 10) x 0.2 = 8 seconds in all: 30 request timeouts
# for the cluster and 10 for the registries, which doctor asks by default
# (doctor/command/request.py).
REQUEST_TIMEOUT = "0.2"
RUN_LIMIT = 8
PLUGIN_BOUND = 1.0
"""Seconds a plugin is given where truegreen gives it 60 (exec_plugin.PLUGIN_TIMEOUT_SECONDS)
in the runs that have no time limit of their own (refresh, the monitor): a plugin that never
answers is stopped without a minute's wait."""
TOKEN = json.dumps(
    {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": "tour-token"},
    }
)


@pytest.fixture
def tls_fake(tmp_path: Path) -> Iterator[tuple[FakeApiServer, Path]]:
    """The fake over TLS with a healthy namespace `train`."""
    pki = make_pki(tmp_path / "pki")
    server = FakeApiServer().start(tls=(pki.server_cert, pki.server_key))
    server.add(*healthy(datetime.now(UTC)))
    kubeconfig = server.write_kubeconfig(
        tmp_path / "kc", namespace="train", certificate_authority=pki.ca
    )
    try:
        yield server, kubeconfig
    finally:
        server.stop()


def plugin_kubeconfig(
    base: Path, tmp_path: Path, script: str, args: list[str], env: list[dict[str, str]]
) -> tuple[Path, Path]:
    """A kubeconfig whose user logs in with `tmp_path/bin/aws`, a shell script."""
    plugin = tmp_path / "bin" / "aws"
    plugin.parent.mkdir()
    plugin.write_text("#!/bin/sh\n" + script)
    plugin.chmod(0o755)
    config: dict[str, Any] = yaml.safe_load(base.read_text())
    exec_entry = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": str(plugin),
        "args": args,
        "env": env,
        "interactiveMode": "Never",
    }
    config["users"] = [{"name": "eks", "user": {"exec": exec_entry}}]
    config["contexts"][0]["context"]["user"] = "eks"
    path = tmp_path / "kubeconfig-eks"
    path.write_text(yaml.safe_dump(config))
    return path, plugin


def short_bound(kubeconfig: Path) -> LiveCluster:
    """truegreen's client for `kubeconfig`, as refresh and the monitor connect (no time limit
    of the run), its login plugin stopped after PLUGIN_BOUND seconds."""
    connection = resolve(ConnectionSettings(kubeconfig))
    assert isinstance(connection.credentials, ExecCredentialSource)
    source = ExecCredentialSource(connection.credentials.plugin, timeout_seconds=PLUGIN_BOUND)
    return LiveCluster(replace(connection, credentials=source), 5.0)


EKS_ARGS = ["eks", "get-token", "--cluster-name", "train", "--client-secret", "s3cr3t-arg"]
EKS_ENV = [{"name": "AWS_SECRET_ACCESS_KEY", "value": "s3cr3t-env"}]


def test_a_plugin_that_never_answers_is_named_and_stopped_at_the_run_s_limit(
    tls_fake: tuple[FakeApiServer, Path], tmp_path: Path
) -> None:
    fake_api, base = tls_fake
    # `exec`: the process killed at the deadline is the sleep itself
    kubeconfig, plugin = plugin_kubeconfig(base, tmp_path, "exec sleep 600\n", EKS_ARGS, EKS_ENV)
    started = time.monotonic()
    result = run_cli(
        "doctor",
        "--kubeconfig",
        str(kubeconfig),
        "--request-timeout",
        REQUEST_TIMEOUT,
        "-o",
        "json",
    )
    took = time.monotonic() - started
    assert result.exit_code == 3, result.stdout
    headline = result.json()["headline"]
    assert headline["code"] == "cluster-login-no-answer"
    assert headline["rule"] == "nothing-read"
    assert headline["text"] == (
        f"Couldn't log in to the cluster at {fake_api.url}: the login plugin {plugin} of user "
        f"'eks' did not answer within {RUN_LIMIT} seconds and was stopped without saying why."
    )
    assert headline["remedy"] == (
        "Run the login plugin yourself to see where it waits "
        f"(`{plugin} eks get-token --cluster-name train --client-secret '<redacted>'`) and "
        "check that you are logged in (`aws sso login`), then run again; "
        f"`kubectl --kubeconfig {kubeconfig} auth whoami` shows whether the login works."
    )
    assert "did not answer in time" not in result.stdout, "the cluster is not to blame"
    assert "s3cr3t" not in result.stdout, "no argument or env value that may be secret"
    assert took < RUN_LIMIT + 4, (
        f"the plugin is stopped at the run's limit, not its own 60 s: {took}"
    )
    assert fake_api.requests() == [], "no login, so nothing was sent"


def test_a_plugin_that_answers_after_the_run_s_limit_is_blamed_not_the_cluster(
    tls_fake: tuple[FakeApiServer, Path], tmp_path: Path
) -> None:
    kubeconfig, plugin = plugin_kubeconfig(
        tls_fake[1],
        tmp_path,
        f"echo 'opening the browser' >&2\nsleep {RUN_LIMIT + 2}\necho '{TOKEN}'\n",
        ["eks", "get-token"],
        [],
    )
    result = run_cli(
        "doctor",
        "--kubeconfig",
        str(kubeconfig),
        "--request-timeout",
        REQUEST_TIMEOUT,
        "--no-color",
    )
    assert result.exit_code == 3
    lines = result.stdout.splitlines()
    assert lines[0] == (
        f"? COULD NOT CHECK  Couldn't log in to the cluster at {tls_fake[0].url}: the login "
        f"plugin {plugin} of user 'eks' did not answer within {RUN_LIMIT} seconds and was "
        "stopped, saying: opening the browser."
    )
    assert "did not answer in time" not in result.stdout, "the cluster is not to blame"


def test_a_failing_plugin_is_named_with_the_first_line_it_said_redacted(
    tls_fake: tuple[FakeApiServer, Path], tmp_path: Path
) -> None:
    kubeconfig, plugin = plugin_kubeconfig(
        tls_fake[1],
        tmp_path,
        "printf 'error: refresh token=abc123 has expired\\nsee the log for details\\n' >&2\n"
        "exit 255\n",
        EKS_ARGS,
        EKS_ENV,
    )
    result = run_cli("doctor", "--kubeconfig", str(kubeconfig), "-o", "json")
    assert result.exit_code == 3
    headline = result.json()["headline"]
    assert headline["code"] == "cluster-login-failed"
    assert headline["text"] == (
        f"Couldn't log in to the cluster at {tls_fake[0].url}: cannot log in as user 'eks': "
        f"exec: executable {plugin} failed with exit code 255, saying: error: refresh "
        "token=<redacted> has expired."
    )
    assert "s3cr3t" not in result.stdout


@pytest.mark.parametrize(
    ("said", "quoted"),
    [
        ('error: password "PLANTED5521" rejected', 'error: password "<redacted>" rejected'),
        ("error: password 'PLANTED5522' rejected", "error: password '<redacted>' rejected"),
        ('token "PLANTED5523 two" was revoked', 'token "<redacted>" was revoked'),
    ],
)
def test_a_quoted_value_after_password_or_token_is_never_quoted_back(
    tls_fake: tuple[FakeApiServer, Path], tmp_path: Path, said: str, quoted: str
) -> None:
    """docs/connecting.md: the value after the word password, token or secret is removed from
    the plugin's line; one in quotes (Go's %q writes a value in double quotes) to its closing
    quote, whatever it holds."""
    (tmp_path / "said.txt").write_text(said + "\n")
    kubeconfig, plugin = plugin_kubeconfig(
        tls_fake[1], tmp_path, f"cat '{tmp_path / 'said.txt'}' >&2\nexit 1\n", EKS_ARGS, EKS_ENV
    )
    results = [
        run_cli("doctor", "--kubeconfig", str(kubeconfig), *args)
        for args in (("--no-color", "-v"), ("-o", "json", "-v"))
    ]
    assert results[1].json()["headline"]["text"] == (
        f"Couldn't log in to the cluster at {tls_fake[0].url}: cannot log in as user 'eks': "
        f"exec: executable {plugin} failed with exit code 1, saying: {quoted}."
    )
    for result in results:
        assert result.exit_code == 3
        assert "PLANTED552" not in result.stdout + result.stderr


def test_refresh_names_a_plugin_that_never_answers_never_the_cluster(
    tls_fake: tuple[FakeApiServer, Path], tmp_path: Path
) -> None:
    """The tick's first read stops at the plugin's limit: its headline is doctor's
    `cluster-login-no-answer`, not a login the cluster did not accept (it was never asked)."""
    fake_api, base = tls_fake
    kubeconfig, plugin = plugin_kubeconfig(base, tmp_path, "exec sleep 600\n", EKS_ARGS, EKS_ENV)
    with short_bound(kubeconfig) as cluster:
        report = run_tick(cluster, RefreshSettings(cluster.namespace, {OPT_IN_LABEL: "enabled"}))
        login = Login(cluster.login, cluster.login_command, cluster.login_source)
        reached = Cluster(
            cluster.server, cluster.source, for_connection(ConnectionSettings(kubeconfig)), login
        )
    document = to_json(report, dry_run=False, cluster=reached)
    headline = (
        f"Couldn't log in to the cluster at {fake_api.url}: the login plugin {plugin} of user "
        f"'eks' did not answer within {PLUGIN_BOUND:.0f} seconds and was stopped without saying "
        "why."
    )
    remedy = (
        "Run the login plugin yourself to see where it waits "
        f"(`{plugin} eks get-token --cluster-name train --client-secret '<redacted>'`) and "
        "check that you are logged in (`aws sso login`), then run again; "
        f"`kubectl --kubeconfig {kubeconfig} auth whoami` shows whether the login works."
    )
    assert document["headline"] == {
        "code": "cluster-login-no-answer",
        "text": headline,
        "remedy": remedy,
    }
    assert (document["exit_code"], len(document["cant_read"])) == (3, 1)
    assert document["cant_read"][0].startswith(headline.split(": ", 1)[1].removesuffix("."))
    assert to_text(report, verbose=False, cluster=reached)[:2] == [
        f"[magenta]?[/] {headline}",
        f"  → {remedy}",
    ]
    assert fake_api.requests() == [], "no login, so nothing was sent"


def test_refresh_names_a_failing_plugin_in_its_own_words_never_the_cluster(
    tls_fake: tuple[FakeApiServer, Path], tmp_path: Path
) -> None:
    fake_api, base = tls_fake
    kubeconfig, plugin = plugin_kubeconfig(
        base, tmp_path, "echo 'Error: SSO session expired' >&2\nexit 255\n", EKS_ARGS, EKS_ENV
    )
    headline = (
        f"Couldn't log in to the cluster at {fake_api.url}: cannot log in as user 'eks': exec: "
        f"executable {plugin} failed with exit code 255, saying: Error: SSO session expired."
    )
    remedy = (
        "Log in again with `aws sso login`, then run again; "
        f"`kubectl --kubeconfig {kubeconfig} auth whoami` shows whether the login works."
    )
    text = run_cli("refresh", "--kubeconfig", str(kubeconfig))
    assert text.exit_code == 3
    assert text.stdout.splitlines()[:2] == [f"? {headline}", f"  → {remedy}"]
    assert "did not accept" not in text.stdout, "the cluster was never asked"
    document = run_cli("refresh", "--kubeconfig", str(kubeconfig), "-o", "json").json()
    assert document["exit_code"] == 3
    assert document["headline"] == {
        "code": "cluster-login-failed",
        "text": headline,
        "remedy": remedy,
    }
    assert document["cant_read"] == [
        f"cannot log in as user 'eks': exec: executable {plugin} failed with exit code 255, "
        "saying: Error: SSO session expired. do what the plugin asks (often: log in with it "
        "again), then retry"
    ]
    assert fake_api.requests() == [], "no login, so nothing was sent"


def test_the_first_watched_verdict_names_a_plugin_that_never_answers_once_its_bound_passed(
    tls_fake: tuple[FakeApiServer, Path], tmp_path: Path
) -> None:
    """doctor --watch and the monitor evaluate with one engine: its first evaluation ends once
    the plugin's bound has passed, once, with doctor's unknown verdict naming the plugin (the
    screen, the log line, the page, /readyz and the metrics show it as any unknown verdict).
    Each later evaluation runs the plugin again, and uses its answer once it gives one."""
    fake_api, base = tls_fake
    runs = tmp_path / "runs"
    kubeconfig, plugin = plugin_kubeconfig(
        base, tmp_path, f"echo run >> {runs}\nexec sleep 600\n", EKS_ARGS, EKS_ENV
    )
    with short_bound(kubeconfig) as cluster:
        where = Where(
            cluster.server,
            cluster.source,
            cluster.login,
            cluster.login_command,
            login_source=cluster.login_source,
        )
        doctor = DoctorSettings(kubectl=for_connection(ConnectionSettings(kubeconfig)))
        monitor = Monitor(cluster, MonitorSettings(doctor, where, watching=True))
        try:
            first = monitor.evaluate()
            assert runs.read_text().count("run") == 1, (
                "one run of the plugin an evaluation: each run may take its whole bound"
            )
            assert (first.report.verdict, first.report.headline.code) == (
                Verdict.UNKNOWN,
                "cluster-login-no-answer",
            )
            assert first.report.headline.text == (
                f"Couldn't log in to the cluster at {fake_api.url}: the login plugin {plugin} of "
                f"user 'eks' did not answer within {PLUGIN_BOUND:.0f} seconds and was stopped "
                "without saying why."
            )
            assert first.refresh == (), "no workload was read"
            assert fake_api.requests() == [], "no login, so nothing was sent"
            again = monitor.evaluate()
            assert runs.read_text().count("run") == 2, "a later evaluation runs the plugin again"
            assert again.report.headline.text == first.report.headline.text
            plugin.write_text(f"#!/bin/sh\necho '{TOKEN}'\n")
            answered = monitor.evaluate()
            assert answered.report.headline.code != "cluster-login-no-answer"
            assert answered.report.verdict is Verdict.READY, answered.report.headline
        finally:
            monitor.cache.close()
