"""`make bench` checks every program its parts need before it measures anything: a missing one
is named in one line with how to install it, and no part's figures are thrown away for it."""

from pathlib import Path
from typing import Any

import pytest
from bench import run


def test_a_missing_program_stops_the_bench_before_any_part_is_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[str] = []

    def startup(runs: int) -> dict[str, Any]:
        started.append("startup")
        return {"calibration": {}, "import_ms": {}}

    monkeypatch.setattr(run, "bench_startup", startup)
    monkeypatch.setattr(run, "ROOT", tmp_path)
    monkeypatch.setattr(run, "RESULTS", tmp_path / "results")
    monkeypatch.setenv("PATH", str(tmp_path))  # no docker-registry, no kubectl
    monkeypatch.setenv("BENCH_PARTS", "startup,refresh,wan")
    with pytest.raises(SystemExit) as stopped:
        run.main()
    assert str(stopped.value) == (
        "bench: nothing measured; missing: docker-registry (for refresh; apt-get install "
        "docker-registry), kubectl (for wan; apt-get install kubernetes-client), "
        ".venv-bench/truegreen/bin/truegreen (for startup, refresh, wan; make bench installs it)"
    )
    assert started == [], "the startup part was measured before the check"
    assert not (tmp_path / "results").exists()


def test_nothing_is_missing_where_every_program_is_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for program in ("docker-registry", "kubectl"):
        (tmp_path / program).write_text("#!/bin/sh\n")
        (tmp_path / program).chmod(0o755)
    for path in (".venv-bench/truegreen/bin/truegreen", ".venv-torch/bin/python"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    monkeypatch.setattr(run, "ROOT", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert run.missing_programs(["startup", "refresh", "wan", "probe"]) is None
    assert run.missing_programs(["lint"]) == (
        "bench: nothing measured; missing: .venv-bench/checkov/bin/checkov (for lint; make "
        "bench installs it)"
    )


def test_make_bench_first_checks_only_what_it_does_not_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run, "ROOT", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert run.missing_programs(["lint", "probe"], on_path_only=True) is None
    assert run.missing_programs(["doctor", "lint"], on_path_only=True) == (
        "bench: nothing measured; missing: kubectl (for doctor; apt-get install kubernetes-client)"
    )
