"""Mutation scores per module, and the CI gate that fails when they drop.

`python .ci/mutation.py report` prints the table for the last `mutmut run` in this directory.
`python .ci/mutation.py gate` mutates, in a scratch copy of the checkout, only the gate's
modules whose recorded result no longer holds, runs the unit tests against each mutant, prints
a line per module as it finishes, and fails below the threshold.

A module's result holds while its source, and every test file that reached its code in the run
that scored it, hash as recorded in `.ci/mutation-scores.json` (committed): mutmut records
which tests reach each mutated function (`tests_by_mangled_function_name` in its stats), so a
weakened test re-mutates exactly the modules it guards. With no record, a record from other
gate settings, or `MUTATION_FULL=1`, every module is mutated. The gate rewrites the record for
the modules it mutated and that passed; commit it with the change.

The score is killed / (killed + survived + no tests + timeout + suspicious + segfault).
"""

import collections
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from msgspec import Struct, field

THRESHOLD = 90.0
# The modules that decide a verdict, a refresh step or a lint finding: what fits the CI budget
# on 2 cores (docs/mutation.md). `make mutation` measures the rest: the connection details
# (proxy choice, OIDC, paths), the monitor's bookkeeping, wrapping, the bundle's selection and
# redaction (its linear-time test runs up to 30 s for each mutant that slows it);
# refresh/tick.py, whose mutants need the registry scenarios; cluster/exec_plugin.py, whose
# tests run a real plugin process each (about 13 minutes); and yamlsafe.py, whose every mutant
# re-runs the property-based YAML tests and every lint test; and
# doctor/checks/admission/podsecurity.py (852
# mutants, 99.1 %), which took the CI run to 19 minutes on 2 cores with the rest.
GATE_MODULES = [
    "src/truegreen/doctor/rollup.py",
    "src/truegreen/doctor/knowledge/fit.py",
    "src/truegreen/doctor/knowledge/stored_pod.py",
    "src/truegreen/doctor/checks/capacity/preemption.py",
    "src/truegreen/cluster/classify.py",
    "src/truegreen/cluster/throttle.py",
    "src/truegreen/refresh/plan.py",
    "src/truegreen/refresh/steps.py",
    "src/truegreen/refresh/template.py",
    "src/truegreen/refresh/annotations.py",
    "src/truegreen/refresh/events.py",
    "src/truegreen/lint/rules/__init__.py",
    "src/truegreen/lint/rules/readiness.py",
    "src/truegreen/lint/rules/restarts.py",
    "src/truegreen/lint/rules/ports.py",
    "src/truegreen/lint/rules/exec_probes.py",
    "src/truegreen/lint/rules/fields.py",
    "src/truegreen/lint/kinds.py",
    "src/truegreen/lint/training.py",
    "src/truegreen/lint/commands.py",
    "src/truegreen/lint/shells.py",
    "src/truegreen/lint/probes.py",
    "src/truegreen/doctor/checks/admission/quota.py",
    "src/truegreen/doctor/knowledge/webhooks.py",
    "src/truegreen/doctor/checks/admission/trial.py",
    "src/truegreen/textsafe.py",
    "src/truegreen/cluster/views.py",
    "src/truegreen/doctor/checks/capacity/filters/rules.py",
    "src/truegreen/doctor/checks/capacity/filters/cycle.py",
    "src/truegreen/doctor/checks/capacity/filters/node_unschedulable.py",
    "src/truegreen/doctor/checks/capacity/filters/taint_toleration.py",
    "src/truegreen/doctor/checks/capacity/filters/node_affinity.py",
    "src/truegreen/doctor/checks/capacity/filters/node_ports.py",
    "src/truegreen/doctor/checks/capacity/filters/inter_pod_affinity.py",
    "src/truegreen/doctor/checks/capacity/filters/pod_topology_spread.py",
    "src/truegreen/doctor/checks/capacity/filters/volume_binding.py",
    "src/truegreen/doctor/checks/capacity/filters/volume_restrictions.py",
    "src/truegreen/doctor/checks/capacity/filters/volume_attachment.py",
    "src/truegreen/doctor/checks/capacity/filters/volume_zone.py",
    "src/truegreen/doctor/checks/capacity/filters/dynamic_resources.py",
    "src/truegreen/doctor/checks/capacity/filters/device_room.py",
    "src/truegreen/doctor/knowledge/kueue.py",
    "src/truegreen/doctor/checks/queue/flavor_assigner.py",
]
GATE_TESTS = ["tests/unit/"]
# What the unit tests read besides the code: examples, docs and deploy/, CI's own files.
ALSO_COPY = [
    "src/",
    "tests/",
    "examples/",
    "docs/",
    "deploy/",
    "bench/",
    ".ci/",
    "README.md",
    "CONTRIBUTING.md",
]
TORCH_PYTHON = Path(".venv-torch/bin/python")
"""The probe's PyTorch (`make .venv-torch/.installed`), run by test_trial_probe_gloo.py."""
GATE_PYTEST_ARGS = ["-p", "no:cacheprovider", "--timeout=30"]
JUDGED = ("killed", "survived", "no tests", "timeout", "suspicious", "segfault")
RECORD = Path(".ci/mutation-scores.json")
RECORD_FORMAT = 1
HEARTBEAT_SECONDS = 60.0
"""The longest the gate stays silent: many CI systems end a job after 10 quiet minutes."""

