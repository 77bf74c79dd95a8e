"""`truegreen monitor` and `doctor --watch` as processes against the fake API server: the
endpoints, the Events on a verdict change, and how each one ends."""

import json
import re
import signal
import socket
import subprocess
import sys
import urllib.parse
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.support.auth_echo import make_pki
from tests.support.cli import run_cli
from tests.support.fake_apiserver import FakeApiServer, Fault
from tests.support.hostile import HostileServer, silent
from tests.support.monitoring import (
    BOUND,
    Process,
    http_get,
    promtool_binary,
    signal_ended,
    start_monitor,
    wait_for,
)
from tests.support.proxies import HttpConnectProxy, Passage
from tests.support.refresh_kit import container, daemonset, deployment, statefulset
from tests.support.scenarios import NAMESPACE, healthy, node


@pytest.fixture
def cluster(fake_api: FakeApiServer, tmp_path: Path) -> Path:
    fake_api.watch_bookmark_seconds = 0.5
    for obj in healthy(datetime.now(UTC)):
        fake_api.add(obj)
    return fake_api.write_kubeconfig(tmp_path / "kubeconfig", namespace=NAMESPACE)


def _verdict(base: str) -> float | None:
    found = re.search(
        r'^truegreen_verdict\{cluster="fake",namespace="train"\} (\S+)$',
        http_get(base + "/metrics")[1],
        re.M,
    )
    return float(found.group(1)) if found else None


def _events(fake_api: FakeApiServer) -> list[str]:
    return [str(e["reason"]) for e in fake_api.list_objects("Event", NAMESPACE)]


def _pend_the_claim(fake_api: FakeApiServer) -> None:
    claim = fake_api.get_object("PersistentVolumeClaim", "datasets", NAMESPACE)
    assert claim is not None
    claim["status"] = {"phase": "Pending"}
    fake_api.update_object(claim)


def test_monitor_serves_the_verdict_writes_an_event_per_change_and_ends_on_sigterm(
    fake_api: FakeApiServer, cluster: Path
) -> None:
    monitor, base = start_monitor(
        cluster,
        *("--min-interval", "0.2", "--interval", "5", "--max-age", "30"),
        *("--watch-timeout", "2"),
    )
    try:
        assert http_get(base + "/healthz") == (200, "ok\n")
        wait_for("/readyz", lambda: http_get(base + "/readyz")[0] == 200)
        assert _verdict(base) == 0.0
        status, page = http_get(base + "/")
        assert status == 200
        assert "READY</span> Training can run." in page
        wait_for("the first Event", lambda: _events(fake_api) == ["TrainingReady"])
        _pend_the_claim(fake_api)
        wait_for("verdict 2", lambda: _verdict(base) == 2.0)
        assert (
            'truegreen_check_status{check="storage",cluster="fake",namespace="train"} 2.0'
            in http_get(base + "/metrics")[1]
        )
        wait_for(
            "the second Event",
            lambda: sorted(_events(fake_api)) == ["TrainingNotReady", "TrainingReady"],
        )
        assert http_get(base + "/nothing-here")[0] == 404
    finally:
        code, _ = monitor.end(signal.SIGTERM)
    assert code == 0, monitor.err
    changes = [line for line in monitor.err if re.match(r"truegreen: \d{4}-", line)]
    assert [line.split(" ", 2)[2].split(":")[0] for line in changes] == ["ready", "not-ready"]


def _set_the_claim(fake_api: FakeApiServer, phase: str) -> None:
    claim = fake_api.get_object("PersistentVolumeClaim", "datasets", NAMESPACE)
    assert claim is not None
    claim["status"] = {"phase": phase}
    fake_api.update_object(claim)


