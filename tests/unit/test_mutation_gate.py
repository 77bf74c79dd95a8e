"""The CI mutation gate (.ci/mutation.py): which modules it mutates again, and what it says
while mutmut runs.

A module's recorded score holds while its source and the test files that reached its code
hash as recorded; mutmut's stats (`tests_by_mangled_function_name`, mutmut/stats.py) name
those tests by pytest node id.
"""

import collections
import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def _load_gate() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / ".ci" / "mutation.py"
    spec = importlib.util.spec_from_file_location("ci_mutation", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gate = _load_gate()

ROLLUP = "src/truegreen/doctor/rollup.py"
FIT = "src/truegreen/doctor/knowledge/fit.py"
TEST_ROLLUP = "tests/unit/test_rollup.py"
TEST_BOTH = "tests/unit/test_both.py"


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    for relative, text in {
        ROLLUP: "def roll_up(): ...\n",
        FIT: "def fits(): ...\n",
        TEST_ROLLUP: "def test_roll_up(): ...\n",
        TEST_BOTH: "def test_both(): ...\n",
    }.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    return tmp_path


def _result(
    checkout: Path, module: str, tests: list[str], killed: int = 9, survived: int = 1
) -> Any:
    return gate.ModuleResult(
        source=gate.file_hash(checkout / module),
        tests={t: gate.file_hash(checkout / t) for t in tests},
        outcomes={"killed": killed, "survived": survived},
    )


def _record(checkout: Path, settings: str = "settings") -> Any:
    return gate.Record(
        gate.RECORD_FORMAT,
        settings,
        {
            ROLLUP: _result(checkout, ROLLUP, [TEST_ROLLUP, TEST_BOTH]),
            FIT: _result(checkout, FIT, [TEST_BOTH]),
        },
    )


def _stale(checkout: Path, record: Any, *, full: bool = False, settings: str = "settings") -> Any:
    return gate.stale_modules(record, checkout, [ROLLUP, FIT], full=full, settings=settings)


def test_nothing_is_mutated_again_while_sources_and_tests_hash_as_recorded(
    checkout: Path,
) -> None:
    assert _stale(checkout, _record(checkout)) == {}


def test_a_changed_source_re_mutates_that_module_only(checkout: Path) -> None:
    record = _record(checkout)
    (checkout / FIT).write_text("def fits(): return True\n")
    assert _stale(checkout, record) == {FIT: "its source changed"}


def test_a_weakened_test_re_mutates_every_module_it_reached_and_no_other(checkout: Path) -> None:
    record = _record(checkout)
    (checkout / TEST_ROLLUP).write_text("def test_roll_up(): pass  # weakened\n")
    assert _stale(checkout, record) == {ROLLUP: f"its tests changed ({TEST_ROLLUP})"}
    (checkout / TEST_BOTH).unlink()
    assert _stale(checkout, record) == {
        ROLLUP: f"its tests changed ({TEST_BOTH}, {TEST_ROLLUP})",
        FIT: f"its tests changed ({TEST_BOTH})",
    }


def test_without_a_record_other_settings_or_mutation_full_every_module_is_mutated(
    checkout: Path,
) -> None:
    record = _record(checkout)
    no_record = f"no usable record in {gate.RECORD}"
    assert _stale(checkout, None) == {ROLLUP: no_record, FIT: no_record}
    changed = "the gate's settings changed"
    assert _stale(checkout, record, settings="other") == {ROLLUP: changed, FIT: changed}
    assert _stale(checkout, record, full=True) == {
        ROLLUP: "MUTATION_FULL=1",
        FIT: "MUTATION_FULL=1",
    }
    only_rollup = gate.Record(gate.RECORD_FORMAT, "settings", {ROLLUP: record.modules[ROLLUP]})
    assert _stale(checkout, only_rollup) == {FIT: "not recorded yet"}


def test_the_record_round_trips_and_a_damaged_one_counts_as_none(checkout: Path) -> None:
    path = checkout / "scores.json"
    gate.write_record(path, _record(checkout))
    assert gate.load_record(path) == _record(checkout)
    assert json.loads(path.read_text())["modules"][FIT]["outcomes"] == {"killed": 9, "survived": 1}
    path.write_text('{"format": 1, "settings": "s", "modules": {"x": {"source": 3}}}')
    assert gate.load_record(path) is None
    assert gate.load_record(checkout / "missing.json") is None


def test_covering_tests_are_the_files_of_the_tests_mutmut_saw_reach_the_module() -> None:
    stats = {
        "truegreen.doctor.rollup.x_roll_up": [
            "tests/unit/test_rollup.py::test_a[one]",
            "tests/unit/test_rollup.py::test_b",
        ],
        "truegreen.doctor.rollup.xǁReportǁexit_code": ["tests/unit/test_report.py::test_c"],
        "truegreen.doctor.rollup_more.x_other": ["tests/unit/test_other.py::test_d"],
        "truegreen.lint.rules.x_rule_ids": ["tests/unit/test_lint_rules.py::test_e"],
        "truegreen.lint.rules.readiness.x_check": ["tests/unit/test_readiness.py::test_f"],
    }
    assert gate.covering_tests(stats, ROLLUP) == {
        "tests/unit/test_rollup.py",
        "tests/unit/test_report.py",
    }
    assert gate.covering_tests(stats, "src/truegreen/lint/rules/__init__.py") == {
        "tests/unit/test_lint_rules.py"
    }


def test_mutants_are_counted_under_their_module_even_for_a_package_s_init() -> None:
    counts = gate.module_counts(
        {
            "truegreen.lint.rules.x_rule_ids__mutmut_1": "killed",
            "truegreen.lint.rules.readiness.x_check__mutmut_2": "survived",
            "truegreen.doctor.rollup.xǁReportǁexit_code__mutmut_3": "killed",
        }
    )
    assert counts == {
        "truegreen.lint.rules": collections.Counter({"killed": 1}),
        "truegreen.lint.rules.readiness": collections.Counter({"survived": 1}),
        "truegreen.doctor.rollup": collections.Counter({"killed": 1}),
    }


class _Run:
    """A mutmut process that runs for `steps` polls, writing .meta files as it goes."""

    def __init__(self, steps: Iterator[None]) -> None:
        self._steps = steps

    def poll(self) -> int | None:
        return next(self._steps, 0)


def _meta(workdir: Path, module: str, exit_codes: dict[str, int | None]) -> None:
    path = workdir / "mutants" / f"{module}.meta"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"exit_code_by_key": exit_codes}))


