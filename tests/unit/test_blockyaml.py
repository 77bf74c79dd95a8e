"""The block-YAML reader means what PyYAML's safe loader means, or leaves the text to it.

PyYAML is the oracle: every text the reader reads must give PyYAML's value (with libyaml and
with the Python parser), and every text PyYAML refuses must be left to it. The strategies
build kubeconfig-shaped documents, dump them as PyYAML and kubectl write them, then break
them; a precondition pins that the reader does read most of what is dumped, so agreement is
not the reader declining everything.
"""

import string
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from truegreen.cluster.blockyaml import MAX_DEPTH, read_block_yaml

_KEYS = st.sampled_from(
    [
        *("apiVersion", "kind", "clusters", "cluster", "server", "name", "users", "user"),
        *("certificate-authority-data", "insecure-skip-tls-verify", "exec", "args", "env"),
        *("current-context", "preferences", "extensions", "a", "_x", "a.b/c", "a_1-2"),
    ]
)
_WORDS = st.sampled_from(
    [
        *("v1", "Config", "https://10.0.0.1:6443", "aws", "--region", "eu-west-1", "LS0tLS1C"),
        *("yes", "No", "TRUE", "off", "null", "~", "NULL", "none", "y", "n", "yEs"),
        *("1", "0", "007", "1.5", ".5", "-1", "+1", "0x1f", "1:20", "2001-12-14", "1e3"),
        *("-x", "--", "a: b", "a #b", "a#b", "a:b", "a:", ":a", "?a", "'q'", '"q"', "it's"),
        *("<<", "=", "a  b", " lead", "trail ", "", "[a]", "{a}", "a,b", "*x", "&x", "!x"),
        *("%x", "@x", "`x", "|", ">", "#", "-", "---", "..."),
    ]
)
_SCALARS = st.one_of(
    _WORDS,
    st.text(alphabet=string.ascii_letters + string.digits + " -_.:/#'\"=,", max_size=12),
    st.integers(-(10**6), 10**6),
    st.booleans(),
    st.none(),
)
_DOCUMENTS = st.dictionaries(
    _KEYS,
    st.recursive(
        _SCALARS,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
        max_leaves=12,
    ),
    min_size=1,
    max_size=5,
)
_STYLES = st.fixed_dictionaries(
    {"indent": st.integers(2, 5), "width": st.sampled_from([20, 80, 4096])},
    optional={"sort_keys": st.booleans(), "explicit_start": st.booleans()},
)


def _pyyaml(text: str) -> tuple[Any, Any]:
    """What PyYAML makes of `text` in its Python parser and on libyaml; "refused" if it
    refuses."""
    answers = []
    for loader in (yaml.SafeLoader, yaml.CSafeLoader):
        try:
            answers.append(yaml.load(text, Loader=loader))
        except yaml.YAMLError:
            answers.append("refused")
    return answers[0], answers[1]


def _agrees(text: str) -> bool:
    """The reader's answer is PyYAML's (both parsers'), or None; True when it read the text."""
    read = read_block_yaml(text)
    if read is None:
        return False
    in_python, in_libyaml = _pyyaml(text)
    assert read == in_python, f"{text!r}: read {read!r}, PyYAML's parser {in_python!r}"
    assert read == in_libyaml, f"{text!r}: read {read!r}, libyaml {in_libyaml!r}"
    assert [*map(type, _leaves(read))] == [*map(type, _leaves(in_python))], "1 == True"
    return True


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in (key, *_leaves(item))]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


@settings(max_examples=400, deadline=None)
@given(_DOCUMENTS, _STYLES)
def test_a_dumped_document_is_read_as_pyyaml_reads_it(document: dict[str, Any], style: Any) -> None:
    _agrees(yaml.safe_dump(document, default_flow_style=False, **style))


