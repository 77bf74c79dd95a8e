"""kubectl is the oracle for `--namespace-selector`: the same parse, the same namespaces.

The parse: `kubectl create poddisruptionbudget --selector S --dry-run=client` runs
apimachinery's `labels.Parse` on the client (metav1.ParseToLabelSelector) and prints the result
as matchLabels/matchExpressions, or its refusal; truegreen's parse must accept exactly what it
accepts, into the same requirements. The resolution: `kubectl get namespaces -l S` against the
fake lists the same namespaces as truegreen's resolution through its own client.
"""

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_apiserver import FakeApiServer, Fault
from truegreen.cluster.label_selector import parse_selector
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.namespace_selection import (
    LabelSelector,
    NamespaceSelection,
    NamespacesNotListedError,
    NoNamespaceMatchedError,
    Operator,
    SelectionMode,
    resolve_namespaces,
)
from truegreen.cluster.settings import ConnectionSettings
from truegreen.errors import UsageError
from truegreen.exitcodes import ExitCode

pytestmark = pytest.mark.kubectl

KUBECTL = shutil.which("kubectl")

_HAND_PICKED = [
    "team=ml",
    "team==ml",
    "team!=ml",
    "team",
    "!team",
    "team in (a,b)",
    "team notin (a)",
    "team in ()",
    "x in (foo,,baz),y,z notin ()",
    "in in (in),notin notin (notin)",
    "!team=ml",
    "team ml",
    "team in a",
    "team=a b",
    "team=a,",
    ",team",
    "Team/x=1",
    "example.com/team=ml",
    "-team=1",
    "team=-ml",
    "a=b,,c",
    "a=(b)",
    "a in (b c)",
    "a==",
    "a!=",
    "a!",
    "!!a",
    "a=b=c",
    "a = b , c",
    "a\tin\t(x)",
    "a/b/c=1",
    "/a=1",
]


def _generated(count: int) -> list[str]:
    """Selectors from the grammar's own pieces, many of them malformed, fixed by a seed."""
    pieces = ["a", "b", "in", "notin", "=", "==", "!=", "!", "(", ")", ",", " ", "x.y/z", "-", "1"]
    rng = random.Random(33)
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 7))) for _ in range(count)]


_UNPARSED = "couldn't parse the selector string"
"""kubectl's words when labels.Parse refused; any other refusal came after the parse."""


def _kubectl_parse(selector: str) -> tuple[bool, dict[str, Any] | None]:
    """Whether labels.Parse accepted `selector`, and the selector kubectl built of it (None
    when ParseToLabelSelector cannot express an operator: !=, gt, lt)."""
    assert KUBECTL is not None, "kubectl is required (Debian: kubernetes-client)"
    pdb = ["create", "poddisruptionbudget", "p", f"--selector={selector}", "--min-available=1"]
    done = subprocess.run(
        [KUBECTL, *pdb, "--dry-run=client", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"KUBECONFIG": "/dev/null", "PATH": "/usr/bin:/bin"},
    )
    if done.returncode != 0:
        assert "selector" in done.stderr, done.stderr  # refused for the selector, not else
        return _UNPARSED not in done.stderr, None
    selector_doc: dict[str, Any] = json.loads(done.stdout)["spec"]["selector"]
    return True, selector_doc


def _as_label_selector(parsed: LabelSelector) -> dict[str, Any] | None:
    """metav1.ParseToLabelSelector's conversion (staging/src/k8s.io/apimachinery/pkg/apis/
    meta/v1/helpers.go): = and == to matchLabels, in, notin, exists and !exists to
    matchExpressions; !=, gt and lt are refused there (after the parse accepted them)."""
    labels: dict[str, str] = {}
    expressions: list[dict[str, Any]] = []
    names = {
        Operator.IN: "In",
        Operator.NOT_IN: "NotIn",
        Operator.EXISTS: "Exists",
        Operator.DOES_NOT_EXIST: "DoesNotExist",
    }
    for requirement in parsed.requirements:
        if requirement.operator in (Operator.EQUALS, Operator.DOUBLE_EQUALS):
            labels[requirement.key] = requirement.values[0]
        elif requirement.operator in names:
            expression: dict[str, Any] = {
                "key": requirement.key,
                "operator": names[requirement.operator],
            }
            if requirement.values:
                expression["values"] = list(requirement.values)
            expressions.append(expression)
        else:
            return None
    found: dict[str, Any] = {}
    if labels:
        found["matchLabels"] = labels
    if expressions:
        found["matchExpressions"] = expressions
    return found


@pytest.mark.parametrize("selector", _HAND_PICKED + _generated(60))
def test_the_selector_parses_as_kubectl_parses_it(selector: str) -> None:
    accepted, expected = _kubectl_parse(selector)
    try:
        parsed = parse_selector(selector)
    except UsageError:
        assert not accepted, f"truegreen refused {selector!r}; kubectl read {expected}"
        return
    assert accepted, f"kubectl refused {selector!r}; truegreen read {parsed}"
    assert _as_label_selector(parsed) == expected


