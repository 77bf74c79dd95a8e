"""A saved read file decodes to the same read whether it is JSON (as truegreen writes it) or
YAML (as it wrote it before, or as a person edits it), within the same caps."""

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from truegreen.cluster.kinds import Kind
from truegreen.cluster.reader import ReadKey
from truegreen.cluster.reads import CantRead, Folded, Got, Listed, ReadFailure
from truegreen.cluster.snapshot_reads import file_text, load_read, member_text, parsed
from truegreen.yamlsafe import Document, Limits, Problem, Refusal

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
    """Last-wins would silently keep the second; duplicate keys are refused
    (docs/reliability.md)."""
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


@FORMS
def test_the_read_key_names_its_selectors_and_a_failure_reached_the_cluster_by_default(
    written_as: Any,
) -> None:
    read = {"verb": "list", "resource": "pods", "namespace": "t", "labels": "a=b", "fields": "x=y"}
    cant = {"cant_read": {"failure": "timeout", "reason": "slow"}}
    assert load_read("x.yaml", written_as({"read": read, "result": cant})) == (
        ReadKey("list", Kind.POD, "t", None, "a=b", "x=y"),
        CantRead(ReadFailure.TIMEOUT, "slow", reached=True),
    )


@FORMS
def test_a_kind_with_more_at_its_top_level_comes_whole(written_as: Any) -> None:
    account = {"metadata": {"name": "default"}, "secrets": [{"name": "t"}], "automount": False}
    read = {"verb": "list", "resource": "serviceaccounts", "namespace": "t"}
    assert load_read("x.yaml", written_as({"read": read, "result": {"items": [account]}})) == (
        ReadKey("list", Kind.SERVICE_ACCOUNT, "t"),
        Listed(({**account, "kind": "ServiceAccount", "apiVersion": "v1"},)),
    )


@FORMS
@pytest.mark.parametrize(
    ("verb", "result"),
    [("fold", {"summary": [1]}), ("fold", {}), ("get", {"object": [1]}), ("get", {})],
    ids=["summary-not-a-mapping", "no-summary", "object-not-a-mapping", "no-object"],
)
def test_a_fold_or_get_of_the_wrong_shape_is_malformed(
    written_as: Any, verb: str, result: Any
) -> None:
    read = {"verb": verb, "resource": "events", "namespace": "t", "name": "newest"}
    assert load_read("9.yaml", written_as({"read": read, "result": result})) == (
        ReadKey(verb, Kind.EVENT, "t", "newest"),
        CantRead(
            ReadFailure.MALFORMED,
            f"{verb} events: the cluster's answer was not valid (snapshot file 9.yaml)",
        ),
    )


def test_the_value_cap_is_exact_for_compact_json() -> None:
    """Compact JSON with no `[{,:` inside its strings: the bound is the count itself."""
    items = [{"metadata": {"name": f"X-{n}"}} for n in range(20)]
    text = json.dumps({**PODS_READ, "result": {"items": items}}, separators=(",", ":"))
    values = 1 + sum(text.count(mark) for mark in "[{,:")
    assert load_read("x.yaml", text, Limits(max_nodes=values)) is not None
    assert load_read("x.yaml", text, Limits(max_nodes=values - 1)) is None


def test_a_snapshot_file_is_read_as_text_and_a_link_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_text("a: 1\n")
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    assert file_text(real) == "a: 1\n"
    assert file_text(link) == Refusal(Problem.NOT_REGULAR, "it is a link, not a regular file")
    assert file_text(tmp_path) == Refusal(Problem.NOT_REGULAR, "it is a folder, not a regular file")


def test_an_archive_member_is_text_or_refused() -> None:
    assert member_text(b"a: 1\n") == "a: 1\n"
    assert member_text(b"a\0") == Refusal(Problem.BINARY, "it is a binary file, not text")


def test_snapshot_yaml_is_one_document_within_the_caps() -> None:
    assert parsed("a: 1\n") == Document({"a": 1}, 1, 2)
    assert parsed("") == Document(None, 1, 1)
    assert parsed("a: 1\n---\nb: 2\n") == Refusal(
        Problem.SYNTAX, "expected a single document, found more"
    )
    refused = Refusal(Problem.TOO_LARGE, "it is larger than 256 MiB")
    assert parsed(refused) is refused
    too_many = parsed("[1, 2, 3]\n", Limits(max_nodes=3))
    assert isinstance(too_many, Refusal)
    assert too_many.problem is Problem.TOO_MANY_NODES
    assert isinstance(parsed("[1, 2, 3]\n", Limits(max_nodes=4)), Document)
    broken = parsed("a: [\n")
    assert isinstance(broken, Refusal)
    assert broken.problem is Problem.SYNTAX
