"""Bad input of every kind: one clear line, the right exit code, no traceback, nothing written.

Hypothesis feeds damaged kubeconfigs, snapshot folders and flag values through the real CLI.
"""

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.cli import run_cli
from tests.support.refresh_kit import container, deployment
from truegreen.images import ImageReferenceError, parse_image

FUZZ = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=12))
NESTED = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
KUBECONFIG_KEYS = st.sampled_from(
    ["clusters", "users", "contexts", "current-context", "apiVersion", "kind"]
)
KUBECONFIGS = st.one_of(
    st.text(max_size=200),
    st.dictionaries(KUBECONFIG_KEYS, NESTED, max_size=6).map(yaml.safe_dump),
)


def _one_clear_line(stderr: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("truegreen: ")
    assert "Traceback" not in stderr
    assert "internal error" not in stderr, stderr


@FUZZ
@given(KUBECONFIGS)
def test_damaged_kubeconfig(tmp_path: Path, text: str) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(text)
    result = run_cli("doctor", "--kubeconfig", str(path), "--request-timeout", "0.5", "-o", "json")
    if result.exit_code in (0, 2, 3) and result.stdout.startswith("{"):
        return  # a usable kubeconfig (pointing nowhere): doctor answered in full
    assert result.exit_code == 3, (result.exit_code, result.stderr)
    _one_clear_line(result.stderr)


SNAPSHOT_META = st.one_of(
    st.text(max_size=100),
    st.fixed_dictionaries(
        {
            "truegreen_snapshot": st.sampled_from([1, 2, "1"]),
            "namespace": SCALARS,
            "taken_at": SCALARS,
        },
        optional={"settings": NESTED},
    ).map(yaml.safe_dump),
)
READ_FILES = st.lists(
    st.one_of(
        st.text(max_size=100),
        st.fixed_dictionaries({"read": NESTED, "result": NESTED}).map(yaml.safe_dump),
        st.just("read: {verb: list, resource: nodes, namespace: null}\nresult: {items: [1, 2]}\n"),
    ),
    max_size=4,
)


@FUZZ
@given(SNAPSHOT_META, READ_FILES)
def test_damaged_snapshot(tmp_path: Path, meta: str, reads: list[str]) -> None:
    directory = tmp_path / "snap"
    (directory / "reads").mkdir(parents=True, exist_ok=True)
    for old in (directory / "reads").iterdir():
        old.unlink()
    (directory / "snapshot.yaml").write_text(meta)
    for number, text in enumerate(reads):
        (directory / "reads" / f"{number:03d}-x.yaml").write_text(text)
    result = run_cli("doctor", "--snapshot", str(directory), "-o", "json")
    if result.exit_code == 64:
        _one_clear_line(result.stderr)
        return
    # a readable snapshot: whatever it lacks or garbles is unknown, never ok by default
    report = result.json()
    assert result.exit_code in (2, 3), report["verdict"]
    assert report["verdict"] != "ready"


@FUZZ
@given(st.text(max_size=40))
def test_any_job_requests_value(tmp_path: Path, value: str) -> None:
    result = run_cli("doctor", "--snapshot", str(tmp_path / "none"), "--job-requests", value)
    assert result.exit_code == 64
    _one_clear_line(result.stderr)


def _unparseable(text: str) -> bool:
    try:
        parse_image(text)
    except ImageReferenceError:
        return True
    return False


@FUZZ
@given(st.text(max_size=60).filter(_unparseable))
def test_any_broken_image_reference_in_a_refreshed_workload(tmp_path: Path, image: str) -> None:
    """A Deployment naming an image that is not a reference: that container is reported as
    invalid with the reference named, nothing is restarted, and the report is whole."""
    from tests.support.fake_apiserver import FakeApiServer

    fuzzed = deployment("fuzzed", container("runner", image), pull_secret=None)
    with FakeApiServer() as server:
        server.add(fuzzed)
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", namespace="train")
        result = run_cli("refresh", "--kubeconfig", str(kubeconfig), "-o", "json")
        assert "Traceback" not in result.stderr
        (workload,) = result.json()["workloads"]
        (reported,) = workload["containers"]
        assert reported["decision"] == "invalid-image", reported
        assert reported["image"] == image
        assert server.requests("PATCH") == []
        assert (workload["outcome"], result.exit_code) == ("invalid-image", 2)
        assert workload["reason"] == f"runner: {reported['reason']}"
        # The kubelet's words, which name the reference as Go's %q does.
        with pytest.raises(ImageReferenceError) as refused:
            parse_image(image)
        assert str(refused.value) in reported["reason"]


INCIDENT = Path(__file__).resolve().parents[2] / "examples" / "manifests" / "incident.yaml"
MANIFEST_BYTES = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200).map(lambda text: text.encode("utf-8", "surrogatepass")),
    st.integers(0, 600).map(lambda n: INCIDENT.read_bytes()[:n] + b"\xff\xfe"),
)


@FUZZ
@given(st.lists(MANIFEST_BYTES, min_size=1, max_size=4))
def test_any_bytes_beside_a_manifest_leave_it_linted(tmp_path: Path, files: list[bytes]) -> None:
    """Whatever the other files hold, each is at most its own findings and the incident is
    still found, exit 2, no traceback."""
    folder = tmp_path / "manifests"
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    for number, data in enumerate(files):
        (folder / f"{number}.yaml").write_bytes(data)
    (folder / "z-incident.yaml").write_bytes(INCIDENT.read_bytes())
    result = run_cli("lint", str(folder), "-o", "json")
    assert "Traceback" not in result.stderr
    findings = result.json()["findings"]
    incident = [f["rule"] for f in findings if f["file"].endswith("z-incident.yaml")]
    assert incident == ["readiness-missing", "restart-probe-on-keep-running"]
    assert {Path(f["file"]).name for f in findings} <= {p.name for p in folder.iterdir()}
    assert result.exit_code == 2


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("bad name!=4", "'bad name!' is not a resource a container can ask for: name part"),
        ("gpu=1", "'gpu' is not a resource a container can ask for: must be a standard resource"),
        ("nvidia.com/gpu=500m", "'nvidia.com/gpu=500m': the amount must be an integer"),
    ],
)
def test_job_requests_the_api_server_would_refuse_are_bad_usage(value: str, why: str) -> None:
    """A request no container may make is exit 64, before any verdict (before: `bad name!=4`
    was a resource no machine has, exit 2; `nvidia.com/gpu=500m` was rounded up to one GPU)."""
    healthy = Path(__file__).resolve().parents[2] / "examples" / "snapshots" / "healthy"
    assert run_cli("doctor", "--snapshot", str(healthy)).exit_code == 0
    result = run_cli("doctor", "--snapshot", str(healthy), "--job-requests", value)
    assert result.exit_code == 64, result.stdout
    assert result.stderr.startswith(f"truegreen: --job-requests is not valid: {why}"), result.stderr
    _one_clear_line(result.stderr)
