"""Findings about the input itself: what could not be read or checked, and why."""

from truegreen.lint.rules.base import RuleInfo, Severity

PARSE_ERROR = RuleInfo(
    id="parse-error",
    severity=Severity.ERROR,
    summary="A manifest is not YAML that the API server would accept.",
    rationale=(
        "Nothing in that document was checked; the file's other documents were. The API server "
        "refuses the same input: broken syntax, a duplicate key (its strict decoding says `key "
        '"image" already set in map`; with lenient decoding the last one silently wins, so a '
        "probe can hide behind a later one), a value JSON cannot carry (`.nan`), a null key, a "
        "scalar that does not fit its tag (`!!int abc`). Aliases that expand to far more than "
        'the file holds (a "billion laughs") stop the whole file, and so do more than 4,000,000'
        " values (too large to read; the documents before them were still read). YAML is read "
        "as Kubernetes reads it (sigs.k8s.io/yaml): `=` and `!ENV x` are strings, `y` and `no` "
        "are booleans, and a `<<` merge writes over the keys before it while the keys after it "
        "write over the merge (go-yaml v2 reads a mapping in order); a document that is no "
        "Kubernetes object (neither apiVersion nor kind, or one of them without metadata: a "
        "Helm Chart.yaml) is counted and not judged, but an object that lacks either is this "
        "finding: kubectl's validation refuses it (k8s.io/kubectl pkg/validation "
        "getObjectKind: `apiVersion not set`), as a Helm template whose `apiVersion:` rendered "
        "empty is. A List item kubectl refuses is this finding too, the List's other items "
        "still checked: one with no object, no apiVersion or no kind, or one that is itself a "
        "list (an `items` array: kubectl's `*unstructured.Unstructured is not a list`). Input "
        "that starts with `{` is read as kubectl 1.33+ reads it (apimachinery "
        "YAMLOrJSONDecoder): as "
        "a stream of JSON values (what `jq '.items[]'` writes), every value read; once two were "
        "read, the first that is not JSON ends it with this finding, and before that the rest "
        "is read as YAML (a flow mapping `{kind: Pod, ...}`, or JSON then `---` and YAML). "
        "Text after the last document read that no document holds (after a `...`, say)"
        " is this finding too, never dropped."
    ),
    fix=(
        "Fix the manifest (YAML, JSON or a List item) at the reported line; the other documents "
        "and files were still checked."
    ),
)

UNREADABLE_FILE = RuleInfo(
    id="unreadable-file",
    severity=Severity.ERROR,
    summary="A file that could not be read as text, or a folder that could not be listed.",
    rationale="Nothing in it was checked: it is not a regular file (a pipe, a device, a link to "
    "one), it is larger than the size cap (16 MiB unless `--max-file-size` says otherwise), or "
    "it is binary, or not text in its encoding: UTF-8, or the UTF-8, UTF-16LE or UTF-16BE that a "
    "byte-order mark at its start announces, as kubectl reads it (k8s.io/cli-runtime "
    "pkg/resource/visitor.go FileVisitor.Visit, unicode.BOMOverride). A folder (named, or met "
    "while searching) that lint may not list is this finding too, never skipped: whatever it "
    "holds went unchecked. `kubectl apply -f` stops at such a folder (k8s.io/cli-runtime "
    "pkg/resource/visitor.go, ExpandPathsToFileVisitors).",
    fix="Lint the manifest itself, saved as UTF-8 text, in folders the run may read; raise "
    "`--max-file-size` if a manifest really is that large.",
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

UNRENDERED_TEMPLATE = RuleInfo(
    id="unrendered-template",
    severity=Severity.ERROR,
    summary="A manifest with `{{ ... }}` placeholders that are not Helm's.",
    rationale="A sed or envsubst template, or another tool's `{{args.x}}`, is not Kubernetes "
    "YAML until that tool fills it in: what the placeholders become decides what the probes "
    "are.",
    fix="Lint what the tool renders (`TOOL ... | truegreen lint -`), or keep the template out of "
    "the paths lint reads.",
)

KUSTOMIZE_ERROR = RuleInfo(
    id="kustomize-error",
    severity=Severity.ERROR,
    summary="A kustomize folder that could not be built.",
    rationale="A folder with a kustomization is linted as what it builds; when `kubectl "
    "kustomize` refuses it, or writes more than one manifest may hold, nothing in it was "
    "checked, and `kubectl apply -k` refuses it the same way wherever it runs. kustomize's "
    "error is quoted as `kubectl kustomize FOLDER` says it, without the frame of lint's own "
    "wrapping kustomization.",
    fix="Run `kubectl kustomize FOLDER` and fix what it reports.",
)

KUSTOMIZE_UNCHECKED = RuleInfo(
    id="kustomize-unchecked",
    severity=Severity.WARNING,
    summary="A kustomize folder that could not be built here: nothing in it was checked.",
    rationale="The build failed for a reason outside the folder: a remote resource or base "
    "could not be fetched (no answer over HTTP, git or SSH: no network, a name that does not "
    "resolve, a server that does not answer), kustomize ran past lint's 60 s deadline, or it "
    "could not be run at all. Where the remote answers, the same folder may build and apply, "
    "so this is a check that could not be made, never a failure: the run exits 3 when "
    "nothing else failed. A remote that answers that it is not there (HTTP 404, git's "
    "repository not found) is a kustomize-error.",
    fix="Lint where the remote resources can be fetched (or vendor them into the repository), "
    "and run `kubectl kustomize FOLDER` to see that it builds.",
    unchecked=True,
)

IGNORE_FORBIDDEN = RuleInfo(
    id="ignore-forbidden",
    severity=Severity.ERROR,
    summary="A `truegreen.io/ignore` annotation where `--no-ignores` forbids them.",
    rationale="With --no-ignores (or `no-ignores: true` in --config) the run's owner decides "
    "what is waived, in the config file; an annotation in a manifest silences nothing and is "
    "itself reported, so a waiver cannot slip in with the change it waives.",
    fix="Remove the annotation and fix the finding, or waive it in the --config file.",
)

INPUT_RULES: tuple[RuleInfo, ...] = (
    PARSE_ERROR,
    UNREADABLE_FILE,
    HELM_TEMPLATE,
    IGNORE_UNKNOWN_RULE,
    UNRENDERED_TEMPLATE,
    KUSTOMIZE_ERROR,
    KUSTOMIZE_UNCHECKED,
    IGNORE_FORBIDDEN,
)
