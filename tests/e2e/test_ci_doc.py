"""docs/ci.md's commands run as written: every line of its shell blocks, in a folder laid out as
the page assumes (`manifests/`, this repository's `deploy/`), doctor against the fake API
server through KUBECONFIG, and each YAML block parses.

A line passes when every command of it ran and gave a result: each exit status of the pipeline
0, or 2 (findings); never 3 (nothing was checked: `kubectl kustomize deploy/` found no
kustomization and lint read nothing), 64 (bad usage), 1 (broke) or 127 (not found). `helm` is a
stand-in that prints one rendered template, as `helm template` writes it (a `# Source:` line
above each document).
"""

import os
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from tests.support.fake_apiserver import FakeApiServer
from tests.support.hostile import ScriptedApi
from tests.support.registry import served_from, serving_manifests
from tests.support.scenarios import NAMESPACE, healthy

ROOT = Path(__file__).parents[2]
CI_DOC = ROOT / "docs" / "ci.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"(?ms)^```{language}\n(.*?)^```", CI_DOC.read_text())


def _lines() -> list[str]:
    return [
        line.strip()
        for block in _blocks("sh")
        for line in block.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def _sandbox(tmp: Path) -> Path:
    shutil.copytree(ROOT / "deploy", tmp / "deploy")
    shutil.copytree(ROOT / "examples" / "manifests", tmp / "manifests")
    (tmp / "bin").mkdir()
    helm = tmp / "bin" / "helm"
    rendered = (ROOT / "examples" / "manifests" / "incident.yaml").read_text()
    (tmp / "rendered.yaml").write_text(f"---\n# Source: chart/templates/jobs.yaml\n{rendered}")
    helm.write_text(f"#!/bin/sh\ncat {tmp / 'rendered.yaml'}\n")
    helm.chmod(0o755)
    return tmp


def test_the_page_has_the_blocks_the_test_runs() -> None:
    """Precondition: lint in plain shell, Helm and doctor are all there to run."""
    lines = _lines()
    assert any(line.startswith("kubectl kustomize deploy/") for line in lines)
    assert any(line.startswith("helm template") for line in lines)
    assert any(line.startswith("truegreen doctor") for line in lines)


@pytest.mark.parametrize("block", _blocks("yaml"))
def test_every_yaml_block_parses(block: str) -> None:
    assert yaml.safe_load(block) is not None


def test_every_shell_line_runs_as_written(fake_api: FakeApiServer, tmp_path: Path) -> None:
    """doctor asks the registries too: the namespace's images are served by one on loopback."""
    with ScriptedApi(serving_manifests) as registry:
        _run_every_shell_line(fake_api, tmp_path, f"127.0.0.1:{registry.port}")
        assert registry.received, "precondition: doctor asked the registry"


def _run_every_shell_line(fake_api: FakeApiServer, tmp_path: Path, registry: str) -> None:
    for obj in served_from(healthy(datetime.now(UTC)), registry):
        fake_api.add(obj)
    kubeconfig = fake_api.write_kubeconfig(tmp_path / "kubeconfig", namespace=NAMESPACE)
    folder = _sandbox(tmp_path / "repo")
    # The CI runner of the page reaches its registry by name; here it is on this machine's own
    # address, which doctor asks only where the operator names it (docs/image-pull.md): the
    # runner's `truegreen` names it, the page's lines run as written.
    wrapper = folder / "bin" / "truegreen"
    installed = Path(sys.executable).parent / "truegreen"
    wrapper.write_text(
        f'#!/bin/sh\nif [ "$1" = doctor ]; then\n  shift\n'
        f'  exec {installed} doctor --registry-allow {registry} "$@"\nfi\nexec {installed} "$@"\n'
    )
    wrapper.chmod(0o755)
    env = {
        **os.environ,
        "PATH": os.pathsep.join(
            [str(folder / "bin"), str(Path(sys.executable).parent), os.environ["PATH"]]
        ),
        "KUBECONFIG": str(kubeconfig),
        "NO_COLOR": "1",
    }
    bash = shutil.which("bash")
    assert bash is not None
    for line in _lines():
        done = subprocess.run(
            [bash, "-c", f'{line}\necho "exits: ${{PIPESTATUS[*]}}" >&2'],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        exits = done.stderr.rpartition("exits: ")[2].split()
        assert exits, done.stderr
        assert set(exits) <= {"0", "2"}, f"{line!r} exited {exits}: {done.stderr}"
        assert "command not found" not in done.stderr, line
    report = yaml.safe_load((folder / "doctor.json").read_text())
    assert (report["verdict"], report["exit_code"]) == ("ready", 0), report["headline"]
    assert (folder / "lint.sarif").stat().st_size > 0
