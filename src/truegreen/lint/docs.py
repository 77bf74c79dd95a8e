"""docs/rules.md, generated from the rule table so the two never drift."""

from truegreen.lint.rules import RULES, RuleInfo
from truegreen.lint.rules.inputs import INPUT_RULES
from truegreen.probes import DISABLED_BY, IGNORE, KEEP_RUNNING

_EXAMPLES = {
    "readiness-missing": "a Deployment whose container declares `containerPort: 8080` (or is the "
    "target of a Service) and has no `readinessProbe`.",
    "restart-probe-on-keep-running": f'`{KEEP_RUNNING}: "runner"` on a workload whose `runner` '
    "container has a `livenessProbe` or `startupProbe`.",
    "probe-port-undeclared": "`readinessProbe.httpGet.port: metrics` on a container whose ports "
    "have no port named `metrics` (or a number it does not list).",
    "probe-targets-disabled-server": f'`{DISABLED_BY}: "8080=HTTP_DISABLED"` with '
    '`env: [{name: HTTP_DISABLED, value: "1"}]` and a probe on port 8080.',
    "liveness-same-as-readiness": "both probes `httpGet /healthz` on port `http` (or 8080, when "
    "`http` is 8080).",
    "probe-cannot-fail": '`exec: {command: ["sh", "-c", "exit 0"]}`.',
    "readiness-missing-no-port": "a long-running worker with no ports and no readiness probe.",
    "parse-error": "`metadata: {name: x` (a brace never closed), or `image:` twice in one "
    "container.",
    "unreadable-file": "a `.yaml` that is a link to `/dev/zero`, a 200 MB file, or a file saved "
    "as UTF-16.",
    "helm-template": "`name: {{ .Release.Name }}-api` read as it is, or any file under "
    "`templates/` beside a `Chart.yaml` (reported once per chart).",
    "ignore-unknown-rule": f'`{IGNORE}: "readiness-mising"`.',
}


def rules_markdown() -> str:
    """The rule reference, one section per rule."""
    lines = [
        "# truegreen lint rules",
        "",
        "Generated from `src/truegreen/lint/rules/`; `TRUEGREEN_UPDATE_DOCS=1 make unit` rewrites",
        "it and a test keeps it current. Only `error` findings fail the run (exit 2); reading no",
        "Kubernetes object at all exits 3 (nothing was checked) unless `--allow-empty`.",
        "`truegreen lint --list-rules` prints this table and `truegreen lint --explain RULE` one",
        "rule (`-o json` for both).",
        "",
        "Intent a manifest cannot show is declared by annotations on the workload or its pod",
        "template:",
        "",
        f'- `{KEEP_RUNNING}: "api,worker"`: never restart these containers by probe.',
        f'- `{DISABLED_BY}: "8080=SOME_ENV"`: the server on that port (number or name) is off when',
        "  SOME_ENV is set to any non-empty value.",
        f'- `{IGNORE}: "RULE,RULE"`: silence rules for this object. `--config FILE` can do the',
        "  same per namespace, name or kind pattern:",
        "",
        "```yaml",
        "ignore:",
        "  - rules: [readiness-missing]",
        '    namespace: "legacy-*"',
        '    name: "*"',
        "```",
        "",
        "Jobs, CronJobs and run-to-completion Pods are batch work: readiness rules do not apply.",
        "",
    ]
    for rule in RULES:
        lines += _section(rule)
    lines += [
        "# Findings about the input",
        "",
        "Each is one finding for the file (or chart) it names; the other files are still checked.",
        "",
    ]
    for info in INPUT_RULES:
        lines += _section(info)
    return "\n".join(lines)


def _section(rule: RuleInfo) -> list[str]:
    return [
        f"## {rule.id}",
        "",
        f"**Severity:** {rule.severity.value}. {rule.summary}",
        "",
        f"**Why:** {rule.rationale}",
        "",
        f"**Fix:** {rule.fix}",
        "",
        f"**Fires on:** {_EXAMPLES[rule.id]}",
        "",
    ]
