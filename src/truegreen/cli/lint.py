"""`truegreen lint`: its options, and its body: the paths linted (or the rule table printed),
the result rendered as text, JSON or SARIF. It never loads the Kubernetes client or doctor."""

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from truegreen.cli.output import emit_json, loaded, reporting_errors, text_consoles
from truegreen.cli.parser import FILE, InRange, choice, command, plain_options

if TYPE_CHECKING:
    from truegreen.console import Consoles
    from truegreen.failure import Failure


def _lint_failure(failure: "Failure") -> object:
    from truegreen.failure import failure_document

    # lint's own document, empty: nothing was read, so nothing was found
    return failure_document(failure, files=0, objects=0, findings=[])


def _refuse_with_rules(list_rules: bool, explain: str | None, paths: list[str]) -> None:
    """--list-rules and --explain read no paths and exclude each other: either beside paths,
    or both at once, is bad usage (cobra's MarkFlagsMutuallyExclusive), never a run that
    silently drops half of what was asked."""
    from truegreen.errors import UsageError

    if list_rules and explain is not None:
        raise UsageError("--list-rules and --explain cannot be used together", todo="choose one")
    if paths:
        flag = "--list-rules" if list_rules else "--explain"
        given = (
            f"{paths[0]!r} was given"
            if len(paths) == 1
            else f"{len(paths)} were given, the first {paths[0]!r}"
        )
        raise UsageError(f"{flag} takes no paths", given, f"drop them, or lint them without {flag}")


def _print_rules(
    explain: str | None, output: str, consoles: "Consoles | None", width: int | None
) -> None:
    """lint's --list-rules and --explain RULE, from the one rule table."""
    from truegreen.errors import UsageError
    from truegreen.lint import reports
    from truegreen.lint.rules import ALL_RULES, ALL_RULES_BY_ID

    if output == "sarif":
        raise UsageError("--list-rules and --explain print text or JSON", todo="use -o json")
    if explain is not None and explain not in ALL_RULES_BY_ID:
        known = ", ".join(ALL_RULES_BY_ID)
        raise UsageError(f"no rule {explain!r}", todo=f"known rules are {known}")
    if output == "json":
        if explain is None:
            emit_json(reports.rules_json(ALL_RULES))
        else:
            emit_json(reports.explained_json(ALL_RULES_BY_ID[explain]))
        return
    text = (
        reports.rules_table(width)
        if explain is None
        else reports.rule_explained(ALL_RULES_BY_ID[explain], width)
    )
    assert consoles is not None  # text output has its consoles
    for line in text:
        consoles.out.print(line, markup=False)


def _lint_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = "%(prog)s [OPTIONS] [PATHS]..."
    parser.add_argument(
        "paths", nargs="*", metavar="PATHS", help="Files or folders to check; - reads stdin."
    )
    parser.add_argument(
        "--config",
        type=FILE,
        metavar="FILE",
        help="YAML with rules to ignore per namespace or name pattern.",
    )
    choice(
        parser,
        "-o",
        "--output",
        choices=("text", "json", "sarif"),
        help="Text for people, JSON or SARIF 2.1.0 for machines.",
    )
    parser.add_argument(
        "--allow-empty",
        action="store_true",
        help="Exit 0, not 3, when the paths hold no Kubernetes object (for hooks on any YAML).",
    )
    parser.add_argument(
        "--max-file-size",
        type=InRange(int, 1, 1024),
        default=16,
        metavar="MIB",
        help="Refuse a larger file (a finding) or stdin (bad usage), in MiB.",
    )
    parser.add_argument(
        "--no-ignores",
        action="store_true",
        help="truegreen.io/ignore annotations silence nothing and are findings (for CI).",
    )
    parser.add_argument(
        "--chart-root",
        action="append",
        metavar="DIR",
        help="The folder of a chart whose `helm template` output is on stdin (repeatable).",
    )
    parser.add_argument(
        "--list-rules", action="store_true", help="Print every rule: id, severity, summary."
    )
    parser.add_argument("--explain", metavar="RULE", help="Print one rule's reason and fix.")
    plain_options(parser)


@command(_lint_arguments)
@reporting_errors(_lint_failure)
def lint(
    paths: list[str],
    config: Path | None,
    output: str,
    allow_empty: bool,
    max_file_size: int,
    no_ignores: bool,
    chart_root: list[str] | None,
    list_rules: bool,
    explain: str | None,
    no_color: bool,
    debug: bool,
) -> None:
    """Refuse health probes that lie or that kill long-running work.

    PATHS are files or folders (*.yaml, *.yml, *.json, searched recursively); `-` reads stdin,
    so `helm template CHART | truegreen lint -` works. Exit 2 when any finding is an error,
    3 when no Kubernetes object was found (unless --allow-empty).
    """
    from truegreen.errors import UsageError
    from truegreen.lint import reports
    from truegreen.lint.run import lint as run_lint
    from truegreen.yamlsafe import MIB, Limits

    loaded()

    consoles = text_consoles(output, no_color)
    width = consoles.out.width if consoles is not None and consoles.out.is_terminal else None
    if list_rules or explain is not None:
        _refuse_with_rules(list_rules, explain, paths)
        _print_rules(explain, output, consoles, width)
        return
    if not paths and sys.stdin.isatty():
        raise UsageError(
            "nothing to lint",
            "no path was given and stdin is a terminal",
            "pass files, folders or -",
        )
    result = run_lint(
        list(paths),
        config,
        limits=Limits(max_bytes=max_file_size * MIB),
        stdin=sys.stdin.buffer,
        allow_empty=allow_empty,
        no_ignores=no_ignores,
        chart_roots=chart_root,
    )
    if output == "json":
        emit_json(reports.to_json(result))
    elif consoles is None:
        emit_json(reports.to_sarif(result))
    else:
        for line in reports.to_text(result, width):
            consoles.out.print(line)
    sys.exit(result.exit_code)
