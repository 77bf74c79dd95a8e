"""Loading manifests for lint: files, folders and stdin, multi-document YAML with line numbers."""

import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from truegreen.errors import UsageError

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"
_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _LineLoader(_BaseLoader):  # type: ignore[misc]
    """A safe loader that remembers the line each mapping starts on (by object identity)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.lines: dict[int, int] = {}

    def construct_located_map(self, node: yaml.MappingNode) -> Iterator[dict[Any, Any]]:
        data: dict[Any, Any] = {}
        self.lines[id(data)] = node.start_mark.line + 1
        yield data
        data.update(self.construct_mapping(node))


_LineLoader.add_constructor("tag:yaml.org,2002:map", _LineLoader.construct_located_map)


@dataclass(frozen=True)
class Manifest:
    """One Kubernetes object from an input file, with the lines its mappings start on."""

    file: str
    obj: Mapping[str, Any]
    lines: Mapping[int, int]

    def line_of(self, mapping: object) -> int | None:
        """The line a mapping inside this object starts on."""
        return self.lines.get(id(mapping))

    @property
    def line(self) -> int | None:
        """The line the object starts on."""
        return self.line_of(self.obj)


@dataclass(frozen=True)
class ParseFailure:
    """A file (or part of one) that is not valid YAML."""

    file: str
    line: int | None
    problem: str


def input_files(paths: list[str]) -> list[str]:
    """The files to lint: each path, folders searched recursively for manifests; `-` is stdin."""
    found: list[str] = []
    for path in paths or [STDIN]:
        if path == STDIN:
            found.append(STDIN)
            continue
        candidate = Path(path)
        if candidate.is_dir():
            found += sorted(
                str(p)
                for p in candidate.rglob("*")
                if p.is_file() and p.suffix in MANIFEST_SUFFIXES
            )
        elif candidate.is_file():
            found.append(path)
        else:
            raise UsageError(f"cannot lint {path}", "no such file or folder")
    return found


def _read(file: str) -> str:
    if file == STDIN:
        return sys.stdin.read()
    try:
        return Path(file).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"cannot lint {file}", "it is not UTF-8 text") from None
    except OSError as error:
        raise UsageError(f"cannot read {file}", error.strerror or type(error).__name__) from None


def load_file(file: str) -> Iterator[Manifest | ParseFailure]:
    """Every object in a file (`List` kinds unwrapped), then a ParseFailure if it stops parsing."""
    text = _read(file)
    name = "<stdin>" if file == STDIN else file
    loader = _LineLoader(text)
    try:
        while loader.check_data():
            document = loader.get_data()
            yield from _objects(name, document, loader.lines)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        problem = getattr(error, "problem", None) or type(error).__name__
        yield ParseFailure(name, mark.line + 1 if mark is not None else None, str(problem))
    finally:
        loader.dispose()


def _objects(file: str, document: object, lines: dict[int, int]) -> Iterator[Manifest]:
    if not isinstance(document, dict):
        return  # empty documents and bare scalars hold no objects
    items = document.get("items")
    if str(document.get("kind", "")).endswith("List") and isinstance(items, list):
        for item in items:
            yield from _objects(file, item, lines)
        return
    if "kind" in document:
        yield Manifest(file, document, lines)
