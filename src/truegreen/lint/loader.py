"""Loading manifests for lint: files, folders and stdin, multi-document YAML with line numbers.

Every byte goes through `truegreen.yamlsafe`, read as Kubernetes reads YAML. A file that cannot
be read is a `BadInput`, and so is a folder that cannot be listed; a document that cannot be
parsed is one `BadInput` and the file's other documents are still read; a document that is no
Kubernetes object (neither `apiVersion` nor `kind`: a values file, a CI workflow, mkdocs'
config; or only one of them, without `metadata`: a Helm Chart.yaml) is `Skipped` and counted,
and an object that lacks either is a `BadInput`, as kubectl refuses it. Helm is recognised
twice: a chart's `templates/` (beside a `Chart.yaml`) is reported once per chart instead of
being parsed, and on stdin the `# Source: chart/templates/x.yaml` comments `helm template`
writes locate each document (anywhere, such a comment says its document is rendered: a YAML
error in it is a parse error, whatever `{{ }}` it passes through). A folder with a kustomization
is linted as what it builds (`truegreen.lint.kustomize`), and so is a file named on its own that
such a build above it reads; any other named file is read as it is.
"""

import os
import re
import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from msgspec import Struct

from truegreen.errors import UsageError
from truegreen.lint.rules.inputs import (
    HELM_TEMPLATE,
    PARSE_ERROR,
    UNREADABLE_FILE,
    UNRENDERED_TEMPLATE,
)
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
KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml", "Kustomization")
STDIN = "-"
STDIN_NAME = "<stdin>"
_SOURCE = re.compile(r"^# Source: (\S.*?)\s*$", re.MULTILINE)
# A line YAML starts a document with (YAML forbids it inside any scalar).
_DOCUMENT_START = re.compile(r"^---(?=[ \t\r\n]|$)", re.MULTILINE)
# Go template actions as Helm charts write them: `{{ .Values.x }}`, `{{- include ... }}`,
# `{{ if }}`, `{{/* */}}`, `{{ $x := }}`. Other tools' placeholders (`{{args.name}}`,
# `{{ NAME }}`) start with a bare word.
_HELM_ACTION = re.compile(
    r"\{\{-?\s*(?:[.$(/]|(?:if|else|end|range|with|define|template|include|block|toYaml|tpl|"
    r"printf|quote|default|required|lookup|fail|not|and|or|eq|ne|len|index)\b)"
)


class Manifest(Struct, frozen=True):
    """One Kubernetes object from an input file, with the lines its mappings start on."""

    file: str
    obj: Mapping[str, Any]
    lines: Mapping[int, int]
    offset: int = 0
    """Subtracted from every line: a helm `# Source:` document counts from its comment."""
    source: str = ""
    """What the object came with (the folder of its file, its chart or kustomization, or
    stdin): Services without a namespace select only workloads of the same source."""
    rendered: bool = False
    """The object is a document `helm template` rendered: `file` names its template, and lines
    count in the rendered document, not in the template."""

    def line_of(self, mapping: object) -> int | None:
        """The line a mapping inside this object starts on."""
        line = self.lines.get(id(mapping))
        return None if line is None else line - self.offset

    @property
    def line(self) -> int | None:
        """The line the object starts on."""
        return self.line_of(self.obj)


class BadInput(Struct, frozen=True):
    """A file or document that could not be checked, and why, as a finding says it."""

    rule: str
    file: str
    line: int | None
    message: str


class Skipped(Struct, frozen=True):
    """A document that is no Kubernetes object: counted, not judged."""

    file: str
    line: int


class Inputs(Struct, frozen=True):
    """What the paths name: manifest files (`-` for stdin), Helm charts' template files and
    kustomize folders."""

    files: tuple[str, ...]
    charts: Mapping[str, tuple[str, ...]]
    """Chart folder -> the template files found under its `templates/`."""
    kustomizations: tuple[str, ...] = ()
    """Folders holding a kustomization, linted as what they build."""
    unlisted: tuple[BadInput, ...] = ()
    """Folders that could not be listed (named, or met while searching): one finding each,
    since nothing under them was read."""


