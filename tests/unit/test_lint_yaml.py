"""Manifests read as Kubernetes reads YAML (sigs.k8s.io/yaml over go-yaml v2), kubectl the oracle.

`kubectl label --local -f FILE -o json` decodes a file exactly as `kubectl apply` does, offline,
and prints the object as JSON: every scalar and key below goes through it and through
`truegreen.yamlsafe.load_all(kubernetes=True)`, and the two must agree.
"""

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from truegreen import goscalars
from truegreen.yamlsafe import Document, Limits, Problem, Refusal, load_all

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(
    KUBECTL is None and not os.environ.get("TRUEGREEN_REQUIRE_REAL_PARTS"),
    reason="kubectl is not installed",
)

SCALARS = [
    "=",
    "=~",
    "!=",
    "y",
    "Y",
    "n",
    "N",
    "yes",
    "No",
    "on",
    "OFF",
    "true",
    "False",
    "nO",
    "~",
    "null",
    "Null",
    "",
    "0",
    "-0",
    "00",
    "08",
    "0o17",
    "0O17",
    "017",
    "0x1F",
    "0X1f",
    "+0x1f",
    "-0x1f",
    "0b101",
    "0B11",
    "-0b11",
    "0b-101",
    "1_000",
    "1__0",
    "_1",
    "1e3",
    "1E3",
    "1.0e3",
    "1e-7",
    ".5",
    "+.5",
    "-.5e+3",
    "1.",
    "1.5.6",
    "0.1_5",
    "1:20",
    "190:20:30",
    "2001-12-14",
    "2001-12-14T21:59:43.10-05:00",
    "2001-12-14 21:59:43.10 -5",
    "2001-13-14",
    "1e400",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775809",
    "0x1fffffffffffffffff",
    "8080",
    "+8080",
    "1.0",
    "3.25",
    "0.0",
    "-0.0",
    ".Nan",
    ".INf",
    "<<x",
    "a=b",
    "0x",
    "0b",
    "+",
    "123abc",
    "0xg",
    "1e",
    "1e+",
    ".e3",
    "-.",
    "1_2.5_0",
]
# Past CPython's 4,300-digit limit on int(text) (sys.get_int_max_str_digits); go-yaml reads each
# as a string: too big for 64 bits and, as decimal text, for a float64 too.
HUGE = "1" + "0" * 5000
SCALARS += [HUGE, "-" + HUGE, "+" + HUGE, "1_" + HUGE, "0x" + "f" * 5000, "0" + "7" * 5000]
KEYS = ["y", "n", "1", "0x10", "2.5", "1e6", "3.14159265358979", "0.1", "1000.0", "1e-5", "~a"]


