"""A bench run of some parts keeps the other parts' figures, each with when it was measured."""

from typing import Any

from bench.run import carry_over

PREVIOUS: dict[str, Any] = {
    "machine": {"cores": 2, "calibration": {"factor": 0.5}},
    "measured": {
        "doctor": {"at": "2026-12-01T01:00:00Z", "load_average": [0.1, 0.1, 0.1]},
        "startup": {"at": "2026-12-01T01:10:00Z", "load_average": [0.2, 0.2, 0.2]},
        "lint": {"at": "2026-12-01T01:20:00Z", "load_average": [0.3, 0.3, 0.3]},
    },
    "doctor": {"ratio_vs_floor": 1.2, "import_ms": 300.0, "import_ms_calibrated": 150.0},
    "lint": {"speedup_vs_checkov": 50.0, "import_ms": 200.0},
    "refresh": {"ratio_vs_floor": 1.6, "import_ms": 400.0},
}


def _now(parts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"machine": {"cores": 2}, "measured": {p: {"at": "now"} for p in parts}, **parts}


def test_a_doctor_only_run_keeps_lint_and_every_import_time() -> None:
    document = _now({"doctor": {"ratio_vs_floor": 1.1}})
    carry_over(PREVIOUS, document, ["doctor"])
    assert document["doctor"] == {
        "ratio_vs_floor": 1.1,
        "import_ms": 300.0,
        "import_ms_calibrated": 150.0,
    }
    assert document["lint"] == {"speedup_vs_checkov": 50.0, "import_ms": 200.0}
    assert document["refresh"] == {"ratio_vs_floor": 1.6, "import_ms": 400.0}
    assert document["machine"]["calibration"] == {"factor": 0.5}
    assert document["measured"] == {
        "doctor": {"at": "now"},
        "startup": PREVIOUS["measured"]["startup"],
        "lint": PREVIOUS["measured"]["lint"],
    }


def test_a_run_never_keeps_an_old_figure_of_a_part_it_ran() -> None:
    document = _now({"lint": {"speedup_vs_checkov": 60.0}})
    document["lint"]["import_ms"] = 190.0  # written by this run's startup part
    carry_over(PREVIOUS, document, ["lint", "startup"])
    assert document["lint"] == {"speedup_vs_checkov": 60.0, "import_ms": 190.0}
    assert "import_ms" not in document["doctor"], "startup ran: old import times are not kept"
    assert document["doctor"]["ratio_vs_floor"] == 1.2
    assert document["measured"]["lint"] == {"at": "now"}


def test_the_monitor_and_its_fleet_row_keep_each_other_s_figures() -> None:
    previous = {
        "machine": {"cores": 2},
        "measured": {"monitor": {"at": "then"}, "monitor-fleet": {"at": "then"}},
        "monitor": {"sizes": {"3000": {}}, "fleet": {"namespaces": 40}, "fleet_cpu_ratio": 1.5},
    }
    fleet_only = _now({"monitor": {"fleet": {"namespaces": 40}, "fleet_cpu_ratio": 1.2}})
    carry_over(previous, fleet_only, ["monitor-fleet"])
    assert fleet_only["monitor"] == {
        "sizes": {"3000": {}},
        "fleet": {"namespaces": 40},
        "fleet_cpu_ratio": 1.2,
    }
    assert fleet_only["measured"]["monitor"] == {"at": "then"}
    monitor_only = _now({"monitor": {"sizes": {"30000": {}}}})
    carry_over(previous, monitor_only, ["monitor"])
    assert monitor_only["monitor"] == {
        "sizes": {"30000": {}},
        "fleet": {"namespaces": 40},
        "fleet_cpu_ratio": 1.5,
    }
    assert monitor_only["measured"]["monitor-fleet"] == {"at": "then"}
