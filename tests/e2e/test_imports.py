"""Each command imports what it needs, when it needs it: lint never loads the Kubernetes client
or the HTTP stack (it does load msgspec, which every record is made of), JSON output never
loads rich, and doctor never loads logging or traceback (concurrent.futures would bring both),
its registry look-ups included; doctor leaves the registry client (with --no-registry), the
monitor's watches, bundle logs, credential plugins, the YAML file loader (no --config) and the
progress reader (no terminal) unloaded when it does not use them; a refresh tick with nothing
to look up starts no look-up pool; no command loads click or difflib. The console script loads
a command's modules with the cyclic garbage collector off, and every command turns it back on
before its work."""

import gc
import importlib.util
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli
from tests.support.fake_apiserver import FakeApiServer
from tests.support.hostile import ScriptedApi
from tests.support.registry import served_from, serving_manifests
from tests.support.scenarios import NAMESPACE, healthy

ROOT = Path(__file__).resolve().parents[2]
_PROBE = """
import contextlib, io, json, sys
sys.argv = ["truegreen", *json.loads(sys.argv[1])]
from truegreen.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main()
    except SystemExit as done:
        code = done.code
print(json.dumps({"exit": code, "modules": sorted(sys.modules)}))
"""


def _imported(*argv: str) -> tuple[int, set[str]]:
    """The exit code of `truegreen ARGV...` run in a fresh interpreter, and what it imported."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(argv)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    report = json.loads(done.stdout)
    return report["exit"], set(report["modules"])


def _probed(probe: str, *argv: str) -> tuple[dict[str, Any], Any]:
    """`truegreen ARGV...` run by `probe` (_PROBE and a second line of its own) in a fresh
    interpreter: what _PROBE reports, and what the second line printed."""
    done = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(argv)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    ran, extra = map(json.loads, done.stdout.splitlines()[-2:])
    return ran, extra


def _packages(modules: set[str], *names: str) -> set[str]:
    return {m for m in modules if m.split(".")[0] in names or m.startswith(names)}


def test_lint_loads_no_cluster_client_no_http_and_no_rich() -> None:
    code, modules = _imported("lint", "examples/manifests", "-o", "json")
    assert code in (0, 2)
    assert "truegreen.lint.run" in modules, "precondition: lint ran"
    assert (
        _packages(
            modules,
            "truegreen.cluster",
            "truegreen.http",
            "truegreen.doctor",
            "h11",
            "rich",
            "logging",
            "traceback",
        )
        == set()
    )


def test_json_output_loads_no_rich_and_doctor_no_logging_or_traceback(
    tmp_path: Path,
) -> None:
    """doctor asks the registries too (no machine has pulled the images yet), here one on
    loopback that serves every image: its look-ups run on plain threads, not
    concurrent.futures."""
    with FakeApiServer() as server, ScriptedApi(serving_manifests) as registry:
        objects = served_from(healthy(datetime.now(UTC)), f"127.0.0.1:{registry.port}")
        for pod in (o for o in objects if o["kind"] == "Pod"):  # no machine has pulled yet
            for status in pod["status"].get("containerStatuses", []):
                status.pop("imageID", None)
        server.add(*objects)
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", namespace=NAMESPACE)
        doctor_code, doctor = _imported(
            "doctor",
            "--kubeconfig",
            str(kubeconfig),
            "--registry-allow",
            f"127.0.0.1:{registry.port}",
            "-o",
            "json",
        )
        refresh_code, refresh = _imported("refresh", "--kubeconfig", str(kubeconfig), "-o", "json")
        asked = {request.method for request in registry.received}
    assert (doctor_code, refresh_code) == (0, 0)
    assert "truegreen.doctor.diagnose" in doctor, "precondition: doctor ran"
    assert asked == {"HEAD", "GET"}, "precondition: doctor asked the registry"
    assert "truegreen.refresh.tick" in refresh, "precondition: refresh ran"
    assert _packages(doctor, "rich", "logging", "traceback", "concurrent", "h11") == set()
    assert _packages(refresh, "rich") == set()
    # Nothing is opted in: no registry look-up pool (concurrent.futures, logging), no hashing.
    assert _packages(refresh, "concurrent", "logging", "hashlib", "_hashlib") == set()


def test_no_command_loads_click_or_difflib_and_lint_no_shutil(tmp_path: Path) -> None:
    """The command line is argparse: click (which brought difflib on every `-o`) is gone, and
    difflib loads only to suggest a name after a usage error. msgspec is imported with
    typing_extensions masked (truegreen/__init__.py), so no command loads it or the inspect,
    ast and dis it brings; uuid and platform still come with msgspec's own uuid support, so
    they are not pinned here. argparse's help width is read without shutil, which would bring
    zlib, bz2 and lzma."""
    with FakeApiServer() as server:
        server.add(*healthy(datetime.now(UTC)))
        kubeconfig = str(server.write_kubeconfig(tmp_path / "kubeconfig", namespace=NAMESPACE))
        doctor_code, doctor = _imported(
            "doctor", "--kubeconfig", kubeconfig, "--no-registry", "-o", "json"
        )
        refresh_code, refresh = _imported("refresh", "--kubeconfig", kubeconfig, "-o", "json")
    lint_code, lint = _imported("lint", "examples/manifests", "-o", "json")
    assert (doctor_code, refresh_code, lint_code) == (0, 0, 2)
    ran = {"truegreen.doctor.diagnose", "truegreen.refresh.tick", "truegreen.lint.run", "argparse"}
    assert ran <= doctor | refresh | lint, "precondition: the commands ran, parsed by argparse"
    for modules in (doctor, refresh, lint):
        assert _packages(modules, "click", "difflib") == set()
        assert {"msgspec", "typing"} <= modules, "precondition: msgspec and typing were loaded"
        assert {"typing_extensions", "inspect", "ast", "dis"} & modules == set()
    assert _packages(lint, "shutil", "bz2", "lzma") == set()
    _, mistaken = _imported("lint", "--out", "json")
    assert "difflib" in mistaken, "precondition: a usage error does suggest with difflib"


ONLY_SOMETIMES = (
    "truegreen.trial.readback",  # a trial's measurements: only with --trial
    "truegreen.doctor.checks.admission.trial",  # a trial start's pod: --admission-dry-run
)
"""Modules that doctor loads where it first needs them: a healthy namespace, checked without
flags, never does."""


def test_doctor_loads_no_registry_client_watches_logs_or_plugins(tmp_path: Path) -> None:
    with FakeApiServer() as server:
        server.add(*healthy(datetime.now(UTC)))
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", namespace=NAMESPACE)
        code, doctor = _imported(
            "doctor", "--kubeconfig", str(kubeconfig), "--no-registry", "-o", "json"
        )
    assert code == 0
    assert {
        "truegreen.doctor.checks.freshness",
        "truegreen.doctor.checks.trial",
        "truegreen.cluster.live",
    } <= doctor, "precondition: doctor read the live cluster and ran its checks"
    assert set(ONLY_SOMETIMES) & doctor == set()
    unused = {
        "truegreen.refresh.plan",
        "truegreen.refresh.registry",
        "truegreen.doctor.reads.registry_lookups",
        "truegreen.refresh.report",
        "truegreen.cluster.watch",
        "truegreen.cluster.logs",
        "truegreen.cluster.recent_events",
        "truegreen.cluster.exec_plugin",
        "truegreen.cluster.snapshot",
        "truegreen.yamlsafe",
        "truegreen.doctor.command.progress",
    }
    assert unused & doctor == set()
    # The fake's kubeconfig is block YAML, as kubectl writes one: read without PyYAML.
    assert "truegreen.cluster.blockyaml" in doctor, "precondition: the kubeconfig was read"
    assert _packages(doctor, "yaml") == set()
    # The discovery memory's file is named without a digest: hashlib starts OpenSSL (~5 ms).
    assert "truegreen.cluster.discovery_memory" in doctor, "precondition: discovery remembered"
    assert _packages(doctor, "hashlib", "_hashlib") == set()


ENGINES = (
    "truegreen.doctor.checks.queue.kueue_verdict",  # Kueue's verdict: a job in Kueue's queues
    "truegreen.doctor.checks.queue.flavor_assigner",
    "truegreen.doctor.knowledge.kueue",
    "truegreen.doctor.checks.queue.gang",  # a gang scheduler's word: pods that name one
    "truegreen.doctor.knowledge.gangs",
    "truegreen.doctor.knowledge.yunikorn",
    "truegreen.doctor.checks.admission.podsecurity",  # the rules: a level above privileged
    "truegreen.doctor.checks.capacity.unplaced",  # pods the scheduler could not place
    "truegreen.doctor.checks.capacity.autoscaling",
    "truegreen.doctor.checks.capacity.capi_groups",
    "truegreen.doctor.checks.capacity.karpenter_claims",
    "truegreen.doctor.checks.capacity.scheduler_reasons",
    "truegreen.doctor.checks.capacity.filters.device_room",  # devices a pod claims
    "truegreen.doctor.knowledge.device_cel",
    "truegreen.doctor.checks.capacity.kubelet_admission",  # a pod set that names its machine
    "truegreen.http.proxy_dial",  # a proxy between doctor and the cluster
    "truegreen.http.pem",  # a client certificate
    "truegreen.lint.shell_words",  # a probe that runs a command
    "truegreen.lint.commands",
    "truegreen.doctor.command.job_file",  # --job-file
    "truegreen.doctor.knowledge.pull_errors",  # a pod that shows a pull error
    "truegreen.pull_errors",
    "truegreen.doctor.knowledge.missing_settings",
    "truegreen.doctor.knowledge.made_volumes",  # a claim that awaits a volume made in advance
    "truegreen.cluster.label_selector",  # --namespace-selector
)
"""What doctor loads only for what a healthy namespace with no queue system, gang scheduler,
autoscaler, claimed devices, Pod Security level, proxy or exec probe lacks: together about
a quarter of the byte-code a small namespace's run would load with them (bench/imports.py)."""


