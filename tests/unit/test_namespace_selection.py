"""Choosing namespaces: the flags, and label selectors parsed as apimachinery's labels.Parse.

The parse is held to kubectl itself in tests/e2e/test_namespace_selector_kubectl.py; these pin
the values and the refusals one by one (kubernetes/apimachinery pkg/labels/selector.go).
"""

import pytest

from truegreen.cluster import Listed, ListRead
from truegreen.cluster.label_selector import parse_selector
from truegreen.cluster.namespace_selection import (
    MAX_NAMESPACES,
    NamespaceSelection,
    Operator,
    Requirement,
    SelectionMode,
    resolve_namespaces,
    selection_from_flags,
)
from truegreen.errors import UsageError
from truegreen.exitcodes import ExitCode


@pytest.mark.parametrize(
    ("text", "requirements"),
    [
        ("team=ml", [Requirement("team", Operator.EQUALS, ("ml",))]),
        ("team==ml", [Requirement("team", Operator.DOUBLE_EQUALS, ("ml",))]),
        ("team!=ml", [Requirement("team", Operator.NOT_EQUALS, ("ml",))]),
        ("team", [Requirement("team", Operator.EXISTS)]),
        ("!team", [Requirement("team", Operator.DOES_NOT_EXIST)]),
        ("team in (b,a)", [Requirement("team", Operator.IN, ("a", "b"))]),
        ("team notin (a)", [Requirement("team", Operator.NOT_IN, ("a",))]),
        # `()` and empty list members are the empty value (parseValues, parseIdentifiersList)
        ("team in ()", [Requirement("team", Operator.IN, ("",))]),
        ("x in (foo,,baz)", [Requirement("x", Operator.IN, ("", "baz", "foo"))]),
        ("team=", [Requirement("team", Operator.EQUALS, ("",))]),
        # `in` is a value wherever a value may stand (the parser's Values context)
        ("in in (in)", [Requirement("in", Operator.IN, ("in",))]),
        ("gpus>2", [Requirement("gpus", Operator.GREATER_THAN, ("2",))]),
        ("example.com/team=ml", [Requirement("example.com/team", Operator.EQUALS, ("ml",))]),
        # terms sorted by key, blanks around everything
        (
            " z = 1 , a notin ( x , y ) ",
            [
                Requirement("a", Operator.NOT_IN, ("x", "y")),
                Requirement("z", Operator.EQUALS, ("1",)),
            ],
        ),
        ("", []),
    ],
)
def test_selectors_kubectl_accepts_parse_to_these_requirements(
    text: str, requirements: list[Requirement]
) -> None:
    assert list(parse_selector(text).requirements) == requirements


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("!team=ml", "found '=', expected: ',' or 'end of string'"),
        ("team ml", "found 'ml', expected: in, notin, =, ==, !=, gt, lt"),
        ("team in a", "found 'a' expected: '('"),
        ("team in (a", "expected: ',' or ')'"),
        ("team=a b", "found 'b', expected: ',' or 'end of string'"),
        ("team=a,", "found '', expected: identifier after ','"),
        (",team", "found ',', expected: !, identifier, or 'end of string'"),
        ("Team/x=1", "its prefix must be a DNS subdomain"),
        ("-team=1", "is not a label key"),
        ("team=-ml", "is not a label value"),
        ("team=" + "a" * 64, "is not a label value"),
        ("gpus>two", "the value must be an integer"),
        ("team=(a)", "found '(', expected: identifier"),
    ],
)
def test_a_selector_kubectl_refuses_is_bad_usage_saying_where(text: str, said: str) -> None:
    with pytest.raises(UsageError) as refused:
        parse_selector(text)
    assert refused.value.exit_code is ExitCode.USAGE
    assert said in refused.value.line()
    assert "\n" not in refused.value.line()


def test_the_selector_is_sent_as_apimachinery_writes_it() -> None:
    parsed = parse_selector("tier in (train,eval),!scratch,team=ml,gpus>1")
    assert parsed.text() == "gpus>1,!scratch,team=ml,tier in (eval,train)"


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (("a", "a,b", False, None), "-n and --namespaces"),
        (("a", None, True, None), "-n and --all-namespaces"),
        ((None, None, True, "x"), "--all-namespaces and --namespace-selector"),
        ((None, "a", False, "x"), "--namespaces and --namespace-selector"),
    ],
)
def test_two_ways_of_naming_namespaces_at_once_is_bad_usage(
    flags: tuple[str | None, str | None, bool, str | None], named: str
) -> None:
    with pytest.raises(UsageError) as refused:
        selection_from_flags(*flags)
    assert refused.value.line() == (
        f"{named} cannot be used together. choose one way to name the namespaces"
    )


def test_each_flag_gives_its_own_selection() -> None:
    assert selection_from_flags(None, None, False, None) == NamespaceSelection()
    assert selection_from_flags("t", None, False, None) == NamespaceSelection(names=("t",))
    assert selection_from_flags(None, " b, a,b ,", False, None) == NamespaceSelection(
        SelectionMode.LIST, ("b", "a")
    )
    assert selection_from_flags(None, None, True, None).mode is SelectionMode.ALL
    chosen = selection_from_flags(None, None, False, "team=ml")
    assert chosen.mode is SelectionMode.SELECTOR
    assert chosen.selector == parse_selector("team=ml")
    assert not selection_from_flags("t", None, False, None).many
    assert selection_from_flags(None, None, True, None).many


@pytest.mark.parametrize("names", ["", " , ", "Train", "a_b", "-a", "a" * 64])
def test_a_name_that_cannot_be_a_namespace_is_bad_usage(names: str) -> None:
    with pytest.raises(UsageError):
        selection_from_flags(None, names, False, None)


class _Listing:
    """A namespace list as the API server's answer gives it: `NamespaceList.items`."""

    def __init__(self, *names: str) -> None:
        self.items = tuple(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}} for name in names
        )

    def list_namespaces(self, label_selector: str) -> ListRead:
        return Listed(self.items)


def test_a_namespace_listed_twice_is_checked_once_in_the_server_s_order() -> None:
    """A namespace's name is unique in its cluster (the registry keys namespaces by name:
    apiserver pkg/registry/generic/registry/store.go `Create` answers AlreadyExists), so a list
    naming one twice is a broken or hostile answer: the name is checked once, where it came
    first; and a name no namespace can have is kept, to be reported as such."""
    listing = _Listing("b", "a", "b", "..", "a", "")
    selection = NamespaceSelection(SelectionMode.ALL)
    assert resolve_namespaces(selection, listing) == ("b", "a", "..")


def test_the_limit_counts_each_namespace_once() -> None:
    names = [f"n{i}" for i in range(MAX_NAMESPACES)]
    listing = _Listing(*names, *names)
    assert len(resolve_namespaces(NamespaceSelection(SelectionMode.ALL), listing)) == (
        MAX_NAMESPACES
    )
    with pytest.raises(UsageError):
        resolve_namespaces(NamespaceSelection(SelectionMode.ALL), _Listing(*names, "one-more"))
