"""lint's config file: rules to ignore, per namespace and name pattern, and whether manifests
may waive rules themselves (`no-ignores: true`)."""

from collections.abc import Mapping
from fnmatch import fnmatchcase
from pathlib import Path

from msgspec import Struct

from truegreen.errors import UsageError
from truegreen.textsafe import terminal_safe
from truegreen.yamlsafe import Refusal, load_single
from truegreen.yamlwords import plain


class IgnoreEntry(Struct, frozen=True):
    """Ignore `rules` for objects whose namespace, name and kind match the (glob) patterns."""

    rules: frozenset[str]
    namespace: str = "*"
    name: str = "*"
    kind: str = "*"

    def covers(self, rule: str, kind: str, namespace: str | None, name: str) -> bool:
        """Whether this entry silences `rule` for that object."""
        return (
            (rule in self.rules or "*" in self.rules)
            and fnmatchcase(namespace or "", self.namespace)
            and fnmatchcase(name, self.name)
            and fnmatchcase(kind, self.kind)
        )


class LintConfig(Struct, frozen=True):
    """What `--config` says."""

    ignore: tuple[IgnoreEntry, ...] = ()
    no_ignores: bool = False
    """`truegreen.io/ignore` annotations silence nothing and are findings themselves."""

    def ignores(self, rule: str, kind: str, namespace: str | None, name: str) -> bool:
        """Whether any entry silences `rule` for that object."""
        return any(entry.covers(rule, kind, namespace, name) for entry in self.ignore)


def load_lint_config(path: Path | None, known_rules: frozenset[str]) -> LintConfig:
    """Read the config; UsageError for a file that cannot be used, naming the problem."""
    if path is None:
        return LintConfig()
    document = load_single(path)
    if isinstance(document, Refusal):
        if document.problem.is_read:
            raise UsageError(f"cannot read lint config {path}", document.detail)
        where = f" at line {document.line}" if document.line is not None else ""
        raise UsageError(f"lint config {path} is not valid YAML{where}", plain(document.detail))
    loaded = document.data
    if loaded is None:
        return LintConfig()
    if not isinstance(loaded, Mapping) or set(loaded) - {"ignore", "no-ignores"}:
        raise UsageError(f"lint config {path} may only hold an `ignore` list and `no-ignores`")
    no_ignores = loaded.get("no-ignores", False)
    if not isinstance(no_ignores, bool):
        raise UsageError(f"lint config {path}: `no-ignores` is true or false")
    ignore = loaded.get("ignore")
    if ignore is not None and not isinstance(ignore, list):
        raise UsageError(
            f"lint config {path}: `ignore` must be a list of entries, each with `rules`"
        )
    entries = []
    for number, raw in enumerate(ignore or [], 1):
        if not isinstance(raw, Mapping) or "rules" not in raw:
            raise UsageError(f"lint config {path}: each ignore entry needs `rules`")
        rule_set = _rules(raw["rules"], path, number)
        unknown = sorted(rule_set - known_rules - {"*"})
        if unknown:
            raise UsageError(
                f"lint config {path} names unknown rules: {terminal_safe(', '.join(unknown))}",
                todo=f"known rules are {', '.join(sorted(known_rules))}",
            )
        extra = set(raw) - {"rules", "namespace", "name", "kind"}
        if extra:
            shown = terminal_safe(", ".join(sorted(map(str, extra))))
            raise UsageError(f"lint config {path}: unknown keys {shown}")
        entries.append(
            IgnoreEntry(
                rule_set,
                _pattern(raw, "namespace", path, number),
                _pattern(raw, "name", path, number),
                _pattern(raw, "kind", path, number),
            )
        )
    return LintConfig(tuple(entries), no_ignores)


def _rules(rules: object, path: Path, number: int) -> frozenset[str]:
    """An entry's `rules`: one rule id, or a list of them. Anything else (a number, a mapping,
    null) is refused, never read as some other rule or as none."""
    if isinstance(rules, str):
        return frozenset([rules])
    if isinstance(rules, list) and all(isinstance(rule, str) for rule in rules):
        return frozenset(rules)
    raise UsageError(
        f"lint config {path}: `rules` in ignore entry {number} must be a rule id or a list of "
        "rule ids"
    )


def _pattern(entry: Mapping[object, object], field: str, path: Path, number: int) -> str:
    """An entry's namespace, name or kind pattern: text, `*` when not given. YAML reads
    `namespace: 5` as a number and `name: [a]` as a list: refused, not turned into some text
    the writer never wrote (`['a']`)."""
    pattern = entry.get(field, "*")
    if not isinstance(pattern, str):
        raise UsageError(
            f"lint config {path}: `{field}` in ignore entry {number} must be text (a name or a "
            "pattern such as `train*`)"
        )
    return pattern
