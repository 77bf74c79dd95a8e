"""`make tour`: the documented way to try truegreen on a fake cluster. The make target lists the
scenes and serves one; every scene it lists starts, and the fleet's kubeconfig is one that
`truegreen doctor -A` reads."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.real_parts import required
from tests.support.registry import registry_binary
from tests.support.tour_cluster import FLEET, SCENES

ROOT = Path(__file__).parents[2]
STARTED_WITHIN = 60.0
"""Seconds a scene may take to print `ready` (certificates, and a registry for one scene)."""


def _start(command: list[str]) -> tuple[subprocess.Popen[str], list[str]]:
    """Start `command` in its own process group; the lines it printed up to the commands."""
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + STARTED_WITHIN
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if line.startswith("  ") and "--watch" in line:  # the last command it prints
            return process, lines
    os.killpg(process.pid, signal.SIGKILL)
    raise AssertionError(f"{command} did not start: {lines}")


def _stop(process: subprocess.Popen[str]) -> int:
    """SIGTERM, as a service manager or Ctrl-C ends the tour; its exit code."""
    os.killpg(process.pid, signal.SIGTERM)
    return process.wait(30)


def _kubeconfig(lines: list[str]) -> Path:
    path = next(
        line.removeprefix("kubeconfig: ") for line in lines if line.startswith("kubeconfig:")
    )
    return Path(path)


def test_make_tour_alone_lists_every_scene_and_exits_0() -> None:
    result = subprocess.run(
        ["make", "-s", "tour"], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "scenes (make tour SCENE=NAME):"
    assert [line.split()[0] for line in lines[1:]] == list(SCENES)


def test_an_unknown_scene_is_bad_usage() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tests.support.tour_cluster", "no-such-scene"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 64
    assert result.stdout.startswith("usage: python -m tests.support.tour_cluster [SCENE [FOLDER]]")


def test_make_tour_fleet_prints_a_kubeconfig_that_doctor_all_namespaces_reads(
    tmp_path: Path,
) -> None:
    process, lines = _start(["make", "-s", "tour", "SCENE=fleet", f"DIR={tmp_path}"])
    try:
        assert lines[0] == "ready"
        kubeconfig = _kubeconfig(lines)
        assert kubeconfig == tmp_path / "kubeconfig"
        program = ROOT / ".venv" / "bin" / "truegreen"
        assert lines[2:] == [
            "try, in another terminal (Ctrl-C here stops the cluster):",
            f"  export KUBECONFIG={kubeconfig}",
            f"  {program} doctor -A --no-registry",
            f"  {program} snapshot",
            f"  {program} refresh",
            f"  {program} doctor --no-registry --watch",
        ]
        result = run_cli(
            "doctor", "-A", "--no-registry", "--kubeconfig", str(kubeconfig), "-o", "json"
        )
        text = run_cli(
            "doctor", "-A", "--no-registry", "--kubeconfig", str(kubeconfig), "--no-color"
        )
    finally:
        _stop(process)
    assert result.exit_code == 2, "not ready: two of the three namespaces"
    document = result.json()
    assert document["counts"] == {"ready": 1, "not-ready": 2, "unknown": 0}
    codes = {n["namespace"]: n["report"]["headline"]["code"] for n in document["namespaces"]}
    assert codes == {
        "ready-team": "ready",
        "big-model": "capacity.too-large",
        "broken-image": "workloads.image-not-in-registry",
    }
    assert set(codes) == set(FLEET)
    assert text.stdout.splitlines()[:3] == [
        "✗ NOT READY  big-model     A training job of 4 CPUs, 16 GiB memory, 4 nvidia.com/gpu "
        "doesn't fit on the machines, even empty ones.",
        "✗ NOT READY  broken-image  The workload 'jobs-manager' can't download its image "
        "registry.example.com/jobs-manager:1.4: registry.example.com says there is no such "
        "image.",
        "✓ READY      ready-team    Ready: training can run.",
    ]


# doctor's exit code on each scene's context namespace, registry look-ups left out
EXIT_CODES = {
    "fleet": 0,
    "login-refused": 3,
    "login-plugin-fails": 3,
    "cordoned": 2,
    "gpu-held-by-notebook": 2,
    "refresh-fails": 0,  # ready until refresh moves it to the crashing version
    "slow-machines": 0,
}


def test_every_scene_has_its_expected_exit_code() -> None:
    assert list(EXIT_CODES) == list(SCENES)


@pytest.mark.parametrize("scene", list(SCENES))
def test_every_scene_the_tour_lists_starts_and_stops_cleanly(scene: str, tmp_path: Path) -> None:
    if scene == "refresh-fails" and registry_binary() is None and not required():
        pytest.skip("docker-registry is not installed (Debian package docker-registry)")
    process, lines = _start(
        [sys.executable, "-m", "tests.support.tour_cluster", scene, str(tmp_path / scene)]
    )
    try:
        assert lines[0] == "ready"
        kubeconfig = _kubeconfig(lines)
        assert kubeconfig.is_file()
        doctor = run_cli("doctor", "--kubeconfig", str(kubeconfig), "-o", "json", "--no-registry")
    finally:
        code = _stop(process)
    assert code == 0, "SIGTERM ends the tour as a success"
    assert (doctor.exit_code, doctor.json()["exit_code"]) == (EXIT_CODES[scene],) * 2