# mutmut's exit codes per outcome (mutmut/stats.py, status_by_exit_code), for reading its
# .meta files while it runs; any other code is "suspicious", as mutmut counts it.
_STATUS_BY_EXIT_CODE: dict[int | None, str] = {
    None: "not checked",
    0: "survived",
    1: "killed",
    3: "killed",
    5: "no tests",
    33: "no tests",
    34: "skipped",
    36: "timeout",
    37: "caught by type check",
    -24: "timeout",
    24: "timeout",
    152: "timeout",
    255: "timeout",
    -11: "segfault",
    -9: "segfault",
}


class ModuleResult(Struct, frozen=True, forbid_unknown_fields=True):
    """A gate module's last mutation result and what it was measured against."""

    source: str
    """sha256 of the module's source."""
    tests: dict[str, str]
    """sha256 of each test file that reached the module's code, by path."""
    outcomes: dict[str, int]
    """Mutants per outcome (killed, survived, no tests, ...)."""

    @property
    def score(self) -> float | None:
        """The module's score in percent; None when no mutant was judged."""
        return score(collections.Counter(self.outcomes))


class Record(Struct, frozen=True, forbid_unknown_fields=True):
    """`.ci/mutation-scores.json`: each gate module's result, under one set of gate settings."""

    format: int
    settings: str
    """sha256 of what changes every module's result: tests, pytest arguments, mutmut version."""
    modules: dict[str, ModuleResult] = field(default_factory=dict)


def file_hash(path: Path) -> str:
    """sha256 of a file's bytes, in hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def gate_settings() -> str:
    """The fingerprint of the settings every module's result depends on."""
    try:
        mutmut = importlib.metadata.version("mutmut")
    except importlib.metadata.PackageNotFoundError:
        mutmut = "absent"
    text = json.dumps([GATE_TESTS, GATE_PYTEST_ARGS, mutmut, RECORD_FORMAT])
    return hashlib.sha256(text.encode()).hexdigest()


def load_record(path: Path) -> Record | None:
    """The committed record; None when it is missing or unreadable (every module is mutated)."""
    import msgspec

    try:
        return msgspec.json.decode(path.read_bytes(), type=Record)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


def write_record(path: Path, record: Record) -> None:
    """The record as sorted, indented JSON, so that its diff reads in review."""
    import msgspec

    document = msgspec.to_builtins(record)
    path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")


def stale_modules(
    record: Record | None, checkout: Path, modules: Iterable[str], *, full: bool, settings: str
) -> dict[str, str]:
    """The modules to mutate again, each with why: its recorded result no longer holds."""
    why: dict[str, str] = {}
    for module in modules:
        if full:
            why[module] = "MUTATION_FULL=1"
        elif record is None or record.format != RECORD_FORMAT:
            why[module] = f"no usable record in {RECORD}"
        elif record.settings != settings:
            why[module] = "the gate's settings changed"
        elif module not in record.modules:
            why[module] = "not recorded yet"
        elif file_hash(checkout / module) != record.modules[module].source:
            why[module] = "its source changed"
        else:
            changed = [
                test
                for test, digest in sorted(record.modules[module].tests.items())
                if not (checkout / test).is_file() or file_hash(checkout / test) != digest
            ]
            if changed:
                why[module] = f"its tests changed ({', '.join(changed)})"
    return why


