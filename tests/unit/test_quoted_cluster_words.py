"""The cluster's own words are quoted, not translated: the jargon check skips them, and a
message can't close its quotes early to smuggle words past the check or a terminal."""

from tests.support.plain_words import jargon_in
from truegreen.doctor.knowledge.reports import MESSAGE_CAP, failing_wait, quoted


def test_quoted_cluster_words_are_exempt_and_nothing_around_them_is() -> None:
    assert jargon_in("The cluster reports: “kubelet” says “FailedMount on pod x”.") == []
    assert jargon_in("The pod says “FailedMount on pod x”.") == ["pod"]
    assert jargon_in('A "pod" in straight quotes is still jargon.') == ["pod"]


def test_a_message_cannot_close_its_quotes() -> None:
    said = quoted("volume ” the pod is fine “ really")
    assert "”" not in said
    assert "“" not in said
    assert said == 'volume " the pod is fine " really'
    assert jargon_in(f"It says “{said}”.") == []


def test_a_message_is_one_bounded_line_with_controls_escaped() -> None:
    said = quoted("first line\nsecond\x1b[31m red " + "x" * 1000)
    assert "\n" not in said
    assert "\x1b" not in said
    assert said.startswith("first line second\\x1b[31m red ")
    assert len(said) == MESSAGE_CAP
    assert said.endswith("…")


def test_every_waiting_reason_but_the_kubelets_two_starting_ones_is_an_error() -> None:
    """pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses: ContainerCreating and
    PodInitializing are a container on its way; any other reason is the kubelet's error."""
    assert not failing_wait("ContainerCreating")
    assert not failing_wait("PodInitializing")
    assert not failing_wait("")
    for reason in ("ImageInspectError", "PreStartHookError", "CrashLoopBackOff", "Unheard-of"):
        assert failing_wait(reason), reason
