"""A saved read file decodes to the same read whether it is JSON (as truegreen writes it) or
YAML (as it wrote it before, or as a person edits it), within the same caps."""

import json
from typing import Any

import pytest
import yaml

from truegreen.cluster.kinds import Kind
from truegreen.cluster.reader import ReadKey
from truegreen.cluster.reads import CantRead, Folded, Got, Listed, ReadFailure
from truegreen.cluster.snapshot_reads import load_read
from truegreen.yamlsafe import Limits, Problem, Refusal

POD: dict[str, Any] = {
    "metadata": {
        "name": "train-0",
        "namespace": "train",
        "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
        "futureMetadata": "x",
    },
    "spec": {"nodeName": "gpu-1", "containers": [{"name": "main"}]},
    "status": {"phase": "Running"},
    "futureField": {"nested": [1, 2]},
}
PODS_READ = {
    "read": {"verb": "list", "resource": "pods", "namespace": "train"},
    "result": {"items": [POD]},
}
PODS_KEY = ReadKey("list", Kind.POD, "train")
FORMS = pytest.mark.parametrize(
    "written_as", [json.dumps, yaml.safe_dump, lambda d: json.dumps(d, indent=2)]
)


@FORMS
def test_list_items_skip_what_no_reader_reads_and_carry_their_kind(written_as: Any) -> None:
    assert load_read("005-list-pods.yaml", written_as(PODS_READ)) == (
        PODS_KEY,
        Listed(
            (
                {
                    "metadata": {"name": "train-0", "namespace": "train"},
                    "spec": {"nodeName": "gpu-1", "containers": [{"name": "main"}]},
                    "status": {"phase": "Running"},
                    "kind": "Pod",
                    "apiVersion": "v1",
                },
            )
        ),
    )


@FORMS
def test_gets_folds_and_failed_reads_read_back_whole(written_as: Any) -> None:
    secret = {"metadata": {"name": "regcred"}, "data": {"a": "<redacted>"}}
    get = {"read": {"verb": "get", "resource": "secrets", "namespace": "train", "name": "regcred"}}
    assert load_read("x.yaml", written_as({**get, "result": {"object": secret}})) == (
        ReadKey("get", Kind.SECRET, "train", "regcred"),
        Got({**secret, "kind": "Secret", "apiVersion": "v1"}),
    )
    fold = {"read": {"verb": "fold", "resource": "events", "namespace": "t", "name": "newest"}}
    assert load_read("x.yaml", written_as({**fold, "result": {"summary": {"total": 3}}})) == (
        ReadKey("fold", Kind.EVENT, "t", "newest"),
        Folded({"total": 3}),
    )
    cant = {"cant_read": {"failure": "forbidden", "reason": "no", "reached": False}}
    assert load_read("x.yaml", written_as({**PODS_READ, "result": cant})) == (
        PODS_KEY,
        CantRead(ReadFailure.FORBIDDEN, "no", reached=False),
    )


@FORMS
@pytest.mark.parametrize(
    "result",
    [{"items": 7}, {"items": [1]}, {"items": [{"metadata": {}}, "pod"]}, {}, 7, {"cant_read": 1}],
    ids=["items-not-a-list", "item-not-an-object", "one-item-not-an-object", "none", "7", "cant"],
)
def test_a_result_of_the_wrong_shape_is_malformed(written_as: Any, result: Any) -> None:
    read = load_read("005-list-pods.yaml", written_as({**PODS_READ, "result": result}))
    assert read is not None
    key, answer = read
    assert key == PODS_KEY
    assert isinstance(answer, CantRead)
    assert answer.failure is ReadFailure.MALFORMED
    assert answer.reason == (
        "list pods: the cluster's answer was not valid (snapshot file 005-list-pods.yaml)"
    )


@FORMS
def test_a_file_naming_no_read_is_skipped(written_as: Any) -> None:
    assert load_read("x.yaml", written_as({"result": PODS_READ["result"]})) is None
    log = {"read": {"verb": "log", "resource": "pods"}, "result": {"log": "x"}}
    assert load_read("x.yaml", written_as(log)) is None
    assert load_read("x.yaml", written_as([PODS_READ])) is None


def test_yaml_in_flow_style_is_still_yaml() -> None:
    """A file that opens like JSON but is not: the YAML loader reads it."""
    text = "{read: {verb: list, resource: pods, namespace: train}, result: {items: []}}"
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)  # precondition: not JSON
    assert load_read("x.yaml", text) == (PODS_KEY, Listed(()))


@pytest.mark.parametrize(
    "text",
    [
        '{"read": {"verb": "list", "resource": "pods", "namespace": "train"}, '
        '"result": {"items": []}, "result": {"items": [{}]}}',
        '{"read": {"verb": "list", "resource": "pods", "namespace": "train"}, '
        '"result": {"items": [{"metadata": {"name": "a", "name": "b"}}]}}',
    ],
    ids=["top", "inside-an-item"],
)
def test_a_key_twice_is_refused_as_the_yaml_loader_refuses_it(text: str) -> None:
    """Last-wins would silently keep the second; DESIGN.md: duplicate keys are refused."""
    last_wins = json.dumps(json.loads(text))
    assert load_read("x.yaml", last_wins) is not None, "precondition: otherwise a sound read"
    assert load_read("x.yaml", text) is None


def test_a_file_nested_too_deeply_is_not_captured() -> None:
    deep = '{"read": {"verb": "list", "resource": "pods", "namespace": "train"}, "result": '
    text = deep + '{"items": [' + "[" * 100_000 + "]" * 100_000 + "]}}"
    assert load_read("x.yaml", text) is None


@pytest.mark.parametrize("written_as", [json.dumps, yaml.safe_dump], ids=["json", "yaml"])
def test_a_file_of_more_values_than_the_cap_is_not_captured(written_as: Any) -> None:
    """The node cap of the YAML loader holds for a JSON file too (an upper bound counted from
    its text before anything is built)."""
    many = {**PODS_READ, "result": {"items": [{"metadata": {"name": str(n)}} for n in range(50)]}}
    text = written_as(many)
    assert load_read("x.yaml", text, Limits(max_nodes=4_000)) is not None, "precondition"
    assert load_read("x.yaml", text, Limits(max_nodes=100)) is None


def test_a_refused_file_is_not_captured() -> None:
    assert load_read("x.yaml", Refusal(Problem.TOO_LARGE, "it is larger than 256 MiB")) is None