def test_a_flapping_verdict_patches_its_events_count_by_count(
    fake_api: FakeApiServer, cluster: Path
) -> None:
    """client-go's recorder (tools/record/events_cache.go EventCorrelator, eventObserve; event.go
    recordToSink): an Event identical to one written before (same source, involved object,
    type, reason and message) is PATCHed with count+1 and a new lastTimestamp, never created
    again. A dataset claim that goes Pending and Bound three times (the PV controller's phases,
    pkg/controller/volume/persistentvolume) gives seven verdicts and two Event objects: the
    ready one counted 4, the not-ready one 3."""
    monitor, base = start_monitor(
        cluster,
        *("--min-interval", "0.2", "--interval", "5", "--max-age", "30"),
        *("--watch-timeout", "2"),
    )
    try:
        wait_for("/readyz", lambda: http_get(base + "/readyz")[0] == 200)
        wait_for("the first Event", lambda: _events(fake_api) == ["TrainingReady"])
        for _ in range(3):
            _set_the_claim(fake_api, "Pending")
            wait_for("verdict 2", lambda: _verdict(base) == 2.0)
            _set_the_claim(fake_api, "Bound")
            wait_for("verdict 0", lambda: _verdict(base) == 0.0)

        def counts() -> list[tuple[str, int]]:
            events = fake_api.list_objects("Event", NAMESPACE)
            return sorted((str(e["reason"]), int(e["count"])) for e in events)

        wait_for("the seventh verdict's Event", lambda: sum(n for _, n in counts()) >= 7)
        assert counts() == [("TrainingNotReady", 3), ("TrainingReady", 4)]
        assert (
            len(fake_api.requests("POST", "/events$")),
            len(fake_api.requests("PATCH", "/events/")),
        ) == (2, 5)
    finally:
        code, _ = monitor.end(signal.SIGTERM)
    assert code == 0, monitor.err


def _gpus_unhealthy(fake_api: FakeApiServer) -> None:
    """7 of 8 GPUs offered, and a machine whose device plugin offers none."""
    unhealthy = node("gpu-bad-0", "16", "64Gi", gpus=8)
    unhealthy["status"]["allocatable"]["nvidia.com/gpu"] = "7"
    plugin_gone = node("gpu-dead-1", "16", "64Gi", gpus=8)
    del plugin_gone["status"]["allocatable"]["nvidia.com/gpu"]
    assert unhealthy["status"]["capacity"]["nvidia.com/gpu"] == "8", "precondition"
    fake_api.add(unhealthy, plugin_gone)


def _gpu_machine_down(fake_api: FakeApiServer) -> None:
    """The only GPU machine's kubelet stopped posting (the node lifecycle controller's
    `Ready=Unknown`, pkg/controller/nodelifecycle)."""
    machine = fake_api.get_object("Node", "gpu-1")
    assert machine is not None
    machine["status"]["conditions"] = [
        {
            "type": "Ready",
            "status": "Unknown",
            "reason": "NodeStatusUnknown",
            "message": "Kubelet stopped posting node status.",
        }
    ]
    fake_api.update_object(machine)


@pytest.mark.parametrize(
    ("trouble", "code"),
    [
        (_gpus_unhealthy, "capacity.gpus-unhealthy"),
        (_gpus_unhealthy, "capacity.gpu-software-down"),
        (_gpu_machine_down, "capacity.machines-down"),
    ],
)
def test_monitor_finds_the_machines_in_trouble_that_doctor_finds(
    fake_api: FakeApiServer,
    cluster: Path,
    trouble: Callable[[FakeApiServer], None],
    code: str,
) -> None:
    """The kubelet's device manager leaves an unhealthy GPU in capacity only (pkg/kubelet/cm/
    devicemanager/manager.go `GetCapacity`), and a machine down shows in its `Ready`
    condition: the monitor's kept view of a machine holds both, so it says what doctor says."""
    trouble(fake_api)
    doctor = run_cli("doctor", "--kubeconfig", str(cluster), "--no-registry", "-o", "json")
    expected = sorted(
        (f["code"], f["status"])
        for f in doctor.json()["findings"]
        if f["check"] == "capacity" and f["status"] != "ok"
    )
    assert code in {c for c, _ in expected}, expected
    monitor, base = start_monitor(cluster, "--min-interval", "0.2", "--interval", "5")
    try:
        wait_for("/readyz", lambda: http_get(base + "/readyz")[0] == 200)
        found = re.findall(
            r'^truegreen_finding\{check="capacity",cluster="fake",code="([^"]+)",'
            r'namespace="train",status="([^"]+)"\} 1\.0$',
            http_get(base + "/metrics")[1],
            re.M,
        )
    finally:
        monitor.end(signal.SIGTERM)
    assert sorted(found) == expected


