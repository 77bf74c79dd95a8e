"""`doctor --trial` against the fake API server and its trial kubelet
(tests/support/fake_kubelet.py), which runs the real probe as a local process: the codes the
trial yields, the pods gone afterwards, and the plain refusals."""

import json
import os
import pty
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support.fake_apiserver import Fault
from tests.support.fake_kubelet import FakeKubelet, exec_not_found, ipv6_loopback
from tests.support.monitoring import signal_ended
from tests.support.real_parts import required
from tests.support.scenarios import NAMESPACE, healthy, training_job
from tests.support.trial_results import trial_pods_left

Obj = dict[str, Any]


def _trial_codes(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["code"], f["status"]) for f in report["findings"] if f["check"] == "trial"]


def _cpu_job(now: datetime) -> list[Obj]:
    """The healthy namespace with its training job asking for no GPU (no GPU library is in
    this machine's Python, so a GPU job's trial could not check CUDA)."""
    objects = [o for o in healthy(now) if o["kind"] != "Job"]
    return [*objects, training_job("train-llm", now, gpus=0)]


def _distributed_job(now: datetime) -> list[Obj]:
    """Two ranks that run together (an Indexed Job whose parallelism is its completions)."""
    job = training_job("train-llm", now, gpus=0)
    job["spec"].update({"parallelism": 2, "completions": 2, "completionMode": "Indexed"})
    return [*(o for o in healthy(now) if o["kind"] != "Job"), job]


TORCH_PYTHON = Path(__file__).resolve().parents[2] / ".venv-torch" / "bin" / "python"


@pytest.fixture(scope="module")
def torch_python() -> str:
    """PyTorch's CPU build, in a venv of its own (tests/unit/test_trial_probe_gloo.py)."""
    if not TORCH_PYTHON.exists():
        why = f"{TORCH_PYTHON} is missing: `make .venv-torch/.installed` builds it"
        if required():
            pytest.fail(f"PyTorch is required in CI: {why}")
        pytest.skip(why)
    return str(TORCH_PYTHON)


def test_a_healthy_trial_measures_and_leaves_nothing(doctor: Doctor) -> None:
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    result = doctor.live("--trial", "-o", "json")
    assert result.exit_code == 0, result.stdout
    assert _trial_codes(result.json()) == [("trial.ok", "ok")]
    assert trial_pods_left(doctor.server) == []


def test_a_slow_image_download_is_a_warning(doctor: Doctor) -> None:
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(
        doctor.server, pull=("19m41.2s", "19m58.004s"), image_bytes=17_179_869_184
    )
    report = doctor.live("--trial", "-o", "json").json()
    assert _trial_codes(report) == [("trial.ok", "ok"), ("trial.image-pull-slow", "warn")]
    [slow] = [f for f in report["findings"] if f["code"] == "trial.image-pull-slow"]
    assert slow["headline"] == (
        "The training image took 19 min 58 s to download (16.0 GiB) on a machine without it."
    )


def test_a_slow_image_download_on_a_kubelet_before_1_30_is_a_warning(doctor: Doctor) -> None:
    """Kubelets 1.28 and 1.29 write the Pulled message with the time waiting included and no
    size (pkg/kubelet/images/image_manager.go EnsureImageExists: `Successfully pulled image %q
    in %v (%v including waiting)`): the same download, the same warning, its size not said."""
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(
        doctor.server, pull=("19m41.2s", "19m58.004s"), image_bytes=None
    )
    result = doctor.live("--trial", "-o", "json")
    report = result.json()
    assert _trial_codes(report) == [("trial.ok", "ok"), ("trial.image-pull-slow", "warn")]
    [slow] = [f for f in report["findings"] if f["code"] == "trial.image-pull-slow"]
    assert slow["headline"] == (
        "The training image took 19 min 58 s to download on a machine without it."
    )
    assert result.exit_code == 0


def test_a_worker_that_cannot_reach_rank_0_fails(doctor: Doctor) -> None:
    doctor.load(_distributed_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, pod_ip="127.0.0.2")
    result = doctor.live("--trial", "--trial-timeout", "20", "-o", "json")
    assert result.exit_code == 2
    codes = _trial_codes(result.json())
    assert ("trial.workers-missing", "fail") in codes
    assert ("trial.rank0-unreachable", "fail") in codes
    assert trial_pods_left(doctor.server) == []


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback on this machine")
def test_workers_on_an_ipv6_pod_network_reach_rank_0(doctor: Doctor) -> None:
    """On an IPv6 pod network (EKS's and GKE's IPv6 clusters) the kubelet reports rank 0's
    `status.podIP` as an IPv6 address (here IPv6's loopback stands in) and the workers are
    given it. Rank 0's probe, listening where a pod's program does (its own default: the
    fake kubelet's loopback-only bind is lifted), must be reached over IPv6, as the job's own
    PyTorch store is: never a network failure the job would not meet."""
    doctor.load(_distributed_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(
        doctor.server, pod_ip="::1", extra_env={"TRUEGREEN_PROBE_BIND": ""}
    )
    result = doctor.live("--trial", "--trial-timeout", "20", "-o", "json")
    report = result.json()
    assert _trial_codes(report) == [("trial.ok", "ok")], report["findings"]
    [ok] = [f for f in report["findings"] if f["code"] == "trial.ok"]
    assert ok["headline"].endswith("the workers reach each other."), ok["headline"]
    told = sorted(e["TRUEGREEN_PROBE_MASTER_ADDR"] for e in doctor.server.kubelet.started.values())
    assert told == ["127.0.0.1", "::1"], told
    assert result.exit_code == 0
    assert trial_pods_left(doctor.server) == []


def test_rank_0_hosts_its_own_rendezvous_whatever_master_addr_the_job_states(
    doctor: Doctor, torch_python: str
) -> None:
    """The usual Indexed Job names pod 0 through its headless service in MASTER_ADDR
    (kubernetes docs, "Job with Pod-to-Pod Communication": `<job>-0.<service>`), an address
    no trial pod has. Rank 0 of PyTorch's rendezvous hosts the store and its own client
    connects to the init method's host (torch/distributed/rendezvous.py
    `_tcp_rendezvous_handler` → `TCPStore(hostname, port, ..., is_master=rank == 0)`): given
    the job's address it dials the job, not itself. With PyTorch's CPU build as the image's
    `python3`, the two workers' gloo all-reduce must go through."""
    job_env = [
        {"name": "MASTER_ADDR", "value": "train-llm-0.train-llm.train.svc"},
        {"name": "MASTER_PORT", "value": "29500"},
    ]

    def build(now: datetime) -> list[Obj]:
        objects = _distributed_job(now)
        objects[-1]["spec"]["template"]["spec"]["containers"][0]["env"] = job_env
        return objects

    doctor.load(build)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, python=torch_python)
    result = doctor.live("--trial", "--trial-timeout", "60", "-o", "json", "--verbose")
    report = result.json()
    assert _trial_codes(report) == [("trial.ok", "ok")], report["findings"]
    assert result.exit_code == 0
    [ok] = [f for f in report["findings"] if f["code"] == "trial.ok"]
    assert "one exchange between the workers in" in ok["headline"]
    started = {
        name: env["TRUEGREEN_PROBE_MASTER_ADDR"]
        for name, env in doctor.server.kubelet.started.items()
    }
    assert sorted(started.values()) == ["127.0.0.1", "127.0.0.1"], started


def test_a_refused_trial_is_the_cluster_s_answer_not_a_probe_failure(doctor: Doctor) -> None:
    doctor.load(_cpu_job)
    result = doctor.live("--trial", "-o", "json")
    # The login may not create pods (authorization): tests/scenario/test_trial_removal.py.
    assert _trial_codes(result.json()) == [("trial.not-allowed", "unknown")]
    assert result.exit_code == 3


def test_a_fleet_run_refuses_the_trial_in_one_line(doctor: Doctor) -> None:
    doctor.load(_cpu_job)
    result = doctor.live("--trial", "-A")
    assert result.exit_code == 64
    assert result.stderr == (
        "truegreen: --trial runs in one namespace; --all-namespaces names many. "
        "drop --trial, or name one namespace with -n\n"
    )