def module_name(path: str) -> str:
    """`src/truegreen/lint/rules/__init__.py` -> `truegreen.lint.rules`, as mutmut names it."""
    dotted = path.removeprefix("src/").removesuffix(".py").replace("/", ".")
    return dotted.removesuffix(".__init__")


def module_of_mutant(name: str) -> str:
    """The module a mutant or a mangled function name belongs to (the part before the
    function: `truegreen.doctor.rollup.x_roll_up__mutmut_3` -> `truegreen.doctor.rollup`)."""
    mangled = name.partition("__mutmut_")[0]
    return mangled.rpartition(".")[0].removesuffix(".__init__")


def covering_tests(tests_by_function: Mapping[str, Iterable[str]], module: str) -> set[str]:
    """The test files whose tests reached any function of `module`, from mutmut's stats."""
    name = module_name(module)
    return {
        test.partition("::")[0]
        for function, tests in tests_by_function.items()
        if module_of_mutant(function) == name
        for test in tests
    }


def outcomes(workdir: Path) -> dict[str, str]:
    """Each mutant's outcome, read from `mutmut results` in workdir."""
    completed = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"],
        capture_output=True,
        text=True,
        check=True,
        cwd=workdir,
    )
    pairs = (line.strip().rpartition(": ") for line in completed.stdout.splitlines())
    return {name: status for name, _, status in pairs if name}


def module_counts(by_mutant: dict[str, str]) -> dict[str, collections.Counter[str]]:
    """Mutant outcomes counted per module."""
    counts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for name, status in by_mutant.items():
        counts[module_of_mutant(name)][status] += 1
    return counts


def score(outcomes: Mapping[str, int]) -> float | None:
    """Killed share of the judged mutants, in percent; None when none was judged."""
    judged = sum(outcomes.get(s, 0) for s in JUDGED)
    return 100 * outcomes.get("killed", 0) / judged if judged else None


def print_table(counts: Mapping[str, Mapping[str, int]]) -> None:
    """One line per module: killed, survived, no tests, pending and the score."""
    print(
        f"{'module':<36} {'killed':>6} {'survived':>8} {'no tests':>8} {'pending':>7} {'score':>6}"
    )
    for module, c in sorted(counts.items()):
        s = score(c)
        shown = f"{s:5.1f}%" if s is not None else "    -"
        print(
            f"{module:<36} {c.get('killed', 0):>6} {c.get('survived', 0):>8} "
            f"{c.get('no tests', 0):>8} {c.get('not checked', 0):>7} {shown:>6}",
            flush=True,
        )


def minutes(seconds: float) -> str:
    """`3 min 07 s`, `42 s`."""
    whole = int(seconds)
    return f"{whole // 60} min {whole % 60:02d} s" if whole >= 60 else f"{whole} s"


def module_line(module: str, counts: Mapping[str, int], took: str) -> str:
    """`doctor.rollup: 123 killed, 0 survived, score 100.0% (2 min 10 s)`."""
    s = score(counts)
    shown = f"{s:.1f}%" if s is not None else "no mutant judged"
    others = [f"{counts[k]} {k}" for k in JUDGED[2:] if counts.get(k)]
    return (
        f"mutation gate: {module_name(module).removeprefix('truegreen.')}: "
        f"{counts.get('killed', 0)} killed, {counts.get('survived', 0)} survived"
        + "".join(f", {other}" for other in others)
        + f", score {shown} ({took})"
    )