def _chart_of(path: Path) -> str | None:
    """The chart whose `templates/` holds `path`: the nearest such folder beside a Chart.yaml."""
    for folder in path.parents:
        if folder.name == "templates" and (folder.parent / "Chart.yaml").is_file():
            return str(folder.parent)
    return None


def is_kustomization(folder: str) -> bool:
    """Whether a folder holds a kustomization file."""
    return any(os.path.isfile(os.path.join(folder, name)) for name in KUSTOMIZATIONS)


def kustomization_file(folder: str) -> str:
    """The kustomization file a folder holds (the folder itself where it holds none)."""
    return next(
        (
            os.path.join(folder, n)
            for n in KUSTOMIZATIONS
            if os.path.isfile(os.path.join(folder, n))
        ),
        folder,
    )


def _kustomization_of(file: str) -> str | None:
    """The nearest folder above a named file whose kustomization builds it, looking no higher
    than the current folder (or only the file's own folder, for a file outside it); None where
    no build reads the file: `kubectl kustomize` leaves it out, `kubectl apply -f` applies it,
    and lint reads it as the file it is."""
    here = Path.cwd().resolve()
    folder = Path(file).parent
    if Path(file).name in KUSTOMIZATIONS:
        return str(folder)  # the kustomization itself: what it builds
    target = os.path.realpath(file)
    resolved = folder.resolve()
    while True:
        if is_kustomization(str(folder)) and _builds(str(folder), target):
            return str(folder)
        if resolved == here or here not in resolved.parents:
            return None
        folder, resolved = folder.parent, resolved.parent


def _builds(folder: str, target: str) -> bool:
    """Whether a kustomization's build reads the file `target` (a real path): a field of it
    names the file (a resource, a patch, a generator's file or env, a CRD; kustomize's
    api/types/kustomization.go), or names a folder whose kustomization builds it (a resource,
    base or component folder), however deep. A kustomization that cannot be read is taken to
    build it: its build says why (kustomize-error), so the file is never passed unread."""
    pending, seen = [folder], set[str]()
    while pending:
        current = pending.pop()
        real = os.path.realpath(current)
        if real in seen:
            continue
        seen.add(real)
        names = _names_in(kustomization_file(current))
        if names is None:
            return True
        for name in names:
            path = os.path.join(current, name)
            if os.path.realpath(path) == target:
                return True
            if os.path.isdir(path) and is_kustomization(path):
                pending.append(path)
    return False


def _names_in(kustomization: str) -> list[str] | None:
    """Every string a kustomization holds that could name a file or folder beside it (a
    generator's `key=path` names its path too); None where it cannot be read as a mapping."""
    read = read_file(Path(kustomization))
    if isinstance(read, Refusal):
        return None
    document = next(load_all(read, lines=False, kubernetes=True), None)
    if not isinstance(document, Document) or not isinstance(document.data, Mapping):
        return None
    names: list[str] = []
    values: list[object] = [document.data]
    while values:
        value = values.pop()
        if isinstance(value, Mapping):
            values += value.values()
        elif isinstance(value, list):
            values += value
        elif isinstance(value, str) and value and not {"\n", "\0"} & set(value):
            names += [value, value.partition("=")[2]] if "=" in value else [value]
    return [name for name in names if name]


def _walk(folder: str, kustomizations: list[str], unlisted: list[BadInput]) -> list[str]:
    """Manifest files under a folder; a folder holding a kustomization is taken whole, as what
    it builds, and not searched. A folder that cannot be listed (the folder itself, or one met
    on the way) is an `unreadable-file` finding, never skipped in silence: whatever it holds
    went unchecked. kubectl fails the same way: `kubectl apply -f DIR` walks DIR with
    filepath.Walk and stops at the first folder it cannot open (k8s.io/cli-runtime
    pkg/resource/visitor.go, ExpandPathsToFileVisitors)."""
    found: list[str] = []

    def refused(error: OSError) -> None:
        where = error.filename if isinstance(error.filename, str) else folder
        reason = error.strerror or str(error)
        unlisted.append(BadInput(UNREADABLE_FILE.id, where, None, f"cannot be read: {reason}"))

    for parent, folders, files in os.walk(folder, onerror=refused):
        if is_kustomization(parent):
            kustomizations.append(parent)
            folders.clear()
            continue
        folders.sort()
        found += (os.path.join(parent, f) for f in sorted(files) if f.endswith(MANIFEST_SUFFIXES))
    return found


