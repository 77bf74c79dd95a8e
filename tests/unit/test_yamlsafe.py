"""The one YAML loader: bounded in bytes, nodes and aliases, strict about keys, exact in value."""

import io
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from truegreen.yamlsafe import (
    _RESOLVED,
    _RESOLVED_MAX,
    MIB,
    Document,
    Limits,
    Problem,
    Refusal,
    _allowed_alias_ratio,
    decode,
    load_all,
    load_single,
    read_file,
    read_opened,
    read_stream,
)


def laughs(levels: int, fanout: int) -> str:
    """A "billion laughs": each level is a list of `fanout` aliases of the level before."""
    lines = ['l0: &l0 "lol"']
    for level in range(1, levels + 1):
        aliases = ", ".join([f"*l{level - 1}"] * fanout)
        lines.append(f"l{level}: &l{level} [{aliases}]")
    return "\n".join(lines) + "\n"


DEFAULT = Limits()


def loaded(text: str, limits: Limits = DEFAULT) -> list[Document | Refusal]:
    return list(load_all(text, limits))


def refusal(text: str, limits: Limits = DEFAULT) -> Refusal:
    results = loaded(text, limits)
    assert isinstance(results[-1], Refusal), results
    return results[-1]


def only(text: str) -> object:
    results = loaded(text)
    assert len(results) == 1, results
    assert isinstance(results[0], Document)
    return results[0].data


# -- aliases: go-yaml's allowedAliasRatio, the limit the API server decodes with ----------------


def test_a_billion_laughs_is_refused_where_the_aliases_pile_up() -> None:
    text = laughs(9, 9)
    assert len(text.encode()) < 600  # the 572-byte class of file from the report
    assert refusal(text) == Refusal(Problem.ALIASES, "document contains excessive aliasing", 4)


def test_few_aliases_pass_as_go_yaml_lets_them() -> None:
    """go-yaml v3 accepts 3 levels of 10 and refuses 4 (>99% of ~11,000 decoded nodes)."""
    assert isinstance(loaded(laughs(3, 10))[0], Document)
    assert refusal(laughs(4, 10)).problem is Problem.ALIASES


def test_aliases_repeat_the_same_value_without_copying_it() -> None:
    data = only("base: &b {image: x, ports: [1, 2]}\none: *b\ntwo: *b\n")
    assert data == {"base": {"image": "x", "ports": [1, 2]}} | {
        "one": {"image": "x", "ports": [1, 2]},
        "two": {"image": "x", "ports": [1, 2]},
    }
    assert isinstance(data, dict)
    assert data["one"] is data["base"]


def test_a_large_document_may_not_be_mostly_aliases() -> None:
    """Past 400,000 nodes the allowed share falls (10% at 4,000,000): 1,000 copies of a
    1,000-value list (1,000,000 nodes, 99.9% aliased) is refused, not expanded."""
    text = "a: &a [" + ", ".join(["x"] * 1000) + "]\nb: [" + ", ".join(["*a"] * 1000) + "]\n"
    assert refusal(text).problem is Problem.ALIASES


def test_the_billion_laughs_costs_megabytes_not_gigabytes(tmp_path: Path) -> None:
    """Measured by the child process itself: VmHWM, the peak RSS of its own memory since its
    exec (ru_maxrss would carry over the forking test process's peak). No clock."""
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(laughs(9, 9))
    program = (
        "import sys; from pathlib import Path; from truegreen.yamlsafe import *\n"
        "text = read_file(Path(sys.argv[1]))\n"
        "print([r.problem.value for r in load_all(text) if isinstance(r, Refusal)])\n"
        "status = Path('/proc/self/status').read_text().splitlines()\n"
        "print(next(line.split()[1] for line in status if line.startswith('VmHWM:')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program, str(bomb)], capture_output=True, text=True, check=True
    )
    refused, peak_kb = done.stdout.split("\n")[:2]
    assert refused == "['aliases']"
    assert int(peak_kb) < 100 * 1024, f"peak {peak_kb} KB"


