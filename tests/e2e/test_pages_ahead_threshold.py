"""A list's next page is asked ahead only when the server took its time over the page before
(live.ASK_AHEAD_AFTER): a real API server spends tens of milliseconds a page, which asking
ahead hides; a server that answers at once leaves nothing to hide."""

import time
from pathlib import Path

import pytest

from tests.e2e.test_pages_ahead import PODS_PATH, _connect, _Names, _pods, _wait_for
from tests.support.fake_apiserver import FakeApiServer, Fault
from truegreen.cluster import Kind
from truegreen.cluster.live import ASK_AHEAD_AFTER
from truegreen.cluster.reads import Folded


@pytest.fixture(autouse=True)
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages of two pods, so a handful of pods make a list of several pages."""
    from truegreen.cluster import live

    monkeypatch.setattr(live, "PAGE_SIZE", 2)


def _requests_seen_per_pod(
    fake_api: FakeApiServer, kubeconfig: Path, linger: float = 0.0
) -> dict[str, int]:
    """How many page requests the server had seen when each pod was folded; the fold of a
    page's first pod waits (boundedly) for the next page's request, and the fold of page 1's
    last pod lingers `linger` seconds (long enough for a page asked ahead to be all in)."""
    names = _pods(fake_api, "train", 5)  # pages p0 p1 | p2 p3 | p4
    seen: dict[str, int] = {}

    def on_add(name: str) -> None:
        if name in ("p0", "p2"):
            before = {"p0": 1, "p2": 2}[name]
            _wait_for(lambda: len(fake_api.requests("GET", PODS_PATH)) > before)
        if name == "p1":
            time.sleep(linger)
        seen[name] = len(fake_api.requests("GET", PODS_PATH))

    with _connect(kubeconfig) as cluster:
        read = cluster.fold(Kind.POD, _Names(on_add), namespace=None)
    assert read == Folded({"names": names})
    return seen


def test_pages_a_server_takes_its_time_over_have_the_next_one_asked_ahead(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    delay = 3 * ASK_AHEAD_AFTER
    fake_api.inject(Fault.DELAY, PODS_PATH, delay=delay)
    # Page 2 is all in before it is taken: the wait left is nothing, its request took `delay`.
    assert _requests_seen_per_pod(fake_api, kubeconfig, linger=3 * delay) == {
        "p0": 2,
        "p1": 2,
        "p2": 3,
        "p3": 3,
        "p4": 3,
    }, "a slow server's next page was not asked for while the page before it was folded"


def test_pages_a_server_answers_at_once_are_followed_one_after_another(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    assert ASK_AHEAD_AFTER > 0.005  # the fake answers a page of two pods in about a millisecond
    assert _requests_seen_per_pod(fake_api, kubeconfig) == {
        "p0": 1,
        "p1": 1,
        "p2": 2,
        "p3": 2,
        "p4": 3,
    }, "a page was asked ahead though the server answered at once"
