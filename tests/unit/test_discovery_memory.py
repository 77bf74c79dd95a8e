"""cluster/discovery_memory.py: what a server served, kept between runs; never trusted beyond
its age, its size or its shape, and never a cause of failure."""

from pathlib import Path

import pytest

from truegreen.cluster.discovery_memory import (
    KEPT_SECONDS,
    MAX_BYTES,
    DiscoveryMemory,
    RecalledDiscovery,
    memory_folder,
    memory_name,
)

SERVER = "https://admin:hunter2-pw@10.0.0.1:6443"
SERVED = {"kubeflow.org": ("v1", "v2beta1"), "kueue.x-k8s.io": ("v1beta1",)}
T0 = 1_800_000_000.0


def _memory(folder: Path, at: float = T0) -> DiscoveryMemory:
    return DiscoveryMemory(folder, SERVER, clock=lambda: at)


def _file(folder: Path) -> Path:
    (found,) = folder.iterdir()
    return found


def test_what_is_kept_is_recalled(tmp_path: Path) -> None:
    _memory(tmp_path).keep(SERVED, 0.0421)
    assert _memory(tmp_path, T0 + 60).recall() == RecalledDiscovery(SERVED, 0.0421)


def test_the_login_in_an_address_is_never_written(tmp_path: Path) -> None:
    """The file is named as kubectl names its discovery cache (the address, each character but
    letters, digits, `.` and `-` made `_`), less the login the address carries."""
    _memory(tmp_path).keep(SERVED, 0.01)
    kept = _file(tmp_path)
    assert kept.name == "https_10.0.0.1_6443.json"
    for secret in ("hunter2", "admin"):
        assert secret not in kept.read_text()


@pytest.mark.parametrize(
    ("server", "name"),
    [
        (
            "https://API.Example.com/k8s/clusters/c-1?x=1#f",
            "https_api.example.com__k8s_clusters_c-1.json",
        ),
        ("https://[fd00::1]:443", "https_fd00__1_443.json"),
        ("http://127.0.0.1:8080/", "http_127.0.0.1_8080_.json"),
        ("https://[::1", None),
        ("10.0.0.1:6443", None),
        ("", None),
    ],
)
def test_the_file_name_is_the_address_made_safe(server: str, name: str | None) -> None:
    assert memory_name(server) == name


def test_a_long_address_is_cut_to_a_name_the_file_system_takes(tmp_path: Path) -> None:
    server = "https://api.example.com/" + "p" * 400
    name = memory_name(server)
    assert name is not None
    assert len(name) == 200 + len(".json")
    DiscoveryMemory(tmp_path, server, clock=lambda: T0).keep(SERVED, 0.01)
    assert _file(tmp_path).name == name


def test_an_address_that_is_no_url_is_not_remembered(tmp_path: Path) -> None:
    memory = DiscoveryMemory(tmp_path, "https://[::1", clock=lambda: T0)
    memory.keep(SERVED, 0.01)
    assert memory.recall() is None
    assert list(tmp_path.iterdir()) == []


def test_another_server_recalls_nothing(tmp_path: Path) -> None:
    _memory(tmp_path).keep(SERVED, 0.01)
    other = DiscoveryMemory(tmp_path, "https://10.0.0.2:6443", clock=lambda: T0)
    assert other.recall() is None


@pytest.mark.parametrize(
    ("age", "recalled"),
    [(KEPT_SECONDS, True), (KEPT_SECONDS + 1, False), (-1, False)],
    ids=["six-hours", "older", "from-the-future"],
)
def test_a_memory_is_trusted_for_six_hours(tmp_path: Path, age: float, recalled: bool) -> None:
    """As kubectl's discovery cache (cli-runtime config_flags.go: 6*time.Hour); a memory
    saved later than now (a clock set back) is not trusted."""
    assert KEPT_SECONDS == 6 * 3600
    _memory(tmp_path).keep(SERVED, 0.01)
    assert (_memory(tmp_path, T0 + age).recall() is not None) is recalled


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{not json",
        b'{"saved": "yesterday", "seconds": 0.1, "served": {}}',
        b'{"saved": 1800000000.0, "seconds": -1, "served": {}}',
        b'{"saved": 1800000000.0, "seconds": 0.1, "served": {"g": "v1"}}',
        b" " * (MAX_BYTES + 1),
    ],
    ids=["empty", "not-json", "wrong-type", "negative-seconds", "versions-not-a-list", "too-big"],
)
def test_a_memory_not_well_formed_is_not_used(tmp_path: Path, content: bytes) -> None:
    _memory(tmp_path).keep(SERVED, 0.01)
    _file(tmp_path).write_bytes(content)
    assert _memory(tmp_path).recall() is None


def test_a_folder_that_cannot_be_written_is_left_alone(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the folder would be")
    _memory(blocked / "discovery").keep(SERVED, 0.01)  # raises nothing
    assert blocked.read_text() == "a file where the folder would be"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-a-folder"]


def test_the_same_answer_is_not_written_again_until_half_its_life(tmp_path: Path) -> None:
    _memory(tmp_path).keep(SERVED, 0.01)
    written = _file(tmp_path).read_bytes()
    again = _memory(tmp_path, T0 + KEPT_SECONDS / 2 - 1)
    assert again.recall() is not None
    again.keep(SERVED, 0.5)
    assert _file(tmp_path).read_bytes() == written
    later = _memory(tmp_path, T0 + KEPT_SECONDS / 2)
    assert later.recall() is not None
    later.keep(SERVED, 0.5)
    assert later.recall() == RecalledDiscovery(SERVED, 0.5)


def test_a_changed_answer_is_written_at_once(tmp_path: Path) -> None:
    first = _memory(tmp_path)
    first.keep(SERVED, 0.01)
    assert first.recall() is not None
    first.keep({"ray.io": ("v1",)}, 0.01)
    assert _memory(tmp_path).recall() == RecalledDiscovery({"ray.io": ("v1",)}, 0.01)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []


def test_where_memories_are_kept() -> None:
    """XDG_CACHE_HOME when absolute (the XDG Base Directory specification ignores a relative
    one), else ~/.cache; nowhere without either."""
    assert memory_folder({"XDG_CACHE_HOME": "/c", "HOME": "/h"}) == Path("/c/truegreen/discovery")
    assert memory_folder({"XDG_CACHE_HOME": "c", "HOME": "/h"}) == Path(
        "/h/.cache/truegreen/discovery"
    )
    assert memory_folder({"HOME": "/h"}) == Path("/h/.cache/truegreen/discovery")
    assert memory_folder({"HOME": "h"}) is None
    assert memory_folder({}) is None