def test_an_alias_that_holds_itself_is_refused_not_recursed_forever() -> None:
    assert refusal("a: &a [*a]\n") == Refusal(
        Problem.UNSUPPORTED, "it is nested too deeply, or an alias holds itself"
    )


def test_nodes_are_counted_as_aliases_expand_them() -> None:
    limits = Limits(max_nodes=50)
    assert isinstance(loaded("a: [" + ", ".join(["1"] * 40) + "]\n", limits)[0], Document)
    text = "a: &a [" + ", ".join(["1"] * 20) + "]\nb: *a\nc: *a\n"
    # The line is the repeated value's own (the node is shared; where the alias sat is not kept).
    assert refusal(text, limits) == Refusal(
        Problem.TOO_MANY_NODES, "it holds more than 50 values", 1
    )


def test_the_node_count_runs_across_documents() -> None:
    limits = Limits(max_nodes=30)
    text = "a: [" + ", ".join(["1"] * 20) + "]\n---\nb: [" + ", ".join(["1"] * 20) + "]\n"
    results = loaded(text, limits)
    assert isinstance(results[0], Document)
    assert results[1] == Refusal(Problem.TOO_MANY_NODES, "it holds more than 30 values", 3)


# -- duplicate keys: the words of the API server's strict decoding --------------------------


def test_a_duplicate_key_is_refused_with_strict_decoding_s_words() -> None:
    text = (
        "kind: Deployment\nspec:\n  containers:\n  - name: api\n"
        "    livenessProbe: {exec: {command: [true]}}\n"
        "    image: a\n"
        "    livenessProbe: {httpGet: {port: 8080}}\n"
    )
    assert refusal(text) == Refusal(
        Problem.DUPLICATE_KEY, 'key "livenessProbe" already set in map', 7
    )


@pytest.mark.parametrize(
    ("text", "shown", "line"),
    [
        ("{a: 1, b: 2, a: 3}\n", '"a"', 1),
        ("x:\n  1: a\n  1: b\n", "1", 3),
        ("spec: 1\nspec:\n  replicas: 2\n", '"spec"', 3),
        ("true: a\nyes: b\n", "true", 2),
    ],
)
def test_duplicates_in_any_style_and_of_any_type(text: str, shown: str, line: int) -> None:
    """The line is the second value's, as go-yaml v2 (strict) reports it."""
    assert refusal(text) == Refusal(Problem.DUPLICATE_KEY, f"key {shown} already set in map", line)


def test_merge_keys_are_not_duplicates_and_explicit_keys_win() -> None:
    text = "a: &a {x: 1, y: 1}\nb: &b {y: 2, z: 2}\nc:\n  <<: [*a, *b]\n  z: 3\n"
    assert only(text) == yaml.load(text, Loader=yaml.CSafeLoader)
    assert only(text) == {
        "a": {"x": 1, "y": 1},
        "b": {"y": 2, "z": 2},
        "c": {"x": 1, "y": 1, "z": 3},
    }


def test_a_merge_of_something_that_is_no_mapping_is_refused() -> None:
    assert refusal("a: 1\nb:\n  <<: 5\n") == Refusal(
        Problem.UNSUPPORTED, "map merge requires map or sequence of maps as the value", 3
    )


# -- values: the same as PyYAML's safe loader, tags it cannot build refused --------------------

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(JSONISH, min_size=1, max_size=3))
def test_every_value_is_what_pyyaml_s_safe_loader_builds(documents: list[object]) -> None:
    text = yaml.safe_dump_all(documents)
    results = loaded(text)
    assert all(isinstance(r, Document) for r in results)
    assert [r.data for r in results if isinstance(r, Document)] == list(
        yaml.load_all(text, Loader=yaml.CSafeLoader)
    )


