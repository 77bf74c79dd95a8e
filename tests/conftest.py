"""Shared fixtures: a fake Kubernetes API server over real HTTP, and a kubeconfig for it."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_apiserver import FakeApiServer


@pytest.fixture
def fake_api() -> Iterator[FakeApiServer]:
    """A started, empty fake API server; stopped after the test."""
    with FakeApiServer() as server:
        yield server


@pytest.fixture
def kubeconfig(fake_api: FakeApiServer, tmp_path: Path) -> Path:
    """A kubeconfig whose current context points at `fake_api`, namespace `train`."""
    return fake_api.write_kubeconfig(tmp_path / "kubeconfig", namespace="train")