def _kubectl_data(tmp_path: Path, data: str) -> dict[str, object]:
    manifest = tmp_path / "config.yaml"
    manifest.write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n{data}")
    assert KUBECTL is not None
    shown = subprocess.run(
        [KUBECTL, "label", "--local", "-f", str(manifest), "a=b", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    result: dict[str, object] = json.loads(shown.stdout)["data"]
    return result


def _ours(data: str) -> dict[str, object]:
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n{data}"
    (document,) = load_all(text, kubernetes=True)
    assert isinstance(document, Document)
    assert document.problem is None
    result = document.data["data"]  # type: ignore[index]
    assert isinstance(result, dict)
    return result


def _as_json(value: dict[str, object]) -> dict[str, object]:
    """What kubectl prints goes through float64 for big numbers: compare as JSON numbers do."""
    return json.loads(json.dumps(value), parse_int=float, parse_float=float)  # type: ignore[no-any-return]


@needs_kubectl
def test_every_plain_scalar_is_what_kubectl_reads(tmp_path: Path) -> None:
    data = "".join(f"  v{n}: {text}\n" for n, text in enumerate(SCALARS))
    assert _as_json(_ours(data)) == _as_json(_kubectl_data(tmp_path, data))


@needs_kubectl
def test_random_plain_scalars_are_what_kubectl_reads(tmp_path: Path) -> None:
    """Texts from the characters that decide a scalar's type, many at once through kubectl."""
    pick = random.Random(30)
    alphabet = "0123456789+-._eExXoObB:yYnN~T "
    texts: set[str] = set()
    while len(texts) < 400:
        text = "".join(pick.choice(alphabet) for _ in range(pick.randint(1, 8))).strip()
        if text and text[0] not in "-:?" and not text.endswith(":") and ": " not in text:
            texts.add(text)
    data = "".join(f"  v{n}: {text}\n" for n, text in enumerate(sorted(texts)))
    assert _as_json(_ours(data)) == _as_json(_kubectl_data(tmp_path, data))


@needs_kubectl
def test_keys_become_the_text_kubectl_gives_them(tmp_path: Path) -> None:
    data = "".join(f"  {key}: k{n}\n" for n, key in enumerate(KEYS))
    ours = _ours(data)
    assert ours == _kubectl_data(tmp_path, data)
    assert (ours["true"], ours["16"]) == ("k0", "k3"), "precondition: keys that are no strings"


@needs_kubectl
def test_tags_and_merges_are_what_kubectl_reads(tmp_path: Path) -> None:
    data = (
        "  env: !ENV HOME\n  name: !!python/name:a.b\n  int: !!int '5'\n  str: !!str 5\n"
        "  float: !!float 1\n  bin: !!binary aGVsbG8=\n  stamp: !!timestamp 2001-12-14\n"
        "  nul: !!null ~\n  coll: !Foo {x: 1}\n  seq: !Bar [1, y]\n  set: !!set {a, b}\n"
        "  base: &base {x: 1, y: 2}\n  merged: {<<: *base, y: 3}\n  quoted: {'<<': 1}\n"
        "  lt: <<\n"
    )
    assert _ours(data) == _kubectl_data(tmp_path, data)


@pytest.mark.parametrize(
    ("text", "problem", "line", "detail"),
    [
        ("a: .nan\n", Problem.UNSUPPORTED, 2, "json: unsupported value: NaN"),
        ("a: -.inf\n", Problem.UNSUPPORTED, 2, "json: unsupported value: -Inf"),
        ("~: a\n", Problem.UNSUPPORTED, 2, "a key is null (`~`, `null` or nothing), which JSON "),
        ("a: !!int abc\n", Problem.SYNTAX, 2, "cannot decode !!str `abc` as a !!int"),
        ("a: !!bool 1\n", Problem.SYNTAX, 2, "cannot decode !!int `1` as a !!bool"),
        ("a: !!binary '%%'\n", Problem.SYNTAX, 2, "!!binary value contains invalid base64 data"),
        # the second value's line, as go-yaml's strict decoding says it
        ("a: 1\na: 2\n", Problem.DUPLICATE_KEY, 3, 'key "a" already set in map'),
        ("1: a\n'1': b\n", Problem.DUPLICATE_KEY, 3, 'key "1" already set in map'),
        ("? [a]\n: b\n", Problem.UNSUPPORTED, 2, "a key is a list or a mapping"),
        ("a: {<<: [1]}\n", Problem.UNSUPPORTED, 2, "map merge requires map or sequence of maps"),
    ],
)
def test_what_kubernetes_cannot_take_is_the_document_s_problem(
    text: str, problem: Problem, line: int, detail: str
) -> None:
    (document,) = load_all(f"kind: x\n{text}", kubernetes=True)
    assert isinstance(document, Document)
    assert document.problem is not None
    assert (document.problem.problem, document.problem.line) == (problem, line)
    assert document.problem.detail.startswith(detail)


@needs_kubectl
def test_kubectl_refuses_what_is_a_problem(tmp_path: Path) -> None:
    """The oracle for the problems above: kubectl refuses each file outright."""
    merges = ("  s: &s [{a: b}]\n  d: {<<: *s}\n", "  s: &s x\n  d: {<<: [*s]}\n")
    for text in ("  a: .nan\n", "  ~: a\n", "  a: !!int abc\n", *merges):
        with pytest.raises(subprocess.CalledProcessError):
            _kubectl_data(tmp_path, text)


def test_one_broken_document_costs_only_itself() -> None:
    text = (
        "kind: A\n---\nkind: [broken\n---\nkind: C\n---\n"
        "kind: D\n  bad: indentation\n---\nkind: E\n"
    )
    loaded = list(load_all(text, kubernetes=True))
    assert [
        (type(d).__name__, d.data["kind"] if isinstance(d, Document) else d.line)  # type: ignore[index]
        for d in loaded
    ] == [("Document", "A"), ("Refusal", 3), ("Document", "C"), ("Refusal", 8), ("Document", "E")]
    assert [d.start_line for d in loaded if isinstance(d, Document)] == [1, 5, 10]


def test_a_broken_first_document_leaves_the_rest() -> None:
    loaded = list(load_all("a: 'open\n---\nkind: B\n", kubernetes=True))
    assert isinstance(loaded[0], Refusal)
    assert isinstance(loaded[1], Document)
    assert loaded[1].data == {"kind": "B"}
    assert loaded[1].start_line == 3


def test_a_document_marker_inside_a_block_scalar_ends_it_as_yaml_says() -> None:
    """`---` at the start of a line cannot be part of any scalar (YAML 1.2 c-forbidden)."""
    loaded = list(load_all("a: |\n  text\n---\nb: 1\n", kubernetes=True))
    assert [d.data for d in loaded if isinstance(d, Document)] == [{"a": "text\n"}, {"b": 1}]


def test_the_alias_bound_still_ends_the_stream() -> None:
    bomb = "\n".join(
        ['l0: &l0 "lol"']
        + [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, 10)]
        + ["---", "kind: After"]
    )
    loaded = list(load_all(bomb, kubernetes=True))
    assert [(type(d).__name__, getattr(d, "problem", None)) for d in loaded] == [
        ("Refusal", Problem.ALIASES)
    ]


def test_the_node_bound_counts_over_every_part_of_the_file() -> None:
    text = "kind: [x\n---\n" + "---\n".join("a: [1, 2, 3]\n" for _ in range(10))
    loaded = list(load_all(text, Limits(max_nodes=20), kubernetes=True))
    assert isinstance(loaded[-1], Refusal)
    assert loaded[-1].problem is Problem.TOO_MANY_NODES
    assert sum(isinstance(d, Document) for d in loaded) < 10


def test_pyyaml_s_reading_stays_for_snapshots_and_config() -> None:
    """Without `kubernetes`, YAML 1.1 as before: `=` is refused and `y` is a string."""
    (refused,) = load_all("a: =\n")
    assert isinstance(refused, Refusal)
    (plain,) = load_all("a: y\nb: 0o17\n")
    assert isinstance(plain, Document)
    assert plain.data == {"a": "y", "b": "0o17"}


def test_the_longest_decimal_that_fits_64_bits_is_still_a_number() -> None:
    """ParseUint takes 20 digits (2**64 - 1); only longer texts are out of range unread."""
    assert goscalars.resolve("18446744073709551615") == (goscalars.INT, 2**64 - 1)
    assert goscalars.resolve("99999999999999999999") == (goscalars.FLOAT, 1e20)


@pytest.mark.parametrize("text", [HUGE, "-" + HUGE, "+" + HUGE, "1_" + HUGE, "2" + "9" * 4400])
def test_a_plain_integer_too_long_for_python_s_int_is_the_string_kubectl_reads(text: str) -> None:
    """go.yaml.in/yaml/v2 resolve.go `resolve`: ParseInt and ParseUint fail (out of range),
    ParseFloat fails (past float64), so the plain scalar resolves to `!!str`, the text as it is;
    kubectl 1.32 prints it as that string (the kubectl test above). Python's int() refuses
    such a text outright, which must not end the reading."""
    assert goscalars.resolve(text) == (goscalars.STR, text)
    (document,) = load_all(f"kind: x\nport: {text}\n", kubernetes=True)
    assert isinstance(document, Document)
    assert (document.data, document.problem) == ({"kind": "x", "port": text}, None)


@pytest.mark.parametrize(
    ("key", "text"),
    [(2.5, "2.5"), (1e6, "1e+06"), (0.1, "0.1"), (1000.0, "1000"), (1e-5, "1e-05"), (-0.0, "-0")],
)
def test_float_keys_are_written_as_go_writes_a_float32(key: float, text: str) -> None:
    assert goscalars.key_text(key) == text


def test_remembered_plain_scalars_stay_bounded() -> None:
    """Kubernetes' reading remembers each plain text's tag (and a value that is no string) up
    to the loader's count and length."""
    from truegreen.yamlsafe import _PLAIN_TAGS, _PLAIN_VALUES, _RESOLVED_MAX

    _PLAIN_TAGS.clear()
    _PLAIN_VALUES.clear()
    list(
        load_all(
            "port: '8080'\nn: 8080\nlong: " + "9" * 65 + "\nexact: " + "y" * 64 + "\n",
            kubernetes=True,
        )
    )
    assert set(_PLAIN_TAGS) == {"port", "n", "8080", "long", "exact", "y" * 64}
    # strings need no value kept; `n` is a boolean to Kubernetes
    assert _PLAIN_VALUES == {"n": (goscalars.BOOL, False), "8080": (goscalars.INT, 8080)}
    text = "[" + ", ".join(str(n) for n in range(_RESOLVED_MAX + 10)) + "]"
    (document,) = load_all(text, kubernetes=True)
    assert isinstance(document, Document)
    assert document.data == list(range(_RESOLVED_MAX + 10))  # past the bound, still read right
    assert len(_PLAIN_TAGS) == _RESOLVED_MAX


MERGES = (
    "  base: &base {p: 1, q: 2}\n"
    "  before: {q: 9, <<: *base}\n"
    "  after: {<<: *base, q: 9}\n"
    "  between: {q: 9, <<: *base, p: 8}\n"
    "  two: {<<: *base, <<: {q: 7, r: 1}}\n"
    "  listed: {<<: [*base, {q: 5, s: 1}]}\n"
    "  listedafter: {q: 0, <<: [{q: 5}, *base]}\n"
)


def test_merges_apply_in_document_order_as_go_yaml_v2_applies_them() -> None:
    """go-yaml v2 decode.go `(*decoder).mapping` walks a mapping's keys in order: `<<` writes its
    mapping's keys (`merge`, a list's items from last to first so the earliest wins) over what is
    already there, and a later key writes over the merged ones."""
    assert _ours(MERGES) == {
        "base": {"p": 1, "q": 2},
        "before": {"p": 1, "q": 2},
        "after": {"p": 1, "q": 9},
        "between": {"p": 8, "q": 2},
        "two": {"p": 1, "q": 7, "r": 1},
        "listed": {"p": 1, "q": 2, "s": 1},
        "listedafter": {"p": 1, "q": 5},
    }


@needs_kubectl
def test_merges_are_what_kubectl_reads_in_every_order(tmp_path: Path) -> None:
    assert _ours(MERGES) == _kubectl_data(tmp_path, MERGES)


def test_a_key_written_over_by_a_merge_is_no_duplicate() -> None:
    """kubectl takes `{q: 9, <<: *base}` (the oracle above); only a key written twice by the
    mapping itself is a duplicate."""
    text = f"kind: x\ndata:\n{MERGES}  dup: {{q: 1, <<: *base, q: 3}}\n"
    (document,) = load_all(text, kubernetes=True)
    assert isinstance(document, Document)
    assert document.problem == Refusal(Problem.DUPLICATE_KEY, 'key "q" already set in map', 10)


JQ_ITEMS = (
    '{\n  "apiVersion": "v1",\n  "kind": "ConfigMap",\n  "metadata": {\n    "name": "a"\n  }\n}\n'
    '{\n  "apiVersion": "v1",\n  "kind": "ConfigMap",\n  "metadata": {\n    "name": "b"\n  }\n}\n'
)
JQ_COMPACT = (
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}'
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d"}}\n'
    ' {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"e"},"data":{"k":"1"}}\n'
)