def test_scalars_resolve_as_yaml_1_1_does() -> None:
    text = "a: 0x1f\nb: 1_000\nc: 2001-12-14\nd: ~\ne: yes\nf: '8080'\ng: 1.5\nh: !!str 10\n"
    assert only(text) == yaml.load(text, Loader=yaml.CSafeLoader)
    assert only(text) == {
        "a": 31,
        "b": 1000,
        "c": yaml.load("2001-12-14", Loader=yaml.CSafeLoader),
        "d": None,
        "e": True,
        "f": "8080",
        "g": 1.5,
        "h": "10",
    }


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("a: !Ref x\n", "the tag !Ref is not supported"),
        ("a: !!set {x, y}\n", "the tag !!set is not supported"),
        ("a: !!omap [b: 1]\n", "the tag !!omap is not supported"),
        ("? [a, b]\n: 1\n", "a key is a list or a mapping"),
    ],
)
def test_what_the_api_server_cannot_take_is_refused(text: str, detail: str) -> None:
    assert refusal(text) == Refusal(Problem.UNSUPPORTED, detail, 1)


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("a: !!int foo\n", "cannot decode !!str `foo` as a !!int"),
        # PyYAML's own constructor fails with AttributeError on this one.
        ("a: !!timestamp foo\n", "cannot decode !!str `foo` as a !!timestamp"),
        ("a: !!float " + "9" * 39 + "x\n", f"cannot decode !!str `{'9' * 39}x` as a !!float"),
        ("a: !!float " + "9" * 40 + "x\n", f"cannot decode !!str `{'9' * 40}...` as a !!float"),
    ],
)
def test_a_scalar_that_does_not_fit_its_tag_says_so_as_go_yaml_does(text: str, detail: str) -> None:
    assert refusal(text) == Refusal(Problem.SYNTAX, detail, 1)


def test_syntax_errors_name_a_line_of_the_input() -> None:
    assert refusal("a: [unclosed") == Refusal(Problem.SYNTAX, "did not find expected ',' or ']'", 1)
    assert refusal("kind: x\nmetadata: {name: x\n").line == 2


def test_deep_nesting_is_refused_by_libyaml() -> None:
    assert refusal("[" * 5000 + "]" * 5000).problem is Problem.SYNTAX


def test_documents_before_the_problem_are_kept() -> None:
    results = loaded("a: 1\n---\nb: 2\n---\nc: [\n")
    assert [r.data for r in results if isinstance(r, Document)] == [{"a": 1}, {"b": 2}]
    assert results[-1] == Refusal(Problem.SYNTAX, "did not find expected node content", 5)


def test_each_mapping_remembers_its_line() -> None:
    results = loaded("# c\nkind: Pod\nspec:\n  containers:\n  - name: a\n  - name: b\n")
    document = results[0]
    assert isinstance(document, Document)
    data = document.data
    assert isinstance(data, dict)
    containers = data["spec"]["containers"]
    assert [document.lines[id(m)] for m in (data, data["spec"], *containers)] == [2, 4, 5, 6]
    assert (document.start_line, document.end_line) == (2, 7)


def test_lines_are_left_out_when_not_asked_for() -> None:
    (document,) = load_all("a: {b: 1}\n", lines=False)
    assert isinstance(document, Document)
    assert document.lines == {}


# -- reading: regular files only, never beyond the cap, UTF-8 text ---------------------------


def test_a_file_over_the_cap_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as stream:
        stream.truncate(200 * 1000 * 1000)  # sparse: 200 MB that take no disk
    assert read_file(big) == Refusal(Problem.TOO_LARGE, "it is larger than 16 MiB")
    small = Limits(max_bytes=10)
    (tmp_path / "ok.yaml").write_text("a: 1234\n")
    (tmp_path / "over.yaml").write_text("a: 12345678\n")
    assert read_file(tmp_path / "ok.yaml", small) == "a: 1234\n"
    assert read_file(tmp_path / "over.yaml", small) == Refusal(
        Problem.TOO_LARGE, "it is larger than 10 bytes"
    )


