"""One kubeconfig file, read as kubectl reads it: bounded, typed, each name once.

client-go's loader (tools/clientcmd/loader.go `Load`) turns the file's first YAML document into
JSON (sigs.k8s.io/yaml over go-yaml v2, whose alias bound refuses a "billion laughs") and
decodes that into the v1 types (tools/clientcmd/api/v1/types.go): keys match case by case,
unknown keys are ignored, a null is the zero value, and a value of the wrong type anywhere
fails the whole file (`json: cannot unmarshal number into Go struct field
AuthInfo.users.user.token of type string`), as does a second entry of one name in a list
(api/v1/conversion.go: `duplicate name "c" in list`) and a number JSON cannot write (`.inf`).
"""

import base64
import binascii
import errno
import math
import os
import stat
from collections.abc import Mapping
from enum import Enum
from pathlib import Path
from typing import Any

from msgspec import Struct

from truegreen.cluster.blockyaml import read_block_yaml
from truegreen.errors import ConnectionSetupError
from truegreen.textsafe import terminal_safe

MAX_FILE_BYTES = 4 << 20
"""A kubeconfig or a file it names larger than this is refused (real ones are kilobytes)."""
_FIX = "check the file, or pass another with --kubeconfig"


class Field(Enum):
    """What JSON a field of the v1 types decodes from."""

    TEXT = "text"
    FLAG = "true or false"
    BASE64 = "base64 text"
    TEXTS = "a list of text"
    TEXT_MAP = "a mapping of text to text"
    TEXTS_MAP = "a mapping of text to lists of text"
    ANYTHING = "anything"


class Entries(Struct, frozen=True):
    """A list of entries (`[]NamedCluster`), each a mapping of `fields`; entries of a
    kubeconfig's own lists are named in messages by their `kind` and name."""

    fields: Mapping[str, "Schema"]
    kind: str = ""
    """`cluster`, `user`, `context`: also the key of the entry's settings."""


Schema = Field | Entries | Mapping[str, "Schema"]
"""A field, a list of entries, or a struct (a mapping of its fields)."""

_EXTENSIONS = Entries({"name": Field.TEXT, "extension": Field.ANYTHING})
_CLUSTER: Mapping[str, Schema] = {
    "server": Field.TEXT,
    "tls-server-name": Field.TEXT,
    "insecure-skip-tls-verify": Field.FLAG,
    "certificate-authority": Field.TEXT,
    "certificate-authority-data": Field.BASE64,
    "proxy-url": Field.TEXT,
    "disable-compression": Field.FLAG,
    "extensions": _EXTENSIONS,
}
_EXEC: Mapping[str, Schema] = {
    "command": Field.TEXT,
    "args": Field.TEXTS,
    "env": Entries({"name": Field.TEXT, "value": Field.TEXT}),
    "apiVersion": Field.TEXT,
    "installHint": Field.TEXT,
    "provideClusterInfo": Field.FLAG,
    "interactiveMode": Field.TEXT,
}
_USER: Mapping[str, Schema] = {
    "client-certificate": Field.TEXT,
    "client-certificate-data": Field.BASE64,
    "client-key": Field.TEXT,
    "client-key-data": Field.BASE64,
    "token": Field.TEXT,
    "tokenFile": Field.TEXT,
    "as": Field.TEXT,
    "as-uid": Field.TEXT,
    "as-groups": Field.TEXTS,
    "as-user-extra": Field.TEXTS_MAP,
    "username": Field.TEXT,
    "password": Field.TEXT,
    "auth-provider": {"name": Field.TEXT, "config": Field.TEXT_MAP},
    "exec": _EXEC,
    "extensions": _EXTENSIONS,
}
_CONTEXT: Mapping[str, Schema] = {
    "cluster": Field.TEXT,
    "user": Field.TEXT,
    "namespace": Field.TEXT,
    "extensions": _EXTENSIONS,
}
SECTIONS = ("clusters", "users", "contexts")
"""The named lists of a kubeconfig, which kubectl merges across files by name."""
_CONFIG: Mapping[str, Schema] = {
    "kind": Field.TEXT,
    "apiVersion": Field.TEXT,
    "preferences": {"colors": Field.FLAG, "extensions": _EXTENSIONS},
    "clusters": Entries({"name": Field.TEXT, "cluster": _CLUSTER}, "cluster"),
    "users": Entries({"name": Field.TEXT, "user": _USER}, "user"),
    "contexts": Entries({"name": Field.TEXT, "context": _CONTEXT}, "context"),
    "current-context": Field.TEXT,
    "extensions": _EXTENSIONS,
}


