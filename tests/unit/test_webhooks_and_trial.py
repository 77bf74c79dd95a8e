"""Which webhooks a pod create calls (doctor/knowledge/webhooks.py), and what a trial start's
answer means (doctor/checks/admission/trial.py).

Ground truth: apiserver/pkg/admission/plugin/webhook/predicates/{rules,namespace,object} and
webhook/errors/statuserror.go; apimachinery/pkg/api/errors NewForbidden and NewInvalid.
"""

from typing import Any

import pytest

from truegreen.cluster import CantRead, Created, ReadFailure
from truegreen.doctor.checks.admission.trial import Trial, TrialOutcome, judge, trial_pod
from truegreen.doctor.knowledge.training import from_job
from truegreen.doctor.knowledge.webhooks import (
    Applies,
    Webhook,
    pod_create_webhooks,
    ready_endpoints,
)

POD_RULE = {
    "operations": ["CREATE"],
    "apiGroups": [""],
    "apiVersions": ["v1"],
    "resources": ["pods"],
}
SERVICE = {"service": {"namespace": "policy", "name": "hook"}}


def _config(*hooks: dict[str, Any], kind: str = "ValidatingWebhookConfiguration") -> dict[str, Any]:
    return {"kind": kind, "metadata": {"name": "policy"}, "webhooks": list(hooks)}


def _hook(**fields: Any) -> dict[str, Any]:
    return {"name": "h.example.com", "clientConfig": SERVICE, "rules": [POD_RULE], **fields}


def _applies(
    hook: dict[str, Any], ns: dict[str, str] | None = None, pod: dict[str, str] | None = None
) -> list[Applies]:
    return [h.applies for h in pod_create_webhooks([_config(hook)], ns or {}, [pod or {}])]


def test_a_webhook_on_pod_creation_with_its_service_and_default_policy() -> None:
    assert pod_create_webhooks([_config(_hook())], {}, [{}]) == [
        Webhook(
            "ValidatingWebhookConfiguration/policy",
            "h.example.com",
            True,
            ("policy", "hook"),
            Applies.YES,
        )
    ]


def test_policy_ignore_is_fail_open_and_a_url_has_no_service() -> None:
    (hook,) = pod_create_webhooks(
        [_config(_hook(failurePolicy="Ignore", clientConfig={"url": "https://x.example/v"}))],
        {},
        [{}],
    )
    assert (hook.fail_closed, hook.service, hook.service_text) == (False, None, "a URL")
    (closed,) = pod_create_webhooks([_config(_hook(failurePolicy="Fail"))], {}, [{}])
    assert (closed.fail_closed, closed.service_text) == (True, "policy/hook")
    (other,) = pod_create_webhooks([_config(_hook(failurePolicy="Sometimes"))], {}, [{}])
    assert other.fail_closed


@pytest.mark.parametrize(
    ("change", "matches"),
    [
        ({}, True),
        ({"operations": ["*"]}, True),
        ({"operations": ["UPDATE", "DELETE"]}, False),
        ({"apiGroups": ["*"]}, True),
        ({"apiGroups": ["apps"]}, False),
        ({"apiVersions": ["*"]}, True),
        ({"apiVersions": ["v1beta1"]}, False),
        ({"resources": ["*"]}, True),
        ({"resources": ["*/*"]}, True),
        ({"resources": ["pods/*"]}, True),
        ({"resources": ["pods/exec"]}, False),
        ({"resources": ["deployments", "pods"]}, True),
        ({"resources": ["deployments"]}, False),
        ({"scope": "*"}, True),
        ({"scope": "Namespaced"}, True),
        ({"scope": "Cluster"}, False),
    ],
)
def test_rules_match_pod_creation(change: dict[str, Any], matches: bool) -> None:
    hook = _hook(
        rules=[
            {
                "operations": ["UPDATE"],
                "apiGroups": ["*"],
                "apiVersions": ["*"],
                "resources": ["*"],
            },
            {**POD_RULE, **change},
        ]
    )
    assert _applies(hook) == ([Applies.YES] if matches else [])


def test_a_webhook_without_rules_is_never_called() -> None:
    assert _applies(_hook(rules=[])) == []


