"""lint output: text grouped by file, the documented JSON, SARIF 2.1.0, and the rule table.

Text is for a terminal: everything that came from a file passes through `terminal_safe`, and
lines wrap at word boundaries when a width is given. JSON and SARIF keep every value exact.
"""

import hashlib
import textwrap
from collections import Counter
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from truegreen import __version__
from truegreen.exitcodes import ExitCode
from truegreen.lint.rules import ALL_RULES, ALL_RULES_BY_ID, RuleInfo, Severity
from truegreen.lint.run import LintFinding, LintResult
from truegreen.markup import escape
from truegreen.textsafe import terminal_safe
from truegreen.wrapping import wrap

SCHEMA_VERSION = 1
_SARIF_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_STYLES = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "blue"}
HELP_URI = "https://github.com/truegreen/truegreen/blob/main/docs/rules.md"


def to_json(result: LintResult) -> dict[str, Any]:
    """The documented JSON document."""
    return {
        "schema_version": SCHEMA_VERSION,
        "files": len(result.files),
        "objects": result.objects,
        "checked": result.checked,
        "not_understood": dict(result.not_understood or {}),
        "not_objects": result.not_objects,
        "kustomizations": [
            {"folder": k.folder, "built_with": k.built_with} for k in result.kustomizations
        ],
        "findings": [
            {
                "rule": f.rule,
                "severity": f.severity.value,
                "file": f.file,
                "line": f.line,
                "kind": f.kind,
                "namespace": f.namespace,
                "name": f.name,
                "container": f.container,
                "message": f.message,
                "fix": f.fix,
                "rendered": f.rendered,
                "role": f.role,
            }
            for f in result.findings
        ],
    }


def _sarif_rules() -> list[dict[str, Any]]:
    return [
        {
            "id": rule.id,
            "name": "".join(part.capitalize() for part in rule.id.split("-")),
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.rationale},
            "help": {
                "text": f"{rule.rationale}\n\nFix: {rule.fix}",
                "markdown": f"{rule.rationale}\n\n**Fix:** {rule.fix}",
            },
            "helpUri": f"{HELP_URI}#{rule.id}",
            "defaultConfiguration": {"level": _SARIF_LEVELS[rule.severity]},
        }
        for rule in ALL_RULES
    ]


def _uri(file: str) -> str:
    """A file as SARIF's artifactLocation.uri, a URI reference (RFC 3986): percent-encoded as
    UTF-8 but for `/`, so a space, `#`, `%` or a leading `c:` stay part of the path."""
    return "stdin" if file == "<stdin>" else quote(file.removeprefix("./"), safe="/")


RENDERED = "HELM_RENDERED"
"""The uriBaseId of a location inside a document `helm template` rendered: the uri names the
template it came from, the region counts in the rendered document, not in that file."""


def _sarif_result(finding: LintFinding, index: dict[str, int], fingerprint: str) -> dict[str, Any]:
    artifact: dict[str, Any] = {"uri": _uri(finding.file)}
    if finding.rendered:
        artifact["uriBaseId"] = RENDERED
    location: dict[str, Any] = {"artifactLocation": artifact}
    if finding.line is not None:
        location["region"] = {"startLine": finding.line}
    where = f"{finding.kind}/{finding.name}" if finding.name else finding.file
    properties = {
        key: value
        for key, value in (
            ("kind", finding.kind),
            ("namespace", finding.namespace),
            ("name", finding.name),
            ("role", finding.role),
            ("container", finding.container),
        )
        if value
    }
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": index[finding.rule],
        "level": _SARIF_LEVELS[finding.severity],
        "message": {"text": f"{where}: {finding.message} Fix: {finding.fix}"},
        "locations": [{"physicalLocation": location}],
        "partialFingerprints": {"truegreenFinding/v1": fingerprint},
    }
    if properties:
        result["properties"] = properties
    return result


