"""The monitor's running capacity sums equal doctor's fold over the same pods, whatever the
order of arrivals, changes and departures."""

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from truegreen.doctor.knowledge.usage import CapacityTally, PodView
from truegreen.monitor.tally import RunningCapacity

NAMESPACE = "train"
_decode = msgspec.json.Decoder(PodView).decode


def _pod(
    name: str,
    namespace: str,
    machine: str | None,
    cpu: str,
    gpu: int,
    phase: str,
    priority: int | None = None,
    nominated: str | None = None,
    rules: str | None = None,
) -> PodView:
    requests: dict[str, Any] = {"cpu": cpu}
    if gpu:
        requests["nvidia.com/gpu"] = str(gpu)
    container: dict[str, Any] = {"name": "c", "resources": {"requests": requests}}
    spec: dict[str, Any] = {}
    if rules == "port":
        container["ports"] = [{"containerPort": 9100, "hostPort": 9100}]
    elif rules == "anti":
        term = {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "h"}
        spec["affinity"] = {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        }
    obj = {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            **({"nodeName": machine} if machine else {}),
            **({"priority": priority} if priority is not None else {}),
            "containers": [container],
            **spec,
        },
        "status": {"phase": phase, **({"nominatedNodeName": nominated} if nominated else {})},
    }
    return _decode(msgspec.json.encode(obj))


pods = st.builds(
    _pod,
    name=st.sampled_from(["a", "b", "c", "d", "e"]),
    namespace=st.sampled_from([NAMESPACE, "other"]),
    machine=st.sampled_from([None, "m1", "m2"]),
    cpu=st.sampled_from(["100m", "1", "2", "not-a-quantity"]),
    gpu=st.sampled_from([0, 0, 1]),
    phase=st.sampled_from(["Running", "Pending", "Succeeded", "Failed"]),
    # Pods of several priorities, and pods not bound yet that the scheduler nominated.
    priority=st.sampled_from([None, 0, -5, 1000]),
    nominated=st.sampled_from([None, None, "m1", "m3"]),
    # Pods that hold a host port or carry required anti-affinity: kept for the filters.
    rules=st.sampled_from([None, None, "port", "anti"]),
)
steps = st.lists(st.tuples(st.booleans(), pods), max_size=40)


def _folded(current: dict[tuple[str, str], PodView], namespace: str = NAMESPACE) -> dict[str, Any]:
    tally = CapacityTally(namespace)
    for _, pod in sorted(current.items()):
        tally.add(pod)
    return tally.summary()


@settings(max_examples=150, deadline=None)
@given(first=st.lists(pods, max_size=6), changes=steps)
def test_running_sums_equal_a_fresh_fold(first: list[PodView], changes: list[Any]) -> None:
    running = RunningCapacity(NAMESPACE)
    current = {(p.metadata.namespace or "", p.metadata.name or ""): p for p in first}
    running.replace(list(current.items()))
    assert running.summary() == _folded(current)
    for deleted, pod in changes:
        key = (pod.metadata.namespace or "", pod.metadata.name or "")
        if deleted:
            current.pop(key, None)
            running.put(key, None)
        else:
            current[key] = pod
            running.put(key, pod)
        assert running.summary() == _folded(current)


@settings(max_examples=100, deadline=None)
@given(first=st.lists(pods, max_size=8), changes=steps)
def test_one_running_tally_for_many_namespaces_equals_the_fleet_s_fold(
    first: list[PodView], changes: list[Any]
) -> None:
    """A fleet's monitor keeps one tally of the cluster's pods for all its namespaces: it sums
    as doctor's fold shared by the same namespaces (CapacityTally(namespace, also)); kept for
    every namespace, it holds every pod whole."""
    shared = RunningCapacity(frozenset({NAMESPACE, "other"}))
    every = RunningCapacity(None)
    current = {(p.metadata.namespace or "", p.metadata.name or ""): p for p in first}
    for tally in (shared, every):
        tally.replace(list(current.items()))
    for deleted, pod in changes:
        key = (pod.metadata.namespace or "", pod.metadata.name or "")
        if deleted:
            current.pop(key, None)
        else:
            current[key] = pod
        for tally in (shared, every):
            tally.put(key, None if deleted else pod)
    fold = CapacityTally(NAMESPACE, ("other",))
    for _, pod in sorted(current.items()):
        fold.add(pod)
    assert shared.summary() == fold.summary()
    assert every.summary() == fold.summary(), "every namespace here is one of the two"