def test_doctor_loads_no_engine_for_what_the_namespace_does_not_have(tmp_path: Path) -> None:
    with FakeApiServer() as server:
        server.add(*healthy(datetime.now(UTC)))
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", namespace=NAMESPACE)
        code, doctor = _imported(
            "doctor", "--kubeconfig", str(kubeconfig), "--no-registry", "-o", "json"
        )
    assert code == 0, "precondition: the namespace is healthy"
    assert all(map(importlib.util.find_spec, ENGINES)), "precondition: each module exists"
    assert {
        "truegreen.doctor.checks.queue.check",
        "truegreen.doctor.checks.capacity.placement",
        "truegreen.doctor.checks.capacity.filters.dynamic_resources",
        "truegreen.doctor.checks.admission.podsecurity_api",
        "truegreen.doctor.checks.probes",
    } <= doctor, "precondition: the queue, capacity, admission and probe checks ran"
    assert sorted(set(ENGINES) & doctor) == []


SERVICE_ACCOUNT_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
_COMPILED_PROBE = f"""{_PROBE}
from truegreen.redaction import text
named = (text._assignment, text._flag_and_value, text.secret_flag)
print(json.dumps([rule.__name__ for rule in named if rule.cache_info().currsize]))
"""


def test_doctor_compiles_no_rule_for_secret_named_values_when_no_text_names_a_secret(
    tmp_path: Path,
) -> None:
    objects = healthy(datetime.now(UTC))
    for pod in (o for o in objects if o["kind"] == "Pod"):
        # As the API server mounts every pod's token: a secret word, but no value it names.
        mount = {"name": "kube-api-access", "mountPath": SERVICE_ACCOUNT_MOUNT}
        pod["spec"]["containers"][0]["volumeMounts"] = [mount]
    with FakeApiServer() as server:
        server.add(*objects)
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", namespace=NAMESPACE)
        ran, compiled = _probed(_COMPILED_PROBE, "doctor", "--kubeconfig", str(kubeconfig))
    assert "truegreen.doctor.diagnose" in ran["modules"], "precondition: doctor ran"
    assert compiled == []