def _fingerprints(findings: Sequence[LintFinding]) -> list[str]:
    """The same problem on the same object keeps its fingerprint when lines move; two problems
    a rule finds in one container (on two probes, two ports) have two (SARIF 2.1.0 §3.27.17:
    part of a result's unique identity). Findings with nothing else to tell them apart (two
    documents of a file that cannot be read, which name no object) are told apart by their
    order in the file; the first keeps the fingerprint it would have alone."""
    seen: Counter[str] = Counter()
    prints = []
    for finding in findings:
        identity = "\0".join(
            [
                finding.rule,
                _uri(finding.file),
                finding.kind,
                finding.namespace or "",
                finding.name,
                finding.role,
                finding.container or "",
                *finding.about,
            ]
        )
        seen[identity] += 1
        if seen[identity] > 1:
            identity += f"\0{seen[identity]}"
        prints.append(hashlib.sha256(identity.encode()).hexdigest()[:32])
    return prints


def to_sarif(result: LintResult) -> dict[str, Any]:
    """A SARIF 2.1.0 log with rule metadata and physical locations."""
    rules = _sarif_rules()
    index = {rule["id"]: position for position, rule in enumerate(rules)}
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "truegreen",
                        "version": __version__,
                        "informationUri": HELP_URI,
                        "rules": rules,
                    }
                },
                "results": [
                    _sarif_result(finding, index, fingerprint)
                    for finding, fingerprint in zip(
                        result.findings, _fingerprints(result.findings), strict=True
                    )
                ],
                **(
                    {
                        "originalUriBaseIds": {
                            RENDERED: {
                                "description": {
                                    "text": "Documents as `helm template` rendered them: a "
                                    "location names the template a document came from, and its "
                                    "line counts in the rendered document (from the line after "
                                    "its `# Source:` comment), not in the template file."
                                }
                            }
                        }
                    }
                    if any(f.rendered for f in result.findings)
                    else {}
                ),
            }
        ],
    }


def _plural(count: int, thing: str) -> str:
    return f"{count} {thing}{'' if count == 1 or thing == 'info' else 's'}"


def _wrapped(text: str, width: int | None, indent: str, then: str | None = None) -> list[str]:
    """`text` made terminal-safe, wrapped at word boundaries (never inside a word); `indent`
    starts the first line, `then` (default: `indent`) the others."""
    safe = terminal_safe(text)
    if width is None:
        return [indent + safe]
    return textwrap.wrap(
        safe,
        width=max(width, len(indent) + 20),
        initial_indent=indent,
        subsequent_indent=indent if then is None else then,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent]


def _prose(text: str, width: int | None, indent: str) -> list[str]:
    """A message, fix or summary wrapped as every remedy is (truegreen.wrapping): a command in
    backticks is never split, so it pastes as one line."""
    safe = terminal_safe(text)
    if width is None:
        return [indent + safe]
    first, *rest = wrap(safe, max(width, len(indent) + 20), first=len(indent), indent=len(indent))
    return [indent + first, *rest]


_BODY = " " * 9


def to_text(result: LintResult, width: int | None = None) -> list[str]:
    """Rich markup lines: findings grouped by file with line numbers, then a summary.

    `width` wraps every line at word boundaries (a terminal's width); None leaves lines whole.
    """
    lines: list[str] = []
    by_file: dict[str, list[LintFinding]] = {}
    for finding in result.findings:
        by_file.setdefault(finding.file, []).append(finding)
    order = {file: position for position, file in enumerate(result.files)}
    for file in sorted(by_file, key=lambda file: order.get(file, len(order))):
        findings = by_file[file]
        rendered = " (lines of the document helm rendered)" if findings[0].rendered else ""
        lines.append(f"[bold]{escape(terminal_safe(file))}[/]{rendered}")
        for f in sorted(findings, key=lambda f: (f.line or 0, f.rule)):
            where = f"{f.line}" if f.line is not None else "-"
            role = f" ({f.role})" if f.role else ""
            target = f"{f.kind}/{f.name}{role}" + (
                f" container {f.container}" if f.container else ""
            )
            head = _wrapped(
                f"  {where:>5}  {f.severity.value:<7} {f.rule}  {target if f.name else ''}",
                width,
                "",
                _BODY,
            )
            first, style, cut = head[0].rstrip(), _STYLES[f.severity], len(f"  {where:>5}  ")
            severity = first[cut : cut + 7]
            lines.append(f"{first[:cut]}[{style}]{severity}[/]{escape(first[cut + 7 :])}")
            lines += [escape(line) for line in head[1:]]
            lines += [escape(line) for line in _prose(f.message, width, _BODY)]
            lines += [f"[dim]{escape(line)}[/]" for line in _prose(f"fix: {f.fix}", width, _BODY)]
        lines.append("")
    lines += [escape(line) for line in _prose(_summary(result), width, "")]
    return lines


