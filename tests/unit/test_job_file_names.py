"""A job file's name, held to the rules its kind meets at create (knowledge/pod_validation.py
`name_refusals`), value by value."""

from typing import Any

import pytest

from truegreen.cluster import Kind
from truegreen.doctor.knowledge.pod_validation import name_refusals
from truegreen.doctor.knowledge.training import shown_name


def _job(metadata: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"metadata": metadata, "spec": {"template": {"metadata": {}, "spec": {}}, **spec}}


@pytest.mark.parametrize(
    ("kind", "document"),
    [
        (Kind.JOB, _job({"name": "a" * 63})),
        (Kind.JOB, _job({"name": "train.v2"})),
        (Kind.JOB, _job({"generateName": "sweep-"})),
        # a 58-character prefix makes a name of 63: a label value still
        (Kind.JOB, _job({"generateName": "s" * 70})),
        # the Job selects its pods itself: no job-name labels are added (strategy.go)
        (Kind.JOB, _job({"name": "a" * 64}, manualSelector=True)),
        (Kind.JOB, _job({"name": "a" * 61}, completionMode="Indexed", completions=10)),
        (Kind.CRON_JOB, _job({"name": "a" * 52})),
        (Kind.PYTORCH_JOB, _job({"name": "bert-2"})),
        # JobSet's own limits are not judged; the API server's subdomain rule is
        (Kind.JOB_SET, _job({"name": "bert.v2"})),
    ],
)
def test_names_the_cluster_accepts(kind: Kind, document: dict[str, Any]) -> None:
    assert name_refusals(kind, document) == []


def test_an_indexed_job_s_last_hostname_counts_its_index() -> None:
    """`<name>-<completions - 1>`: 61 characters and index 10 make 64."""
    document = _job({"name": "a" * 61}, completionMode="Indexed", completions=11)
    assert name_refusals(Kind.JOB, document) == [
        f'metadata.name: Invalid value: "{"a" * 61}": will not able to create pod with invalid '
        f"DNS label: {'a' * 61}-10"
    ]


def test_a_label_the_template_sets_itself_is_the_one_judged() -> None:
    labels = {"job-name": "b" * 64, "batch.kubernetes.io/job-name": "b" * 64}
    document = _job({"name": "short"})
    document["spec"]["template"]["metadata"]["labels"] = labels
    assert name_refusals(Kind.JOB, document) == [
        f'spec.template.labels: Invalid value: "{"b" * 64}": must be no more than 63 characters'
    ]


def test_a_generated_name_is_said_by_its_prefix() -> None:
    """A 58-character prefix and its 5 generated characters: 63, and an Indexed Job of two
    adds `-1`. The message shows the prefix and `…`, not characters doctor made up."""
    prefix = "s" * 60
    document = _job({"generateName": prefix}, completionMode="Indexed", completions=2)
    shown = "s" * 58 + "…"
    assert shown_name(document) == shown
    assert name_refusals(Kind.JOB, document) == [
        f'metadata.name: Invalid value: "{shown}": will not able to create pod with invalid '
        f"DNS label: {shown}-1"
    ]


def test_a_kubeflow_name_is_a_dns_1035_label() -> None:
    """training-operator utils `ValidateJobName`: at most 63 characters, a letter first."""
    assert name_refusals(Kind.TF_JOB, _job({"name": "a" * 64})) == [
        f'metadata.name: Invalid value: "{"a" * 64}": should match: must be no more than 63 '
        "characters"
    ]
    (problem,) = name_refusals(Kind.JAX_JOB, _job({"name": "2bert"}))
    assert problem.startswith(
        'metadata.name: Invalid value: "2bert": should match: a DNS-1035 label must consist'
    )


def test_no_name_at_all() -> None:
    assert shown_name(_job({})) == ""
    assert name_refusals(Kind.RAY_JOB, _job({})) == [
        "metadata.name: Required value: name or generateName is required"
    ]
