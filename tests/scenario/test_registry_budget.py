"""Registry look-ups have a budget of their own: a registry that accepts and never answers
costs the namespaces that ask it their image-pull check, never the other namespaces' reads.

Issue 44 item 4: twelve namespaces whose training image is on a registry that accepts the
connection and never answers, and six whose images are elsewhere, `doctor -A
--request-timeout 1`: the six were "could not check ... the cluster did not answer in time",
because the waits on the registry were charged to the cluster's run limit. Every server here
is on loopback (tests/support/hostile.py).
"""

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.scenario.conftest import CREDENTIALS
from tests.support.cli import CliResult, run_cli
from tests.support.fake_apiserver import FakeApiServer
from tests.support.hostile import HostileServer, silent
from tests.support.scenarios import NAMESPACE, REGISTRY, docker_config, healthy
from truegreen.refresh.registry import LOOKUPS_IN_FLIGHT

Obj = dict[str, Any]

SLOW = [f"slow-{i:02d}" for i in range(12)]
CLEAN = [f"zz-clean-{i}" for i in range(6)]
"""Checked after the slow ones (namespaces are checked in order): the registry's waits, if
charged to the cluster, are spent by then."""
IMAGES = 64
"""Images of each slow namespace's job that no machine holds: eight waves of look-ups, the
most doctor asks about in a run."""


def _namespace(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def _in(objects: list[Obj], namespace: str, registry: str) -> list[Obj]:
    """The namespaced objects of `objects` moved to `namespace`, their images on `registry`."""
    text = json.dumps([o for o in objects if o["metadata"].get("namespace") == NAMESPACE])
    moved: list[Obj] = json.loads(text.replace(REGISTRY, registry))
    # The pull login covers the registry, as the kubelet would find it (its data is encoded).
    moved = [o for o in moved if o["metadata"]["name"] != "regcred"] + [docker_config(registry)]
    for obj in moved:
        obj["metadata"]["namespace"] = namespace
    return moved


@pytest.fixture
def stalled_registry() -> Iterator[HostileServer]:
    with HostileServer(silent) as server:
        yield server


@pytest.fixture
def mixed_fleet(fake_api: FakeApiServer, stalled_registry: HostileServer) -> FakeApiServer:
    """Twelve namespaces whose finished job's image (no machine holds it: the kubelet has not
    measured it) is on the stalled registry; six whose images are only ones their pods run."""
    now = datetime.now(UTC)
    objects = healthy(now)
    fake_api.add(*[o for o in objects if "namespace" not in o["metadata"]])
    for name in SLOW:
        moved = _in(objects, name, f"127.0.0.1:{stalled_registry.port}")
        job = next(o for o in moved if o["kind"] == "Job")
        spec = job["spec"]["template"]["spec"]
        first = spec["containers"][0]
        # One container per image; the first keeps the job's request, the others ask little.
        spec["containers"] = [first] + [
            {
                **first,
                "name": f"part-{k}",
                "image": first["image"].replace("/trainer:", f"/trainer-{k}:"),
                "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
            }
            for k in range(1, IMAGES)
        ]
        fake_api.add(_namespace(name), *moved)
    for name in CLEAN:
        clean = [o for o in _in(objects, name, REGISTRY) if o["kind"] != "Job"]
        fake_api.add(_namespace(name), *clean)
    return fake_api


def _doctor(kubeconfig: Path, registry: HostileServer, *args: str) -> CliResult:
    return run_cli(
        "doctor",
        "--kubeconfig",
        str(kubeconfig),
        "--request-timeout",
        "1",
        "--registry-allow",
        f"127.0.0.1:{registry.port}",
        *CREDENTIALS,
        *args,
    )


def test_a_stalled_registry_costs_the_clean_namespaces_nothing(
    mixed_fleet: FakeApiServer, kubeconfig: Path, stalled_registry: HostileServer
) -> None:
    result = _doctor(kubeconfig, stalled_registry, "-A", "-o", "json")
    document = result.json()
    by_namespace = {n["namespace"]: n["report"] for n in document["namespaces"]}
    assert set(by_namespace) == {*SLOW, *CLEAN}, result.stdout
    # The stalled registry was asked, never answered, and was not asked again once a look-up
    # had timed out: the first wave of look-ups alone went out (12 x 64 were wanted).
    assert 1 <= stalled_registry.counts["requests"] <= LOOKUPS_IN_FLIGHT, stalled_registry.counts
    for name in CLEAN:
        assert by_namespace[name]["verdict"] == "ready", (name, by_namespace[name])
    registry = f"127.0.0.1:{stalled_registry.port}"
    for name in SLOW:
        headline = by_namespace[name]["headline"]
        assert headline["code"] == "image-pull.image-unchecked", (name, headline)
        assert headline["text"].endswith(f"{registry} did not answer in time."), headline
    assert document["exit_code"] == 3
