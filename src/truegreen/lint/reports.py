"""lint output: text grouped by file, the documented JSON, and SARIF 2.1.0."""

from typing import Any

from truegreen import __version__
from truegreen.lint.rules import RULES, Severity
from truegreen.lint.run import PARSE_ERROR, LintFinding, LintResult


def _escape(text: str) -> str:
    """Rich markup escaped; rich is imported only when text is rendered (not for JSON)."""
    from rich.markup import escape

    return escape(text)


SCHEMA_VERSION = 1
_SARIF_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_STYLES = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "blue"}
HELP_URI = "https://github.com/truegreen/truegreen/blob/main/docs/rules.md"


def to_json(result: LintResult) -> dict[str, Any]:
    """The documented JSON document."""
    return {
        "schema_version": SCHEMA_VERSION,
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
            }
            for f in result.findings
        ],
    }


def _sarif_rules() -> list[dict[str, Any]]:
    rules = [
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
        for rule in RULES
    ]
    rules.append(
        {
            "id": PARSE_ERROR,
            "name": "ParseError",
            "shortDescription": {"text": "A manifest file is not valid YAML."},
            "fullDescription": {"text": "The file could not be parsed; nothing in it was checked."},
            "help": {"text": "Fix the YAML syntax at the reported line."},
            "defaultConfiguration": {"level": "error"},
        }
    )
    return rules


def _uri(file: str) -> str:
    return "stdin" if file == "<stdin>" else file.removeprefix("./")


def _sarif_result(finding: LintFinding, index: dict[str, int]) -> dict[str, Any]:
    location: dict[str, Any] = {"artifactLocation": {"uri": _uri(finding.file)}}
    if finding.line is not None:
        location["region"] = {"startLine": finding.line}
    where = f"{finding.kind}/{finding.name}" if finding.name else finding.file
    return {
        "ruleId": finding.rule,
        "ruleIndex": index[finding.rule],
        "level": _SARIF_LEVELS[finding.severity],
        "message": {"text": f"{where}: {finding.message} Fix: {finding.fix}"},
        "locations": [{"physicalLocation": location}],
    }


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
                "results": [_sarif_result(f, index) for f in result.findings],
            }
        ],
    }


def to_text(result: LintResult) -> list[str]:
    """Rich markup lines: findings grouped by file with line numbers, then a summary."""
    lines: list[str] = []
    by_file: dict[str, list[LintFinding]] = {}
    for finding in result.findings:
        by_file.setdefault(finding.file, []).append(finding)
    for file, findings in by_file.items():
        lines.append(f"[bold]{_escape(file)}[/]")
        for f in sorted(findings, key=lambda f: (f.line or 0, f.rule)):
            where = f"{f.line}" if f.line is not None else "-"
            target = f"{f.kind}/{f.name}" + (f" container {f.container}" if f.container else "")
            style = _STYLES[f.severity]
            lines.append(
                f"  {where:>5}  [{style}]{f.severity.value:<7}[/] {f.rule}  "
                f"{_escape(target if f.name else '')}"
            )
            lines.append(f"         {_escape(f.message)}")
            lines.append(f"         [dim]fix: {_escape(f.fix)}[/]")
        lines.append("")
    counts = {s: sum(1 for f in result.findings if f.severity is s) for s in Severity}
    files = len(result.files)
    lines.append(
        f"{counts[Severity.ERROR]} error{'s' if counts[Severity.ERROR] != 1 else ''}, "
        f"{counts[Severity.WARNING]} warning{'s' if counts[Severity.WARNING] != 1 else ''}, "
        f"{counts[Severity.INFO]} info in {files} file{'s' if files != 1 else ''} "
        f"({result.objects} object{'s' if result.objects != 1 else ''} read)."
    )
    return lines