@pytest.mark.parametrize("field", ["namespaceSelector", "objectSelector"])
def test_selectors_empty_match_all_and_otherwise_match_labels(field: str) -> None:
    assert _applies(_hook(**{field: {}})) == [Applies.YES]
    selector = {"matchLabels": {"team": "ml"}}
    labels = {"team": "ml"}
    as_namespace = field == "namespaceSelector"
    assert _applies(
        _hook(**{field: selector}),
        labels if as_namespace else None,
        None if as_namespace else labels,
    ) == [Applies.YES]
    assert _applies(_hook(**{field: selector}), {"team": "web"}, {"team": "web"}) == []
    expression = {"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["web"]}]}
    assert _applies(_hook(**{field: expression}), {}, {}) == [Applies.YES]
    assert _applies(_hook(**{field: expression}), {"team": "web"}, {"team": "web"}) == []


def test_unknown_labels_make_a_selective_webhook_unsure() -> None:
    selector = {"matchLabels": {"team": "ml"}}
    (on_namespace,) = pod_create_webhooks([_config(_hook(namespaceSelector=selector))], None, [{}])
    assert (on_namespace.applies, on_namespace.unsure_why) == (
        Applies.UNSURE,
        "it is limited to some places, and doctor couldn't read this one",
    )
    (on_pod,) = pod_create_webhooks([_config(_hook(objectSelector=selector))], {}, None)
    assert (on_pod.applies, on_pod.unsure_why) == (
        Applies.UNSURE,
        "it is limited to some programs, and no training job shows which",
    )
    # Unknown labels do not matter to a selector that matches everything.
    assert [h.applies for h in pod_create_webhooks([_config(_hook())], None, None)] == [Applies.YES]


def test_a_selector_that_excludes_wins_over_one_that_is_unknown() -> None:
    hook = _hook(
        namespaceSelector={"matchLabels": {"a": "b"}}, objectSelector={"matchLabels": {"a": "b"}}
    )
    assert pod_create_webhooks([_config(hook)], None, [{"a": "c"}]) == []
    assert pod_create_webhooks([_config(hook)], {"a": "c"}, None) == []


def test_match_conditions_cannot_be_evaluated() -> None:
    (hook,) = pod_create_webhooks(
        [_config(_hook(matchConditions=[{"name": "gpu", "expression": "true"}]))], {}, [{}]
    )
    assert (hook.applies, hook.unsure_why) == (
        Applies.UNSURE,
        "it is limited by conditions doctor can't evaluate",
    )


def test_every_webhook_of_every_configuration_is_considered() -> None:
    configs = [
        _config(_hook(name="b", rules=[]), _hook(name="a")),
        _config(_hook(name="c"), kind="MutatingWebhookConfiguration"),
    ]
    assert [(h.configuration, h.name) for h in pod_create_webhooks(configs, {}, [{}])] == [
        ("ValidatingWebhookConfiguration/policy", "a"),
        ("MutatingWebhookConfiguration/policy", "c"),
    ]


def test_ready_endpoints_count_missing_ready_as_ready() -> None:
    slices = [
        {"endpoints": [{"conditions": {"ready": True}}, {"conditions": {"ready": False}}, {}]},
        {"endpoints": [{"conditions": {"ready": True}}, {"conditions": {"ready": True}}]},
        {},
    ]
    assert ready_endpoints(slices) == 4
    assert ready_endpoints([{"endpoints": [{"conditions": {"ready": False}}]}]) == 0
    assert ready_endpoints([]) == 0


JOB = {
    "kind": "Job",
    "metadata": {"name": "run-7", "uid": "u-7"},
    "spec": {
        "template": {
            "metadata": {"labels": {"job-name": "run-7"}, "annotations": {"a": "b"}},
            "spec": {"containers": [{"name": "trainer"}]},
        }
    },
}


def test_the_trial_pod_is_what_the_job_controller_would_create() -> None:
    assert trial_pod(from_job(JOB)) == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "truegreen-trial-run-7",
            "labels": {"job-name": "run-7"},
            "annotations": {"a": "b"},
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": "run-7",
                    "uid": "u-7",
                    "controller": True,
                }
            ],
        },
        "spec": {"containers": [{"name": "trainer"}]},
    }
    assert from_job(JOB).primary.labels == {"job-name": "run-7"}
    without_uid = {**JOB, "metadata": {"name": "run-7"}}
    assert "ownerReferences" not in trial_pod(from_job(without_uid))["metadata"]


def _refused(failure: ReadFailure, message: str) -> CantRead:
    return CantRead(failure, "create pods: refused", server_message=message)