def _summary(result: LintResult) -> str:
    counts = {s: sum(1 for f in result.findings if f.severity is s) for s in Severity}
    files = _plural(len(result.files), "file")
    read = f"{_plural(result.objects, 'object')} read"
    if result.not_understood:
        kinds = ", ".join(f"{kind} \u00d7{count}" for kind, count in result.not_understood.items())
        unknown = sum(result.not_understood.values())
        read += f", {result.checked} checked; not understood: {unknown} ({kinds})"
    if result.not_objects:
        others = _plural(result.not_objects, "other document")
        read += f"; {others} (no Kubernetes object) skipped"
    summary = (
        f"{_plural(counts[Severity.ERROR], 'error')}, "
        f"{_plural(counts[Severity.WARNING], 'warning')}, "
        f"{_plural(counts[Severity.INFO], 'info')} in {files} ({read})."
    )
    for built_with in dict.fromkeys(k.built_with for k in result.kustomizations):
        folders = ", ".join(k.folder for k in result.kustomizations if k.built_with == built_with)
        how = (
            "read without kustomize, from their resources only (no patches applied)"
            if built_with == "resources only"
            else f"built with {built_with}"
        )
        summary += f" Kustomize folders {how}: {folders}."
    if result.exit_code is ExitCode.UNKNOWN and result.checked_nothing:
        summary += (
            " No Kubernetes objects found, so nothing was checked."
            # --allow-empty answers an input without objects, not a finding that a check could
            # not be made (a kustomize folder whose remote resources could not be fetched).
            + (
                ""
                if any(ALL_RULES_BY_ID[f.rule].unchecked for f in result.findings)
                else " Pass --allow-empty where that is expected (a hook on any YAML file)."
            )
            if result.objects == 0
            else " No object of a kind lint understands, so nothing was checked."
        )
    return summary


def rules_table(width: int | None = None) -> list[str]:
    """`--list-rules`: every rule's id, severity and one-line summary (plain text)."""
    id_width = max(len(rule.id) for rule in ALL_RULES)
    lines = []
    for rule in ALL_RULES:
        lead = f"{rule.id:<{id_width}}  {rule.severity.value:<7}  "
        wrapped = _wrapped(rule.summary, width, " " * len(lead))
        lines += [lead + wrapped[0].lstrip(), *wrapped[1:]]
    return lines


def rule_explained(rule: RuleInfo, width: int | None = None) -> list[str]:
    """`--explain RULE`: the rule's summary, why it matters and how to fix it (plain text)."""
    return [
        f"{rule.id} ({rule.severity.value})",
        *_wrapped(rule.summary, width, ""),
        "",
        *_wrapped(f"Why: {rule.rationale}", width, ""),
        "",
        *_wrapped(f"Fix: {rule.fix}", width, ""),
    ]


def rules_json(rules: Sequence[RuleInfo]) -> dict[str, Any]:
    """--list-rules as JSON: `schema_version` and every rule, as `_rule_json` writes one."""
    return {"schema_version": SCHEMA_VERSION, "rules": [_rule_json(rule) for rule in rules]}


def explained_json(rule: RuleInfo) -> dict[str, Any]:
    """--explain RULE as JSON: `schema_version` and the rule, as `_rule_json` writes it."""
    return {"schema_version": SCHEMA_VERSION, "rule": _rule_json(rule)}


def _rule_json(rule: RuleInfo) -> dict[str, str]:
    """One rule as JSON: id, severity, summary, rationale and fix."""
    return {
        "id": rule.id,
        "severity": rule.severity.value,
        "summary": rule.summary,
        "rationale": rule.rationale,
        "fix": rule.fix,
    }