def test_monitor_lists_and_watches_through_the_kubeconfig_s_proxy(tmp_path: Path) -> None:
    """Every connection of the monitor, its lists and its watches, goes through `proxy-url`
    (a merge once left the watches' transport without the proxy)."""
    pki = make_pki(tmp_path / "pki")
    api = FakeApiServer().start(tls=(pki.server_cert, pki.server_key))
    api.watch_bookmark_seconds = 0.5
    api.add(*healthy(datetime.now(UTC)))
    kubeconfig = api.write_kubeconfig(
        tmp_path / "kc", namespace=NAMESPACE, certificate_authority=pki.ca
    )
    try:
        with HttpConnectProxy() as proxy:
            config = yaml.safe_load(kubeconfig.read_text())
            config["clusters"][0]["cluster"]["proxy-url"] = proxy.url
            kubeconfig.write_text(yaml.safe_dump(config))
            monitor, base = start_monitor(kubeconfig, "--min-interval", "0.2", "--interval", "5")
            try:
                wait_for("/readyz", lambda: http_get(base + "/readyz")[0] == 200)
                wait_for("a watch", lambda: any(r.query.get("watch") for r in api.requests()))
            finally:
                code, _ = monitor.end(signal.SIGTERM)
            passages = list(proxy.passages)
    finally:
        api.stop()
    assert code == 0, monitor.err
    target = api.url.removeprefix("https://")
    assert set(passages) == {Passage("CONNECT", target, "authority", None, True)}
    assert len(passages) >= 2, "the lists' pool and the watches each opened their own tunnel"


def test_monitor_refuses_a_max_age_a_healthy_quiet_cluster_cannot_meet_as_bad_usage(
    cluster: Path,
) -> None:
    """docs/monitor.md: contradictions are bad usage (exit 64). kube-apiserver confirms a quiet
    watch with a bookmark about once a minute (cacher.go defaultBookmarkFrequency): a --max-age
    of 30 s would read unknown every minute on a healthy cluster, however often it evaluates."""
    result = subprocess.run(
        [
            *(sys.executable, "-m", "truegreen", "monitor", "--kubeconfig", str(cluster)),
            *("--interval", "10", "--max-age", "30"),
        ],
        capture_output=True,
        text=True,
        timeout=BOUND,
        check=False,
    )
    assert (result.returncode, result.stdout) == (64, "")
    assert result.stderr.startswith(
        "truegreen: --max-age 30 must be longer than 72.25 s: on a quiet, healthy cluster a read "
        "may go 62.25 s unconfirmed"
    )
    assert result.stderr.count("\n") == 1, "one line"