_NAMESPACES = {
    "train-a": {"team": "ml", "tier": "train", "gen": "3"},
    "train-b": {"team": "ml", "tier": "eval", "gen": "1"},
    "scratch": {"team": "ml", "scratch": "yes"},
    "web": {"team": "web", "gen": "x"},
    "bare": {},
}


def _add_namespaces(fake_api: FakeApiServer) -> None:
    fake_api.add(
        *(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n, "labels": labels}}
            for n, labels in _NAMESPACES.items()
        )
    )


@pytest.mark.parametrize(
    "selector",
    [
        "team=ml",
        "team=ml,!scratch",
        "tier in (train,eval)",
        "team notin (ml)",
        "!team",
        "team",
        "gen>2",
        "gen<3",
    ],
)
def test_the_namespaces_resolved_are_the_ones_kubectl_lists(
    fake_api: FakeApiServer, kubeconfig: Path, selector: str
) -> None:
    _add_namespaces(fake_api)
    assert KUBECTL is not None, "kubectl is required (Debian: kubernetes-client)"
    names = ["-o", "jsonpath={.items[*].metadata.name}"]
    listed = subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), "get", "namespaces", "-l", selector, *names],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    assert listed, "precondition: the selector matches some namespace"
    chosen = NamespaceSelection(SelectionMode.SELECTOR, selector=parse_selector(selector))
    with LiveCluster.connect(ConnectionSettings(kubeconfig)) as cluster:
        assert sorted(resolve_namespaces(chosen, cluster)) == sorted(listed)
    sent = fake_api.requests("GET", r"^/api/v1/namespaces$")
    assert sent[-1].query.get("labelSelector") == parse_selector(selector).text()


@pytest.mark.parametrize(("selector", "chosen"), [("gen>2", ["train-a"]), ("gen<3", ["train-b"])])
def test_gt_and_lt_choose_the_namespaces_whose_label_is_a_number_beyond_it(
    fake_api: FakeApiServer, kubeconfig: Path, selector: str, chosen: list[str]
) -> None:
    """A real API server accepts `>` and `<` (labels/selector.go): only a label that is there
    and reads as an integer can match (`web` has gen=x, `bare` no gen). The fake refused them
    with 400, so doctor could not be tried on them."""
    _add_namespaces(fake_api)
    selection = NamespaceSelection(SelectionMode.SELECTOR, selector=parse_selector(selector))
    with LiveCluster.connect(ConnectionSettings(kubeconfig)) as cluster:
        assert list(resolve_namespaces(selection, cluster)) == chosen


def test_every_namespace_for_all_namespaces(fake_api: FakeApiServer, kubeconfig: Path) -> None:
    _add_namespaces(fake_api)
    with LiveCluster.connect(ConnectionSettings(kubeconfig)) as cluster:
        found = resolve_namespaces(NamespaceSelection(SelectionMode.ALL), cluster)
    assert sorted(found) == sorted([*_NAMESPACES, "default"]) or sorted(found) == sorted(
        _NAMESPACES
    )
    assert "labelSelector" not in fake_api.requests("GET", r"^/api/v1/namespaces$")[-1].query


def test_a_list_of_names_makes_no_request(fake_api: FakeApiServer, kubeconfig: Path) -> None:
    with LiveCluster.connect(ConnectionSettings(kubeconfig)) as cluster:
        found = resolve_namespaces(NamespaceSelection(SelectionMode.LIST, ("b", "a")), cluster)
    assert found == ("b", "a")
    assert fake_api.requests("GET", r"^/api/v1/namespaces") == []


def test_a_selector_matching_nothing_is_one_line_and_could_not_check(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    _add_namespaces(fake_api)
    chosen = NamespaceSelection(SelectionMode.SELECTOR, selector=parse_selector("team=nobody"))
    with (
        LiveCluster.connect(ConnectionSettings(kubeconfig)) as cluster,
        pytest.raises(NoNamespaceMatchedError) as nothing,
    ):
        resolve_namespaces(chosen, cluster)
    assert nothing.value.exit_code is ExitCode.UNKNOWN
    assert nothing.value.line() == (
        "No namespace has labels matching --namespace-selector 'team=nobody'. check the labels "
        "with `kubectl get namespaces --show-labels`"
    )


def test_a_login_that_may_not_list_namespaces_is_told_so(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    fake_api.inject(Fault.FORBIDDEN, r"^/api/v1/namespaces$")
    with (
        LiveCluster.connect(ConnectionSettings(kubeconfig)) as cluster,
        pytest.raises(NamespacesNotListedError) as refused,
    ):
        resolve_namespaces(NamespaceSelection(SelectionMode.ALL), cluster)
    assert refused.value.exit_code is ExitCode.UNKNOWN
    assert refused.value.line().startswith("This login may not list namespaces")
    assert "--namespaces a,b,c" in refused.value.todo