class _CountingStream(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.asked = 0

    def read(self, size: int | None = -1) -> bytes:
        self.asked += size if size is not None and size >= 0 else 10**12
        return super().read(size)


def test_a_stream_is_read_at_most_one_byte_past_the_cap() -> None:
    stream = _CountingStream(b"a" * (2 * MIB))
    assert read_stream(stream, Limits(max_bytes=MIB)) == Refusal(
        Problem.TOO_LARGE, "it is larger than 1 MiB"
    )
    assert stream.asked == MIB + 1
    exact = _CountingStream(b"a: 1\n")
    assert read_stream(exact, Limits(max_bytes=5)) == "a: 1\n"


@pytest.mark.timeout(20)
def test_a_pipe_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    assert read_file(fifo) == Refusal(Problem.NOT_REGULAR, "it is a pipe, not a regular file")


@pytest.mark.timeout(20)
def test_a_link_to_a_device_or_a_folder_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "zero.yaml"
    link.symlink_to("/dev/zero")
    assert read_file(link) == Refusal(Problem.NOT_REGULAR, "it is a device, not a regular file")
    assert read_file(tmp_path) == Refusal(Problem.NOT_REGULAR, "it is a folder, not a regular file")


@pytest.mark.timeout(20)
def test_what_is_opened_is_checked_again_without_blocking(tmp_path: Path) -> None:
    """A path swapped for a pipe after its stat: opening cannot hang, and it is refused."""
    fifo = tmp_path / "swapped.yaml"
    os.mkfifo(fifo)
    assert read_opened(fifo) == Refusal(Problem.NOT_REGULAR, "it is a pipe, not a regular file")
    folder = Refusal(Problem.NOT_REGULAR, "it is a folder, not a regular file")
    assert read_opened(tmp_path) == folder
    (tmp_path / "ok.yaml").write_text("a: 1\n")
    assert read_opened(tmp_path / "ok.yaml") == "a: 1\n"
    assert read_opened(tmp_path / "ok.yaml", Limits(max_bytes=3)) == Refusal(
        Problem.TOO_LARGE, "it is larger than 3 bytes"
    )


def test_a_file_that_cannot_be_opened_says_why(tmp_path: Path) -> None:
    assert read_file(tmp_path / "absent.yaml") == Refusal(
        Problem.UNREADABLE, "No such file or directory"
    )
    assert read_opened(tmp_path / "absent.yaml") == Refusal(
        Problem.UNREADABLE, "No such file or directory"
    )


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"kind: Pod\x00\x01", Refusal(Problem.BINARY, "it is a binary file, not text")),
        (b"name: caf\xe9\n", Refusal(Problem.NOT_UTF8, "it is not UTF-8 text (byte 10)")),
        ("name: café\n".encode(), "name: café\n"),
    ],
)
def test_text_is_utf_8_without_nul_bytes(data: bytes, expected: str | Refusal) -> None:
    assert decode(data) == expected


def test_read_problems_and_yaml_problems_are_told_apart() -> None:
    assert {p for p in Problem if p.is_read} == {
        Problem.UNREADABLE,
        Problem.NOT_REGULAR,
        Problem.TOO_LARGE,
        Problem.BINARY,
        Problem.NOT_UTF8,
        Problem.NOT_UTF16,
    }


def test_load_single_wants_one_document(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("")
    assert load_single(path) == Document(None, 1, 1)
    path.write_text("a: 1\n")
    single = load_single(path)
    assert isinstance(single, Document)
    assert single.data == {"a": 1}
    path.write_text("a: 1\n---\nb: 2\n")
    assert load_single(path) == Refusal(Problem.SYNTAX, "expected a single document, found more", 3)
    path.write_text(laughs(9, 9))
    assert load_single(path) == Refusal(Problem.ALIASES, "document contains excessive aliasing", 4)


# -- the exact bounds ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nodes", "share"),
    [(1, 0.99), (400_000, 0.99), (2_200_000, 0.545), (4_000_000, 0.10), (40_000_000, 0.10)],
)
def test_the_allowed_alias_share_is_go_yaml_s(nodes: int, share: float) -> None:
    assert _allowed_alias_ratio(nodes) == pytest.approx(share)
    assert _allowed_alias_ratio(400_001) < 0.99
    assert _allowed_alias_ratio(3_999_999) > 0.10


def _repeated(size: int, copies: int) -> str:
    """A list of `size` values and a list of `copies` aliases of it: 5 + (copies + 1) *
    (size + 1) nodes, of which copies * (size + 1) come from aliases."""
    values = ", ".join(["x"] * size)
    return f"a: &a [{values}]\nb: [{', '.join(['*a'] * copies)}]\n"


