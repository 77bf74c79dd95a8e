"""A kustomize folder, linted as what it builds.

With `kubectl` (or `kustomize`) on PATH, the folder is built through a wrapping kustomization
that asks for origin annotations (`buildMetadata: [originAnnotations]`), so each built object
names the file it came from; the annotation is dropped again and the finding points at that
file. The wrapper lists the folder where kustomize accepts it: a Component (`kind:
Component`) under `components:`, any other under `resources:` (kustomize refuses each in the
other's place: kubernetes-sigs/kustomize api/krusty/component_test.go, TestComponentErrors,
"expected kind != 'Component'"). The build is bounded: a deadline, and no more output than
one manifest may hold. Without either tool, the folder's `resources` are read as they are
(folders of them recursively), and never its patches: a patch is not an object.
"""

import itertools
import os
import re
import selectors
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from truegreen.lint.loader import (
    BadInput,
    Manifest,
    Skipped,
    is_kustomization,
    kustomization_file,
    load_file,
    load_text,
)
from truegreen.lint.rules.inputs import KUSTOMIZE_ERROR, KUSTOMIZE_UNCHECKED
from truegreen.patterns import LazyPattern
from truegreen.yamlsafe import MANIFEST_LIMITS, Limits, Refusal, decode, load_all, read_file

ORIGIN = "config.kubernetes.io/origin"
BUILD_SECONDS = 60.0
"""How long one folder's build may take (a remote base is fetched within it)."""
_ERROR_BYTES = 64 * 1024
_SHOWN = 500
"""Characters of kustomize's error quoted in the finding."""


class Built(Struct, frozen=True):
    """What a kustomize folder held, and how it was read."""

    folder: str
    items: tuple[Manifest | BadInput | Skipped, ...]
    built_with: str
    """`kubectl kustomize`, `kustomize build`, or `resources only` (no tool on PATH)."""


def builder() -> list[str] | None:
    """The command that builds a kustomization on this machine, if any."""
    kubectl = shutil.which("kubectl")
    if kubectl is not None:
        return [kubectl, "kustomize"]
    kustomize = shutil.which("kustomize")
    return [kustomize, "build"] if kustomize is not None else None


def lint_folder(
    folder: str, limits: Limits = MANIFEST_LIMITS, seconds: float = BUILD_SECONDS
) -> Built:
    """The objects a kustomize folder builds, each located in the file it came from; the build
    may take `seconds` and write no more than one file may hold."""
    command = builder()
    if command is None:
        return Built(folder, tuple(_resources_only(folder, limits, set())), "resources only")
    built_with = " ".join([Path(command[0]).name, *command[1:]])
    with tempfile.TemporaryDirectory(prefix="truegreen-kustomize-") as wrapper:
        target = os.path.relpath(os.path.abspath(folder), wrapper)
        listed = "components" if _is_component(folder, limits) else "resources"
        Path(wrapper, "kustomization.yaml").write_text(
            f"{listed}:\n- {_quoted(target)}\nbuildMetadata: [originAnnotations]\n"
        )
        output = _run([*command, wrapper], target, limits, seconds)
        if isinstance(output, Failure):
            rule = KUSTOMIZE_UNCHECKED if output.unchecked else KUSTOMIZE_ERROR
            finding = BadInput(rule.id, kustomization_file(folder), None, output.reason)
            return Built(folder, (finding,), built_with)
        sources: dict[str, list[Manifest]] = {}
        items = tuple(
            _from_origin(item, wrapper, folder, limits, sources)
            for item in load_text(folder, output, limits, folder)
        )
    return Built(folder, items, built_with)


def _is_component(folder: str, limits: Limits) -> bool:
    """Whether the folder's kustomization says `kind: Component`; one that cannot be read is
    left to kustomize to say why."""
    read = read_file(Path(kustomization_file(folder)), limits)
    if isinstance(read, Refusal):
        return False
    for document in load_all(read, limits, kubernetes=True):
        return not isinstance(document, Refusal) and (
            isinstance(document.data, dict) and document.data.get("kind") == "Component"
        )
    return False