@pytest.mark.parametrize("key", ["trial", "admission-dry-run", "admission_dry_run"])
def test_monitor_refuses_what_runs_once_from_the_config_file(
    fake_api: FakeApiServer, cluster: Path, key: str, tmp_path: Path
) -> None:
    """The monitor reads doctor's config file (`--config`, docs/monitor.md), which holds the
    same settings as doctor's flags; it evaluates again and again and starts no trial pods and
    makes no dry-run create (its reads pass none: monitor/engine.py), as `doctor --watch`,
    which refuses both. `trial: true` or `admission-dry-run: true` there is refused in one
    line naming the key and the file, exit 64, before any request: never a monitor that
    serves a verdict silently without them."""
    config = tmp_path / "doctor.yaml"
    config.write_text(f"{key}: true\n")
    try:
        result = subprocess.run(
            [
                *(sys.executable, "-m", "truegreen", "monitor", "--kubeconfig", str(cluster)),
                *("--listen", "127.0.0.1:0", "--config", str(config)),
            ],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the monitor with {key} in its config ran on for 20 s instead of refusing")
    named = key.replace("_", "-")
    assert (result.returncode, result.stdout) == (64, "")
    assert result.stderr == (
        f"truegreen: config {config} sets {named}: it runs once; the monitor checks again and "
        f"again. remove {named} from {config}\n"
    )
    assert fake_api.requests() == []


def test_a_port_in_use_is_one_line_exit_3_with_its_document(cluster: Path) -> None:
    """An environment failure, not a bug: the address and the system's reason in one line,
    exit 3, and a failure document the schema allows (exit 1 is kept for internal errors)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [
                *(sys.executable, "-m", "truegreen", "monitor", "--kubeconfig", str(cluster)),
                *("--listen", f"127.0.0.1:{port}", "-o", "json"),
            ],
            capture_output=True,
            text=True,
            timeout=BOUND,
            check=False,
        )
    assert result.returncode == 3, result.stderr
    assert result.stderr == (
        f"truegreen: cannot listen on 127.0.0.1:{port}: Address already in use. pass another "
        "address with --listen, or stop what listens there\n"
    )
    document = json.loads(result.stdout)
    schema = Path(__file__).parent.parent.parent / "docs" / "failure.schema.json"
    jsonschema.validate(document, json.loads(schema.read_text()))
    assert (document["exit_code"], document["headline"]["code"]) == (3, "setup-failed")


def test_monitor_labels_every_series_with_the_cluster_name_given(
    fake_api: FakeApiServer, cluster: Path
) -> None:
    """--cluster-name over the kubeconfig's name for the cluster ("fake", which labels the
    series without the flag: test_monitor_serves_the_verdict...)."""
    monitor, base = start_monitor(cluster, "--cluster-name", "prod-east", "--no-events")
    try:
        wait_for("/readyz", lambda: http_get(base + "/readyz")[0] == 200)
        samples = [
            line
            for line in http_get(base + "/metrics")[1].splitlines()
            if line and not line.startswith("#")
        ]
    finally:
        code, _ = monitor.end(signal.SIGTERM)
    assert code == 0, monitor.err
    assert 'truegreen_verdict{cluster="prod-east",namespace="train"} 0.0' in samples
    assert [line for line in samples if 'cluster="prod-east"' not in line] == []


def _refresh_marks(workload: dict[str, Any], **annotations: str) -> dict[str, Any]:
    workload["metadata"]["annotations"] |= annotations
    return workload


def _image_refreshed(kind: str, name: str, stamp: str) -> dict[str, Any]:
    """A core/v1 Event as refresh writes one after a restart onto a newer image, about the
    workload it moved (truegreen.refresh.events `event_object`, client-go's recorder shape)."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.{kind.lower()}", "namespace": NAMESPACE},
        "involvedObject": {"apiVersion": "apps/v1", "kind": kind, "name": name},
        "reason": "ImageRefreshed",
        "message": "moved onto a newer image",
        "type": "Normal",
        "source": {"component": "truegreen-refresh"},
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }


