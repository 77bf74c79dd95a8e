"""Loading manifests for lint: files, folders and stdin, multi-document YAML with line numbers.

Every byte goes through `truegreen.yamlsafe`. A file that cannot be read or parsed becomes a
`BadInput` and the other files are still read. Helm is recognised twice: a chart's `templates/`
(beside a `Chart.yaml`) is reported once per chart instead of being parsed, and on stdin the
`# Source: chart/templates/x.yaml` comments `helm template` writes locate each document.
"""

import os
import re
import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from msgspec import Struct

from truegreen.errors import UsageError
from truegreen.lint.rules.inputs import HELM_TEMPLATE, PARSE_ERROR, UNREADABLE_FILE
from truegreen.yamlsafe import (
    MANIFEST_LIMITS,
    Document,
    Limits,
    Problem,
    Refusal,
    load_all,
    read_file,
    read_stream,
)
from truegreen.yamlwords import plain

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"
STDIN_NAME = "<stdin>"
_SOURCE = re.compile(r"^# Source: (\S.*?)\s*$", re.MULTILINE)


class Manifest(Struct, frozen=True):
    """One Kubernetes object from an input file, with the lines its mappings start on."""

    file: str
    obj: Mapping[str, Any]
    lines: Mapping[int, int]
    offset: int = 0
    """Subtracted from every line: a helm `# Source:` document counts from its comment."""

    def line_of(self, mapping: object) -> int | None:
        """The line a mapping inside this object starts on."""
        line = self.lines.get(id(mapping))
        return None if line is None else line - self.offset

    @property
    def line(self) -> int | None:
        """The line the object starts on."""
        return self.line_of(self.obj)


class BadInput(Struct, frozen=True):
    """A file (or the rest of one) that could not be checked, and why, as a finding says it."""

    rule: str
    file: str
    line: int | None
    message: str


class Inputs(Struct, frozen=True):
    """What the paths name: manifest files (`-` for stdin) and Helm charts' template files."""

    files: tuple[str, ...]
    charts: Mapping[str, tuple[str, ...]]
    """Chart folder -> the template files found under its `templates/`."""


def _chart_of(path: Path) -> str | None:
    """The chart whose `templates/` holds `path`: the nearest such folder beside a Chart.yaml."""
    for folder in path.parents:
        if folder.name == "templates" and (folder.parent / "Chart.yaml").is_file():
            return str(folder.parent)
    return None


def _walk(folder: str) -> list[str]:
    found: list[str] = []
    for parent, folders, files in os.walk(folder):
        folders.sort()
        found += (os.path.join(parent, f) for f in sorted(files) if f.endswith(MANIFEST_SUFFIXES))
    return found


def input_files(paths: list[str]) -> Inputs:
    """The files to lint: each path, folders searched for manifests; `-` is stdin."""
    files: list[str] = []
    charts: dict[str, list[str]] = {}
    for path in paths or [STDIN]:
        if path == STDIN:
            files.append(STDIN)
            continue
        if os.path.isdir(path):
            found = _walk(path)
        elif os.path.lexists(path):
            found = [path]  # named explicitly: read whatever it is, or say why not
        else:
            raise UsageError(f"cannot lint {path}", "no such file or folder")
        for file in found:
            chart = _chart_of(Path(file)) if "templates" in file else None
            if chart is None:
                files.append(file)
            else:
                charts.setdefault(chart, []).append(file)
    return Inputs(tuple(files), {chart: tuple(found) for chart, found in charts.items()})


def chart_findings(inputs: Inputs) -> list[BadInput]:
    """One finding per chart whose templates were named: render the chart, then lint."""
    return [
        BadInput(
            HELM_TEMPLATE.id,
            templates[0],
            None,
            f"{_count(len(templates), 'unrendered Helm template')} in chart {chart}: "
            f"render it first: `helm template {shlex.quote(chart)} | truegreen lint -`",
        )
        for chart, templates in inputs.charts.items()
    ]


def _count(count: int, thing: str) -> str:
    return f"{count} {thing}{'' if count == 1 else 's'}"


def load_file(
    file: str, limits: Limits = MANIFEST_LIMITS, stdin: BinaryIO | None = None
) -> Iterator[Manifest | BadInput]:
    """Every object in a file (`List` kinds unwrapped), then a BadInput where it stops.

    stdin that cannot be read as text is bad usage (UsageError), not a finding.
    """
    if file == STDIN:
        text = read_stream(stdin, limits) if stdin is not None else Refusal(Problem.UNREADABLE, "")
        if isinstance(text, Refusal):
            raise UsageError("cannot lint stdin", text.detail or "it could not be read")
        yield from _load_text(STDIN_NAME, text, limits, _sources(text))
        return
    text = read_file(Path(file), limits)
    if isinstance(text, Refusal):
        yield BadInput(UNREADABLE_FILE.id, file, None, f"cannot be read: {text.detail}")
        return
    yield from _load_text(file, text, limits, [])


def _load_text(
    name: str, text: str, limits: Limits, sources: list[tuple[int, str]]
) -> Iterator[Manifest | BadInput]:
    previous_start = 0
    for loaded in load_all(text, limits):
        if isinstance(loaded, Refusal):
            yield _bad(name, text, loaded, sources, previous_start)
            return
        file, offset = _located(name, sources, previous_start, loaded.start_line)
        previous_start = loaded.start_line
        yield from _objects(file, loaded.data, loaded, offset)


def _bad(
    name: str, text: str, refusal: Refusal, sources: list[tuple[int, str]], previous: int
) -> BadInput:
    line = refusal.line
    file, offset = _located(name, sources, previous, line) if line is not None else (name, 0)
    where = None if line is None else line - offset
    if "{{" in text and "}}" in text:
        chart = "<chart>" if file == name else shlex.quote(file.split("/templates/")[0])
        return BadInput(
            HELM_TEMPLATE.id,
            file,
            where,
            "this is an unrendered Helm template: render it first: "
            f"`helm template {chart} | truegreen lint -`",
        )
    what = "duplicate key: " if refusal.problem is Problem.DUPLICATE_KEY else "not valid YAML: "
    return BadInput(PARSE_ERROR.id, file, where, what + plain(refusal.detail))


def _sources(text: str) -> list[tuple[int, str]]:
    """helm template's `# Source:` comments: (line, the template's path in the chart)."""
    found: list[tuple[int, str]] = []
    line, position = 1, 0
    for match in _SOURCE.finditer(text):
        line += text.count("\n", position, match.start())
        position = match.start()
        found.append((line, match.group(1)))
    return found


def _located(name: str, sources: list[tuple[int, str]], after: int, before: int) -> tuple[str, int]:
    """The source a document starting at line `before` came from: the last `# Source:` comment
    between the previous document's start and its own; lines then count from that comment."""
    located = (name, 0)
    for line, source in sources:
        if line >= before:
            break
        if line > after:
            located = (source, line)
    return located


def _objects(file: str, document: object, loaded: Document, offset: int) -> Iterator[Manifest]:
    if not isinstance(document, dict):
        return  # empty documents and bare scalars hold no objects
    kind = document.get("kind")
    if not isinstance(kind, str):
        return
    items = document.get("items")
    if kind.endswith("List") and isinstance(items, list):
        for item in items:
            yield from _objects(file, item, loaded, offset)
        return
    yield Manifest(file, document, loaded.lines, offset)