class MetaWatcher:
    """Reads mutmut's per-module `.meta` files while it runs (mutmut saves one after every
    mutant's result) and tells when each module has every mutant judged."""

    def __init__(self, workdir: Path, modules: Iterable[str]) -> None:
        self._meta = {m: workdir / "mutants" / f"{m}.meta" for m in modules}
        self.finished: set[str] = set()

    def counts(self, module: str) -> collections.Counter[str] | None:
        """Outcomes so far of one module's mutants; None before mutmut wrote its file."""
        try:
            exit_codes = json.loads(self._meta[module].read_text())["exit_code_by_key"]
        except (OSError, ValueError, KeyError):
            return None  # not written yet, or caught mid-write
        return collections.Counter(
            _STATUS_BY_EXIT_CODE.get(c, "suspicious") for c in exit_codes.values()
        )

    def newly_finished(self) -> list[tuple[str, collections.Counter[str]]]:
        """Modules whose last mutant was judged since the previous call."""
        done = []
        for module in self._meta:
            if module in self.finished:
                continue
            counts = self.counts(module)
            if counts is not None and counts and not counts.get("not checked"):
                self.finished.add(module)
                done.append((module, counts))
        return done

    def judged(self) -> tuple[int, int]:
        """Mutants judged so far, and mutants in all, over the modules with a file."""
        judged = total = 0
        for module in self._meta:
            counts = self.counts(module)
            if counts is not None:
                total += sum(counts.values())
                judged += sum(counts.values()) - counts.get("not checked", 0)
        return judged, total


def watch_run(
    run: subprocess.Popen[bytes],
    watcher: MetaWatcher,
    *,
    say: Callable[[str], None],
    clock: Callable[[], float] = time.monotonic,
    poll: float = 2.0,
) -> int:
    """Wait for mutmut, saying each module's line as it finishes and, in between, how far it
    is at least every HEARTBEAT_SECONDS. Returns mutmut's exit code."""
    started = last_said = clock()
    while True:
        exit_code = run.poll()
        for module, counts in watcher.newly_finished():
            say(module_line(module, counts, minutes(clock() - started)))
            last_said = clock()
        if exit_code is not None:
            return exit_code
        if clock() - last_said >= HEARTBEAT_SECONDS:
            judged, total = watcher.judged()
            if judged:
                doing = f"{judged} of {total} mutants judged"
            else:
                made = f"{total} mutants made; " if total else ""
                doing = (
                    f"{made}running the unit tests once to learn which tests reach each function"
                )
            say(f"mutation gate: {doing} ({minutes(clock() - started)})")
            last_said = clock()
        time.sleep(poll)


def gate_config(pyproject: str, modules: Iterable[str]) -> str:
    """pyproject.toml with its [tool.mutmut] table narrowed to `modules` and the gate's tests."""
    table = (
        "[tool.mutmut]\n"
        f"source_paths = {list(modules)!r}\n"
        f"also_copy = {ALSO_COPY!r}\n"
        f"pytest_add_cli_args_test_selection = {GATE_TESTS!r}\n"
        f"pytest_add_cli_args = {GATE_PYTEST_ARGS!r}\n\n"
    )
    narrowed, replaced = re.subn(r"(?ms)^\[tool\.mutmut\]\n.*?(?=^\[|\Z)", table, pyproject)
    if replaced != 1:
        raise SystemExit("mutation gate: pyproject.toml has no [tool.mutmut] table to narrow")
    return narrowed