def test_monitor_reports_refresh_state_of_every_kind_refresh_keeps(
    fake_api: FakeApiServer, cluster: Path
) -> None:
    """refresh keeps opted-in Deployments, StatefulSets and DaemonSets (refresh/tick.py
    `run_tick`); each one's series name its kind, so a Deployment and a StatefulSet of one name
    stay two series, and the exposition passes `promtool check metrics`."""
    image = container("app", "registry.example/app:1")
    fake_api.add(
        _refresh_marks(deployment("web", image), **{"truegreen.io/refresh-attempts": "1 t1"}),
        _refresh_marks(
            statefulset("web", image),
            **{
                "truegreen.io/refresh-latched": "3 tries at the same digests did not roll out",
                "truegreen.io/refresh-attempts": "3 t2",
            },
        ),
        _refresh_marks(
            daemonset("agent", image),
            **{"truegreen.io/refresh-pending": '{"target": {"app": "sha256:1"}, "stamp": "x"}'},
        ),
        _image_refreshed("StatefulSet", "web", "2026-05-01T10:00:00Z"),
        _image_refreshed("Deployment", "web", "2026-05-01T11:00:00Z"),
    )
    monitor, base = start_monitor(cluster, "--no-events")
    try:
        wait_for("/readyz", lambda: http_get(base + "/readyz")[0] == 200)
        exposition = http_get(base + "/metrics")[1]
    finally:
        code, _ = monitor.end(signal.SIGTERM)
    assert code == 0, monitor.err
    refresh = sorted(
        line for line in exposition.splitlines() if line.startswith("truegreen_refresh_")
    )
    where = 'cluster="fake",kind="{}",namespace="train",workload="{}"'
    dep, sts, ds = (
        where.format("Deployment", "web"),
        where.format("StatefulSet", "web"),
        where.format("DaemonSet", "agent"),
    )
    assert refresh == sorted(
        [
            f"truegreen_refresh_latched{{{dep}}} 0.0",
            f"truegreen_refresh_latched{{{sts}}} 1.0",
            f"truegreen_refresh_latched{{{ds}}} 0.0",
            f"truegreen_refresh_pending{{{dep}}} 0.0",
            f"truegreen_refresh_pending{{{sts}}} 0.0",
            f"truegreen_refresh_pending{{{ds}}} 1.0",
            f"truegreen_refresh_attempts{{{dep}}} 1.0",
            f"truegreen_refresh_attempts{{{sts}}} 3.0",
            f"truegreen_refresh_attempts{{{ds}}} 0.0",
            f"truegreen_refresh_last_refreshed_timestamp_seconds{{{dep}}} 1.7776332e+09",
            f"truegreen_refresh_last_refreshed_timestamp_seconds{{{sts}}} 1.7776296e+09",
        ]
    )
    promtool = promtool_binary()
    if promtool is None:
        pytest.skip("promtool is not installed (Debian package prometheus)")
    checked = subprocess.run(
        [promtool, "check", "metrics"],
        input=exposition,
        capture_output=True,
        text=True,
        timeout=BOUND,
        check=False,
    )
    assert (checked.returncode, checked.stdout, checked.stderr) == (0, "", "")


def test_monitor_refuses_a_cluster_name_that_cannot_label_metrics(cluster: Path) -> None:
    result = subprocess.run(
        [
            *(sys.executable, "-m", "truegreen", "monitor", "--kubeconfig", str(cluster)),
            *("--cluster-name", "east\tside"),
        ],
        capture_output=True,
        text=True,
        timeout=BOUND,
        check=False,
    )
    assert (result.returncode, result.stdout) == (64, "")
    assert result.stderr == (
        "truegreen: --cluster-name 'east\\tside' cannot label the metrics: it must be 1 to 253 "
        "printable characters. pass the name the fleet knows the cluster by, such as "
        "--cluster-name prod-east\n"
    )


