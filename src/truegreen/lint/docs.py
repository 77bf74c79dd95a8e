"""docs/rules.md, generated from the rule table so the two never drift."""

from truegreen.lint.kinds import NO_PODS, WORKLOADS
from truegreen.lint.probes import DISABLED_BY, IGNORE, KEEP_RUNNING
from truegreen.lint.rules import RULES, RuleInfo
from truegreen.lint.rules.inputs import INPUT_RULES
from truegreen.lint.training import (
    ACCELERATORS,
    DISTRIBUTED_ENV,
    LAUNCHERS,
    PYTHON_MODULES,
    SHELL_KEYWORDS,
    WRAPPERS,
)

_EXAMPLES = {
    "readiness-missing": "a Deployment whose container declares `containerPort: 8080` (or is the "
    "target of a Service) and has no `readinessProbe`.",
    "restart-probe-on-keep-running": f'`{KEEP_RUNNING}: "runner"` on a workload whose `runner` '
    "container has a `livenessProbe` or `startupProbe`; a Job, a PyTorchJob worker, or a "
    "StatefulSet running `torchrun` (or with `WORLD_SIZE` in its env) with a `livenessProbe`; "
    "a LeaderWorkerSet (default restartPolicy) whose worker runs `torchrun` and whose log "
    "shipper sidecar has a `livenessProbe`.",
    "probe-port-undeclared": "`readinessProbe.httpGet.port: metrics` on a container whose ports "
    "have no port named `metrics`.",
    "probe-port-unlisted": "`livenessProbe.httpGet.port: 8081` on a pod none of whose containers "
    "lists 8081 (kubebuilder's manager: fine when the server listens there).",
    "readiness-missing-after-startup": "a DaemonSet container on `containerPort: 8080` with a "
    "`startupProbe` and no `readinessProbe`.",
    "unknown-field": "`readinesProbe:` in a container, or `httpGet: {paht: /healthz}`.",
    "wrong-field-type": '`env: [{name: PORT, value: 8080}]` (unquoted), `containerPort: "80"`, '
    "`initContainers: 7`, or a grpc probe's `port: grpc` (a name: only a number goes there).",
    "probe-targets-disabled-server": f'`{DISABLED_BY}: "8080=HTTP_DISABLED"` with '
    '`env: [{name: HTTP_DISABLED, value: "1"}]` and a probe on port 8080.',
    "liveness-same-as-readiness": "both probes `httpGet /healthz` on port `http` (or 8080, when "
    "`http` is 8080).",
    "probe-cannot-fail": '`exec: {command: ["sh", "-c", "exit 0"]}`.',
    "probe-cannot-pass": '`exec: {command: ["exit", "0"]}` or `exec: {command: [":"]}`.',
    "readiness-missing-no-port": "a long-running worker with no ports and no readiness probe.",
    "parse-error": "`metadata: {name: x` (a brace never closed), or `image:` twice in one "
    "container.",
    "unreadable-file": "a `.yaml` that is a link to `/dev/zero`, a 200 MB file, a file saved "
    "as UTF-16 without a byte-order mark, or a folder with no read permission for the user "
    "running lint.",
    "helm-template": "`name: {{ .Release.Name }}-api` read as it is, or any file under "
    "`templates/` beside a `Chart.yaml` (reported once per chart).",
    "ignore-unknown-rule": f'`{IGNORE}: "readiness-mising"`.',
    "unrendered-template": "`image: {{IMAGE}}` waiting for sed, or a `{{args.name}}` placeholder "
    "where YAML cannot read it.",
    "kustomize-error": "a kustomization whose `resources` names a file that does not exist.",
    "kustomize-unchecked": "a kustomization whose `resources` lists "
    "`https://github.com/kubernetes-sigs/jobset/releases/download/v0.8.0/manifests.yaml`, "
    "linted on a machine that cannot reach github.com.",
    "ignore-forbidden": f'`{IGNORE}: "readiness-missing"` in a run with `--no-ignores`.',
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
        'rule. With `-o json` they print `{"schema_version": 1, "rules": [RULE, ...]}` and',
        '`{"schema_version": 1, "rule": RULE}`, each RULE an object with `id`, `severity`,',
        "`summary`, `rationale` and `fix`. Either with PATHS, or both at once, is bad usage",
        "(exit 64).",
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
        "`rules` is a rule id or a list of them; `namespace`, `name` and `kind` are text (glob",
        "patterns, `*` when left out). A config file that says otherwise (`ignore: 5`,",
        "`rules: 5`, `namespace: 5`, an unknown rule or key) is bad usage: one line naming the",
        "file and the field, exit 64.",
        "",
        "Batch work (a Job, a CronJob, a Pod that runs to completion, and the training kinds "
        "built of them) has no readiness to gate: the readiness rules do not apply to it.",
        "",
        "`--no-ignores` (or `no-ignores: true` in the config file) makes every ignore annotation "
        "a finding of its own and silences nothing with it; the config file's own `ignore` "
        "entries still apply.",
        "",
        "A Service routes to the workloads its selector matches in its namespace. When neither "
        "names a namespace (as `helm template` renders most, and as folders applied with "
        "`kubectl apply -f DIR/` leave it to the context), they meet only when they come from "
        "the same source: the same folder of files (a Service in service.yaml routes to the "
        "Deployment in deployment.yaml beside it, whether the folder or the files are named), "
        "the same kustomization, the same chart rendered on stdin, or stdin. Two repositories "
        "linted in one run stay apart; a Service in another folder than its workload is not "
        "seen. kube-linter groups files by folder the same way "
        "(pkg/lintcontext/create_contexts.go, CreateContexts). Its targetPort reaches the "
        "container that declares it, a native sidecar (an init container with restartPolicy "
        "Always) as much as a main container: the endpoints send traffic to the pod's IP on "
        "that port, and pkg/api/v1/pod/util.go FindPort looks a named one up in the main "
        "containers, then the sidecars. A number no container declares reaches the pod's one "
        "long-running container when it has one, and no container lint can name when it has "
        "several.",
        "",
        *_kinds_section(),
        *_training_section(),
    ]
    for rule in RULES:
        lines += _section(rule)
    lines += [
        "# Findings about the input",
        "",
        "Each is one finding for the file (or chart, or folder) it names; the other files are "
        "still checked.",
        "",
    ]
    for info in INPUT_RULES:
        lines += _section(info)
    return "\n".join(lines)


