"""What lint's loader makes of a file's documents (lint/loader.py), kubectl the oracle.

`kubectl label --local -f FILE a=b -o name` reads a file as `kubectl apply` does, offline: the
objects it names are the ones lint must read, and what it refuses must be a finding.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from truegreen.lint.loader import BadInput, Manifest, Skipped, load_text
from truegreen.yamlsafe import MANIFEST_LIMITS, Limits

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(
    KUBECTL is None and not os.environ.get("TRUEGREEN_REQUIRE_REAL_PARTS"),
    reason="kubectl is not installed",
)

DEPLOYMENT_LIST = """\
{"apiVersion": "apps/v1", "kind": "DeploymentList", "metadata": {}, "items": [
 {"metadata": {"name": "web", "namespace": "train"},
  "spec": {"selector": {"matchLabels": {"app": "w"}},
   "template": {"metadata": {"labels": {"app": "w"}},
    "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}]}
"""
LIST = """\
apiVersion: v1
kind: List
items:
- kind: ConfigMap
  metadata: {name: noapiversion}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: ok}
- metadata: {name: nothing}
"""


def _read(text: str) -> list[Manifest | BadInput | Skipped]:
    return list(load_text("f.yaml", text, MANIFEST_LIMITS, "f.yaml"))


def _kubectl(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "f.yaml"
    path.write_text(text)
    assert KUBECTL is not None
    return subprocess.run(
        [KUBECTL, "label", "--local", "-f", str(path), "a=b", "-o", "name"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_typed_list_s_items_take_its_kind_and_apiversion() -> None:
    """apimachinery unstructured_list.go / helpers.go decodeToList: an item with neither kind
    nor apiVersion takes TrimSuffix(listKind, "List") and the list's apiVersion (the API server
    writes a DeploymentList's items so)."""
    (item,) = _read(DEPLOYMENT_LIST)
    assert isinstance(item, Manifest)
    assert (item.obj["apiVersion"], item.obj["kind"], item.obj["metadata"]["name"]) == (
        "apps/v1",
        "Deployment",
        "web",
    )
    assert item.line == 2


def test_a_list_item_kubectl_refuses_is_a_finding_never_dropped() -> None:
    """An item still missing apiVersion or kind: kubectl refuses it (`Object 'apiVersion' is
    missing`), and reads the other items."""
    read = _read(LIST)
    assert [type(r).__name__ for r in read] == ["BadInput", "Manifest", "BadInput"]
    assert read[0] == BadInput(
        "parse-error",
        "f.yaml",
        4,
        "item 1 of this List has no apiVersion: kubectl refuses it "
        "(Object 'apiVersion' is missing).",
    )
    assert read[2] == BadInput(
        "parse-error",
        "f.yaml",
        9,
        "item 3 of this List has no kind: kubectl refuses it (Object 'Kind' is missing).",
    )


def test_a_list_inside_a_list_is_a_finding_not_a_kind_never_understood() -> None:
    """kubectl refuses a List item that is itself a list (`error: *unstructured.Unstructured is
    not a list: no Items field in this object`, kubectl 1.32), whatever its kind, and with it
    the objects inside; an item with no `items` array is an object as ever."""
    nested = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items: []\n"
    said = (
        "item 1 of this List is itself a list: kubectl refuses it (*unstructured.Unstructured "
        "is not a list: no Items field in this object)."
    )
    assert _read(nested) == [BadInput("parse-error", "f.yaml", 4, said)]
    holder = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Thing\n  items: {}\n"
    assert [type(r).__name__ for r in _read(holder)] == ["Manifest"]


def test_a_list_item_that_is_no_object_is_a_finding() -> None:
    read = _read("apiVersion: v1\nkind: List\nitems:\n- 7\n")
    said = "item 1 of this List is no object: kubectl refuses it."
    assert read == [BadInput("parse-error", "f.yaml", 1, said)]


@needs_kubectl
def test_kubectl_reads_and_refuses_the_same_items(tmp_path: Path) -> None:
    typed = _kubectl(tmp_path, DEPLOYMENT_LIST)
    assert (typed.returncode, typed.stdout) == (0, "deployment.apps/web\n")
    mixed = _kubectl(tmp_path, LIST)
    assert (mixed.returncode, mixed.stdout) == (1, "configmap/ok\n")
    assert "Object 'apiVersion' is missing" in mixed.stderr
    assert _kubectl(tmp_path, "apiVersion: v1\nkind: List\nitems:\n- 7\n").returncode == 1


NAMES_ONE = [
    ("kind: Deployment", "has no apiVersion: kubectl refuses it (apiVersion not set)"),
    ("apiVersion:\nkind: Deployment", "has no apiVersion: kubectl refuses it (apiVersion not set)"),
    (
        "apiVersion: 5\nkind: Deployment",
        "has no apiVersion: kubectl refuses it (apiVersion isn't string type)",
    ),
    ("apiVersion: ''\nkind: Deployment", "has an empty apiVersion: kubectl refuses it"),
    ("apiVersion: apps/v1", "has no kind: kubectl refuses it (kind not set)"),
    ("apiVersion: apps/v1\nkind:", "has no kind: kubectl refuses it (kind not set)"),
    (
        "apiVersion: apps/v1\nkind: [Deployment]",
        "has no kind: kubectl refuses it (kind isn't string type)",
    ),
    ("apiVersion: apps/v1\nkind: ''", "has an empty kind: kubectl refuses it"),
]
"""A document naming one of apiVersion and kind (as text), and why kubectl refuses it."""


@pytest.mark.parametrize(("names", "said"), NAMES_ONE)
def test_a_document_naming_only_its_kind_or_only_its_apiversion_is_a_finding(
    names: str, said: str
) -> None:
    """A Deployment whose apiVersion line was lost, or rendered empty where a Helm capabilities
    helper yields nothing (`apiVersion:`): kubectl refuses it, so it is never passed over as
    other YAML."""
    read = _read(f"# rendered\n{names}\nmetadata: {{name: x}}\n")
    assert read == [BadInput("parse-error", "f.yaml", 2, f"this document {said}.")]


def test_both_keys_written_make_an_object_without_metadata() -> None:
    said = "this document has no apiVersion: kubectl refuses it (apiVersion not set)."
    assert _read("apiVersion:\nkind: Deployment\n") == [BadInput("parse-error", "f.yaml", 1, said)]


@pytest.mark.parametrize(
    "text",
    [
        "metadata: {name: x}\n",
        "apiVersion:\nkind: ''\nmetadata: {name: x}\n",  # neither holds anything
        "apiVersion: v2\nname: chart\nversion: 1.0.0\n",  # a Helm Chart.yaml
        "kind: DaemonSet\nreplicaCount: 1\n",  # a chart's values (tests/lint_corpus/fluent-bit)
        "- kind: Deployment\n  metadata: {name: x}\n",
    ],
)
def test_a_document_not_meant_as_an_object_is_other_yaml(text: str) -> None:
    assert _read("# a values file\n" + text) == [Skipped("f.yaml", 2)]


@needs_kubectl
@pytest.mark.parametrize(("names", "said"), [n for n in NAMES_ONE if "(" in n[1]])
def test_kubectl_refuses_a_document_in_the_words_lint_quotes(
    tmp_path: Path, names: str, said: str
) -> None:
    """kubectl's own validation, offline (it refuses before it asks any server)."""
    path = tmp_path / "f.yaml"
    path.write_text(f"{names}\nmetadata: {{name: x}}\n")
    assert KUBECTL is not None
    refused = subprocess.run(
        [KUBECTL, "create", "--dry-run=client", "-o", "name", "-f", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "KUBECONFIG": os.devnull},
    )
    assert refused.returncode == 1
    assert f"error validating data: {said.partition('(')[2].rstrip(')')};" in refused.stderr


def test_every_object_a_jq_stream_holds_is_read() -> None:
    """`kubectl get ... -o json | jq '.items[]'`: one JSON object after another, all read, each
    on the line it starts (apimachinery decoder.go YAMLOrJSONDecoder reads a JSON stream)."""
    one = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "%s"}}\n'
    read = _read(one % "a" + one % "b" + "{\n" + (one % "c")[1:])
    assert [(m.obj["metadata"]["name"], m.line) for m in read if isinstance(m, Manifest)] == [
        ("a", 1),
        ("b", 2),
        ("c", 3),
    ]
    broken = _read(one % "a" + "{]")
    assert broken[1] == BadInput(
        "parse-error",
        "f.yaml",
        2,
        "not valid JSON: Expecting property name enclosed in double quotes (line 2, column 2)",
    )


def test_a_file_over_the_value_cap_is_too_large_to_read() -> None:
    """Not "not valid YAML": the text is fine, there is too much of it."""
    text = (
        "apiVersion: v1\nkind: ConfigMap\ndata: {"
        + ", ".join(f"k{n}: v" for n in range(20))
        + "}\n"
    )
    read = list(load_text("f.yaml", text, Limits(max_nodes=30), "f.yaml"))
    assert read == [BadInput("parse-error", "f.yaml", 3, "too large to read (more than 30 values)")]