@pytest.mark.parametrize(
    ("args", "code", "line"),
    [
        (
            ("-A",),
            3,
            "truegreen: This login may not list namespaces: so doctor cannot learn which "
            "namespaces to check. name them with --namespaces a,b,c, or ask an administrator "
            "for list on namespaces (cluster-wide)\n",
        ),
        (
            ("-n", "train", "--namespace-selector", "team=ml"),
            64,
            "truegreen: -n and --namespace-selector cannot be used together. choose one way to "
            "name the namespaces\n",
        ),
    ],
)
def test_a_fleet_monitor_that_cannot_know_its_namespaces_says_so_in_one_line(
    fake_api: FakeApiServer, cluster: Path, args: tuple[str, ...], code: int, line: str
) -> None:
    fake_api.inject(Fault.FORBIDDEN, r"^/api/v1/namespaces$")
    result = subprocess.run(
        [
            *(sys.executable, "-m", "truegreen", "monitor", "--kubeconfig", str(cluster)),
            *("--listen", "127.0.0.1:0", *args),
        ],
        capture_output=True,
        text=True,
        timeout=BOUND,
        check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (code, "", line)


def _evaluated_with_storage_type(fake_api: FakeApiServer) -> bool:
    # The storage type is read only while a claim waits: the evaluation saw the pending claim.
    return bool(fake_api.requests("GET", "/storageclasses/standard$"))


def test_doctor_watch_ends_on_ctrl_c_with_the_last_verdict_s_code(
    fake_api: FakeApiServer, cluster: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # the footer's whole line on the screen
    watching = Process("doctor", "--watch", "--kubeconfig", str(cluster))
    try:
        wait_for("a first evaluation", lambda: bool(fake_api.requests("GET", "/secrets/")))
        code, out = watching.end(signal.SIGINT)
    finally:
        if watching.process.poll() is None:
            watching.process.kill()
    assert code == 0, watching.err
    assert "READY  Ready: training can run." in out
    assert re.search(r"Last change \d\d:\d\d:\d\d; checked \d\d:\d\d:\d\d\. Ctrl-C to stop\.", out)
    # The footer speaks to whoever ran doctor, not of "the monitor".
    assert "--watch does not ask them; doctor without --watch does" in out
    assert "the monitor" not in out
    _pend_the_claim(fake_api)
    watching = Process("doctor", "--watch", "--kubeconfig", str(cluster))
    try:
        wait_for("the pending claim", lambda: _evaluated_with_storage_type(fake_api))
        code, out = watching.end(signal.SIGINT)
    finally:
        if watching.process.poll() is None:
            watching.process.kill()
    assert code == 2, watching.err
    assert "NOT READY" in out


@pytest.mark.parametrize("force_color", [None, "1"])
def test_doctor_watch_on_a_pipe_prints_whole_lines(
    fake_api: FakeApiServer, cluster: Path, monkeypatch: pytest.MonkeyPatch, force_color: str | None
) -> None:
    """Off a terminal nothing is redrawn in place: the report is printed in whole lines, as
    doctor prints it on a pipe, never cropped to COLUMNS (README: text is wrapped between
    words, a command never split); FORCE_COLOR, which makes rich take a pipe for a terminal,
    changes nothing of it."""
    monkeypatch.setenv("COLUMNS", "30")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    if force_color is not None:
        monkeypatch.setenv("FORCE_COLOR", force_color)
    watching = Process("doctor", "--watch", "--kubeconfig", str(cluster))
    try:
        wait_for("a first evaluation", lambda: bool(fake_api.requests("GET", "/secrets/")))
        code, out = watching.end(signal.SIGINT)
    finally:
        if watching.process.poll() is None:
            watching.process.kill()
    assert code == 0, watching.err
    lines = out.splitlines()
    assert any(line.endswith("READY  Ready: training can run.") for line in lines), out
    footer = r"Last change \d\d:\d\d:\d\d; checked \d\d:\d\d:\d\d\. Ctrl-C to stop\."
    assert [line for line in lines if re.fullmatch(footer, line)], out


STOP_BOUND = 20.0
"""Seconds a stopped monitor may take to exit in the test below: far below the kubelet's 30 s
grace before SIGKILL, and a third of the --request-timeout its reads wait under."""


_STOPPED = "truegreen: stopped by {} before the run had a result. run it again to get one"


@pytest.mark.parametrize(
    ("args", "how", "code", "said"),
    [
        (("monitor", "--listen", "127.0.0.1:0", "--no-events"), signal.SIGTERM, 0, None),
        (("monitor", "--listen", "127.0.0.1:0", "--no-events"), signal.SIGINT, 0, None),
        (("monitor", "--listen", "127.0.0.1:0", "--no-events"), signal.SIGHUP, 0, None),
        # doctor --watch before its first verdict: a run stopped before it had a result, as
        # every command ends one (README's exit codes): 128 + the signal's number
        (("doctor", "--watch"), signal.SIGINT, 130, _STOPPED.format("Ctrl-C")),
        (("doctor", "--watch"), signal.SIGTERM, 143, _STOPPED.format("SIGTERM")),
        (
            ("doctor", "--watch"),
            signal.SIGHUP,
            129,
            _STOPPED.format("SIGHUP (its terminal or ssh session closed)"),
        ),
    ],
)
def test_a_stop_ends_the_monitor_while_its_reads_wait_on_a_cluster_that_never_answers(
    tmp_path: Path, args: tuple[str, ...], how: signal.Signals, code: int, said: str | None
) -> None:
    """SIGTERM (the kubelet's stop, which sends SIGKILL after terminationGracePeriodSeconds,
    30 s by default: pkg/kubelet/kuberuntime/kuberuntime_container.go killContainer), Ctrl-C
    and SIGHUP (the terminal or ssh session went away) end the process while the first
    evaluation's reads are in flight to an API server that took the connection and never
    answers, long before the 60 s each read may wait: the monitor with exit 0
    (docs/monitor.md), doctor --watch, which has drawn no verdict yet, as a program the signal
    ended (130, 143, 129) with the one line every interrupted command says."""
    with HostileServer(silent) as api:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "mute", "cluster": {"server": api.url}}],
                    "users": [{"name": "mute", "user": {"token": "t0ken"}}],
                    "contexts": [{"name": "mute", "context": {"cluster": "mute", "user": "mute"}}],
                    "current-context": "mute",
                }
            )
        )
        running = Process(*args, "--kubeconfig", str(kubeconfig), "--request-timeout", "60")
        try:
            wait_for("a read in flight", lambda: api.counts["requests"] > 0)
            running.process.send_signal(how)
            try:
                # wait, not communicate: stderr is read by the Process's own reader alone
                running.process.wait(timeout=STOP_BOUND)
            except subprocess.TimeoutExpired:
                pytest.fail(f"still running {STOP_BOUND:g} s after {how.name}")
        finally:
            if running.process.poll() is None:
                running.process.kill()
                running.process.wait()
    assert running.process.returncode == (signal_ended(code) if code else 0), running.err
    if said is not None:
        wait_for("its last line", lambda: said in running.err)
        assert [line for line in running.err if line] == [said]


