"""Every probe rule, in the order findings are reported."""

from truegreen.lint.probes import WorkloadModel
from truegreen.lint.rules.base import Context, Rule, RuleHit, RuleInfo, Severity
from truegreen.lint.rules.exec_probes import PROBE_CANNOT_FAIL, PROBE_CANNOT_PASS
from truegreen.lint.rules.fields import UNKNOWN_FIELD, WRONG_FIELD_TYPE
from truegreen.lint.rules.inputs import INPUT_RULES
from truegreen.lint.rules.ports import (
    PROBE_PORT_UNDECLARED,
    PROBE_PORT_UNLISTED,
    PROBE_TARGETS_DISABLED_SERVER,
)
from truegreen.lint.rules.readiness import (
    READINESS_MISSING,
    READINESS_MISSING_AFTER_STARTUP,
    READINESS_MISSING_NO_PORT,
)
from truegreen.lint.rules.restarts import LIVENESS_SAME_AS_READINESS, RESTART_PROBE_ON_KEEP_RUNNING

RULES: tuple[Rule, ...] = (
    READINESS_MISSING,
    RESTART_PROBE_ON_KEEP_RUNNING,
    PROBE_PORT_UNDECLARED,
    PROBE_TARGETS_DISABLED_SERVER,
    LIVENESS_SAME_AS_READINESS,
    PROBE_CANNOT_FAIL,
    PROBE_CANNOT_PASS,
    READINESS_MISSING_NO_PORT,
    PROBE_PORT_UNLISTED,
    READINESS_MISSING_AFTER_STARTUP,
    UNKNOWN_FIELD,
    WRONG_FIELD_TYPE,
)
RULES_BY_ID = {rule.id: rule for rule in RULES}
ALL_RULES: tuple[RuleInfo, ...] = (*RULES, *INPUT_RULES)
"""The probe rules, then the findings about the input: the table --list-rules, --explain,
docs/rules.md and SARIF's rule list are all made from."""
ALL_RULES_BY_ID = {rule.id: rule for rule in ALL_RULES}


def evaluate(
    workload: WorkloadModel, context: Context, *, honour_ignores: bool = True
) -> list[tuple[Rule, RuleHit]]:
    """Every rule hit for one workload, minus the rules its annotations ignore (unless
    `honour_ignores` is off: then they silence nothing)."""
    ignored = workload.intent.ignore if honour_ignores else frozenset()
    return [
        (rule, hit)
        for rule in RULES
        if rule.id not in ignored
        for hit in rule.check(workload, context)
    ]


__all__ = [
    "ALL_RULES",
    "ALL_RULES_BY_ID",
    "RULES",
    "RULES_BY_ID",
    "Context",
    "Rule",
    "RuleHit",
    "RuleInfo",
    "Severity",
    "evaluate",
]