def test_a_trial_timeout_out_of_range_is_a_usage_error(doctor: Doctor) -> None:
    doctor.load(_cpu_job)
    for bad in ("0", "nan", "86400"):
        result = doctor.live("--trial", "--trial-timeout", bad)
        assert result.exit_code == 64, bad
        assert result.stderr == (
            "truegreen: --trial-timeout must be a number of seconds from 1 to 3600\n"
        )


def test_the_config_key_runs_the_trial(doctor: Doctor, tmp_path: Path) -> None:
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    config = tmp_path / "doctor.yaml"
    config.write_text("trial: true\n")
    report = doctor.live("--config", str(config), "-o", "json").json()
    assert _trial_codes(report) == [("trial.ok", "ok")]


def _interrupted(doctor: Doctor, stop: signal.Signals) -> tuple[int, bytes, bytes]:
    """doctor --trial -o json as its own process, sent `stop` once the trial's pod exists (its
    image pull never ends): the exit code and what it printed."""
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, stall=True)
    command = [sys.executable, "-m", "truegreen", "doctor", "--kubeconfig", str(doctor.kubeconfig)]
    with subprocess.Popen(
        [*command, "--no-registry", "--trial", "--trial-timeout", "60", "-o", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as run:
        deadline = time.monotonic() + 30
        while not trial_pods_left(doctor.server) and time.monotonic() < deadline:
            time.sleep(0.05)
        [started] = trial_pods_left(doctor.server)
        assert started.startswith("truegreen-trial-train-llm-"), "precondition: the trial began"
        run.send_signal(stop)
        out, err = run.communicate(timeout=30)
    return run.returncode, out, err


def test_sigterm_during_the_trial_deletes_its_pods(doctor: Doctor) -> None:
    code, _, err = _interrupted(doctor, signal.SIGTERM)
    assert code == signal_ended(143), err
    assert trial_pods_left(doctor.server) == []


def test_a_hang_up_during_the_trial_deletes_its_pods_and_says_so(doctor: Doctor) -> None:
    """SIGHUP (the terminal or ssh session went away) ends the run as SIGTERM does: its pods
    deleted, its line said, ended by the signal (129). A pod left would be ended by nothing
    while no machine takes it (pkg/kubelet/active_deadline.go `pastActiveDeadline`: no start
    time, no deadline)."""
    code, out, err = _interrupted(doctor, signal.SIGHUP)
    assert code == signal_ended(129), err
    assert trial_pods_left(doctor.server) == []
    assert err.decode().endswith(
        "truegreen: stopped by SIGHUP (its terminal or ssh session closed) before the run had "
        "a result. run it again to get one\n"
    )
    assert json.loads(out)["exit_code"] == 129


def test_a_hang_up_whose_terminal_is_gone_still_deletes_the_pods_and_ends_by_it(
    doctor: Doctor,
) -> None:
    """doctor --trial on a terminal (its progress line turning on stderr) that goes away, then
    SIGHUP, as an ssh session that drops: every write to the terminal fails (EIO), and still
    the pods are deleted and the run ends by the signal, never as a bug (exit 1)."""
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, unschedulable="0/3 nodes are available.")
    command = [sys.executable, "-m", "truegreen", "doctor", "--kubeconfig", str(doctor.kubeconfig)]
    terminal, its_end = pty.openpty()
    with subprocess.Popen(
        [*command, "--no-registry", "--trial", "--trial-timeout", "60"],
        stdin=its_end,
        stdout=its_end,
        stderr=its_end,
        env={**os.environ, "TERM": "xterm"},
    ) as run:
        os.close(its_end)
        deadline = time.monotonic() + 30
        while not trial_pods_left(doctor.server) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert trial_pods_left(doctor.server), "precondition: the trial began"
        os.close(terminal)  # the terminal is gone: its writes fail from now on
        run.send_signal(signal.SIGHUP)
        code = run.wait(timeout=30)
    assert code == signal_ended(129)
    assert trial_pods_left(doctor.server) == []


def test_ctrl_c_during_the_trial_deletes_its_pods(doctor: Doctor) -> None:
    code, out, err = _interrupted(doctor, signal.SIGINT)
    assert code == signal_ended(130), err
    assert trial_pods_left(doctor.server) == []
    assert b"Traceback" not in err
    assert json.loads(out)["exit_code"] == 130, "-o json promises a document, interrupted too"


def _left_pod(name: str, created: datetime, status: Obj) -> Obj:
    """A trial pod as a run of doctor --trial creates it: its labels and its own deadline
    (`activeDeadlineSeconds`, 30 s past a trial of 300 s), with the time the API server stored
    it (`metadata.creationTimestamp`) and a status."""
    run = name.rsplit("-", 2)[-2]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "labels": {"truegreen.io/trial": "true", "truegreen.io/trial-run": run},
            "creationTimestamp": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
        "spec": {
            "containers": [{"name": "trainer", "image": "python:3.12"}],
            "restartPolicy": "Never",
            "activeDeadlineSeconds": 330,
        },
        "status": status,
    }


def test_a_trial_removes_only_what_an_interrupted_one_left(doctor: Doctor) -> None:
    """Three trial pods another run made: one whose own deadline passed long ago while no
    machine took it (what a run killed with SIGKILL leaves: Pending for good, holding quota),
    one the kubelet ended at its deadline (`Failed`, reason `DeadlineExceeded`:
    pkg/kubelet/active_deadline.go), and one of a run still going (created seconds ago,
    Running). Only the first two are left over; a live run's pod is never touched."""
    stale = "truegreen-trial-train-llm-0e20-0"
    ended = "truegreen-trial-train-llm-51ab-0"
    live = "truegreen-trial-train-llm-9f3c7a21-0"

    def build(now: datetime) -> list[Obj]:
        real = datetime.now(UTC)
        return [
            *_cpu_job(now),
            _left_pod(stale, real - timedelta(hours=1), {"phase": "Pending"}),
            _left_pod(
                ended,
                real - timedelta(minutes=6),
                {
                    "phase": "Failed",
                    "reason": "DeadlineExceeded",
                    "message": "Pod was active on the node longer than the specified deadline",
                },
            ),
            _left_pod(live, real - timedelta(seconds=5), {"phase": "Running"}),
        ]

    doctor.load(build)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    report = doctor.live("--trial", "-o", "json").json()
    assert trial_pods_left(doctor.server) == [live], "another run's live pod stays"
    [ok] = [f for f in report["findings"] if f["code"] == "trial.ok"]
    assert f"2 left by an interrupted trial removed first ({stale}, {ended})" in ok["headline"]


NO_ROOM = "0/3 nodes are available: 3 Insufficient cpu."
"""kube-scheduler's words for a pod no machine fits (pkg/scheduler/schedule_one.go FitError)."""


@pytest.mark.parametrize("ending", ["refused", "not-placed"])
def test_leftovers_removed_before_a_trial_that_measured_nothing_are_named_not_passed(
    doctor: Doctor, ending: str
) -> None:
    """An interrupted run left a trial pod, which the kubelet ended at its deadline; this run
    deletes it, and then a webhook turns its own trial pod away, or no machine takes it. The
    removal is said, as a detail of the finding that says the trial measured nothing, and never
    as a green `trial.ok`: a cleanup is no measurement."""
    ended = "truegreen-trial-train-llm-0badcafe-0"

    def build(now: datetime) -> list[Obj]:
        stopped = {"phase": "Failed", "reason": "DeadlineExceeded"}
        return [*_cpu_job(now), _left_pod(ended, datetime.now(UTC) - timedelta(hours=2), stopped)]

    doctor.load(build)
    doctor.server.admission.allow_creates = True
    if ending == "refused":
        doctor.server.admission.webhook_denial = ("policy.example.com", "no trial pods here")
        doctor.server.kubelet = FakeKubelet(doctor.server)
    else:
        doctor.server.kubelet = FakeKubelet(doctor.server, unschedulable=NO_ROOM)
    result = doctor.live("--trial", "--trial-timeout", "2", "-o", "json")
    assert trial_pods_left(doctor.server) == [], "the leftover is deleted"
    assert _trial_codes(result.json()) == [(f"trial.{ending}", "unknown")]
    assert result.exit_code == 3, "the trial measured nothing: never a pass"
    [found] = [f for f in result.json()["findings"] if f["check"] == "trial"]
    assert found["details"][-1] == f"1 left by an interrupted trial removed first ({ended})"


