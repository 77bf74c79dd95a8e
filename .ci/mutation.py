"""Mutation scores per module, and the CI gate that fails when they drop.

`python .ci/mutation.py report` prints the table for the last `mutmut run` in this directory.
`python .ci/mutation.py gate` mutates the gate's modules in a scratch copy of the checkout,
runs only the unit tests against each mutant, prints the table and fails below the threshold.
The score is killed / (killed + survived + no tests + timeout); mutants not run are pending.
"""

from __future__ import annotations

import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

THRESHOLD = 90.0
# The modules that decide a verdict, a refresh step or a lint finding: what fits the CI budget
# on 2 cores (docs/mutation.md). `make mutation` measures the rest: the connection details
# (proxy choice, OIDC, paths), the monitor's bookkeeping, wrapping, the bundle's selection and
# redaction (its linear-time test runs up to 30 s for each mutant that slows it);
# refresh/tick.py, whose mutants need the registry scenarios; cluster/exec_plugin.py, whose
# tests run a real plugin process each (about 13 minutes); and yamlsafe.py, whose every mutant
# re-runs the property-based YAML tests and every lint test; and doctor/podsecurity.py (852
# mutants, 99.1 %), which took the CI run to 19 minutes on 2 cores with the rest.
GATE_MODULES = [
    "src/truegreen/doctor/rollup.py",
    "src/truegreen/doctor/fit.py",
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
    "src/truegreen/probes.py",
    "src/truegreen/doctor/quota.py",
    "src/truegreen/doctor/webhooks.py",
    "src/truegreen/doctor/trial.py",
    "src/truegreen/textsafe.py",
    "src/truegreen/cluster/views.py",
]
GATE_TESTS = ["tests/unit/"]
JUDGED = ("killed", "survived", "no tests", "timeout", "suspicious", "segfault")


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
        counts[name.split(".x")[0]][status] += 1
    return counts


def score(outcomes: collections.Counter[str]) -> float | None:
    """Killed share of the judged mutants, in percent; None when none was judged."""
    judged = sum(outcomes[s] for s in JUDGED)
    return 100 * outcomes["killed"] / judged if judged else None


def print_table(counts: dict[str, collections.Counter[str]]) -> None:
    """One line per module: killed, survived, no tests, pending and the score."""
    print(
        f"{'module':<36} {'killed':>6} {'survived':>8} {'no tests':>8} {'pending':>7} {'score':>6}"
    )
    for module, c in sorted(counts.items()):
        s = score(c)
        shown = f"{s:5.1f}%" if s is not None else "    -"
        print(
            f"{module:<36} {c['killed']:>6} {c['survived']:>8} {c['no tests']:>8} "
            f"{c['not checked']:>7} {shown:>6}"
        )


def gate_config(pyproject: str) -> str:
    """pyproject.toml with its [tool.mutmut] table narrowed to the gate's modules and tests."""
    table = (
        "[tool.mutmut]\n"
        f"source_paths = {GATE_MODULES!r}\n"
        'also_copy = ["src/", "tests/", "examples/", "docs/", "deploy/", "bench/"]\n'
        f"pytest_add_cli_args_test_selection = {GATE_TESTS!r}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "--timeout=30"]\n\n'
    )
    narrowed, replaced = re.subn(r"(?ms)^\[tool\.mutmut\]\n.*?(?=^\[|\Z)", table, pyproject)
    if replaced != 1:
        raise SystemExit("mutation gate: pyproject.toml has no [tool.mutmut] table to narrow")
    return narrowed


def scratch_copy(checkout: Path) -> Path:
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
    pyproject.write_text(gate_config(pyproject.read_text()))
    return scratch


def gate(checkout: Path) -> int:
    """Run the gate; 0 when every gate module scores at least THRESHOLD."""
    scratch = scratch_copy(checkout)
    try:
        run = subprocess.run(
            [sys.executable, "-m", "mutmut", "run", "--max-children", str(os.cpu_count() or 2)],
            cwd=scratch,
            stdout=subprocess.DEVNULL,
            check=False,
        )
        if run.returncode != 0:
            print(f"mutation gate: mutmut run failed with exit {run.returncode}")
            return 1
        by_mutant = outcomes(scratch)
        counts = module_counts(by_mutant)
        print_table(counts)
        for name, status in sorted(by_mutant.items()):
            if status not in ("killed", "not checked"):
                print(f"  {status}: {name}")
        if not counts:
            print("mutation gate: mutmut produced no mutants")
            return 1
        low = {m: score(c) for m, c in counts.items() if (score(c) or 0.0) < THRESHOLD}
        if low:
            for module, s in sorted(low.items()):
                print(f"mutation gate: {module} scores {s or 0.0:.1f}%, below {THRESHOLD:.0f}%")
            print(f"See survivors with: cd {scratch} && mutmut results")
            return 1
        print(f"mutation gate: every module at or above {THRESHOLD:.0f}%")
        shutil.rmtree(scratch)
        return 0
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def main(argv: list[str]) -> int:
    """Entry point: `report` or `gate`."""
    checkout = Path(__file__).resolve().parent.parent
    if argv == ["report"]:
        print_table(module_counts(outcomes(checkout)))
        return 0
    if argv == ["gate"]:
        return gate(checkout)
    print("usage: python .ci/mutation.py report|gate", file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