_LAZY_PATTERNS_PROBE = f"""{_PROBE}
import importlib  # a module the run left unloaded is loaded here, none of its patterns compiled
from truegreen.patterns import LazyPattern
def compiled(module):
    def of(value):
        if isinstance(value, LazyPattern):
            yield value
        elif isinstance(value, tuple):
            for item in value:
                yield from of(item)
    patterns = [p for value in vars(module).values() for p in of(value)]
    return [len(patterns), sum(p._compiled is not None for p in patterns)]
names = ("truegreen.doctor.knowledge.evidence", "truegreen.doctor.checks.capacity.autoscaling",
         "truegreen.pull_errors", "truegreen.doctor.knowledge.missing_settings",
         "truegreen.doctor.knowledge.device_cel", "truegreen.yamlwords")
print(json.dumps({{name: compiled(importlib.import_module(name)) for name in names}}))
"""


def _lazy_patterns_compiled(kubeconfig: Path) -> tuple[dict[str, Any], Any]:
    argv = ["--kubeconfig", str(kubeconfig), "--no-registry", "-o", "json"]
    return _probed(_LAZY_PATTERNS_PROBE, "doctor", *argv)


def test_doctor_compiles_the_words_it_recognises_only_when_it_meets_them(
    tmp_path: Path,
) -> None:
    """A healthy namespace compiles none of the patterns for an autoscaler's, a kubelet's or a
    scheduler's words or a YAML parser's (truegreen/patterns.py), where it loads their modules
    at all; a pod in ErrImagePull compiles the pull-error patterns it is matched against, and
    only those modules' patterns."""
    with FakeApiServer() as server:
        server.add(*healthy(datetime.now(UTC)))
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", namespace=NAMESPACE)
        ran, healthy_run = _lazy_patterns_compiled(kubeconfig)
    assert ran["exit"] == 0, "precondition: doctor ran on a healthy namespace"
    assert all(total > 0 for total, _ in healthy_run.values()), (
        f"precondition: every module named that loaded holds lazy patterns: {healthy_run}"
    )
    assert {name: done for name, (_, done) in healthy_run.items() if done} == {}

    objects = healthy(datetime.now(UTC))
    pod = next(o for o in objects if o["kind"] == "Pod")
    message = (
        'Failed to pull image "registry.example.com/trainer:2.1": failed to resolve reference: '
        "unexpected status from HEAD request: 429 Too Many Requests"
    )  # pkg/kubelet/images/image_manager.go: the runtime's error after "Failed to pull image"
    waiting = {"waiting": {"reason": "ErrImagePull", "message": message}}
    pod["status"]["containerStatuses"][0].update(state=waiting, ready=False)
    pod["status"]["containerStatuses"][0].pop("imageID", None)
    with FakeApiServer() as server:
        server.add(*objects)
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", namespace=NAMESPACE)
        ran, pulling_run = _lazy_patterns_compiled(kubeconfig)
    assert ran["exit"] == 2, "precondition: doctor found the pull failure"
    assert pulling_run["truegreen.pull_errors"][1] >= 1
    assert pulling_run.get("truegreen.doctor.checks.capacity.autoscaling", [0, 0])[1] == 0


