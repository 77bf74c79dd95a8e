"""README.md's Performance section quotes bench/results/latest.json, figure for figure: it is
written from latest.json by bench/run.py (bench/readme.py), and this test holds the committed
README to the committed results."""

import json
from pathlib import Path
from typing import Any

from bench.readme import performance_block, quoted_block

ROOT = Path(__file__).resolve().parents[2]


def _latest() -> dict[str, Any]:
    return dict(json.loads((ROOT / "bench" / "results" / "latest.json").read_text()))


def _performance_section() -> str:
    readme = (ROOT / "README.md").read_text()
    return readme[readme.index("## Performance") : readme.index("## Connecting")]


def test_the_readme_quotes_the_headline_figures_of_latest_json() -> None:
    latest = _latest()
    doctor, at_30k = latest["doctor"], latest["doctor"]["points"]["30000"]
    figures = {
        "doctor at 30,000 pods, s": at_30k["doctor"]["seconds"]["median"],
        "speedup vs kubectl": doctor["speedup_vs_kubectl"],
        "x the decode floor": doctor["ratio_vs_floor"],
        "three-pod ratio": doctor["small_ratio_vs_kubectl"],
        "doctor's imports, ms": doctor["import_ms"],
        "lint speedup vs Checkov": latest["lint"]["speedup_vs_checkov"],
        "calibration, s": latest["machine"]["calibration"]["sum_range_1e7_seconds"],
    }
    section = _performance_section()
    stale = {name: value for name, value in figures.items() if str(value) not in section}
    assert not stale, f"README.md does not quote latest.json's {stale}"


def test_the_readme_block_is_the_one_written_from_latest_json() -> None:
    assert quoted_block((ROOT / "README.md").read_text()) == performance_block(_latest())


def _monitor_cost_section() -> str:
    page = (ROOT / "docs" / "monitor.md").read_text()
    return page[page.index("## Cost (make bench)") : page.index("### Many namespaces")]


def test_the_monitor_page_quotes_the_monitor_figures_of_latest_json() -> None:
    """docs/monitor.md's "Cost (make bench)" table: each size's figures as latest.json's
    `monitor.sizes` records them (CPU shares as percentages of one core)."""
    figures: dict[str, str] = {}
    for pods, size in _latest()["monitor"]["sizes"].items():
        doctor = size["doctor_every_interval"]
        figures |= {
            f"{pods} pods, monitor CPU": f"| {round(size['cpu_share_of_a_core'] * 100, 2):g}% |",
            f"{pods} pods, peak RSS": f"{size['peak_rss_mb']:g} MB",
            f"{pods} pods, change to /metrics": f"{size['change_to_metrics_seconds']['max']:g} s",
            f"{pods} pods, doctor every interval": (
                f"{round(doctor['cpu_share_of_a_core'] * 100, 2):g}% / "
                f"{doctor['api_requests_per_minute']:g}"
            ),
            f"{pods} pods, first evaluation": f"{size['first_evaluation_seconds']:g} s",
        }
    section = _monitor_cost_section()
    stale = {name: value for name, value in figures.items() if value not in section}
    assert not stale, f"docs/monitor.md does not quote latest.json's {stale}"


def test_the_monitor_page_s_block_is_the_one_written_from_latest_json() -> None:
    from bench.monitor_page import BEGIN, END, cost_block

    page = (ROOT / "docs" / "monitor.md").read_text()
    assert quoted_block(page, BEGIN, END) == cost_block(_latest())
