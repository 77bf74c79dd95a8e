"""lint from end to end: load, model, run the rules, collect findings."""

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from msgspec import Struct

from truegreen.exitcodes import ExitCode
from truegreen.lint.config import LintConfig, load_lint_config
from truegreen.lint.loader import (
    BadInput,
    Loaded,
    Manifest,
    Skipped,
    chart_findings,
    input_files,
    load_file,
)
from truegreen.lint.probes import IGNORE, WorkloadModel, group_work, workload_models
from truegreen.lint.rules import (
    ALL_RULES_BY_ID,
    RULES_BY_ID,
    Context,
    RuleHit,
    Severity,
    evaluate,
)
from truegreen.lint.rules.inputs import IGNORE_FORBIDDEN, IGNORE_UNKNOWN_RULE
from truegreen.lint.services import ServiceIndex, ServiceModel, routed_containers
from truegreen.lint.templates import TemplateLines, chart_folders
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
    rendered: bool = False
    """`file` names a Helm template and `line` counts in the document rendered from it."""
    role: str = ""
    """Which pod template of the object (`Worker`, `head`), when it has several."""
    about: tuple[str, ...] = ()
    """What in the container it is about, beside the rule: the probe, then the values it names
    (`port=metrics`); SARIF's fingerprint tells two findings of a rule on a container apart by
    it."""


class Kustomized(Struct, frozen=True):
    """A kustomize folder and how it was read."""

    folder: str
    built_with: str


class LintResult(Struct, frozen=True):
    """Every finding, and how much was looked at."""

    findings: tuple[LintFinding, ...]
    files: tuple[str, ...]
    objects: int
    """Kubernetes objects read."""
    allow_empty: bool = False
    """Reading no Kubernetes object at all is fine (a hook that saw only other YAML)."""
    not_understood: Mapping[str, int] | None = None
    """Objects of kinds lint does not understand, counted by kind (None: none)."""
    not_objects: int = 0
    """Documents that are no Kubernetes object (no apiVersion and kind), not judged."""
    kustomizations: tuple[Kustomized, ...] = ()

    @property
    def checked(self) -> int:
        """Objects lint understood: every one read, minus those of kinds it does not know."""
        return self.objects - sum((self.not_understood or {}).values())

    @property
    def checked_nothing(self) -> bool:
        """No Kubernetes object lint understands was read, so nothing could be checked."""
        return self.checked == 0

    @property
    def exit_code(self) -> ExitCode:
        """2 when any finding is an error; else 3 when nothing was checked, or a finding says
        something could not be; else 0."""
        if any(f.severity is Severity.ERROR for f in self.findings):
            return ExitCode.FAILED
        if self.checked_nothing and not self.allow_empty:
            return ExitCode.UNKNOWN
        if any(ALL_RULES_BY_ID[f.rule].unchecked for f in self.findings):
            return ExitCode.UNKNOWN
        return ExitCode.GOOD


def _container_line(manifest: Manifest, model: WorkloadModel, container: str | None) -> int | None:
    if container is None:
        return manifest.line
    spec = model.pod_spec
    for group in ("containers", "initContainers"):
        entries = spec.get(group)
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, Mapping) and _named(entry, model) == container:
                return manifest.line_of(entry) or manifest.line
    return manifest.line


def _named(entry: Mapping[str, Any], model: WorkloadModel) -> str:
    default = "user-container" if model.controller == "Knative" else ""
    return str(entry.get("name") or default)


def _input_finding(bad: BadInput) -> LintFinding:
    rule = ALL_RULES_BY_ID[bad.rule]
    return LintFinding(
        rule.id, rule.severity, bad.file, bad.line, "", None, "", None, bad.message, rule.fix
    )


def _object_finding(
    manifest: Manifest, model: WorkloadModel, rule_id: str, message: str
) -> LintFinding:
    rule = ALL_RULES_BY_ID[rule_id]
    return LintFinding(
        rule.id,
        rule.severity,
        manifest.file,
        manifest.line,
        model.kind,
        model.namespace,
        model.name,
        None,
        message,
        rule.fix,
        manifest.rendered,
        model.role,
    )


def _ignore_findings(
    manifest: Manifest, model: WorkloadModel, config: LintConfig
) -> list[LintFinding]:
    found = []
    if config.no_ignores and model.intent.ignore:
        found.append(
            _object_finding(
                manifest,
                model,
                IGNORE_FORBIDDEN.id,
                f"{IGNORE} waives {', '.join(sorted(model.intent.ignore))}, but this run "
                "forbids waivers in manifests (--no-ignores): the rules still apply.",
            )
        )
    unknown = sorted(model.intent.ignore - set(RULES_BY_ID))
    if unknown:
        found.append(
            _object_finding(
                manifest,
                model,
                IGNORE_UNKNOWN_RULE.id,
                f"{IGNORE} names {'an unknown rule' if len(unknown) == 1 else 'unknown rules'}: "
                f"{', '.join(unknown)}; known rules are {', '.join(RULES_BY_ID)}",
            )
        )
    return found