def test_aliasing_is_refused_exactly_where_go_yaml_refuses_it() -> None:
    # 10-value lists: 138 copies are 98.996% aliases of 1,394 nodes; 139 are 99.003% of 1,404.
    assert isinstance(loaded(_repeated(9, 138))[0], Document)
    assert refusal(_repeated(9, 139)) == Refusal(
        Problem.ALIASES, "document contains excessive aliasing", 1
    )
    # Empty lists: 995 copies make 1,000 nodes (not more than 1,000, so allowed), 996 make 1,001.
    assert isinstance(loaded(_repeated(0, 995))[0], Document)
    assert refusal(_repeated(0, 996)).problem is Problem.ALIASES


def test_the_node_cap_is_exact() -> None:
    """A flow list of k values is k + 1 nodes."""
    limits = Limits(max_nodes=100)
    assert isinstance(loaded("[" + ", ".join(["1"] * 99) + "]", limits)[0], Document)
    assert isinstance(loaded("[" + ", ".join(["[]"] * 99) + "]", limits)[0], Document)
    assert refusal("[" + ", ".join(["1"] * 100) + "]", limits) == Refusal(
        Problem.TOO_MANY_NODES, "it holds more than 100 values", 1
    )
    assert refusal("[" + ", ".join(["[]"] * 100) + "]", limits).problem is Problem.TOO_MANY_NODES


def test_a_file_exactly_at_the_cap_is_read(tmp_path: Path) -> None:
    path = tmp_path / "ten.yaml"
    path.write_text("a: 123456\n")
    assert path.stat().st_size == 10
    assert read_file(path, Limits(max_bytes=10)) == "a: 123456\n"
    assert read_file(path, Limits(max_bytes=9)) == Refusal(
        Problem.TOO_LARGE, "it is larger than 9 bytes"
    )


def test_load_single_bounds_both_the_bytes_and_the_values(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("a: [1, 2, 3]\n")
    assert load_single(path, Limits(max_bytes=5)) == Refusal(
        Problem.TOO_LARGE, "it is larger than 5 bytes"
    )
    assert load_single(path, Limits(max_nodes=4)) == Refusal(
        Problem.TOO_MANY_NODES, "it holds more than 4 values", 1
    )
    single = load_single(path)
    assert isinstance(single, Document)
    assert single.lines == {}  # callers of load_single need no lines
    with_lines = load_single(path, lines=True)
    assert isinstance(with_lines, Document)
    assert list(with_lines.lines.values()) == [1]


# -- what could be missed: merges, key shapes, error texts, other file kinds -----------------


def test_separate_merge_keys_and_merge_lists_as_pyyaml_builds_them() -> None:
    text = (
        "a: &a {x: a, y: a}\nb: &b {x: b, z: b}\n"
        "separate:\n  <<: *a\n  <<: *b\n"
        "listed:\n  <<: [*a, *b]\n"
    )
    assert only(text) == yaml.load(text, Loader=yaml.CSafeLoader)
    assert only(text) == {
        "a": {"x": "a", "y": "a"},
        "b": {"x": "b", "z": "b"},
        "separate": {"x": "a", "y": "a", "z": "b"},  # the earlier `<<` wins
        "listed": {"x": "a", "y": "a", "z": "b"},  # in a list, the first wins
    }


@pytest.mark.parametrize(
    ("text", "detail", "line"),
    [
        ("a: &a {x: 1}\nc:\n  <<: *a\n  k: 1\n  k: 2\n", 'key "k" already set in map', 5),
        ("café: 1\ncafé: 2\n", 'key "café" already set in map', 2),
        ("2001-01-01: a\n2001-01-01: b\n", 'key "2001-01-01" already set in map', 2),
    ],
)
def test_duplicates_after_a_merge_and_of_every_key_shape(text: str, detail: str, line: int) -> None:
    assert refusal(text) == Refusal(Problem.DUPLICATE_KEY, detail, line)


def test_a_syntax_error_names_its_own_line() -> None:
    assert refusal("a: 1\nb: c: d\ne: 2\n") == Refusal(
        Problem.SYNTAX, "mapping values are not allowed in this context", 2
    )
    # At the end of the input libyaml says "one line past the last": the last line is named.
    assert refusal("x: 1\ny: [unclosed").line == 2
    assert refusal("x: 1\ny: [unclosed\n").line == 2


def test_a_character_yaml_does_not_allow_is_refused_in_one_line() -> None:
    """On its line: libyaml's reader gives the UTF-8 byte it stopped at."""
    assert refusal("a: \x01\n") == Refusal(
        Problem.SYNTAX, "unacceptable character #x0001: control characters are not allowed", 1
    )
    assert refusal("a: é\nb: ü\n\nc: \x01\n").line == 4


class _FailingStream(io.BytesIO):
    def __init__(self, error: OSError) -> None:
        super().__init__()
        self.error = error

    def read(self, size: int | None = -1) -> bytes:
        raise self.error


def test_a_stream_that_fails_says_why() -> None:
    assert read_stream(_FailingStream(OSError(5, "Input/output error"))) == Refusal(
        Problem.UNREADABLE, "Input/output error"
    )
    assert read_stream(_FailingStream(OSError("gone"))) == Refusal(Problem.UNREADABLE, "gone")


def test_a_socket_and_a_block_device_are_refused(tmp_path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "s.yaml"))
        assert read_file(tmp_path / "s.yaml") == Refusal(
            Problem.NOT_REGULAR, "it is a socket, not a regular file"
        )
    block = next((p for p in Path("/dev").iterdir() if p.is_block_device()), None)
    if block is None:
        pytest.skip("no block device on this machine")
    (tmp_path / "disk.yaml").symlink_to(block)
    assert read_file(tmp_path / "disk.yaml") == Refusal(
        Problem.NOT_REGULAR, "it is a device, not a regular file"
    )


