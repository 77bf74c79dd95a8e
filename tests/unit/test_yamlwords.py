"""A YAML parser's words reach operators as plain ones: each case is real bad YAML loaded by the
bounded loader (libyaml's messages where PyYAML has it), then shown as lint and doctor show it."""

from pathlib import Path

import pytest

from tests.support.cli import run_cli
from truegreen.yamlsafe import MANIFEST_LIMITS, Refusal, load_all
from truegreen.yamlwords import plain


def _refused(text: str) -> str:
    last = list(load_all(text, MANIFEST_LIMITS))[-1]
    assert isinstance(last, Refusal), f"precondition: {text!r} is refused"
    return last.detail


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "a: b: c\n",
            "a ':' where no 'key: value' can start (quote a value that holds ': ', "
            "or check the indentation)",
        ),
        (
            "a:\n\tb: 1\n",
            "a character no YAML value can start with, often a tab (YAML indents with spaces)",
        ),
        ("a: [unclosed\n", "a list in [ ] that is not closed"),
        ("a: {x: 1\n", "a map in { } that is not closed"),
        ("a: *nope\n", "an alias (*name) with no anchor (&name) before it"),
        ("- a\nb: 1\n", "a list item (- ) and a 'key: value' at the same indentation"),
        ("a:\n  - b\n c: 1\n", "a line indented less than the keys above it"),
        ("a: 'open\n", "the file ends inside a quoted value or brackets"),
        (
            "a: !!value x\n",
            "'!!value' asks for a kind of value that is not read here (write the "
            "value plainly: text, a number, true or false, a list or a map)",
        ),
    ],
)
def test_a_parser_reason_is_said_in_plain_words(text: str, said: str) -> None:
    assert plain(_refused(text)) == said


def test_the_api_server_s_own_words_are_kept() -> None:
    """sigs.k8s.io/yaml's duplicate-key message and go-yaml's alias limit are what kubectl says."""
    duplicate = _refused("a: 1\na: 2\n")
    assert duplicate == 'key "a" already set in map'
    assert plain(duplicate) == duplicate
    assert plain("document contains excessive aliasing") == "document contains excessive aliasing"


def test_lint_shows_the_plain_words(tmp_path: Path) -> None:
    manifest = tmp_path / "tab.yaml"
    manifest.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n\tname: x\n")
    (finding,) = run_cli("lint", str(manifest), "-o", "json").json()["findings"]
    assert (finding["rule"], finding["line"]) == ("parse-error", 4)
    assert finding["message"] == (
        "not valid YAML: a character no YAML value can start with, often a tab (YAML indents "
        "with spaces)"
    )
