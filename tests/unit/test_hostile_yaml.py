"""Every YAML truegreen reads goes through the bounded loader: snapshots and config files too."""

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.support.cli import run_cli
from truegreen.yamlsafe import Problem, Refusal, load_all

ROOT = Path(__file__).resolve().parents[2]
HEALTHY = ROOT / "examples" / "snapshots" / "healthy"
PODS = "007-list-pods.yaml"
LAUGHS = "\n".join(
    ['l0: &l0 "lol"'] + [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, 10)]
)
BOMB = LAUGHS + "\nread: *l9\nresult: *l9\n"


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _bomb(path: Path) -> None:
    path.write_text(BOMB)


def _pods_as_yaml() -> str:
    """The pods read as block YAML, as older snapshots hold their reads (still read)."""
    return yaml.safe_dump(json.loads((HEALTHY / "reads" / PODS).read_text()), sort_keys=False)


def _pod_named_by_a_bomb(path: Path) -> None:
    """A well-formed pods read whose first pod's name is 9**9 "lol"s once expanded."""
    text = _pods_as_yaml()
    assert "      name: jobs-manager-abc12\n" in text
    path.write_text(LAUGHS + "\n" + text.replace("name: jobs-manager-abc12", "name: *l9", 1))


def _duplicate(path: Path) -> None:
    """The pods read twice in one file: last-wins would silently keep the second."""
    text = _pods_as_yaml()
    path.write_text(text + "result: {items: []}\n")


def _json_cut_short(path: Path) -> None:
    """The pods read as truegreen writes it now (JSON), its last bytes lost."""
    text = (HEALTHY / "reads" / PODS).read_text()
    path.write_text(text[: len(text) // 2])


def _json_duplicate(path: Path) -> None:
    """The pods read as JSON, with a second result that last-wins would keep."""
    text = json.dumps(json.loads((HEALTHY / "reads" / PODS).read_text()))
    path.write_text(text[:-1] + ', "result": {"items": []}}')


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "damage",
    [_fifo, _zero, _pod_named_by_a_bomb, _duplicate, _json_cut_short, _json_duplicate],
    ids=lambda f: f.__name__,
)
def test_a_hostile_read_in_a_snapshot_is_a_read_not_captured(
    tmp_path: Path, damage: Callable[[Path], None]
) -> None:
    snapshot = tmp_path / "snap"
    shutil.copytree(HEALTHY, snapshot)
    assert run_cli("doctor", "--snapshot", str(snapshot), "-o", "json").exit_code == 0
    (snapshot / "reads" / PODS).unlink()
    damage(snapshot / "reads" / PODS)
    result = run_cli("doctor", "--snapshot", str(snapshot), "-o", "json")
    report = result.json()
    assert (result.exit_code, report["verdict"]) == (3, "unknown")
    assert "list pods" in result.stdout  # the read that was not captured is named
    assert "Traceback" not in result.stderr


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (_fifo, "cannot be read: it is a pipe, not a regular file"),
        (_zero, "cannot be read: it is a device, not a regular file"),
        (_bomb, "is not valid YAML: document contains excessive aliasing"),
    ],
    ids=["fifo", "zero", "bomb"],
)
def test_a_hostile_snapshot_yaml_is_one_line_of_bad_usage(
    tmp_path: Path, damage: Callable[[Path], None], message: str
) -> None:
    snapshot = tmp_path / "snap"
    shutil.copytree(HEALTHY, snapshot)
    meta = snapshot / "snapshot.yaml"
    meta.unlink()
    damage(meta)
    result = run_cli("doctor", "--snapshot", str(snapshot))
    assert (result.exit_code, result.stdout) == (64, "")
    assert result.stderr == f"truegreen: snapshot {meta} {message}. fix or re-take it\n"


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    ("damage", "doctor_says", "lint_says"),
    [
        (
            _fifo,
            "cannot read config {}: it is a pipe, not a regular file",
            "cannot read lint config {}: it is a pipe, not a regular file",
        ),
        (
            _bomb,
            "config {} is not valid YAML at line 4: document contains excessive aliasing",
            "lint config {} is not valid YAML at line 4: document contains excessive aliasing",
        ),
        (
            lambda path: path.write_text("ignore: []\nignore: [{rules: ['*']}]\n"),
            'config {} is not valid YAML at line 2: key "ignore" already set in map',
            'lint config {} is not valid YAML at line 2: key "ignore" already set in map',
        ),
    ],
    ids=["fifo", "bomb", "duplicate"],
)
def test_hostile_config_files_are_one_line_of_bad_usage(
    tmp_path: Path, damage: Callable[[Path], None], doctor_says: str, lint_says: str
) -> None:
    config = tmp_path / "config.yaml"
    damage(config)
    doctor = run_cli("doctor", "--snapshot", str(HEALTHY), "--config", str(config))
    assert (doctor.exit_code, doctor.stderr) == (64, f"truegreen: {doctor_says.format(config)}\n")
    lint = run_cli("lint", str(ROOT / "examples" / "manifests"), "--config", str(config))
    assert (lint.exit_code, lint.stderr) == (64, f"truegreen: {lint_says.format(config)}\n")


@pytest.mark.parametrize(
    "text",
    ["0x" + "f" * 4000, "0" + "7" * 5000, "0b" + "1" * 15000, "1" + "0" * 5000],
)
def test_an_integer_too_long_to_write_as_text_is_refused_not_a_crash(text: str) -> None:
    """PyYAML builds `0x` + 4,000 digits as a Python int that Python then cannot write in
    decimal (sys.get_int_max_str_digits: 4,300 digits), so any message quoting it would crash:
    it is refused as the same number written in decimal is."""
    (refused,) = load_all(f"a: 1\nb: {text}\n")
    assert refused == Refusal(Problem.SYNTAX, f"cannot decode !!str `{text[:40]}...` as a !!int", 2)


@pytest.mark.timeout(20)
def test_a_job_file_with_an_integer_too_long_to_write_is_one_line_of_bad_usage(
    tmp_path: Path,
) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n"
        f"  parallelism: 0x{'f' * 4000}\n"
        "  template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}\n"
    )
    result = run_cli("doctor", "--snapshot", str(HEALTHY), "--job-file", str(job))
    assert (result.exit_code, result.stdout) == (64, "")
    assert result.stderr == (
        f"truegreen: the job file {job} is not valid YAML at line 5: cannot decode !!str "
        f"`0x{'f' * 38}...` as a !!int\n"
    )