def test_remembered_scalar_tags_stay_bounded() -> None:
    """Plain scalars' tags are remembered for speed, up to a fixed count and length."""
    _RESOLVED.clear()
    loaded("port: '8080'\nname: http\nlong: " + "y" * 65 + "\nexact: " + "z" * 64 + "\n")
    assert _RESOLVED == {
        "port": "tag:yaml.org,2002:str",
        "name": "tag:yaml.org,2002:str",
        "http": "tag:yaml.org,2002:str",
        "long": "tag:yaml.org,2002:str",
        "exact": "tag:yaml.org,2002:str",
        "z" * 64: "tag:yaml.org,2002:str",
    }  # '8080' is quoted (no implicit tag); 65 characters are not kept
    assert only("a: 10\nb: 10\n") == {"a": 10, "b": 10}
    assert _RESOLVED["10"] == "tag:yaml.org,2002:int"
    loaded("[" + ", ".join(f"v{n}" for n in range(_RESOLVED_MAX + 10)) + "]")
    assert len(_RESOLVED) == _RESOLVED_MAX


def test_the_node_cap_stops_composing_not_only_building(tmp_path: Path) -> None:
    """A file whose values pass the cap is refused before libyaml composes them all, so memory
    stays bounded by the cap, not the file: 1,000,000 values under a 100,000 cap."""
    big = tmp_path / "flow.yaml"
    big.write_text("kind: ConfigMap\nitems: [" + ",".join(["1"] * 1_000_000) + "]\n")
    program = (
        "import sys; from pathlib import Path; from truegreen.yamlsafe import *\n"
        "text = read_file(Path(sys.argv[1]))\n"
        "print([(r.problem.value, r.line) for r in load_all(text, Limits(max_nodes=100_000), "
        "kubernetes=True) if isinstance(r, Refusal)])\n"
        "status = Path('/proc/self/status').read_text().splitlines()\n"
        "print(next(line.split()[1] for line in status if line.startswith('VmHWM:')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program, str(big)], capture_output=True, text=True, check=True
    )
    refused, peak_kb = done.stdout.split("\n")[:2]
    assert int(peak_kb) < 120 * 1024, f"peak {peak_kb} KB"
    assert refused == "[('too-many-nodes', 2)]"  # on the line where the cap is passed


