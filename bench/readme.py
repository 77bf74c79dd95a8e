"""README.md's Performance figures, written from bench/results/latest.json.

bench/run.py rewrites the block between `BEGIN` and `END` after every run, so the README quotes
the figures of the latest results and no others; tests/unit/test_bench_readme.py holds the
committed README to the committed latest.json. A figure the results lack reads "not measured
this run".
"""

from pathlib import Path
from typing import Any

BEGIN = "<!-- bench/run.py writes the figures below from bench/results/latest.json -->"
END = "<!-- end of the figures bench/run.py writes -->"
NOT_MEASURED = "not measured this run"


def _get(document: dict[str, Any], *path: str) -> Any:
    """The value at `path`, or None where any step is missing."""
    value: Any = document
    for step in path:
        if not isinstance(value, dict) or step not in value:
            return None
        value = value[step]
    return value


def _seconds(point: dict[str, Any] | None, tool: str) -> Any:
    return _get(point or {}, tool, "seconds", "median")


def _or_unmeasured(value: Any) -> str:
    return NOT_MEASURED if value is None else str(value)


def _runs(document: dict[str, Any]) -> str:
    """Each part's number of runs, as its stamp records it."""
    stamps = document.get("measured", {})
    counts = [
        f"{part} {stamp['runs']}" for part, stamp in stamps.items() if stamp.get("runs") is not None
    ]
    if len(counts) < len(stamps):
        counts.append("the others not recorded (bench/results/latest.md)")
    return ", ".join(counts)


def _doctor_table(document: dict[str, Any]) -> list[str]:
    doctor = document.get("doctor", {})
    point = _get(doctor, "points", "30000")
    rows = (
        ("`truegreen doctor` (every check)", _seconds(point, "doctor"), "doctor"),
        ("`truegreen doctor --snapshot`", _seconds(point, "doctor_snapshot"), "doctor_snapshot"),
    )
    lines = [
        "| at 30,000 realistic pods on 1,000 machines | seconds | peak MB |",
        "|---|---|---|",
        *(
            f"| {name} | {_or_unmeasured(s)} | {_or_unmeasured(_get(point or {}, tool, 'peak_rss_mb'))} |"
            for name, s, tool in rows
        ),
    ]
    for name, tool, speedup in (
        ("`kubectl get pods -A -o json` + nodes", "kubectl", "speedup_vs_kubectl"),
        ("official `kubernetes` Python client", "official_client", "speedup_vs_official_client"),
    ):
        seconds, ratio = _seconds(point, tool), doctor.get(speedup)
        slower = f"{seconds} ({ratio}x slower)" if seconds is not None else NOT_MEASURED
        megabytes = _or_unmeasured(_get(point or {}, tool, "peak_rss_mb"))
        lines.append(f"| {name} | {slower} | {megabytes} |")
    floor = _seconds(point, "decode_floor")
    lines.append(
        "| decode floor (stdlib HTTP, only the fields a fit needs) | "
        + (
            f"{floor} (doctor is {doctor.get('ratio_vs_floor')}x it)"
            if floor is not None
            else NOT_MEASURED
        )
        + " | — |"
    )
    return lines


def _python_floor(doctor: dict[str, Any], small: dict[str, Any]) -> str:
    """The small row's Python floor in words: the interpreter loading doctor's libraries."""
    if "small_python_floor_vs_kubectl" not in doctor:
        return f"; the Python floor: {NOT_MEASURED}"
    return (
        f"; the interpreter alone, loading the libraries doctor loads, takes "
        f"{_seconds(small, 'python_floor')} s ({doctor['small_python_floor_vs_kubectl']}x)"
    )


def _small_and_large(document: dict[str, Any]) -> str:
    doctor = document.get("doctor", {})
    small = _get(doctor, "points", "3")
    large = _get(doctor, "points", "100000")
    kinds = doctor.get("with_training_kinds")
    said = (
        f"On a three-pod namespace doctor takes {_seconds(small, 'doctor')} s against "
        f"{_seconds(small, 'kubectl_namespace')} s for `kubectl get pods` "
        f"({doctor.get('small_ratio_vs_kubectl')}x){_python_floor(doctor, small)}"
        if small and "small_ratio_vs_kubectl" in doctor
        else f"A three-pod namespace: {NOT_MEASURED}"
    )
    said += (
        f"; at 100,000 pods {_seconds(large, 'doctor')} s and {doctor['peak_rss_mb_100k']} MB "
        f"({doctor['linear_100k_over_30k']}x the 30,000-pod time), from a snapshot "
        f"{_seconds(large, 'doctor_snapshot')} s and {_get(large, 'doctor_snapshot', 'peak_rss_mb')} MB."
        if large and "linear_100k_over_30k" in doctor
        else f"; 100,000 pods: {NOT_MEASURED}."
    )
    if kinds:
        said += (
            " With a job of every training kind and a queued one in the namespace, "
            f"{kinds['median_seconds']} s at {doctor['pods']:,} pods ({kinds['ratio_vs_floor']}x "
            "the decode floor)."
        )
    return said


