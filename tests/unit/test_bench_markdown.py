"""latest.json and latest.md say what a run measured: a figure not measured this run is never
written as None or "Nonex", and each part's number of runs is its own."""

from typing import Any

from bench.run import doctor_section, markdown


def _tool(seconds: float, mb: float = 20.0) -> dict[str, Any]:
    return {"seconds": {"median": seconds, "min": seconds, "max": seconds}, "peak_rss_mb": mb}


def _point(doctor: float, pods: int, *, baselines: bool) -> dict[str, Any]:
    point: dict[str, Any] = {
        "doctor": _tool(doctor, 40.0),
        "doctor_snapshot": _tool(doctor / 2),
        "decode_floor": _tool(doctor / 1.25),
        "kubectl_namespace": _tool(0.05),
        "server_floor": {"seconds": {"median": 0.01}},
        "doctor_requests": 17 + pods // 500,
        "pod_pages": max(1, pods // 500),
        "objects": {"pod_bytes": 6861, "pod_managed_fields_share": 0.45, "machine_bytes": 6594},
    }
    if baselines:
        point["kubectl"] = _tool(doctor * 50)
        point["official_client"] = _tool(doctor * 40)
    return point


def _document(doctor: dict[str, Any], measured: dict[str, Any]) -> dict[str, Any]:
    machine = {
        "cores": 2,
        "python": "3.11.7",
        "load_average_at_start": [0.1, 0.2, 0.3],
        "load_average_at_end": [1.0, 0.5, 0.4],
    }
    return {"machine": machine, "runs": 7, "measured": measured, "doctor": doctor}


def test_sizes_not_run_are_said_to_be_unmeasured_not_none() -> None:
    """`BENCH_SIZES=3,30000 BENCH_RUNS=7 make bench` (docs/performance.md) runs no 100,000."""
    section = doctor_section(
        {3: _point(0.1, 3, baselines=True), 30000: _point(0.7, 30000, baselines=False)}
    )
    assert None not in section.values(), section
    assert "linear_100k_over_30k" not in section
    assert "peak_rss_mb_100k" not in section
    text = markdown(_document(section, {}))
    assert "None" not in text
    sentence = next(line for line in text.splitlines() if line.startswith("At 30000 pods"))
    assert sentence == (
        "At 30000 pods doctor is 1.25x the decode floor; kubectl: not measured this run; the "
        "official client: not measured this run; the server floor's share of kubectl's time: "
        "not measured this run. On a three-pod namespace doctor takes 2.0x `kubectl get pods`; "
        "the Python floor: not measured this run. 100,000 pods: not measured this run."
    )


def test_every_size_run_gives_every_figure() -> None:
    small = _point(0.1, 3, baselines=True)
    small["python_floor"] = _tool(0.04)
    section = doctor_section(
        {
            3: small,
            30000: _point(0.7, 30000, baselines=True),
            100000: _point(2.1, 100000, baselines=False),
        }
    )
    text = markdown(_document(section, {}))
    sentence = next(line for line in text.splitlines() if line.startswith("At 30000 pods"))
    assert sentence == (
        "At 30000 pods doctor is 1.25x the decode floor; 50.0x faster than kubectl; 40.0x "
        "faster than the official client; the server floor is 0.0 of kubectl's time. On a "
        "three-pod namespace doctor takes 2.0x `kubectl get pods` (the Python floor, the "
        "interpreter loading the libraries doctor loads, 0.8x). 100,000 pods take 3.0x the "
        "time of 30,000 (40.0 MB)."
    )


def test_the_header_gives_each_part_its_own_number_of_runs() -> None:
    measured = {
        "doctor": {"at": "2026-12-06T03:41:07Z", "load_average": [1.03, 1.0, 0.9], "runs": 7},
        "lint": {"at": "2026-12-02T17:07:33Z", "load_average": [2.68, 3.0, 3.3], "runs": 3},
        "fleet": {"at": "2026-12-03T00:34:52Z", "load_average": [1.1, 0.4, 0.2]},
    }
    lines = markdown(_document({}, measured)).splitlines()
    assert lines[2] == (
        "2 cores, Python 3.11.7; each part's runs are interleaved after a warm-up (the number "
        "of runs per part is under *Measured*); medians in seconds, peak RSS in MB. Load "
        "average (1, 5, 15 min) [0.1, 0.2, 0.3] at the start, [1.0, 0.5, 0.4] at the end: the "
        "machine is shared, so compare the columns of one row (measured interleaved), not runs."
    )
    assert lines[4] == (
        "Measured: doctor 2026-12-06T03:41:07Z (load 1.03, 7 runs), lint 2026-12-02T17:07:33Z "
        "(load 2.68, 3 runs), fleet 2026-12-03T00:34:52Z (load 1.1, runs not recorded)."
    )