def _names(text: str) -> list[tuple[str, int]]:
    return [
        (d.data["metadata"]["name"], d.start_line)  # type: ignore[index]
        for d in load_all(text, kubernetes=True)
        if isinstance(d, Document)
    ]


def test_input_that_starts_with_a_brace_is_a_stream_of_json_values() -> None:
    """apimachinery pkg/util/yaml/decoder.go YAMLOrJSONDecoder: GuessJSONStream sees `{` first
    and reads every JSON value (json.NewDecoder), as `jq '.items[]'` and `jq -c` write them;
    each value's line is where it starts."""
    assert _names(JQ_ITEMS) == [("a", 1), ("b", 8)]
    assert _names(JQ_COMPACT) == [("c", 1), ("d", 1), ("e", 2)]
    last = list(load_all(JQ_COMPACT, kubernetes=True))[2]
    assert isinstance(last, Document)
    assert last.data == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "e"},
        "data": {"k": "1"},
    }
    assert list(last.lines.values()) == [2, 2, 2]


@needs_kubectl
def test_kubectl_reads_every_value_of_a_json_stream(tmp_path: Path) -> None:
    for text in (JQ_ITEMS, JQ_COMPACT):
        manifest = tmp_path / "stream.json"
        manifest.write_text(text)
        assert KUBECTL is not None
        shown = subprocess.run(
            [KUBECTL, "label", "--local", "-f", str(manifest), "a=b", "-o", "name"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert shown.stdout.split() == [f"configmap/{name}" for name, _ in _names(text)]


@pytest.mark.parametrize(
    ("text", "read", "refusal"),
    [
        (
            JQ_COMPACT + "---\nkind: A\n",
            3,
            Refusal(Problem.NOT_JSON, "Expecting value (line 3, column 1)", 3),
        ),
        (
            '{"a": 1}\n{"a": 2}\n{"b": NaN}\n',
            2,
            Refusal(
                Problem.NOT_JSON,
                "invalid character 'N' looking for beginning of value (line 3, column 7)",
                3,
            ),
        ),
        (
            '{"a": 1}{"a": 2}\n{"b": 2\n',
            2,
            Refusal(Problem.NOT_JSON, "Expecting ',' delimiter (line 3, column 1)", 3),
        ),
    ],
)
def test_a_json_stream_stops_where_it_stops_being_json(
    text: str, read: int, refusal: Refusal
) -> None:
    """After two JSON values the stream is JSON (YAMLOrJSONDecoder.Decode `if d.count > 1`):
    kubectl stops at the first value that is no JSON (`json: offset 65: invalid character
    '-'`), what it read before stands, the rest is one refusal."""
    loaded = list(load_all(text, kubernetes=True))
    assert sum(isinstance(d, Document) for d in loaded) == read
    assert loaded[read:] == [refusal]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a: 1\n...\nb: [\n", 3),  # a document after `...`, in the part the first one holds
        ("a: 1\n...\nb: 2\n\x07\n---\nc: 1\n", 4),  # a character YAML refuses, before a `---`
    ],
)
def test_nothing_after_the_last_document_read_is_dropped_without_a_word(
    text: str, line: int
) -> None:
    refused = [d for d in load_all(text, kubernetes=True) if isinstance(d, Refusal)]
    assert [r.line for r in refused] == [line]
