"""CONTRIBUTING.md tells what .ci/run does: every package it installs and every make target it
runs is named there."""

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_contributing_names_every_package_and_phase_of_ci_run() -> None:
    run = (ROOT / ".ci" / "run").read_text()
    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    listed = re.search(r"local packages=\(([^)]*)\)", run)
    assert listed is not None, "precondition: .ci/run lists its packages"
    packages = [*listed.group(1).split(), *re.findall(r"packages\+=\(([^)]*)\)", run)]
    targets = re.findall(r"^phase \"[^\"]+\" make (\S+)", run, re.M)
    assert len(packages) >= 5, packages
    assert len(targets) >= 5, targets
    assert [p for p in packages if f"`{p}`" not in contributing] == []
    assert [t for t in targets if f"`make {t}`" not in contributing] == []
