"""docs/monitor.md's cost figures ("Cost (make bench)"), written from bench/results/latest.json.

bench/run.py rewrites the block between `BEGIN` and `END` after every run, as it does README's
(bench/readme.py), so the page quotes the monitor figures of the latest results and no others;
tests/unit/test_bench_readme.py holds the committed page to the committed latest.json.
"""

from pathlib import Path
from typing import Any

from bench.readme import NOT_MEASURED, write_block

BEGIN = "<!-- bench/run.py writes the monitor's figures below from bench/results/latest.json -->"
END = "<!-- end of the monitor's figures bench/run.py writes -->"
CHANGES = 6
"""The changes timed from the server to `/metrics` per size (bench/monitor_bench.py flips the
dataset volume three times each way)."""


def _percent(share: float) -> str:
    """A share of one core as a percentage: 0.0047 → `0.47%`."""
    return f"{round(share * 100, 2):g}%"


def _row(name: str, sizes: list[dict[str, Any]], cell: Any) -> str:
    return f"| {name} | " + " | ".join(cell(size) for size in sizes) + " |"


def cost_block(document: dict[str, Any]) -> str:
    """The page's cost table, from latest.json's `document`, between the markers."""
    monitor = document.get("monitor", {})
    sizes = sorted(monitor.get("sizes", {}).values(), key=lambda size: size["pods"])
    if not sizes:
        return "\n".join((BEGIN, f"The monitor's cost: {NOT_MEASURED}.", END))
    stamp = document.get("measured", {}).get("monitor", {})
    load = stamp.get("load_average", [None])[0]
    first = sizes[0]
    interval = f"{first['doctor_every_interval']['interval_seconds']:g}"
    lines = [
        BEGIN,
        f"Measured {stamp.get('at', 'at a time not recorded')} on {document['machine']['cores']} "
        f"shared cores (load {load} at the start), {first['window_seconds']:g} s windows, "
        f"{first['pod_updates_per_second']:g} pod updates a second:",
        "",
        "| | "
        + " | ".join(f"{s['pods']:,} pods / {s['machines']:,} machines" for s in sizes)
        + " |",
        "|---" * (len(sizes) + 1) + "|",
        _row("monitor CPU, share of one core", sizes, lambda s: _percent(s["cpu_share_of_a_core"])),
        _row(
            "monitor API requests per minute", sizes, lambda s: f"{s['api_requests_per_minute']:g}"
        ),
        _row("monitor peak RSS", sizes, lambda s: f"{s['peak_rss_mb']:g} MB"),
        _row(
            f"change on the server → `/metrics` (max of {CHANGES})",
            sizes,
            lambda s: f"{s['change_to_metrics_seconds']['max']:g} s",
        ),
        _row(
            f"doctor every {interval} s: CPU share / requests per minute",
            sizes,
            lambda s: (
                f"{_percent(s['doctor_every_interval']['cpu_share_of_a_core'])} / "
                f"{s['doctor_every_interval']['api_requests_per_minute']:g}"
            ),
        ),
        _row(
            "the monitor's first evaluation (everything listed once)",
            sizes,
            lambda s: f"{s['first_evaluation_seconds']:g} s",
        ),
        END,
    ]
    return "\n".join(lines)


def write_monitor_page(path: Path, document: dict[str, Any]) -> None:
    """Replace the page's block with the one written from `document`."""
    write_block(path, cost_block(document), BEGIN, END)