_KIND_NOTES = {
    ("", "Pod"): "its own spec; runs to completion with restartPolicy Never or OnFailure",
    ("apps", "Deployment"): "rolled out",
    ("apps", "StatefulSet"): "rolled out",
    ("apps", "DaemonSet"): "rolled out",
    ("argoproj.io", "Rollout"): "rolled out; one with `workloadRef` runs the named "
    "Deployment's template, checked where that Deployment is",
    ("apps.openshift.io", "DeploymentConfig"): "rolled out",
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): "the leader and worker templates; pods "
    "labelled `leaderworkerset.sigs.k8s.io/name`; under restartPolicy RecreateGroupOnPodRestart "
    "(the default) or RecreateGroupAfterStart a restart of any container recreates the whole "
    "group",
    ("batch", "Job"): "batch",
    ("batch", "CronJob"): "batch (its job template)",
    ("jobset.x-k8s.io", "JobSet"): "batch, each replicated job; pods labelled with the JobSet's "
    "and replicated job's names",
    ("trainer.kubeflow.org", "TrainJob"): "no pod template: its pods come from the runtime it "
    "names",
    ("trainer.kubeflow.org", "TrainingRuntime"): "batch, each replicated job of its JobSet "
    "template",
    ("trainer.kubeflow.org", "ClusterTrainingRuntime"): "batch, each replicated job of its "
    "JobSet template",
    ("ray.io", "RayCluster"): "the head and each worker group; KubeRay adds a readiness and a "
    "liveness probe to the first (Ray) container when it has none, and a port `metrics` (8080) "
    "when it declares no port of that name",
    ("ray.io", "RayJob"): "batch: its cluster's groups (probes and ports as for RayCluster) and "
    "the submitter",
    ("ray.io", "RayService"): "its cluster's groups, probes and ports as for RayCluster",
    ("serving.knative.dev", "Service"): "its revision template; Knative's queue-proxy gives the "
    "serving container (the only one, or the one with ports) a readiness probe when it has "
    "none and sends it every request, on its `user-port` (8080 when it lists none: "
    "pkg/reconciler/revision/resources/deploy.go makeServingContainer), so it serves a port",
    ("serving.knative.dev", "Configuration"): "as a Knative Service",
    ("workload.codeflare.dev", "AppWrapper"): "each component's object, when lint understands "
    "every one of them",
}