def test_documents_before_the_cap_are_still_read_when_composing_stops() -> None:
    """The count runs over the file: the documents that fit are read, the one that passes the
    cap is refused on the line where it does."""
    limits = Limits(max_nodes=30)
    text = "a: 1\n---\nb: [" + ", ".join(["1"] * 20) + "]\n---\nc:\n- " + "\n- ".join("123") + "\n"
    results = loaded(text, limits)
    assert [type(r).__name__ for r in results] == ["Document", "Document", "Refusal"]
    assert results[2] == Refusal(Problem.TOO_MANY_NODES, "it holds more than 30 values", 7)


# -- `<<` merges as go-yaml v2 decode.go `(*decoder).merge` takes them ---------------------------

MERGE_REFUSED = "map merge requires map or sequence of maps as the value"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # `case aliasNode: if n.alias.kind != mappingNode { failWantMap() }`
        ("s: &s\n  - {a: 1}\n  - {b: 2}\nd:\n  <<: *s\n", 5),
        ("s: &s x\nd:\n  <<: *s\n", 3),
        # `case sequenceNode:` each item an alias (checked as above) or a mapping
        ("s: &s\n  - {a: 1}\nd:\n  <<: [*s]\n", 4),
        ("s: &s x\nd:\n  <<: [{a: 1}, *s]\n", 3),
        ("d:\n  <<: [[{a: 1}]]\n", 2),
    ],
)
def test_a_merge_of_an_alias_to_no_mapping_is_what_kubernetes_refuses(text: str, line: int) -> None:
    """go-yaml v2 decode.go `(*decoder).merge`: `<<: *list` fails even where the list holds
    mappings (kubectl: `error converting YAML to JSON: yaml: map merge requires map or sequence
    of maps as the value`); only a list written in place may hold them. The line is the `<<`."""
    (document,) = load_all(text, kubernetes=True)
    assert isinstance(document, Document)
    assert document.problem == Refusal(Problem.UNSUPPORTED, MERGE_REFUSED, line)


def test_a_merge_of_aliases_to_mappings_is_read() -> None:
    """go-yaml v2 `(*decoder).merge`: an alias to a mapping, alone or in a list, merges."""
    text = "m: &m {a: 1}\nn: &n {a: 2, b: 2}\nd: {<<: *m}\ne: {<<: [*m, *n, {c: 3}]}\n"
    (document,) = load_all(text, kubernetes=True)
    assert isinstance(document, Document)
    assert document.problem is None
    assert document.data["d"] == {"a": 1}  # type: ignore[index]
    assert document.data["e"] == {"a": 1, "b": 2, "c": 3}  # type: ignore[index]


# -- input that starts with `{`: apimachinery pkg/util/yaml/decoder.go YAMLOrJSONDecoder ---------


CONTROL_1C = "unacceptable character #x001c: control characters are not allowed"
EXPECTING_NAME = "Expecting property name enclosed in double quotes"


def kubernetes_read(text: str) -> list[tuple[object, int] | Refusal]:
    """Each document's data and first line, or the refusal."""
    return [
        d if isinstance(d, Refusal) else (d.data, d.start_line)
        for d in load_all(text, kubernetes=True)
    ]


