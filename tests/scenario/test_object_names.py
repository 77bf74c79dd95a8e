"""Names no object can have: the API server stores none whose name breaks apimachinery's
path-segment rule, so such a name is a measured absence, and never a request whose path the
server would read as something else."""

from datetime import datetime
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support.scenarios import healthy, training_job

Obj = dict[str, Any]


def _checked(report: dict[str, Any], check: str) -> list[tuple[str, str, str]]:
    return [(f["code"], f["status"], f["basis"]) for f in report["findings"] if f["check"] == check]


@pytest.mark.parametrize("name", ["team/regcred", "50%off", ".."])
def test_a_name_no_object_can_have_is_measured_absent_without_asking(
    doctor: Doctor, name: str
) -> None:
    """The API server stores no object whose name breaks the path-segment rule
    (apimachinery api/validation/path IsValidPathSegmentName, applied by rest.BeforeCreate):
    a pull secret named `team/regcred` is missing, measured, and never asked for (a GET of it
    would name another object's subresource). The kubelet pulls without it, which the registry,
    not asked here, would say works or not: a warning."""

    def build(now: datetime) -> list[Obj]:
        job = training_job("train-013", now, gpus=1, finished=False)
        job["spec"]["template"]["spec"]["imagePullSecrets"] = [{"name": name}]
        return [*healthy(now), job]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert ("image-pull.login-missing-skipped", "warn", "measured") in _checked(
        report, "image-pull"
    )
    assert result.exit_code == 0, report["headline"]
    asked = {r.path.rsplit("/", 1)[1] for r in doctor.server.requests() if "/secrets/" in r.path}
    assert asked == {"regcred", "backend-credentials"}, "only the names an object can have"