def input_files(paths: list[str]) -> Inputs:
    """The files to lint: each path, folders searched for manifests; `-` is stdin. An input
    named twice (`lint - -`, a file and its folder, however spelled: `./dir`, an absolute
    path, a symbolic link) is one input, under the name it was first found by: stdin is read
    once, and a file's objects are counted once."""
    files: list[str] = []
    charts: dict[str, list[str]] = {}
    chart_names: dict[str, str] = {}
    kustomizations: list[str] = []
    unlisted: list[BadInput] = []
    for path in paths or [STDIN]:
        if path == STDIN:
            files.append(STDIN)
            continue
        if os.path.isdir(path):
            found = _walk(path, kustomizations, unlisted)
        elif os.path.lexists(path):
            built = _kustomization_of(path)
            if built is not None:
                kustomizations.append(built)  # a file of a kustomization: what it builds
                continue
            found = [path]  # named explicitly: read whatever it is, or say why not
        else:
            raise UsageError(f"cannot lint {path}", "no such file or folder")
        for file in found:
            chart = _chart_of(Path(file)) if "templates" in file else None
            if chart is None:
                files.append(file)
            else:
                name = chart_names.setdefault(os.path.realpath(chart), chart)
                charts.setdefault(name, []).append(file)
    first: dict[str, BadInput] = {}
    for bad in unlisted:  # a folder met twice is one finding, under its first name
        first.setdefault(os.path.realpath(bad.file), bad)
    return Inputs(
        _once(files),
        {chart: _once(found) for chart, found in charts.items()},
        _once(kustomizations),
        tuple(first.values()),
    )


def _once(paths: list[str]) -> tuple[str, ...]:
    """Each path once, under its first name: names of the same file or folder are one
    (`dir/a.yaml`, `./dir/a.yaml`, its absolute path, a symbolic link to it:
    os.path.realpath); stdin is only ever itself."""
    first: dict[str, str] = {}
    for path in paths:
        first.setdefault(path if path == STDIN else os.path.realpath(path), path)
    return tuple(first.values())


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


class Loaded(Struct, frozen=True):
    """What one file or stream held."""

    items: tuple[Manifest | BadInput | Skipped, ...]
    text: str = ""
    """The text read (kept for stdin, where rendered lines are mapped back to templates)."""


def load_file(
    file: str,
    limits: Limits = MANIFEST_LIMITS,
    stdin: BinaryIO | None = None,
    charts: Mapping[str, str] | None = None,
) -> Loaded:
    """Every object in a file (`List` kinds unwrapped), with a BadInput for each document that
    could not be read and a Skipped for each that is no Kubernetes object.

    stdin that cannot be read as text is bad usage (UsageError), not a finding. `charts` maps a
    chart's name to its folder, for the files `helm template`'s comments name.
    """
    if file == STDIN:
        text = read_stream(stdin, limits) if stdin is not None else Refusal(Problem.UNREADABLE, "")
        if isinstance(text, Refusal):
            raise UsageError("cannot lint stdin", text.detail or "it could not be read")
        sources = _sources(text, charts or {})
        items = tuple(_load_text(STDIN_NAME, text, limits, sources, STDIN_NAME))
        return Loaded(items, text)
    read = read_file(Path(file), limits)
    if isinstance(read, Refusal):
        return Loaded((BadInput(UNREADABLE_FILE.id, file, None, f"cannot be read: {read.detail}"),))
    return Loaded(tuple(_load_text(file, read, limits, [], _folder_source(file))))


def _folder_source(file: str) -> str:
    """The source of a plain file's objects: its folder (`dir`, `./dir` and its absolute path
    are one; a string operation, cheap on a large folder's every file). `kubectl apply -f
    DIR/` applies a folder's files together, into one namespace when they name none, so a
    Service in service.yaml selects the Deployment in deployment.yaml beside it; files of
    other folders (another repository linted in the same run) stay apart. kube-linter groups
    files the same way (pkg/lintcontext/create_contexts.go, CreateContexts: one context per
    folder)."""
    return os.path.abspath(os.path.dirname(file) or os.curdir)