@pytest.mark.parametrize(
    ("listen", "said"),
    [
        # `:PORT`, every address (IPv6 and IPv4, as Go's listener): no one address to name, so
        # the line names this machine's own, and says the rest.
        (":0", r"http://localhost:(\d+)/ and every other address of this machine"),
        # An IPv6 literal in a URL is in brackets (RFC 3986 §3.2.2), as Go's net.JoinHostPort
        # writes a host with a colon.
        ("[::1]:0", r"http://\[::1\]:(\d+)/"),
        ("127.0.0.1:0", r"http://127\.0\.0\.1:(\d+)/"),
    ],
)
def test_the_start_line_names_a_url_that_answers(cluster: Path, listen: str, said: str) -> None:
    """The monitor's start line gives where its metrics and status are as a URL a browser or
    curl takes, never `http://:::9108/`; that URL answers."""
    monitor = Process("monitor", "--kubeconfig", str(cluster), "--listen", listen)
    try:

        def start() -> list[str]:
            return [said for said in monitor.err if "metrics and status on" in said]

        wait_for("the start line", lambda: bool(start()))
        line = start()[0]
        found = re.fullmatch(
            r"truegreen: watching namespace 'train'; metrics and status on " + said, line
        )
        assert found is not None, line
        url = re.search(r"http://\S+/", line)
        assert url is not None
        assert urllib.parse.urlsplit(url[0]).port == int(found[1]) != 0
        assert http_get(url[0] + "healthz") == (200, "ok\n")
    finally:
        monitor.end(signal.SIGTERM)