def _kinds_section() -> list[str]:
    lines = [
        "# The kinds lint understands",
        "",
        "An object is judged by its API group and kind. Objects of a kind lint does not "
        "understand are counted apart and named in the summary (`12 objects read, 9 checked; "
        "not understood: 3 (Prometheus \u00d73)`) and in JSON (`not_understood`); a document with "
        "neither `apiVersion` nor `kind` is no Kubernetes object, and nor is one that names only "
        "one of them without `metadata` (a Helm `Chart.yaml`, a chart's values with a `kind`): "
        "each is counted as skipped. A document that writes both keys, or names one beside "
        "`metadata`, and lacks either (missing, null, empty or not text) is a `parse-error`, as "
        "kubectl's validation refuses it (`apiVersion not set`). A "
        "list (`kind: List`, or a typed one such as `DeploymentList`, as `kubectl get -o yaml` "
        "writes it) is read item by item: an item with neither `kind` nor `apiVersion` takes the "
        "list's kind less `List` and its apiVersion (apimachinery unstructured_list.go), and an "
        "item still missing either, or no object at all, is a `parse-error`, as kubectl refuses "
        "it.",
        "",
        "| kind | API group | pod templates |",
        "|---|---|---|",
    ]
    for group, kind in WORKLOADS:
        note = _KIND_NOTES.get(
            (group, kind), "batch, each replica type" if group == "kubeflow.org" else "long-running"
        )
        lines.append(f"| {kind} | {group or 'core'} | {note} |")
    lines += [
        "",
        "Kinds known to run no pods of their own (nothing in them for the probe rules): "
        + "; ".join(
            f"{group or 'core'}: {', '.join(sorted(kinds))}" for group, kinds in NO_PODS.items()
        )
        + ".",
        "",
    ]
    return lines


def _training_section() -> list[str]:
    return [
        "# Work that must not be restarted",
        "",
        f"Without a `{KEEP_RUNNING}` annotation, a main container keeps work running when",
        "",
        "- its kind is batch or training work: Job, CronJob, a Pod that runs to completion, "
        "JobSet, Kubeflow's PyTorchJob, TFJob, MPIJob, PaddleJob, XGBoostJob and JAXJob, "
        "Kubeflow Trainer's (Cluster)TrainingRuntime, RayJob;",
        "- its command or args run a distributed launcher: "
        + ", ".join(f"`{name}`" for name in LAUNCHERS)
        + ", `accelerate launch`, "
        + ", ".join(f"`python -m {module}`" for module in PYTHON_MODULES)
        + " (also inside `sh -c` scripts, across lines a backslash continues (POSIX 2.2.1), "
        + "and after `VAR=value`, the shell keywords "
        + ", ".join(f"`{word}`" for word in SHELL_KEYWORDS)
        + " and the programs that run the command after them, with their options: "
        + ", ".join(f"`{name}`" for name in WRAPPERS)
        + " (not `command -v` or `command -V`, which only look the name up); "
        "`python -mMODULE` too);",
        "- its env sets " + ", ".join(f"`{name}`" for name in DISTRIBUTED_ENV) + ";",
        "- it asks for GPUs ("
        + ", ".join(f"`{name}`" for name in ACCELERATORS)
        + ", `nvidia.com/mig-*`) and serves no port: it lists none, its readinessProbe targets "
        "none, no Service of the same source routes to it (the EndpointSlice controller "
        "resolves a numeric targetPort with no containerPort listed: pkg/api/v1/pod/util.go "
        "FindPort), and its controller sends it no traffic (Knative's serving container always "
        "serves one).",
        "",
        f"With the annotation, it alone decides, on any kind: the containers it names keep work "
        f'running and no others (`{KEEP_RUNNING}: ""` names none). The finding says which '
        "signal made it training work. Such a container is not asked for a readiness probe when "
        "it declares no port.",
        "",
        "Where a restart of one container recreates the whole group of pods (a LeaderWorkerSet "
        "under restartPolicy RecreateGroupOnPodRestart, the default, or "
        "RecreateGroupAfterStart), the work of any container of the group is the work of every "
        "container in it, sidecars included: the finding names the container that keeps it.",
        "",
    ]


def _section(rule: RuleInfo) -> list[str]:
    lines = [
        f"## {rule.id}",
        "",
        f"**Severity:** {rule.severity.value}. {rule.summary}",
        "",
        f"**Why:** {rule.rationale}",
        "",
        f"**Fix:** {rule.fix}",
        "",
    ]
    if rule.reads:
        lines += [f"**Reads:** {rule.reads}", ""]
    if rule.limits:
        lines += [f"**Limits:** {rule.limits}", ""]
    return [*lines, f"**Fires on:** {_EXAMPLES[rule.id]}", ""]