def _imports(document: dict[str, Any]) -> str:
    doctor, lint = document.get("doctor", {}), document.get("lint", {})
    if "import_ms" not in doctor:
        return f"doctor's imports: {NOT_MEASURED}."
    return (
        f"doctor's imports take {doctor['import_ms']} ms here (`python -X importtime`, "
        f"cumulative; {doctor['import_ms_calibrated']} ms calibrated to the reference machine), "
        f"lint's {_or_unmeasured(lint.get('import_ms'))} ms."
    )


def _refresh(document: dict[str, Any]) -> str:
    refresh = document.get("refresh", {})
    if "tick_seconds" not in refresh:
        return f"A refresh tick: {NOT_MEASURED}."
    return (
        f"A refresh tick over {refresh['deployments']} Deployments ({refresh['distinct_refs']} "
        f"distinct images, {refresh['latency_ms']} ms per registry request) takes "
        f"{refresh['tick_seconds']['median']} s against {refresh['sequential_seconds']['median']} "
        f"s for one-by-one look-ups ({refresh['speedup_vs_sequential']}x; "
        f"{refresh['ratio_vs_floor']}x its floor), with {refresh['registry_requests']} registry "
        f"requests and {refresh['cluster_writes_steady']} cluster writes when nothing moved."
    )


def _lint(document: dict[str, Any]) -> str:
    lint = document.get("lint", {})
    if "truegreen" not in lint:
        return f"`truegreen lint`: {NOT_MEASURED}."
    problems = [case for case in lint["cases"] if case["problem"]]
    caught = {
        tool: sum(case[f"{tool}_right"] for case in problems) for tool in ("truegreen", "checkov")
    }
    compose = (
        f", {lint['ratio_vs_compose_floor']}x libyaml's parse alone"
        if "ratio_vs_compose_floor" in lint
        else ""
    )
    return (
        f"`truegreen lint` reads {lint['files']:,} files in {lint['truegreen']['seconds']['median']} s "
        f"against Checkov's {lint['checkov']['seconds']['median']} s "
        f"({lint['speedup_vs_checkov']}x; {lint['ratio_vs_parse_floor']}x PyYAML's safe load of "
        f"the same files{compose}), and catches {caught['truegreen']} of the {len(problems)} "
        f"labelled probe incidents, where Checkov's probe checks name {caught['checkov']}."
    )


def _compression(document: dict[str, Any]) -> str:
    compression = document.get("compression", {})
    slow = next((link for link in compression.get("links", {}) if link != "full speed"), None)
    if slow is None:
        return f"Compressed lists: {NOT_MEASURED}."
    row = compression["links"][slow]
    return (
        f"Over a {slow} link, doctor asks for its list pages gzip-encoded (as kubectl does) and "
        f"reads {compression['pods']:,} pods in {row['gzip']['seconds']['median']} s against "
        f"{row['plain']['seconds']['median']} s plain; it does not ask where bytes move for free "
        '(`docs/performance.md`, "Compressed lists").'
    )


def performance_block(document: dict[str, Any]) -> str:
    """The README's figures, from latest.json's `document`, between the markers."""
    calibration = _get(document, "machine", "calibration", "sum_range_1e7_seconds")
    reference = _get(document, "machine", "calibration", "reference_seconds")
    lines = [
        BEGIN,
        f"Runs per part, interleaved after a warm-up: {_runs(document)}.",
        "",
        *_doctor_table(document),
        "",
        f"(The shared machine ran `sum(range(10**7))` in {_or_unmeasured(calibration)} s for "
        f"these figures, against {_or_unmeasured(reference)} s on the reference: compare the "
        f"ratios.) {_small_and_large(document)} {_imports(document)}",
        _refresh(document),
        _lint(document),
        _compression(document),
        END,
    ]
    return "\n".join(lines)


def quoted_block(readme: str, begin: str = BEGIN, end: str = END) -> str:
    """The block of `readme` between the markers, markers included ("" when it has none)."""
    if begin not in readme or end not in readme:
        return ""
    start = readme.index(begin)
    return readme[start : readme.index(end, start) + len(end)]


def write_block(path: Path, block: str, begin: str = BEGIN, end: str = END) -> None:
    """Replace the block between `begin` and `end` in the file at `path` with `block`."""
    text = path.read_text()
    old = quoted_block(text, begin, end)
    if not old:
        raise SystemExit(f"bench: {path} has no block between {begin} and {end}")
    path.write_text(text.replace(old, block))


def write_readme(path: Path, document: dict[str, Any]) -> None:
    """Replace the README's block with the one written from `document`."""
    write_block(path, performance_block(document))
