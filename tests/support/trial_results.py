"""What a trial left to look at: its findings in doctor's JSON report, and the pods it made that
the fake API server still holds."""

from typing import Any

from tests.support.fake_apiserver import FakeApiServer
from tests.support.scenarios import NAMESPACE
from truegreen.trial.pods import TRIAL_LABEL


def trial_findings(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The trial check's findings of a doctor report (`-o json`), in its order."""
    return [f for f in report["findings"] if f["check"] == "trial"]


def trial_pods_left(server: FakeApiServer) -> list[str]:
    """The names of the trial's pods still stored in the scenario's namespace."""
    return [
        p["metadata"]["name"]
        for p in server.list_objects("Pod", NAMESPACE)
        if TRIAL_LABEL in (p["metadata"].get("labels") or {})
    ]