def load_text(
    name: str, text: str, limits: Limits, source: str
) -> Iterator[Manifest | BadInput | Skipped]:
    """The objects of text already read (kustomize's output), all of one source."""
    yield from _load_text(name, text, limits, [], source)


def _load_text(
    name: str, text: str, limits: Limits, sources: list[tuple[int, str]], source: str
) -> Iterator[Manifest | BadInput | Skipped]:
    previous_start = 0
    for loaded in load_all(text, limits, kubernetes=True):
        if isinstance(loaded, Refusal):
            yield _bad(name, text, loaded, sources, previous_start)
            continue
        file, offset = _located(name, sources, previous_start, loaded.start_line)
        previous_start = loaded.start_line
        if offset:
            source = file.split("/templates/")[0]  # the chart, as its Services' source
        if loaded.problem is not None and _is_object(loaded.data):
            yield _classified(name, text, loaded.problem, file, offset)
            continue
        yield from _objects(file, loaded.data, loaded, offset, source, rendered=bool(offset))


def _bad(
    name: str, text: str, refusal: Refusal, sources: list[tuple[int, str]], previous: int
) -> BadInput:
    line = refusal.line
    file, offset = _located(name, sources, previous, line) if line is not None else (name, 0)
    return _classified(name, text, refusal, file, offset)


def _classified(name: str, text: str, refusal: Refusal, file: str, offset: int) -> BadInput:
    """The finding for a document that cannot be checked: a template (Helm's or another
    tool's) that was never rendered, or YAML the API server would refuse. Only the document
    that failed is judged, and one under a `# Source:` comment is `helm template`'s output:
    rendered, whatever `{{ }}` it passes through (Prometheus' `{{ $labels.pod }}`)."""
    where = None if refusal.line is None else refusal.line - offset
    document = _document_around(text, refusal.line)
    unrendered = "{{" in document and "}}" in document and not _SOURCE.search(document)
    if unrendered and refusal.problem is not Problem.ALIASES:
        if _HELM_ACTION.search(document):
            chart = (
                "<chart>" if file == name else shlex.quote(file.split("/templates/", maxsplit=1)[0])
            )
            return BadInput(
                HELM_TEMPLATE.id,
                file,
                where,
                "this is an unrendered Helm template: render it first: "
                f"`helm template {chart} | truegreen lint -`",
            )
        return BadInput(
            UNRENDERED_TEMPLATE.id,
            file,
            where,
            "this holds `{{ ... }}` placeholders that some tool fills in (not Helm's): lint what "
            "that tool renders",
        )
    return BadInput(PARSE_ERROR.id, file, where, _said(refusal))


def _document_around(text: str, line: int | None) -> str:
    """The text of the document holding a line: from the `---` line at or before it to the
    next one; all of the text when the line is not known."""
    if line is None:
        return text
    position = 0
    for _ in range(line - 1):
        position = text.find("\n", position) + 1
        if not position:
            return text
    starts = [m.start() for m in _DOCUMENT_START.finditer(text)]
    start = max((s for s in starts if s <= position), default=0)
    end = min((s for s in starts if s > position), default=len(text))
    return text[start:end]


def _said(refusal: Refusal) -> str:
    if refusal.problem is Problem.DUPLICATE_KEY:
        return "duplicate key: " + refusal.detail
    if refusal.problem is Problem.TOO_MANY_NODES:  # the text may be fine: there is too much
        return f"too large to read ({refusal.detail.removeprefix('it holds ')})"
    if refusal.problem is Problem.NOT_JSON:
        return "not valid JSON: " + refusal.detail
    if refusal.problem is Problem.UNSUPPORTED and refusal.detail.startswith(("json:", "a key")):
        return "the API server cannot take it: " + refusal.detail
    return "not valid YAML: " + plain(refusal.detail)


def _sources(text: str, charts: Mapping[str, str]) -> list[tuple[int, str]]:
    """helm template's `# Source:` comments: (line, the template's path), the chart's name
    replaced by its folder where `charts` knows it."""
    found: list[tuple[int, str]] = []
    line, position = 1, 0
    for match in _SOURCE.finditer(text):
        line += text.count("\n", position, match.start())
        position = match.start()
        chart, sep, rest = match.group(1).partition("/")
        folder = charts.get(chart)
        found.append((line, f"{folder.rstrip('/')}/{rest}" if folder and sep else match.group(1)))
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