def test_the_gate_says_each_module_as_it_finishes_and_never_stays_quiet_a_minute(
    tmp_path: Path,
) -> None:
    now = [0.0]
    said: list[str] = []

    def steps() -> Iterator[None]:
        now[0] = 61.0  # a minute of making mutants: no .meta file yet
        yield None
        _meta(tmp_path, ROLLUP, {"r__mutmut_1": None, "r__mutmut_2": None})
        _meta(tmp_path, FIT, {"f__mutmut_1": None})
        now[0] = 122.0  # another of collecting stats: none judged
        yield None
        _meta(tmp_path, ROLLUP, {"r__mutmut_1": 1, "r__mutmut_2": None})
        now[0] = 185.0
        yield None
        _meta(tmp_path, ROLLUP, {"r__mutmut_1": 1, "r__mutmut_2": 0})
        now[0] = 190.0
        yield None
        _meta(tmp_path, FIT, {"f__mutmut_1": 36})
        now[0] = 200.0

    exit_code = gate.watch_run(
        _Run(steps()),
        gate.MetaWatcher(tmp_path, [ROLLUP, FIT]),
        say=said.append,
        clock=lambda: now[0],
        poll=0,
    )
    assert exit_code == 0
    assert said == [
        "mutation gate: running the unit tests once to learn which tests reach each function"
        " (1 min 01 s)",
        "mutation gate: 3 mutants made; running the unit tests once to learn which tests reach"
        " each function (2 min 02 s)",
        "mutation gate: 1 of 3 mutants judged (3 min 05 s)",
        "mutation gate: doctor.rollup: 1 killed, 1 survived, score 50.0% (3 min 10 s)",
        "mutation gate: doctor.knowledge.fit: 0 killed, 0 survived, 1 timeout, score 0.0%"
        " (3 min 20 s)",
    ]


def test_a_gate_with_every_module_recorded_runs_no_mutmut_and_judges_the_record(
    checkout: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(gate, "GATE_MODULES", [ROLLUP, FIT])

    def no_mutmut(*args: object) -> None:
        raise AssertionError("mutmut ran although every result holds")

    monkeypatch.setattr(gate, "mutate", no_mutmut)
    (checkout / ".ci").mkdir()
    record = _record(checkout, settings=gate.gate_settings())
    gate.write_record(checkout / gate.RECORD, record)
    assert gate.gate(checkout, full=False) == 0
    out = capsys.readouterr().out
    assert "mutation gate: doctor.rollup: 90.0% as recorded (source and tests unchanged)" in out
    assert "mutation gate: every module at or above 90%" in out

    low = gate.Record(
        record.format,
        record.settings,
        {**record.modules, FIT: _result(checkout, FIT, [TEST_BOTH], killed=8, survived=2)},
    )
    gate.write_record(checkout / gate.RECORD, low)
    assert gate.gate(checkout, full=False) == 1
    assert (
        "mutation gate: truegreen.doctor.knowledge.fit scores 80.0%, below 90%"
        in capsys.readouterr().out
    )


def test_the_gate_s_modules_are_files_of_this_checkout() -> None:
    root = Path(__file__).resolve().parents[2]
    assert [m for m in gate.GATE_MODULES if not (root / m).is_file()] == []