def test_a_shared_memory_smaller_than_the_job_states_fails(doctor: Doctor) -> None:
    """The job mounts a memory-backed /dev/shm of 1 TiB; the machine gives less (here: this
    computer's /dev/shm, which the fake kubelet's process sees)."""
    assert os.statvfs("/dev/shm").f_blocks * os.statvfs("/dev/shm").f_frsize < 1 << 40, (
        "precondition: this machine's /dev/shm is below 1 TiB"
    )

    def build(now: datetime) -> list[Obj]:
        objects = _cpu_job(now)
        job = next(o for o in objects if o["kind"] == "Job")
        spec = job["spec"]["template"]["spec"]
        spec["volumes"] = [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "1Ti"}}]
        spec["containers"][0]["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}]
        return objects

    doctor.load(build)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    report = doctor.live("--trial", "-o", "json").json()
    trial = {f["code"]: f for f in report["findings"] if f["check"] == "trial"}
    assert "trial.shm-too-small" in trial, f"the job's stated /dev/shm is its need: {list(trial)}"
    small = trial["trial.shm-too-small"]
    assert small["status"] == "fail"
    assert small["headline"].endswith("below the 1024.0 GiB it needs."), small["headline"]


def _python_with_shm(folder: Path, size: int) -> str:
    """An image's `python3` whose /dev/shm is `size` bytes (os.statvfs answers so for it): a
    container given the runtime's default shared memory."""
    program = folder / "small_shm.py"
    program.write_text(
        "import os, sys\n"
        "real = os.statvfs\n"
        "def statvfs(path):\n"
        "    found = real(path)\n"
        "    if str(path) != '/dev/shm':\n"
        "        return found\n"
        f"    blocks = {size} // 4096\n"
        "    return os.statvfs_result((4096, 4096, blocks, blocks, blocks, *found[5:]))\n"
        "os.statvfs = statvfs\n"
        "code = sys.argv[2]\n"  # python3 -c <probe.py>
        "sys.argv = ['-c', *sys.argv[3:]]\n"
        "exec(compile(code, '<string>', 'exec'), {'__name__': '__main__'})\n",
        encoding="utf-8",
    )
    launcher = folder / "python-small-shm"
    launcher.write_text(f'#!/bin/sh\nexec {sys.executable} {program} "$@"\n', encoding="utf-8")
    launcher.chmod(0o755)
    return str(launcher)


def test_the_runtime_s_default_shared_memory_is_a_warning_under_its_documented_code(
    doctor: Doctor, tmp_path: Path
) -> None:
    """The job states no /dev/shm of its own, and the container gets the runtime's 64 MiB:
    `trial.shm-default-size` (warn), the code docs/trial.md's findings table names."""
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, python=_python_with_shm(tmp_path, 64 << 20))
    result = doctor.live("--trial", "-o", "json")
    report = result.json()
    assert _trial_codes(report) == [("trial.ok", "ok"), ("trial.shm-default-size", "warn")]
    [small] = [f for f in report["findings"] if f["code"] == "trial.shm-default-size"]
    assert small["headline"] == (
        "The shared memory of the training program is only 64 MiB, the default size: a data "
        "loader with workers fills it."
    )
    assert result.exit_code == 0
    assert trial_pods_left(doctor.server) == []


def _gpu_ranks(gpus_each: int) -> Any:
    def build(now: datetime) -> list[Obj]:
        job = training_job("train-llm", now, gpus=gpus_each)
        job["spec"].update({"parallelism": 2, "completions": 2, "completionMode": "Indexed"})
        return [*(o for o in healthy(now) if o["kind"] != "Job"), job]

    return build


def _kept_apart(pod: Obj) -> bool:
    terms = (
        pod["spec"]
        .get("affinity", {})
        .get("podAntiAffinity", {})
        .get("requiredDuringSchedulingIgnoredDuringExecution", [])
    )
    return any(t.get("topologyKey") == "kubernetes.io/hostname" for t in terms)


def test_the_workers_share_a_machine_only_where_the_job_s_pods_would(doctor: Doctor) -> None:
    """The healthy cluster's largest machine offers 2 GPUs: two ranks of 1 GPU fit on it, as the
    job's own pods would; two ranks of 2 GPUs span two machines, so the trial keeps its workers
    apart and measures the network between machines."""
    largest = max(
        int(n["status"]["allocatable"].get("nvidia.com/gpu", 0))
        for n in healthy(datetime.now(UTC))
        if n["kind"] == "Node"
    )
    assert largest == 2, "precondition: the largest machine offers 2 GPUs"
    for gpus_each, apart in ((1, False), (2, True)):
        doctor.load(_gpu_ranks(gpus_each))
        doctor.server.admission.allow_creates = True
        doctor.server.kubelet = FakeKubelet(doctor.server)
        doctor.live("--trial", "--trial-timeout", "20", "-o", "json")
        pods = list(doctor.server.kubelet.pods.values())
        assert len(pods) == 2, "precondition: both ranks were created"
        assert [_kept_apart(p) for p in pods] == [apart, apart], f"{gpus_each} GPUs each"


def _unmeasured(
    doctor: Doctor, kubelet: FakeKubelet, timeout: str = "3"
) -> tuple[int, list[dict[str, Any]]]:
    """doctor --trial (3 s) with `kubelet`: the exit code and the trial's findings."""
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = kubelet
    result = doctor.live("--trial", "--trial-timeout", timeout, "-o", "json", "--verbose")
    report = result.json()
    assert trial_pods_left(doctor.server) == []
    return result.exit_code, [f for f in report["findings"] if f["check"] == "trial"]


def _one_pod(doctor: Doctor) -> str:
    assert doctor.server.kubelet is not None
    [name] = doctor.server.kubelet.pods
    return name


def test_a_probe_that_had_not_reported_when_the_time_ran_out_is_unknown(doctor: Doctor) -> None:
    """The container Running, its program not yet printing (an import that takes minutes): the
    kubelet's status says `running` and the log is empty (core/v1 ContainerStateRunning). The
    image's download was measured; what the probe would measure was not."""
    code, found = _unmeasured(doctor, FakeKubelet(doctor.server, stop="running"))
    assert [(f["code"], f["status"]) for f in found] == [
        ("trial.ok", "ok"),
        ("trial.no-probe-line", "unknown"),
    ]
    assert found[0]["headline"] == (
        "The trial start of the training job measured: the image came in 1.3 s."
    )
    assert found[1]["headline"] == "The trial's program left no measurement."
    assert found[1]["details"] == [
        f"{_one_pod(doctor)}: the probe had not reported when the trial's time ran out"
    ]
    assert code == 3, "nothing the probe measures was measured: never a pass"


def test_a_trial_pod_still_being_created_when_the_time_ran_out_is_unknown(doctor: Doctor) -> None:
    """Placed, its container still `ContainerCreating` (a volume still attaching, with no
    FailedMount yet): the kubelet's default waiting reason (pkg/kubelet/kubelet_pods.go
    convertToAPIContainerStatuses). Nothing ran, nothing was measured."""
    code, found = _unmeasured(doctor, FakeKubelet(doctor.server, stop="creating"))
    assert [(f["code"], f["status"]) for f in found] == [("trial.no-probe-line", "unknown")]
    assert found[0]["details"] == [
        f"{_one_pod(doctor)}: the trial pod was still being created (ContainerCreating) "
        "when the trial's time ran out"
    ]
    assert code == 3


def test_a_trial_pod_that_disappeared_before_it_reported_is_unknown(doctor: Doctor) -> None:
    """Someone else deleted the trial pod while its program ran (an operator, an eviction): the
    API server answers NotFound to its read (apimachinery pkg/api/errors NewNotFound)."""
    code, found = _unmeasured(doctor, FakeKubelet(doctor.server, stop="deleted"))
    assert [(f["code"], f["status"]) for f in found] == [
        ("trial.ok", "ok"),
        ("trial.no-probe-line", "unknown"),
    ]
    assert found[1]["details"] == [
        f"{_one_pod(doctor)}: the trial pod disappeared before its report was read"
    ]
    assert code == 3