@pytest.mark.parametrize(
    ("text", "read"),
    [
        # decoder_test.go TestYAMLOrJSONDecoder, each case that starts with `{` or whitespace
        (' {"1":2}{"3":4}', [({"1": 2}, 1), ({"3": 4}, 1)]),
        (" \n{}", [({}, 2)]),
        ('{"foo": "bar"}\n---\n{baz: biz}', [({"foo": "bar"}, 1), ({"baz": "biz"}, 3)]),
        ('{"foo": "bar"}\n---\na: b', [({"foo": "bar"}, 1), ({"a": "b"}, 3)]),
        ('{"foo": "bar"}    \n---\na: b', [({"foo": "bar"}, 1), ({"a": "b"}, 3)]),
        ('{"foo": "bar"}    \n---\n{baz: biz}', [({"foo": "bar"}, 1), ({"baz": "biz"}, 3)]),
        ('{foo: bar}\n---\n{"baz": "biz"}', [({"foo": "bar"}, 1), ({"baz": "biz"}, 3)]),
        ('{\n  "foo": "bar"\n}\n---\n{\n  baz: biz\n}', [({"foo": "bar"}, 1), ({"baz": "biz"}, 5)]),
        ('{\n\t"foo": "bar"\n}\n---\n{\n\tbaz: biz\n}', [({"foo": "bar"}, 1), ({"baz": "biz"}, 5)]),
        # a flow mapping with plain keys, as kubectl 1.33+ reads it: YAML from the start
        ("{kind: Pod, spec: {a: 1}}\n", [({"kind": "Pod", "spec": {"a": 1}}, 1)]),
        # consumeWhitespace: the rest of the first value's line, its newline included, is eaten
        ('{"a": 1} {b: 2}', [({"a": 1}, 1), ({"b": 2}, 1)]),
        ('{"a": 1}\n  b: 2\n  c: 3\n', [({"a": 1}, 1), ({"b": 2, "c": 3}, 2)]),
    ],
)
def test_json_that_fails_after_at_most_one_value_is_read_on_as_yaml(
    text: str, read: list[tuple[object, int]]
) -> None:
    """YAMLOrJSONDecoder.Decode: a JSON error after 0 or 1 values is ambiguous, so the stream is
    rewound to just after the values read (StreamReader.Rewind: what Consume kept) and the rest
    is YAML (NewYAMLToJSONDecoder)."""
    assert kubernetes_read(text) == read


@pytest.mark.parametrize(
    ("text", "read"),
    [
        # decoder_test.go: "First 2 documents are JSON, third is YAML (stream is JSON)"
        (
            '{"foo": "bar"}\n{"baz": "biz"}\n---\n{qux: zrb}',
            [
                ({"foo": "bar"}, 1),
                ({"baz": "biz"}, 2),
                Refusal(Problem.NOT_JSON, "Expecting value (line 3, column 1)", 3),
            ],
        ),
        # consumeWhitespace reads 4 bytes at a time: under 4 left is io.EOF, the JSON error stands
        (
            '{"a": 1} {b}',
            [({"a": 1}, 1), Refusal(Problem.NOT_JSON, EXPECTING_NAME + " (line 1, column 11)", 1)],
        ),
        (
            '{"a": 1}\n\x0b',
            [({"a": 1}, 1), Refusal(Problem.NOT_JSON, "Expecting value (line 2, column 1)", 2)],
        ),
    ],
)
def test_a_json_stream_of_two_values_or_more_stays_json(
    text: str, read: list[tuple[object, int] | Refusal]
) -> None:
    """YAMLOrJSONDecoder.Decode: `if d.count > 1 { return err }`: two JSON values make it a JSON
    stream, and the first value that is not JSON ends it."""
    assert kubernetes_read(text) == read


@pytest.mark.parametrize(
    ("text", "read"),
    [
        # Go's unicode.IsSpace (GuessJSONStream's hasPrefix) is not Python's `\s`: U+001C-U+001F
        # are no space to Go, so this is no JSON stream, and YAML refuses the character.
        ('\x1c{"a": 1}', [Refusal(Problem.SYNTAX, CONTROL_1C, 1)]),
        # json.Decoder skips only JSON's four spaces between values; U+00A0 is unicode.IsSpace
        # and consumeWhitespace eats it before YAML reads on.
        ('{"a": 1}\xa0\n{"b": 2}', [({"a": 1}, 1), ({"b": 2}, 2)]),
        ('\xa0{"a": 1}', [({"a": 1}, 1)]),
    ],
)
def test_spaces_are_go_s(text: str, read: list[tuple[object, int] | Refusal]) -> None:
    """apimachinery decoder.go hasPrefix (`bytes.TrimLeftFunc(buf, unicode.IsSpace)`) and
    consumeWhitespace (`unicode.IsSpace`); encoding/json's isSpace between values."""
    assert kubernetes_read(text) == read
