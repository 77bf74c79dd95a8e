"""What a command costs before it does anything: `python -X importtime`, per command.

The figure is the cumulative import time of everything the command imports, at any moment
of its run (lazy imports included), less what the interpreter imports before any program
runs (`python -X importtime -c pass`). Byte-code caches are written by the first run, as
for any installed package. The Python floor (`python_floor`) is the interpreter loading the
libraries a command loads, without the command.
"""

import json
import statistics
import subprocess
import sys
from typing import Any

from bench.measure import environment, installed

CALIBRATION_REFERENCE_SECONDS = 0.47 / 2.5
"""`sum(range(10**7))` on the machine the issue's targets were set on: 0.47 s on the bench
machine, which is about 2.5 times slower."""


def _top_level(stderr: str) -> dict[str, int]:
    """Cumulative microseconds of each import made while no other import was under way."""
    found: dict[str, int] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _, cumulative, name = line.split("|")
        if not name.startswith("  "):  # one space: nested imports are indented further
            found[name.strip()] = found.get(name.strip(), 0) + int(cumulative)
    return found


def _interpreter_imports(python: str) -> set[str]:
    done = subprocess.run(
        [python, "-X", "importtime", "-c", "pass"],
        capture_output=True,
        text=True,
        check=True,
        env=environment(),
    )
    return set(_top_level(done.stderr))


def _import_ms(python: str, command: list[str], before: set[str]) -> float:
    done = subprocess.run(
        [python, "-X", "importtime", *command],
        capture_output=True,
        text=True,
        check=False,
        env=environment(),
    )
    if done.returncode not in (0, 2, 3):
        raise SystemExit(f"benchmark: {command} exited {done.returncode}: {done.stderr[-500:]}")
    ours = {k: v for k, v in _top_level(done.stderr).items() if k not in before}
    return sum(ours.values()) / 1000


def startup(commands: dict[str, list[str]], runs: int) -> dict[str, Any]:
    """Import milliseconds of each command (a Python script and its arguments), and this
    machine's speed, measured interleaved after a warm-up: medians, and the calibrated value
    (what the same imports would take on the reference machine)."""
    python = installed("python")
    before = _interpreter_imports(python)
    for command in commands.values():
        _import_ms(python, command, before)  # warm-up: byte-code caches written
    samples: dict[str, list[float]] = {name: [] for name in commands}
    speed: list[float] = []
    for _ in range(runs):
        for name, command in commands.items():
            samples[name].append(_import_ms(python, command, before))
        speed.append(calibration_seconds())
    calibration = statistics.median(speed)
    factor = CALIBRATION_REFERENCE_SECONDS / calibration
    return {
        "calibration": {
            "sum_range_1e7_seconds": round(calibration, 3),
            "reference_seconds": round(CALIBRATION_REFERENCE_SECONDS, 3),
            "factor": round(factor, 3),
        },
        "import_ms": {
            name: {
                "median": round(statistics.median(values), 1),
                "min": round(min(values), 1),
                "max": round(max(values), 1),
                "calibrated": round(statistics.median(values) * factor, 1),
            }
            for name, values in samples.items()
        },
    }


def calibration_seconds() -> float:
    """Seconds this machine takes for `sum(range(10**7))` right now (one process)."""
    code = "import time; t = time.perf_counter(); sum(range(10**7)); print(time.perf_counter() - t)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout)


_LIBRARIES_PROBE = """
import sys
before = set(sys.modules)
import contextlib, io, json
sys.argv = ["truegreen", *json.loads(sys.argv[1])]
from truegreen.start import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main()
    except SystemExit:
        pass
print(json.dumps([m for m in sys.modules if m not in before and m.split(".")[0] != "truegreen"]))
"""

_FLOOR = """
import gc, sys
gc.disable()
sys.modules["typing_extensions"] = None  # as truegreen imports msgspec (truegreen/__init__.py)
for name in {names!r}:
    __import__(name)
"""


def python_floor(arguments: list[str]) -> list[str]:
    """A command that starts the installed interpreter and imports every module of the standard
    library and of msgspec that `truegreen ARGUMENTS...` imports during its run, in the order it
    does, and none of truegreen's own: what any Python program that loads those libraries pays
    before it does anything."""
    python = installed("python")
    done = subprocess.run(
        [python, "-c", _LIBRARIES_PROBE, json.dumps(arguments)],
        capture_output=True,
        text=True,
        check=True,
        env=environment(),
    )
    names = json.loads(done.stdout.splitlines()[-1])
    return [python, "-c", _FLOOR.format(names=names)]