def scratch_copy(checkout: Path, modules: Iterable[str]) -> Path:
    """The tracked files of the checkout, copied so the gate never touches the working tree."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
        cwd=checkout,
    ).stdout.split(b"\0")
    scratch = Path(tempfile.mkdtemp(prefix="truegreen-mutation-"))
    for raw in filter(None, listed):
        relative = Path(os.fsdecode(raw))
        if not (checkout / relative).is_file():
            continue
        (scratch / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(checkout / relative, scratch / relative)
    pyproject = scratch / "pyproject.toml"
    pyproject.write_text(gate_config(pyproject.read_text(), modules))
    return scratch


def _say(line: str) -> None:
    print(line, flush=True)


def mutate(
    checkout: Path, modules: list[str]
) -> tuple[dict[str, ModuleResult], dict[str, str], Path] | None:
    """Mutate `modules` in a scratch copy; their results, each surviving mutant's status, and
    the scratch folder. None when mutmut itself failed (its log's end is printed)."""
    scratch = scratch_copy(checkout, modules)
    log = scratch / "mutmut-run.log"
    with log.open("wb") as written:
        run = subprocess.Popen(
            [sys.executable, "-m", "mutmut", "run", "--max-children", str(os.cpu_count() or 2)],
            cwd=scratch,
            # The copy holds no venvs: the probe's all-reduce test runs the checkout's PyTorch
            # (by the venv's own path: resolved, the link leads to a Python without PyTorch).
            env=os.environ | {"TRUEGREEN_TORCH_PYTHON": str((checkout / TORCH_PYTHON).absolute())},
            stdout=written,
            stderr=subprocess.STDOUT,
        )
        try:
            exit_code = watch_run(run, MetaWatcher(scratch, modules), say=_say)
        except BaseException:
            run.kill()
            run.wait()
            raise
    if exit_code != 0:
        _say(f"mutation gate: mutmut run failed with exit {exit_code}; the end of its output:")
        for line in log.read_text(errors="replace").splitlines()[-30:]:
            _say(f"  {line}")
        return None
    by_mutant = outcomes(scratch)
    counts = module_counts(by_mutant)
    stats = json.loads((scratch / "mutants" / "mutmut-stats.json").read_text())
    tests_by_function: dict[str, list[str]] = stats["tests_by_mangled_function_name"]
    results = {}
    for module in modules:
        tests = covering_tests(tests_by_function, module)
        results[module] = ModuleResult(
            source=file_hash(scratch / module),
            tests={test: file_hash(scratch / test) for test in sorted(tests)},
            outcomes=dict(sorted(counts.get(module_name(module), collections.Counter()).items())),
        )
    survivors = {
        name: status
        for name, status in sorted(by_mutant.items())
        if status not in ("killed", "not checked")
    }
    return results, survivors, scratch


def gate(checkout: Path, *, full: bool) -> int:
    """Run the gate; 0 when every gate module scores at least THRESHOLD."""
    settings = gate_settings()
    record = load_record(checkout / RECORD)
    stale = stale_modules(record, checkout, GATE_MODULES, full=full, settings=settings)
    kept = {
        m: record.modules[m]
        for m in GATE_MODULES
        if m not in stale and record is not None and m in record.modules
    }
    for module, result in kept.items():
        s = result.score
        _say(
            f"mutation gate: {module_name(module).removeprefix('truegreen.')}: "
            f"{'-' if s is None else f'{s:.1f}%'} as recorded (source and tests unchanged)"
        )
    fresh: dict[str, ModuleResult] = {}
    scratch: Path | None = None
    if stale:
        _say(f"mutation gate: mutating {len(stale)} of {len(GATE_MODULES)} modules:")
        for module, why in stale.items():
            _say(f"  {module}: {why}")
        mutated = mutate(checkout, list(stale))
        if mutated is None:
            return 1
        fresh, survivors, scratch = mutated
        for name, status in survivors.items():
            _say(f"  {status}: {name}")
    results = {**kept, **fresh}
    print_table({module_name(m): collections.Counter(r.outcomes) for m, r in results.items()})
    low = {m: r.score or 0.0 for m, r in results.items() if (r.score or 0.0) < THRESHOLD}
    passed = {m: r for m, r in fresh.items() if m not in low}
    if passed:
        modules = {**(record.modules if record and record.settings == settings else {}), **passed}
        ordered = {m: modules[m] for m in GATE_MODULES if m in modules}
        write_record(checkout / RECORD, Record(RECORD_FORMAT, settings, ordered))
        _say(f"mutation gate: recorded {len(passed)} module(s) in {RECORD}; commit it")
    if low:
        for module, s in sorted(low.items()):
            _say(f"mutation gate: {module_name(module)} scores {s:.1f}%, below {THRESHOLD:.0f}%")
        if scratch is not None:
            _say(f"See survivors with: cd {scratch} && mutmut results")
        return 1
    if scratch is not None:
        shutil.rmtree(scratch)
    _say(f"mutation gate: every module at or above {THRESHOLD:.0f}%")
    return 0


def main(argv: list[str]) -> int:
    """Entry point: `report` or `gate`."""
    checkout = Path(__file__).resolve().parent.parent
    if argv == ["report"]:
        print_table(module_counts(outcomes(checkout)))
        return 0
    if argv == ["gate"]:
        return gate(checkout, full=os.environ.get("MUTATION_FULL", "") not in ("", "0"))
    print("usage: python .ci/mutation.py report|gate", file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
