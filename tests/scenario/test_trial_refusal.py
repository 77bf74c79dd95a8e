"""`doctor --trial`: the answer to its create judged as the cluster gave it, by the rule doctor's
trial start (`--admission-dry-run`) judges its own by (doctor/knowledge/pod_refusal.py): a
refusal of the trial pod (admission: a webhook, a quota, the security level) in the server's
words, a refusal of the login (authorization) as the permission it lacks, and never a missing
permission where the login may create pods.

Against the fake API server, whose admission words its refusals as the real one
(tests/support/fake_admission.py)."""

import re
from datetime import datetime
from typing import Any

from tests.scenario.conftest import Doctor
from tests.support.scenarios import NAMESPACE, healthy, training_job
from tests.support.trial_results import trial_findings

Obj = dict[str, Any]


def _cpu_job(now: datetime) -> list[Obj]:
    """The healthy namespace with its training job asking for no GPU."""
    objects = [o for o in healthy(now) if o["kind"] != "Job"]
    return [*objects, training_job("train-llm", now, gpus=0)]


def test_a_webhook_s_refusal_of_the_trial_pod_is_its_words_not_a_missing_permission(
    doctor: Doctor,
) -> None:
    """A webhook refuses the trial pod by name (`pods "<name>" is forbidden: admission webhook
    … denied the request`: apiserver webhook/errors/statuserror.go), though the login may
    create pods: the finding quotes the server and asks for no grant, as doctor's
    --admission-dry-run judges the same answer."""
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.admission.webhook_denial = (
        "policy.example.com",
        "images must come from registry.internal",
    )
    result = doctor.live("--trial", "--trial-timeout", "10", "-o", "json")
    assert result.exit_code == 3
    [refused] = trial_findings(result.json())
    assert (refused["code"], refused["status"]) == ("trial.refused", "unknown")
    [said] = refused["details"]
    assert re.fullmatch(
        r'pods "truegreen-trial-train-llm-[0-9a-f]{8}-0" is forbidden: admission webhook '
        r'"policy\.example\.com" denied the request: images must come from registry\.internal',
        said,
    ), said
    assert "permission" not in said
    assert "grant" not in refused["remedy"].lower()


def test_a_login_that_may_not_create_pods_is_told_the_grant(doctor: Doctor) -> None:
    """The authorization refusal names no pod (`pods is forbidden: User … cannot create`:
    responsewriters/errors.go forbiddenMessage): the grant docs/trial.md lists."""
    doctor.load(_cpu_job)
    result = doctor.live("--trial", "-o", "json")
    assert result.exit_code == 3
    [not_allowed] = trial_findings(result.json())
    assert (not_allowed["code"], not_allowed["status"]) == ("trial.not-allowed", "unknown")
    assert not_allowed["remedy"].startswith("Grant the rights docs/trial.md lists")
    assert not_allowed["details"][0] == (
        f"create pod: no permission (403); needs create pods in namespace {NAMESPACE}"
    )
