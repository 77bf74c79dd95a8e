"""The jargon list: words an operator should not need to know to read a headline or remedy."""

import re
from typing import Any

JARGON = (
    "pod",
    "pods",
    "pvc",
    "persistent volume",
    "persistentvolume",
    "secret",
    "secrets",
    "namespace",
    "node",
    "nodes",
    "taint",
    "taints",
    "toleration",
    "tolerations",
    "crashloopbackoff",
    "imagepullbackoff",
    "errimagepull",
    "replicaset",
    "statefulset",
    "daemonset",
    "deployment",
    "kubelet",
    "configmap",
    "serviceaccount",
    "service account",
    "rbac",
    "cordon",
    "cordoned",
    "oomkilled",
    "scheduler",
    "unschedulable",
    "manifest",
    "apiserver",
    "api server",
    "liveness",
    "readinessprobe",
    "livenessprobe",
    "startupprobe",
    "storageclass",
    "selector",
    "label",
    "labels",
    "annotation",
    "annotations",
    "crd",
)
JARGON_PATTERN = re.compile(r"\b(" + "|".join(re.escape(w) for w in JARGON) + r")\b", re.IGNORECASE)


# A command to paste (`kubectl uncordon gpu-1`) must say what kubectl understands; it is the one
# place Kubernetes words are allowed. Everything outside the backticks is still checked.
COMMAND_PATTERN = re.compile(r"`[^`]*`")


# The cluster's own words, quoted as a component wrote them (“FailedMount: MountVolume.SetUp
# failed …”): a reason no rule names is shown in those words, never translated by a guess. Only
# typographic quotes mark them; doctor/knowledge/reports.py `quoted` keeps a message from
# closing them early.
QUOTE_PATTERN = re.compile(r"“[^”]*”")


def jargon_in(text: str) -> list[str]:
    """The jargon words in `text`, outside backticked commands and quoted cluster words."""
    return JARGON_PATTERN.findall(QUOTE_PATTERN.sub("“…”", COMMAND_PATTERN.sub("`…`", text)))


def assert_plain_report(report: dict[str, Any]) -> None:
    """Every headline and remedy of a doctor JSON report is free of jargon."""
    texts = [report["headline"]["text"], report["headline"]["remedy"]]
    for finding in report["findings"]:
        texts += [finding["headline"], finding["remedy"]]
    for text in texts:
        assert not jargon_in(text), f"jargon {jargon_in(text)} in {text!r}"
