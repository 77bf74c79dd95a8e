"""Findings about the input itself: what could not be read or checked, and why."""

from truegreen.lint.rules.base import RuleInfo, Severity

PARSE_ERROR = RuleInfo(
    id="parse-error",
    severity=Severity.ERROR,
    summary="A manifest is not YAML that the API server would accept.",
    rationale="From the reported line on, nothing in that file was checked. The API server "
    "refuses the same input: broken syntax, a duplicate key (its strict decoding says "
    '`key "image" already set in map`; with lenient decoding the last one silently wins, so a '
    "probe can hide behind a later one), aliases that expand to far more than the file holds "
    '(a "billion laughs"), or a tag it does not know.',
    fix="Fix the YAML at the reported line; the other files were still checked.",
)

UNREADABLE_FILE = RuleInfo(
    id="unreadable-file",
    severity=Severity.ERROR,
    summary="A file that could not be read as text.",
    rationale="Nothing in it was checked: it is not a regular file (a pipe, a device, a link to "
    "one), it is larger than the size cap (16 MiB unless `--max-file-size` says otherwise), or "
    "it is binary or not UTF-8.",
    fix="Lint the manifest itself, saved as UTF-8 text; raise `--max-file-size` if a manifest "
    "really is that large.",
)

HELM_TEMPLATE = RuleInfo(
    id="helm-template",
    severity=Severity.ERROR,
    summary="An unrendered Helm chart template.",
    rationale="`{{ ... }}` is not Kubernetes YAML until Helm renders it, and what it renders "
    "to depends on the chart's values: the probes in it cannot be checked as written.",
    fix="Render it first: `helm template <chart> | truegreen lint -`; keep `templates/` of charts "
    "out of file-based hooks (the shipped pre-commit hook excludes them).",
)

IGNORE_UNKNOWN_RULE = RuleInfo(
    id="ignore-unknown-rule",
    severity=Severity.ERROR,
    summary="A `truegreen.io/ignore` annotation names a rule that does not exist.",
    rationale="A misspelled rule silences nothing while looking deliberate, so a reader "
    "believes a finding was weighed and waived; `--config` refuses unknown rules the same way.",
    fix="Use the ids that `truegreen lint --list-rules` prints.",
)

INPUT_RULES: tuple[RuleInfo, ...] = (
    PARSE_ERROR,
    UNREADABLE_FILE,
    HELM_TEMPLATE,
    IGNORE_UNKNOWN_RULE,
)