_COLLECTOR_PROBE = """
import contextlib, gc, io, json, os, signal, sys, threading, time
sys.argv = ["truegreen", *json.loads(sys.argv[1])]

def watching():  # the monitor's own handler, which ends its loop (not the one for start-up)
    handler = signal.getsignal(signal.SIGTERM)
    return "stop_on_signals" in getattr(handler, "__qualname__", "")


def end_once_watching():  # monitor runs until stopped: by SIGTERM, once it handles it
    deadline = time.monotonic() + 30
    while not watching() and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(os.getpid(), signal.SIGTERM)


if sys.argv[1] == "monitor":
    threading.Thread(target=end_once_watching, daemon=True).start()
from truegreen.start import main
first = []  # the modules loaded when the collector first ran
gc.callbacks.append(lambda phase, info: first or first.append(sorted(sys.modules)))
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main()
    except SystemExit:
        pass
print(json.dumps({"enabled": gc.isenabled(), "first": first[0] if first else []}))
"""


@pytest.mark.parametrize(
    ("command", "loaded"),
    [
        ("doctor", "truegreen.doctor.diagnose"),
        ("snapshot", "truegreen.doctor.present.snapshot_report"),
        ("lint", "truegreen.lint.run"),
        ("refresh", "truegreen.refresh.tick"),
        ("monitor", "truegreen.monitor.engine"),
    ],
)
def test_the_console_script_collects_garbage_only_once_the_command_is_loaded(
    tmp_path: Path, command: str, loaded: str
) -> None:
    with FakeApiServer() as server:
        server.add(*healthy(datetime.now(UTC)))
        kubeconfig = str(server.write_kubeconfig(tmp_path / "kubeconfig", namespace=NAMESPACE))
        argv = {
            "doctor": ["doctor", "--kubeconfig", kubeconfig, "--no-registry", "-o", "json"],
            "snapshot": [
                *("snapshot", "--kubeconfig", kubeconfig, "--no-registry"),
                *("--archive", "a.tar.gz"),
            ],
            "lint": ["lint", str(ROOT / "examples" / "manifests"), "-o", "json"],
            "refresh": ["refresh", "--kubeconfig", kubeconfig, "-o", "json"],
            "monitor": ["monitor", "--kubeconfig", kubeconfig, "--listen", "127.0.0.1:0"],
        }[command]
        done = subprocess.run(
            [sys.executable, "-c", _COLLECTOR_PROBE, json.dumps(argv)],
            capture_output=True,
            text=True,
            check=True,
            cwd=tmp_path,
            timeout=60,
        )
    report = json.loads(done.stdout)
    assert report["enabled"], f"{command} never turned the garbage collector back on"
    assert not report["first"] or loaded in report["first"], (
        f"the collector ran before {loaded} was loaded"
    )


def test_a_command_run_in_process_leaves_the_collector_as_it_found_it() -> None:
    frozen = gc.get_freeze_count()
    result = run_cli("lint", str(ROOT / "examples" / "manifests"), "-o", "json")
    assert result.exit_code in (0, 2), "precondition: lint ran"
    assert gc.isenabled()
    # Frozen objects that die meanwhile leave the count lower; freezing would raise it.
    assert gc.get_freeze_count() <= frozen, "an in-process lint froze its caller's objects"