def test_a_machine_whose_last_pod_left_is_gone_from_the_sums() -> None:
    running = RunningCapacity(NAMESPACE)
    gpu = _pod("a", "other", "m1", "1", 1, "Running")
    cpu = _pod("b", "other", "m1", "2", 0, "Running")
    running.replace([(("other", "a"), gpu), (("other", "b"), cpu)])
    assert running.summary()["machines"] == {
        "m1": {"pods": 2, "requested": {"cpu": 3000, "nvidia.com/gpu": 1}}
    }
    running.put(("other", "a"), None)
    assert running.summary()["machines"] == {"m1": {"pods": 1, "requested": {"cpu": 2000}}}
    running.put(("other", "b"), _pod("b", "other", "m1", "2", 0, "Succeeded"))
    assert running.summary() == {
        "machines": {},
        "pods_here": [],
        "invalid": "",
        "holders": {},
        "rule_pods": [],
    }


def test_a_pod_whose_share_stayed_the_same_changes_nothing() -> None:
    running = RunningCapacity(NAMESPACE)
    pod = _pod("a", "other", "m1", "1", 0, "Running")
    assert running.put(("other", "a"), pod) is True
    assert running.put(("other", "a"), _pod("a", "other", "m1", "1", 0, "Running")) is False
    assert running.put(("other", "a"), _pod("a", "other", "m2", "1", 0, "Running")) is True
    assert running.put(("other", "a"), None) is True
    assert running.put(("other", "a"), None) is False
    here = _pod("b", NAMESPACE, None, "1", 0, "Pending")
    assert running.put((NAMESPACE, "b"), here) is True
    assert running.put((NAMESPACE, "b"), _pod("b", NAMESPACE, None, "1", 0, "Running")) is True


def test_the_largest_holders_are_named_as_the_fold_names_them() -> None:
    """Five pods on one machine: three are kept per resource, the same three as the fold's."""
    cpus = {"a": "1", "b": "5", "c": "2", "d": "4", "e": "3"}
    pods = {("other", n): _pod(n, "other", "m1", cpu, 0, "Running") for n, cpu in cpus.items()}
    pods[("other", "f")] = _pod("f", "other", "m1", "100m", 1, "Running")
    running = RunningCapacity(NAMESPACE)
    running.replace(list(pods.items()))
    named = [h["pod"] for h in running.summary()["holders"]["m1"]]
    # cpu: b, d, e (5, 4, 3); the GPU: f, its only holder
    assert named == ["b", "d", "e", "f"]
    assert running.summary() == _folded(pods)


def test_the_largest_holders_of_each_priority_are_named_as_the_fold_names_them() -> None:
    """Three larger pods of priority 0 do not hide the smaller one of a lower priority, which
    preemption would stop first."""
    pods = {("other", n): _pod(n, "other", "m1", "4", 0, "Running", 0) for n in "abcd"}
    pods[("other", "e")] = _pod("e", "other", "m1", "100m", 0, "Running", -1)
    running = RunningCapacity(NAMESPACE)
    running.replace(list(pods.items()))
    named = [(h["pod"], h.get("priority", 0)) for h in running.summary()["holders"]["m1"]]
    assert named == [("b", 0), ("c", 0), ("d", 0), ("e", -1)]
    assert running.summary() == _folded(pods)
