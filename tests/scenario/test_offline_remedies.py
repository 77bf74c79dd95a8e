"""Offline, doctor's remedies speak of the snapshot: a cluster that could not be read when the
snapshot was taken is fixed by taking a new one, not by an address no one can change now."""

import shutil
from pathlib import Path

from tests.support.cli import run_cli

EXAMPLE = Path(__file__).parents[2] / "examples" / "snapshots" / "healthy"
UNREACHABLE_READ = """read:
  verb: get
  resource: apis
  namespace: null
  name: ''
result:
  cant_read:
    failure: unreachable
    reason: 'get apis: could not connect (connection refused)'
    reached: false
"""


def test_a_snapshot_of_a_cluster_that_could_not_be_reached_says_take_a_new_one(
    tmp_path: Path,
) -> None:
    """Such a snapshot was written before truegreen refused to save one (the first read,
    discovery, failed to connect): doctor reads it as the live run would have."""
    folder = tmp_path / "snapshot"
    shutil.copytree(EXAMPLE, folder)
    for read in (folder / "reads").iterdir():
        read.unlink()
    (folder / "reads" / "001-get-apis.yaml").write_text(UNREACHABLE_READ)
    report = run_cli("doctor", "--snapshot", str(folder), "-o", "json")
    assert report.exit_code == 3
    headline = report.json()["headline"]
    assert (headline["rule"], headline["code"]) == ("nothing-read", "cluster-unreachable")
    assert headline["text"] == (
        "Couldn't reach the cluster at https://training-cluster.example:6443: connection refused."
    )
    assert headline["remedy"] == (
        "The snapshot holds no answer from the cluster: take a new one with "
        "`truegreen snapshot -n train` where the cluster answers (`kubectl cluster-info` "
        "shows whether it does), and check that one."
    )
    assert "address" not in headline["remedy"]


def test_the_coverage_line_says_how_to_ask_for_the_credentials_check(tmp_path: Path) -> None:
    """Without --credentials-secret the backend login is not checked: the line says so, and how
    to have it checked."""
    folder = tmp_path / "snapshot"
    shutil.copytree(EXAMPLE, folder)
    meta = folder / "snapshot.yaml"
    taken_with = "settings:\n  credentials_secret: backend-credentials:username,password\n"
    assert taken_with in meta.read_text(), "precondition: the example names the login"
    # As a snapshot taken before snapshots held registry answers (the example, taken with
    # --no-registry, holds none), so that the line says both ways of asking.
    meta.write_text(meta.read_text().replace(taken_with, "").replace("  no_registry: 'true'\n", ""))
    report = run_cli("doctor", "--snapshot", str(folder))
    lines = report.stdout.splitlines()
    assert lines[-1].endswith(
        "Not asked for: credentials (name the backend login with `--credentials-secret "
        "NAME:KEY1,KEY2` to check it); image-pull (whether the images are in their registry: "
        "the snapshot holds no registry answers)."
    ), lines[-1]
