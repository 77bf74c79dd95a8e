"""Run one command and write its wall time, peak RSS and exit code as JSON.

`python bench/measure.py OUT.json COMMAND...`. The command is started from this small process,
never from the benchmark itself: a child forked from the process that holds a whole synthetic
cluster would count that process's pages in its peak RSS (ru_maxrss is a high-water mark that
includes what the child shared before exec).
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

LAUNCHER = Path(__file__).resolve()
INSTALLED = LAUNCHER.parents[1] / ".venv-bench" / "truegreen" / "bin"
"""truegreen as a user installs it: `pip install .` of this checkout into a venv of its own
(runtime dependencies only), made by `make bench`. The dev venv's test tools change what the
product loads: typing_extensions (mypy's) makes msgspec import `inspect`, about 10 ms of
start-up that no user's install pays."""


def installed(name: str) -> str:
    """The console script or interpreter `name` of the installed truegreen; SystemExit when
    `make bench` has not installed it."""
    path = INSTALLED / name
    if not path.exists():
        raise SystemExit(f"benchmark: {path} is missing: run `make bench`")
    return str(path)


@dataclass(frozen=True)
class Measurement:
    """One run of one command."""

    seconds: float
    peak_rss_mb: float
    stdout: str
    cpu_seconds: float = 0.0
    """User plus system time: less moved than wall time by other work on a shared machine."""


def environment() -> dict[str, str]:
    """This environment, but byte-code caches written as an installed package has them: with
    PYTHONDONTWRITEBYTECODE set (some shells set it), every run of an editable install would
    compile truegreen's ~100 modules again, which no user's install does (pip compiles)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measured(
    command: list[str], ok_exits: tuple[int, ...] = (0,), env: dict[str, str] | None = None
) -> Measurement:
    """Run `command` through the launcher, with `env` added to this environment; SystemExit
    when it exits otherwise than expected. The first run of a command writes its byte-code
    caches (every caller warms up first)."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run(
            [sys.executable, str(LAUNCHER), out.name, *command],
            check=True,
            env={**environment(), **(env or {})},
        )
        result = json.loads(Path(out.name).read_text(encoding="utf-8"))
    if result["exit"] not in ok_exits:
        raise SystemExit(f"benchmark: {command[0]} exited {result['exit']}: {result['stderr']}")
    return Measurement(
        result["seconds"], result["peak_rss_mb"], result["stdout"], result["cpu_seconds"]
    )


def summary(samples: list[float]) -> dict[str, float]:
    """Median, min and max, rounded to milliseconds."""
    return {
        "median": round(statistics.median(samples), 3),
        "min": round(min(samples), 3),
        "max": round(max(samples), 3),
    }


def _launch(out: str, command: list[str]) -> None:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=False)
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(
            {
                "seconds": seconds,
                "peak_rss_mb": usage.ru_maxrss / 1024,
                "cpu_seconds": usage.ru_utime + usage.ru_stime,
                "exit": done.returncode,
                "stdout": done.stdout.decode(errors="replace"),
                "stderr": done.stderr.decode(errors="replace")[-2000:],
            },
            handle,
        )


if __name__ == "__main__":
    _launch(sys.argv[1], sys.argv[2:])