class _Collected(Struct):
    """What the inputs held, gathered before the rules run."""

    manifests: list[Manifest]
    findings: list[LintFinding]
    not_objects: int = 0


def _collect(collected: _Collected, items: Iterable[Manifest | BadInput | Skipped]) -> None:
    for item in items:
        if isinstance(item, Manifest):
            collected.manifests.append(item)
        elif isinstance(item, BadInput):
            collected.findings.append(_input_finding(item))
        else:
            collected.not_objects += 1


def lint(
    paths: list[str],
    config_path: Path | None = None,
    *,
    limits: Limits = MANIFEST_LIMITS,
    stdin: BinaryIO | None = None,
    allow_empty: bool = False,
    no_ignores: bool = False,
    chart_roots: list[str] | None = None,
) -> LintResult:
    """Lint the manifests at `paths` (files, folders, or `-` for `stdin`).

    `chart_roots` are the folders of the charts whose `helm template` output is on stdin.
    """
    config = load_lint_config(config_path, frozenset(RULES_BY_ID))
    charts = chart_folders(chart_roots or [])
    if no_ignores:
        config = LintConfig(config.ignore, no_ignores=True)
    inputs = input_files(paths)
    collected = _Collected(
        [], [_input_finding(bad) for bad in (*chart_findings(inputs), *inputs.unlisted)]
    )
    stream: Loaded | None = None
    for file in inputs.files:
        loaded = load_file(file, limits, stdin, charts)
        if loaded.text:
            stream = loaded
        _collect(collected, loaded.items)
    kustomized = []
    if inputs.kustomizations:
        # subprocess, tempfile and shutil load only when there is a kustomization to build
        from truegreen.lint.kustomize import lint_folder
    for folder in inputs.kustomizations:
        built = lint_folder(folder, limits)
        kustomized.append(Kustomized(folder, built.built_with))
        _collect(collected, built.items)
    templates = TemplateLines(stream, limits)
    modelled = [(m, workload_models(m.obj)) for m in collected.manifests]
    findings = collected.findings + _rule_findings(modelled, config, templates)
    not_understood = Counter(str(m.obj.get("kind")) for m, models in modelled if models is None)
    files = (
        *inputs.files,
        *(f for templates_ in inputs.charts.values() for f in templates_),
        *inputs.kustomizations,
        *(bad.file for bad in inputs.unlisted),
    )
    return LintResult(
        tuple(dict.fromkeys(findings)),
        files,
        len(collected.manifests),
        allow_empty,
        dict(sorted(not_understood.items())) or None,
        collected.not_objects,
        tuple(kustomized),
    )


def _rule_findings(
    modelled: list[tuple[Manifest, tuple[WorkloadModel, ...] | None]],
    config: LintConfig,
    templates: TemplateLines,
) -> list[LintFinding]:
    services = ServiceIndex(
        [
            ServiceModel.parse(m.obj, m.source)
            for m, _ in modelled
            if m.obj.get("kind") == "Service" and m.obj.get("apiVersion") == "v1"
        ]
    )
    findings: list[LintFinding] = []
    for manifest, models in modelled:
        routing = [
            (model, routed_containers(model, services.candidates(model), manifest.source))
            for model in models or ()
        ]
        work = group_work(routing)
        for model, routed in routing:
            findings += _ignore_findings(manifest, model, config)
            context = Context(routed, work)
            for rule, hit in evaluate(model, context, honour_ignores=not config.no_ignores):
                if config.ignores(rule.id, model.kind, model.namespace, model.name):
                    continue
                line = _container_line(manifest, model, hit.container)
                mapped = templates.line_in_template(manifest, line)
                findings.append(
                    LintFinding(
                        rule.id,
                        rule.severity,
                        manifest.file,
                        line if mapped is None else mapped,
                        model.kind,
                        model.namespace,
                        model.name,
                        hit.container,
                        hit.message,
                        rule.fix,
                        manifest.rendered and mapped is None,
                        model.role,
                        _about(hit),
                    )
                )
    return findings


def _about(hit: RuleHit) -> tuple[str, ...]:
    """The probe a hit is about and the values it names, as `LintFinding.about` keeps them."""
    probe = (hit.probe,) if hit.probe else ()
    return probe + tuple(f"{key}={value}" for key, value in sorted(hit.values.items()))