def test_the_reader_reads_most_of_what_pyyaml_dumps() -> None:
    """The precondition of every agreement test here: the reader is not declining all."""
    read = []

    @settings(max_examples=200, deadline=None, derandomize=True)
    @given(_DOCUMENTS, _STYLES)
    def dumped(document: dict[str, Any], style: Any) -> None:
        read.append(_agrees(yaml.safe_dump(document, default_flow_style=False, **style)))

    dumped()
    assert sum(read) >= len(read) // 3, f"read {sum(read)} of {len(read)}"


_EDITS = st.sampled_from(
    [
        *(" ", "  ", "\n", "\n  ", "- ", "-", ": ", ":", "#", " #c", "'", '"', "''", "\\"),
        *("{}", "[]", "{", "]", ",", "&a ", "*a", "!t ", "|", ">", "?", "---", "...", "%"),
        *("\t", "\r", "\x00", "\u00e9", "1", "0", ".", "~", "yes", "x", "a:", "- a: b"),
    ]
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _DOCUMENTS,
    st.lists(st.tuples(st.floats(0, 1), st.integers(0, 3), _EDITS), min_size=1, max_size=4),
)
@example({"a": ["x", {"b": 1}]}, [(0.5, 0, "  ")])
def test_a_broken_document_is_read_as_pyyaml_reads_it_or_left_to_pyyaml(
    document: dict[str, Any], edits: list[tuple[float, int, str]]
) -> None:
    """Each edit deletes a few characters somewhere and inserts one of YAML's indicators."""
    text = yaml.safe_dump(document, default_flow_style=False)
    for where, deleted, inserted in edits:
        at = int(where * len(text))
        text = text[:at] + inserted + text[at + deleted :]
    _agrees(text)


_LINES = st.sampled_from(
    [
        *("k: v", "k:", "j: w", "j:", "- k: v", "- v", "-", "- k:", "- j:", "-  k: v", ""),
        *("k: {}", "k: []", "# c", "k: 'a'", 'k: "a"', "k: yes", "k: 1", "---", "k: -x"),
        *("- - a", "k: a b"),
    ]
)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 0, 0, 2, 2, 2, 4, 4, 1, 3, 6]), _LINES), min_size=1))
def test_lines_at_any_indent_are_read_as_pyyaml_reads_them_or_left_to_it(
    lines: list[tuple[int, str]],
) -> None:
    """Where indentation decides: a sequence at its key's indent, an entry's mapping, a line
    that goes back to an indent no block has."""
    _agrees("k:\n" + "\n".join(" " * indent + line for indent, line in lines))


KUBECTL_WRITTEN = """\
apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM=
    server: https://ABCDEF.gr7.eu-west-1.eks.amazonaws.com
  name: arn:aws:eks:eu-west-1:123456789012:cluster/training
contexts:
- context:
    cluster: arn:aws:eks:eu-west-1:123456789012:cluster/training
    namespace: train
    user: arn:aws:eks:eu-west-1:123456789012:cluster/training
  name: training
current-context: training
kind: Config
preferences: {}
users:
- name: arn:aws:eks:eu-west-1:123456789012:cluster/training
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      args:
      - --region
      - eu-west-1
      - eks
      - get-token
      - --cluster-name
      - training
      command: aws
      env:
      - name: AWS_PROFILE
        value: "1234"
      interactiveMode: IfAvailable
      provideClusterInfo: false
"""


def test_a_kubeconfig_as_kubectl_writes_it_is_read_to_the_value() -> None:
    assert _agrees(KUBECTL_WRITTEN), "precondition: read, not left to PyYAML"
    read: Any = read_block_yaml(KUBECTL_WRITTEN)
    plugin = read["users"][0]["user"]["exec"]
    assert plugin["args"][:2] == ["--region", "eu-west-1"]
    assert plugin["env"] == [{"name": "AWS_PROFILE", "value": "1234"}]
    assert plugin["provideClusterInfo"] is False
    assert read["preferences"] == {}
    assert _agrees("---\n" + KUBECTL_WRITTEN), "with its document start marker too"


