"""The trial reads the kubelet's two runtime pull reasons (image_manager.go `evalCRIPullErr`:
the cri-api's `RegistryUnavailable`, `SignatureValidationFailed`; truegreen/pull_reasons.py) as
failed pulls, as doctor and refresh read them: an init container waiting on one keeps the
training program from starting, and the kubelet's "Error: %v" Event after it
(kuberuntime_container.go startContainer) is that pull's, not another failure."""

import pytest

from tests.unit.test_trial_readback import IMAGE, INIT_IMAGE, POD, _findings
from truegreen.trial.outcomes import Level, Outcome
from truegreen.trial.readback import ContainerState, KubeletEvent, TrialFinding


@pytest.mark.parametrize("reason", ["RegistryUnavailable", "SignatureValidationFailed"])
def test_an_init_container_whose_pull_the_runtime_refused_keeps_the_program_from_starting(
    reason: str,
) -> None:
    said = f'Failed to pull image "{INIT_IMAGE}": pinging container registry: connection refused'
    states = (
        ContainerState(POD, "fetch-config", init=True, waiting=reason, message=said),
        ContainerState(POD, "trainer", waiting="PodInitializing"),
    )
    found = _findings(states=states, ended_by_timeout=True, image="")
    assert found == [
        TrialFinding(Outcome.NOT_STARTED, Level.FAIL, POD, f"fetch-config: {reason}: {said}")
    ]


@pytest.mark.parametrize("reason", ["RegistryUnavailable", "SignatureValidationFailed"])
def test_the_kubelet_s_error_event_after_the_runtime_s_refusal_is_the_same_pull(
    reason: str,
) -> None:
    """The training image's pull fails with the runtime's reason: one failed pull, in the
    words that carry the registry's, never a second "Error: …" failure beside it."""
    refused = f'Failed to pull image "{IMAGE}": pinging container registry: connection refused'
    events = (
        KubeletEvent(POD, "Failed", refused, "Warning"),
        KubeletEvent(POD, "Failed", f"Error: {reason}", "Warning"),
    )
    found = _findings(events=events, ended_by_timeout=True, image=IMAGE)
    assert [(f.outcome, f.words) for f in found] == [(Outcome.IMAGE_PULL_FAILED, refused)]
