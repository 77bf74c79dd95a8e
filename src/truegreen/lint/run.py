"""lint from end to end: load, model, run the rules, collect findings."""

from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from msgspec import Struct

from truegreen.exitcodes import ExitCode
from truegreen.lint.config import load_lint_config
from truegreen.lint.loader import BadInput, Manifest, chart_findings, input_files, load_file
from truegreen.lint.rules import ALL_RULES_BY_ID, RULES_BY_ID, Context, Severity, evaluate
from truegreen.lint.rules.inputs import IGNORE_UNKNOWN_RULE
from truegreen.lint.services import ServiceIndex, ServiceModel, routed_containers
from truegreen.probes import IGNORE, WorkloadModel, pod_template_of, workload_model
from truegreen.yamlsafe import MANIFEST_LIMITS, Limits


class LintFinding(Struct, frozen=True):
    """One problem, on the workload and container to change."""

    rule: str
    severity: Severity
    file: str
    line: int | None
    kind: str
    namespace: str | None
    name: str
    container: str | None
    message: str
    fix: str


class LintResult(Struct, frozen=True):
    """Every finding, and how much was looked at."""

    findings: tuple[LintFinding, ...]
    files: tuple[str, ...]
    objects: int
    allow_empty: bool = False
    """Reading no Kubernetes object at all is fine (a hook that saw only other YAML)."""

    @property
    def checked_nothing(self) -> bool:
        """No Kubernetes object was read, so nothing could be checked."""
        return self.objects == 0

    @property
    def exit_code(self) -> ExitCode:
        """2 when any finding is an error; else 3 when nothing was checked; else 0."""
        if any(f.severity is Severity.ERROR for f in self.findings):
            return ExitCode.FAILED
        if self.checked_nothing and not self.allow_empty:
            return ExitCode.UNKNOWN
        return ExitCode.GOOD


def _container_line(manifest: Manifest, container: str | None) -> int | None:
    template = pod_template_of(manifest.obj)
    if container is None or template is None:
        return manifest.line
    spec: Mapping[str, Any] = template[1]
    for entry in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        if isinstance(entry, Mapping) and entry.get("name") == container:
            return manifest.line_of(entry) or manifest.line
    return manifest.line


def _input_finding(bad: BadInput) -> LintFinding:
    rule = ALL_RULES_BY_ID[bad.rule]
    return LintFinding(
        rule.id, rule.severity, bad.file, bad.line, "", None, "", None, bad.message, rule.fix
    )


def _unknown_ignores(manifest: Manifest, model: WorkloadModel) -> list[LintFinding]:
    unknown = sorted(model.intent.ignore - set(RULES_BY_ID))
    if not unknown:
        return []
    rule = IGNORE_UNKNOWN_RULE
    return [
        LintFinding(
            rule.id,
            rule.severity,
            manifest.file,
            manifest.line,
            model.kind,
            model.namespace,
            model.name,
            None,
            f"{IGNORE} names {'an unknown rule' if len(unknown) == 1 else 'unknown rules'}: "
            f"{', '.join(unknown)}; known rules are {', '.join(RULES_BY_ID)}",
            rule.fix,
        )
    ]


def lint(
    paths: list[str],
    config_path: Path | None = None,
    *,
    limits: Limits = MANIFEST_LIMITS,
    stdin: BinaryIO | None = None,
    allow_empty: bool = False,
) -> LintResult:
    """Lint the manifests at `paths` (files, folders, or `-` for `stdin`)."""
    config = load_lint_config(config_path, frozenset(RULES_BY_ID))
    inputs = input_files(paths)
    manifests: list[Manifest] = []
    findings = [_input_finding(bad) for bad in chart_findings(inputs)]
    for file in inputs.files:
        for loaded in load_file(file, limits, stdin):
            if isinstance(loaded, BadInput):
                findings.append(_input_finding(loaded))
            else:
                manifests.append(loaded)
    services = ServiceIndex(
        [ServiceModel.parse(m.obj) for m in manifests if m.obj.get("kind") == "Service"]
    )
    for manifest in manifests:
        model = workload_model(manifest.obj)
        if model is None:
            continue
        findings += _unknown_ignores(manifest, model)
        context = Context(routed_containers(model, services.candidates(model)))
        for rule, hit in evaluate(model, context):
            if config.ignores(rule.id, model.kind, model.namespace, model.name):
                continue
            findings.append(
                LintFinding(
                    rule.id,
                    rule.severity,
                    manifest.file,
                    _container_line(manifest, hit.container),
                    model.kind,
                    model.namespace,
                    model.name,
                    hit.container,
                    hit.message,
                    rule.fix,
                )
            )
    files = (*inputs.files, *(f for templates in inputs.charts.values() for f in templates))
    return LintResult(tuple(findings), files, len(manifests), allow_empty)