NAME = "truegreen-trial-run-7"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (Created({}), Trial(TrialOutcome.ADMITTED)),
        (
            _refused(ReadFailure.FORBIDDEN, f'pods "{NAME}" is forbidden: exceeded quota: q'),
            Trial(TrialOutcome.REFUSED, "exceeded quota: q"),
        ),
        (
            _refused(
                # apimachinery errors.NewInvalid names the kind, not the resource.
                ReadFailure.SERVER_ERROR,
                f'Pod "{NAME}" is invalid: spec.containers: Required',
            ),
            Trial(TrialOutcome.REFUSED, "spec.containers: Required"),
        ),
        (
            _refused(
                ReadFailure.SERVER_ERROR,
                'Internal error occurred: failed calling webhook "h": no endpoints available',
            ),
            Trial(TrialOutcome.REFUSED, 'failed calling webhook "h": no endpoints available'),
        ),
        (
            _refused(
                ReadFailure.SERVER_ERROR,
                'Internal error occurred: admission webhook "h" denied the request: no',
            ),
            Trial(TrialOutcome.REFUSED, 'admission webhook "h" denied the request: no'),
        ),
        (
            _refused(ReadFailure.SERVER_ERROR, "Internal error occurred: etcdserver: timeout"),
            Trial(TrialOutcome.FAILED, "Internal error occurred: etcdserver: timeout"),
        ),
        (
            _refused(ReadFailure.NOT_FOUND, 'namespaces "train" not found'),
            Trial(TrialOutcome.REFUSED, 'namespaces "train" not found'),
        ),
        (
            _refused(ReadFailure.FORBIDDEN, 'pods is forbidden: User "u" cannot create resource'),
            Trial(TrialOutcome.NOT_ALLOWED, 'pods is forbidden: User "u" cannot create resource'),
        ),
        (
            _refused(ReadFailure.FORBIDDEN, 'pods "other" is forbidden: exceeded quota: q'),
            Trial(TrialOutcome.NOT_ALLOWED, 'pods "other" is forbidden: exceeded quota: q'),
        ),
        (
            _refused(ReadFailure.SERVER_ERROR, 'admission webhook "h" does not support dry run'),
            Trial(TrialOutcome.FAILED, 'admission webhook "h" does not support dry run'),
        ),
        (
            _refused(
                ReadFailure.SERVER_ERROR,
                f'pods "{NAME}" is forbidden: admission webhook "h" does not support dry run',
            ),
            Trial(
                TrialOutcome.FAILED,
                f'pods "{NAME}" is forbidden: admission webhook "h" does not support dry run',
            ),
        ),
        (
            CantRead(ReadFailure.TIMEOUT, "create pods: no answer in time"),
            Trial(TrialOutcome.FAILED, "create pods: no answer in time"),
        ),
        (
            CantRead(ReadFailure.NOT_FOUND, "create pods: not found"),
            Trial(TrialOutcome.FAILED, "create pods: not found"),
        ),
        (
            CantRead(ReadFailure.FORBIDDEN, "create pods: no permission"),
            Trial(TrialOutcome.NOT_ALLOWED, "create pods: no permission"),
        ),
    ],
)
def test_what_the_servers_answer_means(answer: Created | CantRead, expected: Trial) -> None:
    trial = judge(answer, NAME)
    assert (trial.outcome, trial.reason) == (expected.outcome, expected.reason)
    assert trial.cant == (answer if isinstance(answer, CantRead) else None)


def test_a_long_reason_is_bounded() -> None:
    trial = judge(
        _refused(ReadFailure.FORBIDDEN, f'pods "{NAME}" is forbidden: ' + "x" * 1000), NAME
    )
    assert trial.reason == "x" * 399 + "…"
    exact = judge(
        _refused(ReadFailure.FORBIDDEN, f'pods "{NAME}" is forbidden: ' + "y" * 400), NAME
    )
    assert exact.reason == "y" * 400


def test_a_hook_called_for_one_pod_set_is_called_for_the_job() -> None:
    """A PyTorchJob's Master and Workers carry different labels (the training operator's
    `training.kubeflow.org/replica-type`): a hook whose objectSelector matches the Master
    alone is still called when the job's pods are created (the API server asks it per pod,
    mutating/validating dispatcher `ShouldCallHook`)."""
    selector = {"matchLabels": {"training.kubeflow.org/replica-type": "master"}}
    hook = _config(_hook(objectSelector=selector))
    master = {"training.kubeflow.org/replica-type": "master"}
    worker = {"training.kubeflow.org/replica-type": "worker"}
    assert [h.applies for h in pod_create_webhooks([hook], {}, [worker, master])] == [Applies.YES]
    assert pod_create_webhooks([hook], {}, [worker]) == []
    unsure = _config(_hook(objectSelector=selector, matchConditions=[{"name": "x"}]))
    assert [h.applies for h in pod_create_webhooks([unsure], {}, [worker, master])] == [
        Applies.UNSURE
    ]