def openable(path: Path) -> Path:
    """`path`, or OSError EINVAL ("Invalid argument") when it holds a NUL byte.

    Go refuses such a path before any system call with EINVAL (syscall.go
    `ByteSliceFromString`), so kubectl says `open …: invalid argument` (clientcmd
    validation.go `validateClusterInfo`/`validateAuthInfo`, transport/token_source.go); Python
    raises ValueError there instead, which callers that handle a file's OSError never expect.
    """
    if "\0" in str(path):
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL), str(path))
    return path


def read_small_file(path: Path, what: str, fix: str) -> bytes:
    """A small regular file's bytes, or one plain line saying why not (the path shown with
    its control characters, a NUL too, made visible)."""
    cannot = f"cannot read {what} {terminal_safe(str(path))}"
    try:
        if not stat.S_ISREG(openable(path).stat().st_mode):
            raise ConnectionSetupError(cannot, "it is not a regular file", fix)
        with path.open("rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise ConnectionSetupError(cannot, error.strerror or type(error).__name__, fix) from None
    if len(data) > MAX_FILE_BYTES:
        raise ConnectionSetupError(cannot, f"it is larger than {MAX_FILE_BYTES >> 20} MiB", fix)
    return data


def load_kubeconfig(path: Path) -> Mapping[str, Any]:
    """The kubeconfig in `path` as kubectl would decode it; ConnectionSetupError, one line,
    for any file kubectl refuses (and for the few it reads without bounds)."""
    data = read_small_file(path, "kubeconfig", "check the path, or pass another with --kubeconfig")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConnectionSetupError(
            f"kubeconfig {path} is not a text file", todo="pass a kubeconfig with --kubeconfig"
        ) from None
    loaded = parse(text)
    if isinstance(loaded, Unreadable):
        where = f" at line {loaded.line}" if loaded.line is not None else ""
        wrong = "is not valid YAML" if loaded.syntax else "cannot be read"
        raise ConnectionSetupError(
            f"kubeconfig {path} {wrong}{where}",
            loaded.detail,
            "fix the file, or pass another with --kubeconfig",
        )
    if loaded is None:
        return {}  # an empty file is an empty kubeconfig (loader.go Load)
    if not isinstance(loaded, dict):
        raise ConnectionSetupError(
            f"kubeconfig {path} is not a kubeconfig",
            "it holds no clusters, users or contexts",
            "pass a kubeconfig with --kubeconfig",
        )
    problem = type_problem(loaded) or duplicate_name(loaded)
    if problem is not None:
        raise ConnectionSetupError(f"kubeconfig {path} is not usable", problem, _FIX)
    return loaded


class Unreadable(Struct, frozen=True):
    """Text the bounded loader refused: why, on which line, and whether as bad YAML (rather
    than as too costly to read)."""

    detail: str
    line: int | None
    syntax: bool


def parse(text: str) -> object:
    """The first YAML document of `text` (kubectl reads no other), or why it cannot be read.
    Block YAML of plain and quoted scalars, the kubeconfig as kubectl and the cloud CLIs write
    it, is read without loading PyYAML (`blockyaml`); any other text by the bounded loader
    (`yamlsafe`: aliases, values and size capped), a repeated key taking its last value as
    go-yaml's lenient decoding does."""
    block = read_block_yaml(text)
    if block is not None:
        return block
    from truegreen import yamlsafe

    limits = yamlsafe.Limits(max_bytes=MAX_FILE_BYTES)
    for loaded in yamlsafe.load_all(text, limits, lines=False, unique_keys=False):
        if isinstance(loaded, yamlsafe.Refusal):
            syntax = loaded.problem is yamlsafe.Problem.SYNTAX
            return Unreadable(loaded.detail, loaded.line, syntax)
        return loaded.data
    return None  # no document at all: comments, or nothing


def type_problem(config: Mapping[str, Any]) -> str | None:
    """Plain words for the first value, in the file's order, that kubectl's decoding refuses;
    None when every value has its field's type."""
    return _struct_problem(config, _CONFIG, "")


def _struct_problem(
    value: Mapping[Any, Any], fields: Mapping[str, Schema], prefix: str
) -> str | None:
    """The first problem among a struct's fields; `prefix` names where the struct is."""
    for key, item in value.items():
        schema = fields.get(key) if isinstance(key, str) else None
        where = f"{prefix}{key}"
        problem = _unwritable(item, where) if schema is None else _problem(item, schema, where)
        if problem is not None:
            return problem
    return None


def _problem(value: object, schema: Schema, where: str) -> str | None:
    if value is None:
        return None  # JSON null: the field keeps its zero value
    if isinstance(schema, Entries):
        return _entries_problem(value, schema, where)
    if isinstance(schema, Field):
        return _field_problem(value, schema, where)
    if not isinstance(value, dict):
        return _wrong(value, where, "a mapping")
    return _struct_problem(value, schema, f"{where}.")


def _entries_problem(value: object, schema: Entries, where: str) -> str | None:
    if not isinstance(value, list):
        return _wrong(value, where, "a list of entries")
    for index, entry in enumerate(value):
        if entry is None:
            continue  # a zero entry: no name, no settings
        if not isinstance(entry, dict):
            return _wrong(entry, f"{where}[{index}]", "a mapping")
        name = entry.get("name")
        if not schema.kind or not isinstance(name, str):
            problem = _struct_problem(entry, schema.fields, f"{where}[{index}].")
        else:  # `user 'u': token`, not `users[0].user.token`
            label = f"{schema.kind} {name!r}"
            settings = entry.get(schema.kind)
            others = {key: item for key, item in entry.items() if key != schema.kind}
            problem = _struct_problem(others, schema.fields, f"{label}: ")
            if problem is None and settings is not None:
                fields = schema.fields[schema.kind]
                assert isinstance(fields, Mapping)  # every kind's settings are a struct
                if isinstance(settings, dict):
                    problem = _struct_problem(settings, fields, f"{label}: ")
                else:
                    problem = _wrong(settings, label, "a mapping")
        if problem is not None:
            return problem
    return None


def _field_problem(value: object, field: Field, where: str) -> str | None:
    if field is Field.ANYTHING:
        return _unwritable(value, where)
    if field is Field.FLAG:
        return None if isinstance(value, bool) else _wrong(value, where, field.value)
    if field in (Field.TEXT, Field.BASE64):
        if not isinstance(value, str):
            return _wrong(value, where, field.value)
        return _base64_problem(value, where) if field is Field.BASE64 else None
    if field is Field.TEXTS:
        return _texts_problem(value, where)
    if not isinstance(value, dict):
        return _wrong(value, where, field.value)
    for key, item in value.items():
        if field is Field.TEXT_MAP:
            problem = (
                None
                if item is None or isinstance(item, str)
                else _wrong(item, f"{where}.{key}", "text")
            )
        else:
            problem = _texts_problem(item, f"{where}.{key}")
        if problem is not None:
            return problem
    return None


def _texts_problem(value: object, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, list):
        return _wrong(value, where, Field.TEXTS.value)
    for index, item in enumerate(value):
        if item is not None and not isinstance(item, str):
            return _wrong(item, f"{where}[{index}]", "text")
    return None


def _base64_problem(value: str, where: str) -> str | None:
    try:
        decode_base64(value)
    except (binascii.Error, ValueError):
        return f"{where} is not base64"
    return None


def decode_base64(value: str) -> bytes:
    """A `…-data` field's bytes. Go's decoder skips line breaks inside the text, as here;
    binascii.Error for anything else that is not standard, padded base64."""
    return base64.b64decode(value.replace("\r", "").replace("\n", ""), validate=True)


def _unwritable(value: object, where: str) -> str | None:
    """A number JSON cannot write (`.inf`, `.nan`) anywhere in the value: sigs.k8s.io/yaml
    refuses the whole file for it (`json: unsupported value: +Inf`). Walked without recursion:
    a value may nest as deep as the loader allows."""
    waiting = [value]
    while waiting:
        item = waiting.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return f"{where} holds {item}, which kubectl cannot read"
        if isinstance(item, dict):
            waiting += item.values()
        elif isinstance(item, list):
            waiting += item
    return None


def _wrong(value: object, where: str, wanted: str) -> str:
    return f"{where} is {_what(value)}, where kubectl reads {wanted}"


def _what(value: object) -> str:
    if isinstance(value, bool):
        return f"{str(value).lower()} (YAML reads an unquoted yes, no, on or off as true or false)"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, str):
        return "text"
    return f"a {type(value).__name__}"  # a date or a time, as YAML reads some plain text


def duplicate_name(config: Mapping[str, Any]) -> str | None:
    """Plain words for a list of clusters, users or contexts naming one entry twice."""
    for section in SECTIONS:
        seen: set[str] = set()
        for entry in config.get(section) or ():
            name = (entry or {}).get("name") or ""
            if name in seen:
                return f"two {section} are named {name!r}"
            seen.add(name)
    return None