def test_an_image_without_python_is_measured_by_the_shell_probe(doctor: Doctor) -> None:
    """An image with `sh` and no `python3` (a C++ or Go trainer): the trial falls back to
    probe.sh (docs/trial.md), which measures what sh can see; the GPU libraries it cannot try
    are unknown, never a failure of the job's program, which did not run."""

    def build(now: datetime) -> list[Obj]:
        objects = [o for o in healthy(now) if o["kind"] != "Job"]
        return [*objects, training_job("train-llm", now, gpus=1)]

    doctor.load(build)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, python=None)
    result = doctor.live("--trial", "--trial-timeout", "20", "-o", "json", "--verbose")
    found = [f for f in result.json()["findings"] if f["check"] == "trial"]
    assert [(f["code"], f["status"]) for f in found] == [
        ("trial.ok", "ok"),
        ("trial.no-gpu-library", "unknown"),
    ], found
    assert found[1]["headline"] == (
        "Couldn't check the GPUs from inside the training image: it has no PyTorch, JAX or CuPy "
        "(or no Python 3.8 or later to try them with)."
    )
    # Then the driver as the machine shows it ("no NVIDIA driver seen" on one without).
    [details] = found[1]["details"]
    assert details.startswith(f"{_one_pod(doctor)}: no Python in the image; "), details
    [log] = doctor.server.container_logs.values()
    assert '"runtime":"sh"' in log
    assert result.exit_code == 3


def _pyenv_python(version: str) -> str | None:
    """pyenv's Python `version` (`3.6`), where installed: an image's old `python3`."""
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = sorted(root.glob(f"{version}.*/bin/python{version}")) if root.is_dir() else []
    return str(found[-1]) if found else None


@pytest.mark.skipif(_pyenv_python("3.6") is None, reason="no Python 3.6 on this machine")
def test_an_image_whose_python_is_too_old_for_the_probe_is_measured_by_the_shell_probe(
    doctor: Doctor,
) -> None:
    """An image whose `python3` is 3.6 (CentOS 7's, Ubuntu 18.04's, older NGC images'): probe.py
    cannot even compile there (`from __future__ import annotations`), though the job's own
    program runs under it. The trial runs probe.sh, as in an image without Python, and says
    why it could not try the GPU libraries: unknown, never a failure of the job's program."""
    old = _pyenv_python("3.6")
    assert old is not None

    def build(now: datetime) -> list[Obj]:
        objects = [o for o in healthy(now) if o["kind"] != "Job"]
        return [*objects, training_job("train-llm", now, gpus=1)]

    doctor.load(build)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, python=old)
    result = doctor.live("--trial", "--trial-timeout", "20", "-o", "json", "--verbose")
    found = [f for f in result.json()["findings"] if f["check"] == "trial"]
    assert [(f["code"], f["status"]) for f in found] == [
        ("trial.ok", "ok"),
        ("trial.no-gpu-library", "unknown"),
    ], found
    version = old.split("/versions/")[1].split("/")[0]
    [details] = found[1]["details"]
    assert details.startswith(
        f"{_one_pod(doctor)}: the image's python3 is {version}, older than 3.8; "
    ), details
    [log] = doctor.server.container_logs.values()
    assert '"runtime":"sh"' in log
    assert result.exit_code == 3
    assert trial_pods_left(doctor.server) == []


def _python_that_breaks(folder: Path) -> str:
    """An image's `python3` under which the probe stops with a traceback part way (a library
    of the image's that breaks `os.statvfs`), exit code 1, no line printed."""
    program = folder / "broken_statvfs.py"
    program.write_text(
        "import os, sys\n"
        "def statvfs(path):\n"
        "    raise RuntimeError('statvfs is broken in this image')\n"
        "os.statvfs = statvfs\n"
        "code = sys.argv[2]\n"  # python3 -c <program>
        "sys.argv = ['-c', *sys.argv[3:]]\n"
        "exec(compile(code, '<string>', 'exec'), {'__name__': '__main__'})\n",
        encoding="utf-8",
    )
    launcher = folder / "python-broken"
    launcher.write_text(f'#!/bin/sh\nexec {sys.executable} {program} "$@"\n', encoding="utf-8")
    launcher.chmod(0o755)
    return str(launcher)


def test_a_program_that_ended_with_an_error_gives_the_last_line_it_printed(
    doctor: Doctor, tmp_path: Path
) -> None:
    """The headline's remedy promises the exit code and the last words printed: the kubelet
    keeps no message for a container that writes none (terminationMessagePolicy `File`, the
    default), so they come from its log."""
    kubelet = FakeKubelet(doctor.server, python=_python_that_breaks(tmp_path))
    code, found = _unmeasured(doctor, kubelet, timeout="20")
    assert [(f["code"], f["status"]) for f in found] == [
        ("trial.ok", "ok"),
        ("trial.container-ended", "fail"),
    ], found
    assert found[1]["details"] == [
        f"{_one_pod(doctor)}: Error (exit code 1); its last line: "
        "RuntimeError: statvfs is broken in this image"
    ]
    assert code == 2


def test_an_image_with_neither_python_nor_sh_is_unknown_not_a_failure(doctor: Doctor) -> None:
    """A distroless image: the trial pod's own command cannot start there (containerd's
    StartError, tests/support/fake_kubelet.py `_not_found`). What failed is the probe, not the
    job's program, which never ran: unknown, in the runtime's words."""
    kubelet = FakeKubelet(doctor.server, python=None, shell=False)
    code, found = _unmeasured(doctor, kubelet)
    assert [(f["code"], f["status"]) for f in found] == [
        ("trial.ok", "ok"),
        ("trial.no-probe-line", "unknown"),
    ], found
    assert found[1]["headline"] == "The trial's program left no measurement."
    assert found[1]["details"] == [
        f"{_one_pod(doctor)}: the probe could not run in this image: {exec_not_found('sh')}"
    ]
    assert code == 3


def test_a_job_pinned_to_a_machine_is_tried_on_that_machine(doctor: Doctor) -> None:
    """The job's template names its machine (`spec.nodeName`): its pods skip the scheduler and
    that machine's kubelet admits them (pkg/kubelet/lifecycle/predicate.go). The trial pod the
    API server stores names the same machine."""

    def build(now: datetime) -> list[Obj]:
        objects = _cpu_job(now)
        job = next(o for o in objects if o["kind"] == "Job")
        job["spec"]["template"]["spec"]["nodeName"] = "gpu-1"
        return objects

    doctor.load(build)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    doctor.live("--trial", "-o", "json")
    [pod] = doctor.server.kubelet.pods.values()
    assert pod["spec"].get("nodeName") == "gpu-1"


UID = "8d2c1f6e-0000-4000-8000-000000000001"
STAMPED = {
    "batch.kubernetes.io/controller-uid": UID,
    "controller-uid": UID,
    "batch.kubernetes.io/job-name": "train-llm",
    "job-name": "train-llm",
}


@pytest.mark.parametrize(
    ("selector", "template_labels", "manual"),
    [
        ({"batch.kubernetes.io/controller-uid": UID}, STAMPED, False),
        ({"example.com/run": "train-llm"}, {"example.com/run": "train-llm"}, True),
    ],
    ids=["generated", "manual"],
)
def test_the_job_s_controller_never_adopts_a_trial_pod(
    doctor: Doctor, selector: dict[str, str], template_labels: dict[str, str], manual: bool
) -> None:
    """A live Job's selector is the `batch.kubernetes.io/controller-uid` the API server put on
    it and on its template, with the job-name labels beside it (pkg/registry/batch/job/
    strategy.go generateSelector), or with `manualSelector` the user's own; its controller
    adopts every orphan pod the selector matches (pkg/controller/job/job_controller.go
    getPodsForJob -> ClaimPods) and counts it. The trial pod matches no such selector."""

    def build(now: datetime) -> list[Obj]:
        objects = _cpu_job(now)
        job = next(o for o in objects if o["kind"] == "Job")
        job["metadata"]["uid"] = UID
        job["spec"]["selector"] = {"matchLabels": selector}
        if manual:
            job["spec"]["manualSelector"] = True
        job["spec"]["template"]["metadata"].setdefault("labels", {}).update(template_labels)
        job["status"] = {"active": 1, "startTime": job["metadata"]["creationTimestamp"]}
        return objects

    doctor.load(build)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    doctor.live("--trial", "-o", "json")
    [pod] = doctor.server.kubelet.pods.values()
    labels = pod["metadata"]["labels"]
    assert not set(template_labels) & set(labels), labels
    assert (labels["truegreen.io/trial"], "ownerReferences" in pod["metadata"]) == ("true", False)


