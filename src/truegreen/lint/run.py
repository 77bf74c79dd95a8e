"""lint from end to end: load, model, run the rules, collect findings."""

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from truegreen.exitcodes import ExitCode
from truegreen.lint.config import load_lint_config
from truegreen.lint.loader import Manifest, ParseFailure, input_files, load_file
from truegreen.lint.rules import RULES_BY_ID, Context, Severity, evaluate
from truegreen.lint.services import ServiceIndex, ServiceModel, routed_containers
from truegreen.probes import pod_template_of, workload_model

PARSE_ERROR = "parse-error"


@dataclass(frozen=True)
class LintFinding:
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


@dataclass(frozen=True)
class LintResult:
    """Every finding, and how much was looked at."""

    findings: tuple[LintFinding, ...]
    files: tuple[str, ...]
    objects: int

    @property
    def exit_code(self) -> ExitCode:
        """2 when any finding is an error, else 0."""
        if any(f.severity is Severity.ERROR for f in self.findings):
            return ExitCode.FAILED
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


def lint(paths: list[str], config_path: Path | None = None) -> LintResult:
    """Lint the manifests at `paths` (files, folders, or `-` for stdin)."""
    config = load_lint_config(config_path, frozenset(RULES_BY_ID))
    files = input_files(paths)
    manifests: list[Manifest] = []
    findings: list[LintFinding] = []
    for file in files:
        for loaded in load_file(file):
            if isinstance(loaded, ParseFailure):
                findings.append(
                    LintFinding(
                        PARSE_ERROR,
                        Severity.ERROR,
                        loaded.file,
                        loaded.line,
                        "",
                        None,
                        "",
                        None,
                        f"not valid YAML: {loaded.problem}",
                        "Fix the YAML syntax; the other files were still checked.",
                    )
                )
            else:
                manifests.append(loaded)
    services = ServiceIndex(
        [ServiceModel.parse(m.obj) for m in manifests if m.obj.get("kind") == "Service"]
    )
    for manifest in manifests:
        model = workload_model(manifest.obj)
        if model is None:
            continue
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
    return LintResult(tuple(findings), tuple(files), len(manifests))