def test_comment_and_blank_lines_anywhere_are_read_past() -> None:
    text = "# by hand\n\napiVersion: v1\n  # indented\nclusters:\n# at the edge\n- name: a\n\n"
    assert _agrees(text), "precondition: read, not left to PyYAML"
    assert read_block_yaml(text) == {"apiVersion": "v1", "clusters": [{"name": "a"}]}


@pytest.mark.parametrize(
    "scalar",
    [
        *("yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False"),
        *("FALSE", "on", "On", "ON", "off", "Off", "OFF", "yEs", "y", "n", "~", "null"),
        *("Null", "NULL", "none", "0", "7", "10", "-x", "--flag", "a b", "a  b", "a#b", "a:b"),
        *("it's", "a,b[c]{d}", "'q'", "'it''s'", "''''", "''", '""', '"a #c, d"', "{}", "[]"),
    ],
)
def test_a_scalar_in_the_subset_means_what_it_means_to_pyyaml(scalar: str) -> None:
    assert _agrees(f"k: {scalar}\n"), "precondition: read, not left to PyYAML"
    assert _agrees(f"k:\n- {scalar}\n"), "precondition: read, not left to PyYAML"


@pytest.mark.parametrize(
    "text",
    [
        "a: 1.5",  # a float
        "a: 012",  # an octal
        "a: 1:20",  # sexagesimal
        "a: 2001-12-14",  # a timestamp
        "a: -1",  # a signed number
        "a: &x 1\nb: *x",  # an anchor and its alias
        "a: !!str 1",  # a tag
        "a: |\n  x",  # a block scalar
        "a: b\n  c",  # a plain scalar over two lines
        "a: 'x' # c",  # a comment after content
        "a: b:",  # a value that ends as a key would
        "- #c",  # an entry of a comment alone
        'a: "',  # a quote alone
        "a: '",
        "a: x\x07y",  # a control character
        "a: x\ry",
        "",  # no document: PyYAML's None, not a mapping
        "# c",
        "a: 'x'y'",  # a quote inside single quotes, not doubled
        "a: b\n    c: d",  # a line deeper than its block
        "a:\n    b: c\n  d: e",  # a line between two indents
        "k" * 1025 + ": v",  # a key longer than YAML's simple keys may be
        'a: "x\\ty"',  # an escape
        "a: [x]",  # a flow sequence
        "a:\t1",  # a tab
        "a: caf\u00e9",  # outside ASCII
        "a: 1\r\nb: 2",  # a CR
        "a: 1\n---\nb: 2",  # a second document
        "'a': 1",  # a quoted key
        "yes: 1",  # a key that is not a string
        "- a",  # not a mapping
        "  a: 1",  # indented at the top
    ],
)
def test_a_text_outside_the_subset_is_left_to_pyyaml(text: str) -> None:
    assert read_block_yaml(text) is None


def test_nesting_deeper_than_the_cap_is_left_to_pyyaml() -> None:
    """The reader recurses once a level: past the cap it leaves the text to PyYAML (whose
    libyaml refuses past 1,000 levels) instead of overflowing the stack."""

    def nested(depth: int) -> str:
        return "".join(f"{'  ' * level}k:\n" for level in range(depth)) + "  " * depth + "k: v"

    assert read_block_yaml(nested(MAX_DEPTH)) is not None, "precondition: the cap's own depth"
    assert read_block_yaml(nested(MAX_DEPTH + 1)) is None
    assert read_block_yaml(nested(5000)) is None
    # A sequence at its key's own indent nests two levels for each two columns.
    entries = "k:\n" + "".join(f"{'  ' * level}- k:\n" for level in range(MAX_DEPTH // 2))
    assert read_block_yaml(entries) is not None, "precondition: under the cap"
    entries = "k:\n" + "".join(f"{'  ' * level}- k:\n" for level in range(3000))
    assert read_block_yaml(entries) is None
    # Entries alone, each a lone dash with the next one under it.
    dashes = "k:\n" + "".join(f"{'  ' * level}-\n" for level in range(1, 1200))
    assert read_block_yaml(dashes) is None