def _quoted(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Failure(Struct, frozen=True):
    """A build that gave no objects: why, in plain words, and whether that says nothing of the
    folder itself (`unchecked`: kustomize could not run, fetch a remote, or finish in time)."""

    reason: str
    unchecked: bool = False


def _run(command: list[str], target: str, limits: Limits, seconds: float) -> str | Failure:
    """The build's output, or why there is none; `target` is the folder as the wrapper lists
    it."""
    try:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    except OSError as error:
        return Failure(f"kustomize could not run: {error.strerror or error}", unchecked=True)
    out, err, failure = _bounded(process, limits.max_bytes, seconds)
    if failure is not None:
        return failure
    if process.returncode != 0:
        said = err.decode(errors="replace").strip().splitlines()
        cause = _unwrapped(_error_of(said), target) if said else ""
        # kustomize nests its errors, the cause last: a long one keeps its end.
        shown = cause if len(cause) <= _SHOWN else "…" + cause[-(_SHOWN - 1) :]
        shown = shown or f"it exited {process.returncode}"
        if _NOT_FETCHED.search(cause):
            return Failure(f"kustomize could not fetch a remote resource: {shown}", unchecked=True)
        return Failure(f"kustomize could not build it: {shown}")
    text = decode(out, limits)
    if isinstance(text, Refusal):
        return Failure(f"kustomize wrote something lint cannot read: {text.detail}")
    return text


# kubectl logs its failure through klog (`E1206 22:21:00.625850    3976 run.go:72] "command
# failed" err="…"`, component-base/cli/run.go): a value of one line Go-quoted after `err=`, one
# of several lines as `err=<`, each line of it indented with a tab and ` >` after the last
# (k8s.io/klog/v2 internal/serialize/keyvalues.go writeStringValue).
_KLOG_FAILURE = LazyPattern(
    r'^[IWEF]\d{4} [\d:.]+\s+\d+ \S+:\d+\] "command failed" err=(?:"(.*)"|<)$'
)
# strconv.Quote's escapes; `\xHH` stands for a byte that is no UTF-8.
_GO_ESCAPE = LazyPattern(r'\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[abfnrtv\\"\'])')
_GO_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _go_unquoted(text: str) -> str:
    """A Go-quoted string's text (its quotes already taken off)."""

    def one(escape: re.Match[str]) -> str:
        letter = escape[0][1]
        if letter in "uU":
            return chr(int(escape[0][2:], 16))
        if letter == "x":
            return "\ufffd"
        return _GO_ESCAPES.get(letter, letter)

    return _GO_ESCAPE.sub(one, text)


def _error_of(lines: list[str]) -> str:
    """kustomize's error as kubectl logs it last, without klog's header (the header and the
    path it repeats would otherwise fill the quote's bound before the error is said): the lines
    of a value of several lines joined with spaces; else the last line (`error: ` left out)."""
    for number in range(len(lines) - 1, -1, -1):
        found = _KLOG_FAILURE.match(lines[number])
        if found is None:
            continue
        if found[1] is not None:
            return _go_unquoted(found[1])
        value = itertools.takewhile(lambda line: line.startswith("\t"), lines[number + 1 :])
        return " ".join(part for part in (line.strip() for line in value) if part)
    return lines[-1].removeprefix("error: ")


# The frames kustomize puts around the folder's own error when lint's wrapper lists it
# (api/internal/target/kusttarget.go accumulateResources, accumulateComponents,
# accumulateDirectory): they name the wrapper's path, which is no file of the user's, and say
# "must resolve to a file" of a folder that is one. `kubectl kustomize FOLDER` says the rest.
_RESOURCE_FRAME = (
    r"accumulating resources: accumulation err='accumulating resources from '{target}': "
    r"'(?P<root>.*?)' must resolve to a file': "
    r"(?:recursed accumulation of path|couldn't make target for path) '(?P=root)': (?P<own>.*)"
)
_COMPONENT_FRAME = LazyPattern(r'accumulating components: accumulateDirectory: "(.*)"', re.DOTALL)
_DIRECTORY_FRAME = LazyPattern(
    r"(?:recursed accumulation of path|couldn't make target for path) '.*?': (.*)", re.DOTALL
)


def _unwrapped(error: str, target: str) -> str:
    """The folder's own error, from the error of the wrapper that lists it as `target`."""
    own = re.fullmatch(_RESOURCE_FRAME.format(target=re.escape(target)), error, re.DOTALL)
    if own is not None:
        return own["own"]
    component = _COMPONENT_FRAME.fullmatch(error)
    inner = _DIRECTORY_FRAME.fullmatch(_go_unquoted(component[1])) if component else None
    return inner[1] if inner is not None else error


# A remote that could not be fetched: Go's HTTP client got no answer (`Get "URL": dial tcp …`;
# an answer with an error status is kustomize's `HTTP Error: status code 404`, api/loader/
# fileloader.go httpClientGetContent), git reached no server over HTTPS (curl's `Could not
# resolve host`; not a 4xx answer: the repository is not there) or SSH, or kustomize's own
# deadline on git passed (api/internal/utils/timedcall.go `hit 27s timeout running`).
_NOT_FETCHED = LazyPattern(
    r'\bGet "[^"]*": '
    r"|unable to access '[^']*': (?!The requested URL returned error: 4)"
    r"|\bssh: (?:Could not resolve hostname|connect to host)"
    r"|\bhit \S+ timeout running '"
)


def _bounded(
    process: subprocess.Popen[bytes], max_bytes: int, seconds: float
) -> tuple[bytes, bytes, Failure | None]:
    """Read stdout and stderr until the process ends, within the deadline; stdout past its cap
    kills the process, and of stderr only the last `_ERROR_BYTES` are kept (the error is said
    last). A build past its deadline says nothing of the folder: a remote it fetches may be
    slow to answer."""
    assert process.stdout is not None
    assert process.stderr is not None
    deadline = time.monotonic() + seconds
    out: list[bytes] = []
    size = 0
    err = bytearray()
    failure: Failure | None = None
    with selectors.DefaultSelector() as selector:
        for stream in (process.stdout, process.stderr):
            selector.register(stream, selectors.EVENT_READ)
        while selector.get_map() and failure is None:
            left = deadline - time.monotonic()
            if left <= 0:
                failure = Failure(f"kustomize took longer than {seconds:g} s", unchecked=True)
                break
            for key, _ in selector.select(timeout=left):
                data = os.read(key.fd, 65536)
                if not data:
                    selector.unregister(key.fileobj)
                    continue
                if key.fileobj is process.stderr:
                    err += data
                    del err[:-_ERROR_BYTES]
                    continue
                size += len(data)
                if size > max_bytes:
                    failure = Failure(f"kustomize wrote more than {max_bytes:,} bytes")
                    break
                out.append(data)
    if failure is not None:
        process.kill()
    process.wait()
    process.stdout.close()
    process.stderr.close()
    return b"".join(out), bytes(err), failure


def _from_origin(
    item: Manifest | BadInput | Skipped,
    wrapper: str,
    folder: str,
    limits: Limits,
    sources: dict[str, list[Manifest]],
) -> Manifest | BadInput | Skipped:
    """A built object located in the file it came from, its origin annotation removed."""
    if not isinstance(item, Manifest):
        return item
    metadata = item.obj.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    origin = annotations.pop(ORIGIN, None) if isinstance(annotations, dict) else None
    if isinstance(metadata, dict) and isinstance(annotations, dict) and not annotations:
        del metadata["annotations"]
    path = _origin_path(origin)
    if path is None:
        return item
    # Named from the folder as it was given, as the files of any other path are.
    source = os.path.normpath(os.path.join(wrapper, path))
    file = os.path.normpath(os.path.join(folder, os.path.relpath(source, os.path.abspath(folder))))
    if file not in sources:  # each source file read once, however many objects it holds
        sources[file] = [m for m in load_file(file, limits).items if isinstance(m, Manifest)]
    return replace(item, file=file, lines=_source_lines(item, sources[file]), offset=0)


def _origin_path(origin: object) -> str | None:
    """`path:` of an origin annotation (a small YAML mapping kustomize writes)."""
    if not isinstance(origin, str):
        return None
    for document in load_all(origin, lines=False):
        if isinstance(document, Refusal) or not isinstance(document.data, dict):
            return None
        path = document.data.get("path")
        return path if isinstance(path, str) and not document.data.get("repo") else None
    return None


def _source_lines(item: Manifest, source: list[Manifest]) -> dict[int, int]:
    """The lines of the built object's mappings in its source file, where that file holds the
    same object (by kind and name, or the only one of its kind) and the same mapping (a
    container of the same name): a patch may have added what the source does not hold, and
    that has no line."""
    lines: dict[int, int] = {}
    same_kind = [m for m in source if m.obj.get("kind") == item.obj.get("kind")]
    named = [m for m in same_kind if _name(m.obj) == _name(item.obj)]
    # A namePrefix or nameSuffix renames the object; the only one of its kind is still it.
    original = named[0] if named else same_kind[0] if len(same_kind) == 1 else None
    if original is not None:
        _match_lines(item.obj, original.obj, original.lines, lines)
    return lines


def _name(obj: Mapping[str, Any]) -> object:
    metadata = obj.get("metadata")
    return metadata.get("name") if isinstance(metadata, Mapping) else None


def _match_lines(
    built: object, source: object, lines: Mapping[int, int], out: dict[int, int]
) -> None:
    """Walk the built object and its source together: mappings at the same place (list items
    matched by `name`) take the source's line."""
    if isinstance(built, dict) and isinstance(source, dict):
        line = lines.get(id(source))
        if line is not None:
            out[id(built)] = line
        for key, value in built.items():
            if key in source:
                _match_lines(value, source[key], lines, out)
    elif isinstance(built, list) and isinstance(source, list):
        named = {
            item.get("name"): item for item in source if isinstance(item, dict) and "name" in item
        }
        for number, item in enumerate(built):
            if isinstance(item, dict) and "name" in item:
                _match_lines(item, named.get(item["name"]), lines, out)
            elif number < len(source):
                _match_lines(item, source[number], lines, out)


def _resources_only(
    folder: str, limits: Limits, seen: set[str]
) -> Iterator[Manifest | BadInput | Skipped]:
    """Without a kustomize build: the files the kustomization lists as `resources`, folders of
    them by their own kustomization; remote resources and every kind of patch are left out."""
    real = os.path.realpath(folder)
    if real in seen:
        return
    seen.add(real)
    file = kustomization_file(folder)
    read = read_file(Path(file), limits)
    if isinstance(read, Refusal):
        yield BadInput(KUSTOMIZE_ERROR.id, file, None, f"cannot be read: {read.detail}")
        return
    kustomization: object = None
    for document in load_all(read, limits, kubernetes=True):
        if isinstance(document, Refusal):
            yield BadInput(KUSTOMIZE_ERROR.id, file, document.line, document.detail)
            return
        kustomization = document.data
        break
    resources = kustomization.get("resources") if isinstance(kustomization, dict) else None
    for resource in resources if isinstance(resources, list) else []:
        if not isinstance(resource, str) or "://" in resource or resource.startswith("github.com"):
            continue
        path = os.path.normpath(os.path.join(folder, resource))
        if os.path.isdir(path):
            if is_kustomization(path):
                yield from _resources_only(path, limits, seen)
        elif os.path.isfile(path):
            for item in load_file(path, limits).items:
                yield replace(item, source=folder) if isinstance(item, Manifest) else item