def test_a_second_run_leaves_a_live_run_s_pods_alone(doctor: Doctor) -> None:
    """Two doctor --trial runs in one namespace at once: run A's pod is running its probe (not
    yet reported) when run B starts. B measures its own pod and leaves A's; A reads its own
    pod back (not one gone from under it). The API server stamps each pod's
    creationTimestamp at its create (apiserver pkg/registry/rest/create.go BeforeCreate ->
    FillObjectMetaSystemFields)."""
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, stop="running")
    command = [sys.executable, "-m", "truegreen", "doctor", "--kubeconfig", str(doctor.kubeconfig)]
    with subprocess.Popen(
        [*command, "--no-registry", "--trial", "--trial-timeout", "8", "-o", "json", "--verbose"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as first:
        deadline = time.monotonic() + 30
        while not trial_pods_left(doctor.server) and time.monotonic() < deadline:
            time.sleep(0.05)
        [a_pod] = trial_pods_left(doctor.server)
        second = doctor.live("--trial", "--trial-timeout", "2", "-o", "json", "--verbose")
        assert a_pod in trial_pods_left(doctor.server), "B left A's live pod"
        out, err = first.communicate(timeout=60)
    b_pods = [name for name in doctor.server.kubelet.pods if name != a_pod]
    assert len(b_pods) == 1, "precondition: B made a pod of its own"
    b_trial = [f for f in second.json()["findings"] if f["check"] == "trial"]
    assert all("removed first" not in f["headline"] for f in b_trial), b_trial
    a_trial = [f for f in json.loads(out)["findings"] if f["check"] == "trial"]
    [a_unknown] = [f for f in a_trial if f["code"] == "trial.no-probe-line"]
    assert a_unknown["details"] == [
        f"{a_pod}: the probe had not reported when the trial's time ran out"
    ], err
    assert trial_pods_left(doctor.server) == []


_OUT_OF_CPU = "Node didn't have enough resource: cpu, requested: 4000, used: 15000, capacity: 16000"


@pytest.mark.parametrize(
    ("reason", "message", "words"),
    [
        ("OutOfcpu", _OUT_OF_CPU, f"(OutOfcpu): Pod was rejected: {_OUT_OF_CPU}"),
        (
            "Evicted",
            "The node had condition: [DiskPressure]. ",
            "(Evicted): Pod was rejected: The node had condition: [DiskPressure].",
        ),
    ],
)
def test_a_trial_pod_its_pinned_machine_turns_away_is_a_measured_failure_in_its_words(
    doctor: Doctor, reason: str, message: str, words: str
) -> None:
    """A job pinned to gpu-1 (`spec.nodeName`, which the trial keeps): gpu-1's kubelet admits
    or rejects the trial pod itself. pkg/kubelet/kubelet.go `rejectPod` records a Warning Event
    with the reason and fails the pod with `status.reason` and `status.message` "Pod was
    rejected: <message>", no container status. That is the machine's measured refusal, in its
    words: not "the trial pod ended without a report"."""

    def pinned(now: datetime) -> list[Obj]:
        objects = _cpu_job(now)
        job = next(o for o in objects if o["kind"] == "Job")
        job["spec"]["template"]["spec"]["nodeName"] = "gpu-1"
        return objects

    doctor.load(pinned)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, reject=(reason, message))
    result = doctor.live("--trial", "--trial-timeout", "20", "-o", "json")
    assert result.exit_code == 2, result.stdout
    assert _trial_codes(result.json()) == [("trial.container-not-started", "fail")]
    found = next(f for f in result.json()["findings"] if f["check"] == "trial")
    assert found["basis"] == "measured"
    assert found["headline"] == "The training program could not start on its machine."
    [detail] = found["details"]
    pod, said = detail.split(": ", 1)
    assert pod.startswith("truegreen-trial-train-llm-")
    assert said == f"the machine's kubelet failed the trial pod {words}"
    assert trial_pods_left(doctor.server) == []


def test_a_worker_whose_machine_downloads_the_image_longer_is_waited_for(doctor: Doctor) -> None:
    """The worker's machine lacks the image rank 0's machine had: its kubelet pulls it for 12 s
    (the Pulled event's time, pkg/kubelet/images/image_manager.go), its container meanwhile
    `ContainerCreating`. The job's own workers wait minutes for each other (PyTorch's
    default_pg_timeout, torch/distributed/constants.py: 30 min; torchrun's join timeout,
    torch/distributed/elastic/rendezvous/dynamic_rendezvous.py: 600 s): rank 0 listens for the
    trial's time, and the network is measured once both programs run."""
    doctor.load(_distributed_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, worker_pull=12.0)
    result = doctor.live("--trial", "--trial-timeout", "40", "-o", "json")
    codes = _trial_codes(result.json())
    assert ("trial.workers-missing", "fail") not in codes, "a pull's skew is no network failure"
    assert codes == [("trial.ok", "ok")]
    [ok] = [f for f in result.json()["findings"] if f["code"] == "trial.ok"]
    assert "the workers reach each other" in ok["headline"]
    assert result.exit_code == 0
    assert trial_pods_left(doctor.server) == []


def test_a_worker_still_downloading_when_the_time_ran_out_is_no_network_failure(
    doctor: Doctor,
) -> None:
    """The worker's machine is still pulling the image (Pulling, no Pulled, the container
    `ContainerCreating`) when the trial's time runs out: its program never ran, so rank 0's
    wait for it measured nothing about the network. The pull is the finding."""
    doctor.load(_distributed_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, worker_pull=60.0)
    result = doctor.live("--trial", "--trial-timeout", "14", "-o", "json")
    codes = _trial_codes(result.json())
    assert ("trial.workers-missing", "fail") not in codes, "the worker never ran: not measured"
    assert codes == [("trial.ok", "ok"), ("trial.still-pulling", "fail")]
    assert result.exit_code == 2
    assert trial_pods_left(doctor.server) == []


NVML_NOT_LOADED = (
    "failed to create containerd task: failed to create shim task: OCI runtime create failed: "
    "runc create failed: unable to start container process: error during container init: "
    "error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected "
    "mode as 'legacy' nvidia-container-cli: initialization error: nvml error: driver not "
    "loaded: unknown"
)


class Rank0StartFails(FakeKubelet):
    """Rank 0's machine cannot start the container (its GPU driver not loaded: the NVIDIA
    container runtime hook fails), as the kubelet writes it for a `restartPolicy: Never` pod:
    the Warning `Failed` "Error: ..." (pkg/kubelet/kuberuntime/kuberuntime_container.go
    startContainer), the container terminated `StartError` with exit code 128, the pod Failed
    with its address kept (pkg/kubelet/kubelet_pods.go generateAPIPodStatus). The workers run as
    the fake kubelet runs them."""

    def _run(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        if not meta["name"].endswith("-0"):
            super()._run(pod)
            return
        name = pod["spec"]["containers"][0]["name"]
        self._event(pod, "Scheduled", f"Successfully assigned train/{meta['name']}", "Normal")
        self._event(pod, "Failed", "Error: " + NVML_NOT_LOADED, "Warning")
        terminated = {"exitCode": 128, "reason": "StartError", "message": NVML_NOT_LOADED}
        self._status(
            pod,
            {
                "phase": "Failed",
                "podIP": "127.0.0.1",
                "containerStatuses": [
                    {
                        "name": name,
                        "containerID": "containerd://r0",
                        "state": {"terminated": terminated},
                    }
                ],
            },
        )


def test_a_rank_0_that_ended_before_it_ran_gets_no_workers(doctor: Doctor) -> None:
    """Rank 0 ended without its program ever running, its address still on it: a worker would
    have nobody to reach, and its refused connection would read as the network's failure.
    Rank 0's own failure is the measurement."""
    doctor.load(_distributed_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = Rank0StartFails(doctor.server)
    result = doctor.live("--trial", "--trial-timeout", "20", "-o", "json")
    codes = _trial_codes(result.json())
    assert ("trial.rank0-unreachable", "fail") not in codes, "rank 0 ended: no network measured"
    assert [name[-2:] for name in doctor.server.kubelet.pods] == ["-0"]
    assert codes[0] == ("trial.container-not-started", "fail")
    assert {c for c, _ in codes} <= {"trial.container-not-started", "trial.container-ended"}
    assert result.exit_code == 2
    assert trial_pods_left(doctor.server) == []


LOG_REFUSED = (
    "the trial pod's log could not be read: the cluster refused this login the permission get "
    "pods/log (docs/rbac.md)"
)


def test_a_log_the_login_may_not_read_is_named_not_taken_for_silence(doctor: Doctor) -> None:
    """The login may create and read pods but not `get pods/log` (deploy/doctor/
    trial-run-role.yaml grants it; docs/rbac.md): the API server answers the log read 403
    Forbidden (apiserver pkg/endpoints/filters/authorization.go). The program's line was never
    read: that refusal is what the operator is told, not that the program printed nothing."""
    from tests.support.fake_apiserver import Fault

    doctor.server.inject(Fault.FORBIDDEN, r"/pods/truegreen-trial-[^/]+/log$")
    code, found = _unmeasured(doctor, FakeKubelet(doctor.server), timeout="20")
    assert [(f["code"], f["status"]) for f in found] == [
        ("trial.ok", "ok"),
        ("trial.no-probe-line", "unknown"),
    ]
    assert found[1]["details"] == [f"{_one_pod(doctor)}: {LOG_REFUSED}"]
    assert code == 3


@pytest.mark.parametrize("once", ["--trial", "--admission-dry-run"])
def test_watch_refuses_what_runs_once_in_one_line(doctor: Doctor, once: str) -> None:
    """`doctor --watch` evaluates again and again over its watch cache (monitor/command.py
    RunningMonitor) and starts no trial pods and no dry-run create: asked for either, it says
    so in one line and exit 64 before any request, as a fleet run refuses --trial, never a
    green that left them out. Its own process: a watch that ran on would never end."""
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    command = [sys.executable, "-m", "truegreen", "doctor", "--kubeconfig", str(doctor.kubeconfig)]
    try:
        done = subprocess.run(
            [*command, "--no-registry", once, "--watch", "--no-color"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"doctor {once} --watch ran on for 20 s instead of refusing")
    assert (done.returncode, done.stdout) == (64, "")
    assert done.stderr == (
        f"truegreen: {once} runs once; --watch checks again and again. "
        f"drop --watch, or drop {once}\n"
    )
    assert doctor.server.kubelet.pods == {}
    assert doctor.server.requests(method="POST") == []


@pytest.mark.parametrize("key", ["trial", "admission-dry-run", "admission_dry_run"])
def test_watch_refuses_what_runs_once_from_the_config_file_too(
    doctor: Doctor, key: str, tmp_path: Path
) -> None:
    """The config file holds the same settings as the flags (README, `--config`): `trial:
    true` or `admission-dry-run: true` there asks --watch for what it refuses from the flags,
    and is refused the same way, naming the key and the file, before any request; never a
    watch that silently leaves them out (docs/monitor.md, docs/admission.md)."""
    doctor.load(_cpu_job)
    config = tmp_path / "doctor.yaml"
    config.write_text(f"{key}: true\n")
    command = [sys.executable, "-m", "truegreen", "doctor", "--kubeconfig", str(doctor.kubeconfig)]
    try:
        done = subprocess.run(
            [*command, "--no-registry", "--config", str(config), "--watch", "--no-color"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"doctor --watch with {key} in its config ran on for 20 s instead of refusing")
    named = key.replace("_", "-")
    assert (done.returncode, done.stdout) == (64, "")
    assert done.stderr == (
        f"truegreen: config {config} sets {named}: it runs once; --watch checks again and "
        f"again. drop --watch, or remove {named} from {config}\n"
    )
    assert doctor.server.requests() == []


@pytest.mark.parametrize(
    ("selection", "flag", "noun", "one_flag"),
    [
        (("-A",), "--all-namespaces", "namespace", "-n"),
        (("--namespaces", "train,other"), "--namespaces", "namespace", "-n"),
        # One namespace named already: the remedy names what is many, the clusters.
        (("--contexts", "fake", "-n", "train"), "--contexts", "cluster", "--context"),
    ],
)
def test_a_fleet_run_refuses_the_config_file_s_trial_as_it_refuses_the_flag(
    doctor: Doctor,
    selection: tuple[str, ...],
    flag: str,
    noun: str,
    one_flag: str,
    tmp_path: Path,
) -> None:
    """A fleet run refuses `--trial` (one trial per run: doctor/command/request.py
    `_live_only`); `trial: true` in the config file is the same setting (README, `--config`)
    and is refused the same way, naming the key and the file, before any request: never a
    fleet table that silently ran no trial."""
    doctor.load(_cpu_job)
    config = tmp_path / "doctor.yaml"
    config.write_text("trial: true\n")
    command = [sys.executable, "-m", "truegreen", "doctor", "--kubeconfig", str(doctor.kubeconfig)]
    done = subprocess.run(
        [*command, "--no-registry", "--config", str(config), *selection, "--no-color"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (64, "")
    assert done.stderr == (
        f"truegreen: config {config} sets trial: it runs in one {noun}; {flag} names many. "
        f"remove trial from {config}, or name one {noun} with {one_flag}\n"
    )
    assert doctor.server.requests() == []


def test_a_network_that_keeps_the_workers_apart_fails_though_rank_0_s_image_came_slowly(
    doctor: Doctor,
) -> None:
    """Neither machine has the image: each kubelet pulls it for 12 s (the Pulled event,
    pkg/kubelet/images/image_manager.go), the pod's sandbox and its IP up meanwhile
    (kuberuntime_manager.go SyncPod), and the worker is told an address rank 0 does not listen
    on (a firewall). Rank 0 listens until its run ends, 5 s before the trial's time is up (its
    TRUEGREEN_PROBE_END_AT, its image having come 12 s late), and reports that no worker came;
    the worker's refusal came while rank 0's program ran (the kubelet's `startedAt`s): the
    network's measured failure, seen from both sides."""
    doctor.load(_distributed_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(
        doctor.server, pod_ip="127.0.0.2", rank0_pull=12.0, worker_pull=12.0
    )
    result = doctor.live("--trial", "--trial-timeout", "30", "-o", "json")
    codes = _trial_codes(result.json())
    assert ("trial.rank0-unreachable", "fail") in codes, "a firewall is a measured failure"
    assert codes == [
        ("trial.ok", "ok"),
        ("trial.workers-missing", "fail"),
        ("trial.rank0-unreachable", "fail"),
    ], "rank 0's line is read: its run ended before doctor stopped reading"
    assert result.exit_code == 2
    assert trial_pods_left(doctor.server) == []


def test_the_workers_download_the_image_while_rank_0_does(doctor: Doctor) -> None:
    """A Job's controller creates all its pods together (pkg/controller/job/job_controller.go
    manageJob, slowStartBatch) and each machine's kubelet pulls the image on its own: two
    pulls of 12 s each fit a trial of 22 s when they overlap, as the job's own would. The
    worker is created once rank 0 has an address, while rank 0's image still downloads."""
    doctor.load(_distributed_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, rank0_pull=12.0, worker_pull=12.0)
    result = doctor.live("--trial", "--trial-timeout", "22", "-o", "json")
    codes = _trial_codes(result.json())
    assert ("trial.still-pulling", "fail") not in codes, "the pulls overlap"
    assert codes == [("trial.ok", "ok")]
    [ok] = [f for f in result.json()["findings"] if f["code"] == "trial.ok"]
    assert "the workers reach each other" in ok["headline"]
    assert result.exit_code == 0
    assert trial_pods_left(doctor.server) == []


TRAINER_IMAGE = "registry.example.com/trainer:2.1"
NOT_FOUND = (
    f'rpc error: code = NotFound desc = failed to pull and unpack image "{TRAINER_IMAGE}": '
    f'failed to resolve reference "{TRAINER_IMAGE}": {TRAINER_IMAGE}: not found'
)
"""containerd's words for a tag the registry does not have (its resolver's ErrNotFound)."""


def test_an_image_no_machine_can_pull_is_one_finding_naming_every_trial_pod(
    doctor: Doctor,
) -> None:
    """The registry refuses the image on both machines. Each kubelet writes the same cause
    several times (image_manager.go EnsureImageExists: `Failed to pull image`, then in
    back-off `Back-off pulling image`; kuberuntime_container.go startContainer: `Error:
    ErrImagePull`, `Error: ImagePullBackOff`; the container waiting `ImagePullBackOff`): the
    operator reads one finding for that cause, naming both trial pods, each with its
    machine's words."""
    doctor.load(_distributed_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, pull_failure=NOT_FOUND)
    result = doctor.live("--trial", "--trial-timeout", "4", "-o", "json", "--verbose")
    names = sorted(doctor.server.kubelet.pods)
    assert [name[-2:] for name in names] == ["-0", "-1"], "precondition: both pods tried"
    found = [f for f in result.json()["findings"] if f["check"] == "trial"]
    assert [(f["code"], f["status"]) for f in found] == [("trial.image-pull-failed", "fail")], (
        "\n".join(f"{f['code']} {f['details']}" for f in found)
    )
    assert sorted(found[0]["objects"]) == [f"Pod/{name}" for name in names]
    assert found[0]["details"] == [
        f'{name}: Failed to pull image "{TRAINER_IMAGE}": {NOT_FOUND}' for name in names
    ]
    assert result.exit_code == 2
    assert trial_pods_left(doctor.server) == []


def _job_with_sidecar(now: datetime) -> list[Obj]:
    """The CPU job with a native sidecar (an init container with `restartPolicy: Always`,
    KEP-753, GA in Kubernetes 1.33), a log shipper as the website's sidecar-containers page
    shows one; the trial pod keeps the job's init containers."""
    objects = _cpu_job(now)
    [job] = [o for o in objects if o["kind"] == "Job"]
    job["spec"]["template"]["spec"]["initContainers"] = [
        {
            "name": "log-shipper",
            "image": "registry.example.com/fluent-bit:3.1",
            "restartPolicy": "Always",
        }
    ]
    return objects


@pytest.mark.parametrize("image", ["distroless", "log-unread"])
def test_a_sidecar_the_kubelet_stopped_after_the_probe_is_no_failure(
    doctor: Doctor, image: str
) -> None:
    """Once the trial's container has ended, the kubelet stops the job's native sidecar with
    SIGTERM, after every main container (kuberuntime_manager.go computePodActions, KillPod;
    kuberuntime_termination_order.go): it ends exit code 143, reason Error, finishedAt at or
    after the trial container's. That is the kubelet's stop, not a program that crashed: what
    the trial could not measure stays unknown (a distroless image the probe cannot run in; a
    log this login may not read), never `trial.container-ended`."""
    from tests.support.fake_apiserver import Fault

    doctor.load(_job_with_sidecar)
    doctor.server.admission.allow_creates = True
    if image == "distroless":
        doctor.server.kubelet = FakeKubelet(doctor.server, python=None, shell=False)
    else:
        doctor.server.inject(Fault.FORBIDDEN, r"/pods/truegreen-trial-[^/]+/log$")
        doctor.server.kubelet = FakeKubelet(doctor.server)
    result = doctor.live("--trial", "--trial-timeout", "20", "-o", "json", "--verbose")
    [pod] = doctor.server.kubelet.pods
    [sidecar] = doctor.server.kubelet.last_status[pod]["initContainerStatuses"]
    assert sidecar["state"]["terminated"]["exitCode"] == 143, "precondition: stopped by SIGTERM"
    found = [f for f in result.json()["findings"] if f["check"] == "trial"]
    assert [(f["code"], f["status"]) for f in found] == [
        ("trial.ok", "ok"),
        ("trial.no-probe-line", "unknown"),
    ], [(f["code"], f["details"]) for f in found]
    unmeasured = (
        f"the probe could not run in this image: {exec_not_found('sh')}"
        if image == "distroless"
        else LOG_REFUSED
    )
    assert found[1]["details"] == [f"{pod}: {unmeasured}"]
    assert result.exit_code == 3
    assert trial_pods_left(doctor.server) == []


def _dra_job(count: int | None) -> Any:
    """A one-pod job whose GPUs come from dynamic resource allocation: a ResourceClaimTemplate
    of NVIDIA's DeviceClass `gpu.nvidia.com` asking for `count` GPUs (None: `allocationMode:
    All`, every matching GPU on the machine), named in `spec.resourceClaims` and the trainer's
    `resources.claims`, no `nvidia.com/gpu` in its resources (the Kubernetes website's
    dra-example-job.yaml; NVIDIA/k8s-dra-driver-gpu's class and slice, tests/support/
    nvidia_dra.py)."""
    from tests.support.filter_objects import claims_from_template, ranks_job
    from tests.support.nvidia_dra import H200, nvidia_class, nvidia_slice, nvidia_template

    def build(now: datetime) -> list[Obj]:
        template = nvidia_template("h200", NAMESPACE, count=count or 1)
        if count is None:
            exactly = template["spec"]["spec"]["devices"]["requests"][0]["exactly"]
            exactly["allocationMode"] = "All"
            del exactly["count"]
        job = ranks_job("train-dra", now, ranks=1, gpus=0, **claims_from_template("h200"))
        return [
            *(o for o in healthy(now) if o["kind"] != "Job"),
            nvidia_class(),
            nvidia_slice("gpu-1", H200, 8),
            template,
            job,
        ]

    return build


@pytest.mark.parametrize(("count", "told"), [(2, "2"), (None, "1")])
def test_gpus_a_job_claims_through_dynamic_resource_allocation_are_checked(
    doctor: Doctor, count: int | None, told: str
) -> None:
    """The job asks for its GPUs through a device claim of a GPU DeviceClass, not through
    `nvidia.com/gpu`: the probe is told how many it asked for, so the GPUs are checked (this
    machine's Python has no GPU library: `trial.no-gpu-library`, unknown). Where the claim asks
    for every GPU of its kind on the machine (`allocationMode: All`, at least one device:
    staging/src/k8s.io/api/resource/v1/types.go ExactDeviceRequest), the probe is told the
    fewest it can get, and the pod says the number is a floor."""
    doctor.load(_dra_job(count))
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    result = doctor.live("--trial", "--trial-timeout", "20", "-o", "json", "--verbose")
    [(name, env)] = doctor.server.kubelet.started.items()
    assert env["TRUEGREEN_PROBE_GPUS"] == told
    annotations = doctor.server.kubelet.pods[name]["metadata"].get("annotations") or {}
    assert annotations.get("truegreen.io/trial-gpus-at-least") == (None if count else "true")
    found = [f for f in result.json()["findings"] if f["check"] == "trial"]
    assert [(f["code"], f["status"]) for f in found] == [
        ("trial.ok", "ok"),
        ("trial.no-gpu-library", "unknown"),
    ], [(f["code"], f["details"]) for f in found]
    assert trial_pods_left(doctor.server) == []


def test_a_worker_that_had_the_image_waits_for_rank_0_s_slow_download(doctor: Doctor) -> None:
    """The worker's machine has the image and starts its program at once; rank 0's machine
    downloads it for 12 s (the Pulled event's time, pkg/kubelet/images/image_manager.go), its
    sandbox and address up meanwhile (kuberuntime_manager.go SyncPod), so the worker is created
    while rank 0 still downloads. The worker keeps trying until the trial's own end draws near
    (a moment on the API server's clock, from rank 0's creationTimestamp), not 10 s from its
    own start: it reaches rank 0 once that starts, and the network is measured, never
    `trial.not-together` for a slow download."""
    doctor.load(_distributed_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, rank0_pull=12.0)
    result = doctor.live("--trial", "--trial-timeout", "30", "-o", "json", "--verbose")
    codes = _trial_codes(result.json())
    assert ("trial.not-together", "unknown") not in codes, "a slow download is no apart"
    assert codes == [("trial.ok", "ok")], [
        (f["code"], f["details"]) for f in result.json()["findings"] if f["check"] == "trial"
    ]
    [ok] = [f for f in result.json()["findings"] if f["code"] == "trial.ok"]
    assert "the workers reach each other" in ok["headline"]
    assert result.exit_code == 0
    kubelet = doctor.server.kubelet
    [rank0, worker] = sorted(kubelet.started)
    created = datetime.fromisoformat(kubelet.pods[rank0]["metadata"]["creationTimestamp"])
    until = int(kubelet.started[worker]["TRUEGREEN_PROBE_WAIT_UNTIL"])
    # The trial's 30 s from rank 0's create, less the 10 s its report needs.
    assert created.timestamp() + 19 <= until <= created.timestamp() + 20
    assert "TRUEGREEN_PROBE_WAIT_UNTIL" not in kubelet.started[rank0]
    assert trial_pods_left(doctor.server) == []


def _chatty_python(folder: Path, lines: int, width: int) -> str:
    """An image's `python3` that writes `lines` lines of `width` characters on stdout before
    the program it runs does (a library's INFO lines as it loads, as NCCL_DEBUG=INFO writes
    them): the probe's own line comes last, after them."""
    script = folder / "chatty-python"
    noise = f"for i in range({lines}): print(f'NCCL INFO line {{i:03d}} ' + '.' * {width})"
    script.write_text(
        f'#!/bin/sh\n{sys.executable} -c "{noise}"\nexec {sys.executable} "$@"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)
    return str(script)


def test_a_probe_line_after_a_long_log_is_read_whole(doctor: Doctor, tmp_path: Path) -> None:
    """60 lines of 2 KiB before the probe's line: the last 50 are longer than the 64 KiB a log
    answer holds, and the kubelet writes forward from the first of them and stops at the limit
    (pkg/kubelet/kuberuntime/logs/logs.go ReadLogs: `tail.FindTailLineStartIndex`, then
    `logWriter.write` cuts at `limitBytes`), so that answer holds none of the probe's line. The
    trial asks again for fewer lines (cluster/logs.py `read_newest`) until they fit, and reads
    the probe's measurement."""
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(
        doctor.server, python=_chatty_python(tmp_path, lines=60, width=2048)
    )
    result = doctor.live("--trial", "-o", "json", "--verbose")
    [log] = doctor.server.container_logs.values()
    assert log.count("NCCL INFO line") == 60
    assert '"probe_schema"' in log.splitlines()[-1]
    assert len("\n".join(log.splitlines()[-50:]).encode()) > 64 * 1024, "the tail is cut"
    assert _trial_codes(result.json()) == [("trial.ok", "ok")], result.json()["findings"]
    asked = [r.query.get("tailLines") for r in doctor.server.log if r.path.endswith("/log")]
    assert asked == ["50", "25"], asked
    assert result.exit_code == 0
    assert trial_pods_left(doctor.server) == []


NIC = "nic.example.com"


def _dra_ranks(gpus_each: int, nic: bool) -> Any:
    """Two ranks that run together, each claiming `gpus_each` GPUs from a ResourceClaimTemplate
    of NVIDIA's DeviceClass (and, with `nic`, one network card of a DeviceClass of its own in
    the same claim); gpu-1 offers its 8 H200s (and 8 cards) through ResourceSlices alone
    (NVIDIA's DRA driver, no `nvidia.com/gpu` device plugin beside it:
    NVIDIA/k8s-dra-driver-gpu)."""
    from tests.support.filter_objects import claims_from_template, device_class, ranks_job
    from tests.support.nvidia_dra import H200, nvidia_class, nvidia_slice, nvidia_template

    def build(now: datetime) -> list[Obj]:
        objects = [o for o in healthy(now) if o["kind"] != "Job"]
        for node in (o for o in objects if o["kind"] == "Node"):
            node["status"]["allocatable"].pop("nvidia.com/gpu", None)
            node["status"].get("capacity", {}).pop("nvidia.com/gpu", None)
        template = nvidia_template("h200", NAMESPACE, count=gpus_each)
        extra: list[Obj] = []
        if nic:
            template["spec"]["spec"]["devices"]["requests"].append(
                {"name": "nic", "exactly": {"deviceClassName": NIC, "count": 1}}
            )
            cards = nvidia_slice("gpu-1", H200, 8)
            cards["metadata"]["name"] = f"gpu-1-{NIC}-r4m2t"
            cards["spec"]["driver"] = NIC
            nic_class = device_class(f"device.driver == '{NIC}'")
            nic_class["metadata"]["name"] = NIC
            extra = [nic_class, cards]
        job = ranks_job("train-dra", now, ranks=2, gpus=0, **claims_from_template("h200"))
        return [
            *objects,
            nvidia_class(),
            nvidia_slice("gpu-1", H200, 8),
            *extra,
            template,
            job,
        ]

    return build


def test_workers_claiming_gpus_through_device_claims_are_kept_apart_as_the_job_s_pods_are(
    doctor: Doctor,
) -> None:
    """GPUs a job claims through dynamic resource allocation count as its GPUs, and those a
    machine's ResourceSlices offer as that machine's (knowledge/claimed_gpus.py; the capacity
    check's device filter): two ranks of 4 GPUs fit on gpu-1's 8, as the job's own pods would;
    two ranks of 8 span two machines, so the trial keeps its workers apart and measures the
    network between machines. A network card claimed beside the GPUs is no GPU: gpu-1's 8 cards
    do not make it a machine of 16 GPUs."""
    for gpus_each, nic, apart in ((4, False, False), (8, False, True), (8, True, True)):
        doctor.load(_dra_ranks(gpus_each, nic))
        doctor.server.admission.allow_creates = True
        doctor.server.kubelet = FakeKubelet(doctor.server)
        doctor.live("--trial", "--trial-timeout", "20", "-o", "json")
        pods = list(doctor.server.kubelet.pods.values())
        assert len(pods) == 2, "precondition: both ranks were created"
        assert [p["spec"]["resourceClaims"] for p in pods] == [
            [{"name": "gpu", "resourceClaimTemplateName": "h200"}]
        ] * 2, "precondition: each rank claims its own GPUs"
        each = f"{gpus_each} GPUs each" + (" and a card" if nic else "")
        assert [_kept_apart(p) for p in pods] == [apart, apart], each


def test_no_trial_pod_is_made_for_a_job_that_may_not_be_the_judged_one(doctor: Doctor) -> None:
    """The scheduled jobs not read could hold a newer job than train-llm, the newest listed:
    the trial's pods would try a job that may not be the one judged, so none is made (a real
    write, unlike the trial start), and the trial says what it could not read."""
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    doctor.server.inject(Fault.FORBIDDEN, r"/namespaces/train/cronjobs$", method="GET")
    before = len(doctor.server.log)
    result = doctor.live("--trial", "-o", "json")
    report = result.json()
    assert [(r.method, r.path) for r in doctor.server.log[before:] if r.method != "GET"] == []
    [trial] = [f for f in report["findings"] if f["check"] == "trial"]
    assert (trial["code"], trial["status"], trial["basis"]) == (
        "trial.cant-read",
        "unknown",
        "cant-check",
    )
    assert trial["headline"].endswith(": no permission to read the scheduled training jobs.")
    assert result.exit_code == 3


def test_a_trial_with_no_training_job_to_try_is_not_counted_as_measured(doctor: Doctor) -> None:
    """The namespace holds no training job (and no --job-file is given): no trial pod is made,
    nothing is measured, and the coverage says so and why, never that the trial was checked."""
    doctor.load(lambda now: [o for o in healthy(now) if o["kind"] != "Job"])
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    before = len(doctor.server.log)
    result = doctor.live("--trial", "-o", "json")
    report = result.json()
    assert [(r.method, r.path) for r in doctor.server.log[before:] if r.method != "GET"] == []
    assert _trial_codes(report) == []
    assert "trial" not in report["coverage"]["checked"]
    assert {"check": "trial", "reason": "no training job to try"} in report["coverage"][
        "not_checked"
    ]
    assert result.exit_code == 0
    text = doctor.live("--trial").stdout
    measured = len(report["coverage"]["checked"])
    assert (
        f"{measured} checks measured, 1 could not be checked (trial: no training job to try)."
        in (" ".join(text.split()))
    ), text