def _objects(
    file: str,
    document: object,
    loaded: Document,
    offset: int,
    source: str,
    *,
    rendered: bool,
) -> Iterator[Manifest | BadInput | Skipped]:
    if document is None:
        return  # an empty document (comments only) holds nothing at all
    if not _is_object(document):
        yield Skipped(file, loaded.start_line - offset)
        return
    assert isinstance(document, dict)
    object_line = loaded.lines.get(id(document), loaded.start_line) - offset
    refused = _unnamed(document)
    if refused is not None:
        yield BadInput(PARSE_ERROR.id, file, object_line, f"this document {refused}.")
        return
    items = document.get("items")
    if not (str(document["kind"]).endswith("List") and isinstance(items, list)):
        yield Manifest(file, document, loaded.lines, offset, source, rendered)
        return
    for number, item in enumerate(items, 1):
        refused = _list_item(document, item)
        if refused is None:
            yield Manifest(file, item, loaded.lines, offset, source, rendered)
            continue
        line = loaded.lines.get(id(item))
        yield BadInput(
            PARSE_ERROR.id,
            file,
            object_line if line is None else line - offset,
            f"item {number} of this {document['kind']} {refused}.",
        )


def _list_item(listed: Mapping[str, Any], item: object) -> str | None:
    """Why kubectl refuses an item of a list, else None (after giving it the list's kind).

    apimachinery unstructured_list.go decodeToList: an item with neither kind nor apiVersion
    (how the API server writes a DeploymentList's items) takes kind TrimSuffix(listKind,
    "List") and the list's apiVersion; one still missing either is refused.
    """
    if not isinstance(item, dict):
        return "is no object: kubectl refuses it"
    if not item.get("kind") and not item.get("apiVersion"):
        item["kind"] = str(listed["kind"]).removesuffix("List")
        item["apiVersion"] = listed["apiVersion"]
    # apimachinery unstructured.go: the words kubectl refuses an object without either in
    if not isinstance(item.get("apiVersion"), str) or not item["apiVersion"]:
        return "has no apiVersion: kubectl refuses it (Object 'apiVersion' is missing)"
    if not isinstance(item.get("kind"), str) or not item["kind"]:
        return "has no kind: kubectl refuses it (Object 'Kind' is missing)"
    if isinstance(item.get("items"), list):
        # A list inside a list: kubectl's builder flattens the outer one and takes the item for
        # a list too (apimachinery Unstructured.IsList: an `items` array), but an item is decoded
        # as a single object, whose Items it cannot find (meta.ExtractList, GetItemsPtr).
        return (
            "is itself a list: kubectl refuses it (*unstructured.Unstructured is not a list: "
            "no Items field in this object)"
        )
    return None


def _is_object(document: object) -> bool:
    """Whether a document is meant as a Kubernetes object (which needs both its apiVersion and
    its kind: `_unnamed`): it names one of them, and writes both keys or carries the `metadata`
    every object has. Other YAML may name one: a Helm Chart.yaml its `apiVersion: v2`, a
    chart's values file the `kind: DaemonSet` it renders."""
    if not isinstance(document, dict):
        return False
    names = bool(document.get("apiVersion") or document.get("kind"))
    both = "apiVersion" in document and "kind" in document
    return names and (both or "metadata" in document)


def _unnamed(document: Mapping[str, Any]) -> str | None:
    """Why kubectl refuses an object that lacks its apiVersion or its kind, else None.

    kubectl's validation, on unless `--validate=false`, checks both before anything else, in
    kubectl's words (k8s.io/kubectl pkg/validation/validation.go getObjectKind); an empty one
    names no API group or kind that exists.
    """
    for field in ("apiVersion", "kind"):
        value = document.get(field)
        if value is None:
            return f"has no {field}: kubectl refuses it ({field} not set)"
        if not isinstance(value, str):
            return f"has no {field}: kubectl refuses it ({field} isn't string type)"
        if not value:
            return f"has an empty {field}: kubectl refuses it"
    return None
