"""Every headline and remedy doctor can print is in plain words, and listed in a golden file."""

from pathlib import Path

import pytest

from tests.support.plain_words import jargon_in
from truegreen.cluster import CantRead, Kind, ReadFailure
from truegreen.cluster.classify import no_api_at_address
from truegreen.doctor.catalogue import NOT_ASKED_HINTS, OFFLINE_REMEDY, WORDING, render
from truegreen.kubectl import Kubectl
from truegreen.plain_words import READ_REMEDIES, plain_why, read_remedy, with_article

GOLDEN = Path(__file__).parent.parent / "golden" / "headlines.txt"


def _sample_fields(code: str) -> dict[str, str]:
    # `<name_>`: readable in the golden file, and the underscore keeps a placeholder called
    # "namespace" from matching the jargon pattern itself.
    return {name: f"<{name}_>" for name in WORDING[code].placeholders}


def _rendered() -> list[tuple[str, str, str]]:
    return [(code, *render(code, **_sample_fields(code))) for code in sorted(WORDING)]


@pytest.mark.parametrize(("code", "headline", "remedy"), _rendered())
def test_no_jargon(code: str, headline: str, remedy: str) -> None:
    for text in (headline, remedy):
        found = jargon_in(text)
        assert not found, f"{code}: jargon {found} in {text!r}"


def _read_remedies() -> list[tuple[str, str]]:
    """What to do about each kind of failed read, for a namespace and context kubectl would
    not pick by itself."""
    kubectl = Kubectl(context="prod", namespace="train")
    return [
        (str(failure), read_remedy(Kind.NODE, CantRead(failure, "reason"), kubectl))
        for failure in READ_REMEDIES
    ]


def _other_sentences() -> list[tuple[str, str]]:
    """The offline remedy for a snapshot whose cluster could not be read, and the hint for
    each check that was not asked for."""
    offline = OFFLINE_REMEDY.format(snapshot="<snapshot_>", check="<check_>")
    hints = [(f"not asked for: {check}", hint) for check, hint in sorted(NOT_ASKED_HINTS.items())]
    return [("offline: the snapshot's cluster could not be read", offline), *hints]


@pytest.mark.parametrize(("said", "remedy"), _other_sentences())
def test_offline_remedies_and_hints_have_no_jargon(said: str, remedy: str) -> None:
    assert not jargon_in(remedy), f"{said}: jargon {jargon_in(remedy)} in {remedy!r}"


def test_golden_file_lists_every_sentence() -> None:
    lines = []
    for code, headline, remedy in _rendered():
        lines.append(f"{code}\n  headline: {headline}\n  remedy:   {remedy}\n")
    for failure, remedy in _read_remedies():
        lines.append(f"a read failed: {failure}\n  remedy:   {remedy}\n")
    for said, remedy in _other_sentences():
        lines.append(f"{said}\n  remedy:   {remedy}\n")
    current = "\n".join(lines)
    if not GOLDEN.exists():
        GOLDEN.write_text(current)
        pytest.fail(f"wrote {GOLDEN}; review it and commit it")
    assert GOLDEN.read_text() == current, (
        "doctor's wording changed: regenerate tests/golden/headlines.txt (delete it and run the "
        "tests) and review the diff"
    )


@pytest.mark.parametrize("kind", list(Kind))
@pytest.mark.parametrize("failure", list(ReadFailure))
def test_plain_reasons_have_no_jargon(kind: Kind, failure: ReadFailure) -> None:
    why = plain_why(kind, CantRead(failure, "technical reason"))
    assert not jargon_in(why), why


@pytest.mark.parametrize("kind", list(Kind))
@pytest.mark.parametrize("failure", list(ReadFailure))
@pytest.mark.parametrize("everywhere", [False, True])
def test_read_remedies_have_no_jargon_outside_commands(
    kind: Kind, failure: ReadFailure, everywhere: bool
) -> None:
    kubectl = Kubectl(context="prod", namespace="train")
    remedy = read_remedy(
        kind, CantRead(failure, "technical reason"), kubectl, everywhere=everywhere
    )
    assert not jargon_in(remedy), remedy


def test_a_read_that_reached_no_api_server_says_why_not_that_a_connection_broke() -> None:
    """A list answered 404 where every API server serves it, or a connection never made: the
    cause, not "the connection broke"."""
    no_api = plain_why(Kind.POD, no_api_at_address("list pods"))
    assert no_api == (
        "the cluster could not be reached when reading the running programs (nothing at this "
        "address serves the Kubernetes API; it answers 404 not found)"
    )
    refused = CantRead(
        ReadFailure.UNREACHABLE, "list nodes: could not connect (connection refused)", False
    )
    assert plain_why(Kind.NODE, refused) == (
        "the cluster could not be reached when reading the machines (connection refused)"
    )
    dropped = CantRead(
        ReadFailure.UNREACHABLE, "list nodes: could not connect (connection dropped)"
    )
    assert plain_why(Kind.NODE, dropped) == "the connection broke while reading the machines"
    assert not jargon_in(no_api), no_api


def test_a_refused_read_names_the_permission_check_for_that_read() -> None:
    kubectl = Kubectl(context="prod", namespace="train")
    forbidden = CantRead(ReadFailure.FORBIDDEN, "list nodes: no permission (403)")
    assert read_remedy(Kind.NODE, forbidden, kubectl) == (
        "Ask your cluster admin to let you read the machines; "
        "`kubectl --context prod auth can-i list nodes` answers yes once you may."
    )
    assert "`kubectl --context prod -n train auth can-i get secrets`" in read_remedy(
        Kind.SECRET, forbidden, kubectl
    )
    assert "`kubectl --context prod auth can-i list pods --all-namespaces`" in read_remedy(
        Kind.POD, forbidden, kubectl, everywhere=True
    )


def test_a_read_gone_unconfirmed_asks_for_no_flag_that_only_the_monitor_has() -> None:
    """doctor --watch and truegreen monitor both serve a read aged past its limit as unknown;
    doctor has no --max-age, and the monitor refuses one too short for a quiet, healthy cluster
    (monitor/age.py `shortest_max_age`), so a longer limit is never the step: the cluster or
    the link to it is."""
    unconfirmed = CantRead(
        ReadFailure.UNCONFIRMED, "list nodes: not confirmed by the cluster for 180 s"
    )
    remedy = read_remedy(Kind.NODE, unconfirmed, Kubectl(context="prod"))
    assert remedy == (
        "Check that the cluster is well (`kubectl --context prod get --raw /readyz`) and that "
        "the connection to it stays open: a healthy cluster confirms what it follows about "
        "once a minute, even when nothing changes."
    )
    outside_commands = remedy.split("`")[::2]
    assert not [part for part in outside_commands if "--" in part], remedy


def test_commands_are_exempt_from_the_jargon_check_and_nothing_else_is() -> None:
    # A pasted command must say what kubectl understands; the words around it stay plain.
    assert jargon_in("Run `kubectl uncordon node-1` to open it.") == []
    assert jargon_in("Run `kubectl uncordon node-1` on the node.") == ["node"]
    assert jargon_in("The pod `x` and the `y` namespace") == ["pod", "namespace"]


def test_the_jargon_check_catches_jargon() -> None:
    assert jargon_in("The pod is in CrashLoopBackOff on node x") == [
        "pod",
        "CrashLoopBackOff",
        "node",
    ]


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("MPIJob", "an MPIJob"),  # M said as a letter: "em"
        ("XGBoostJob", "an XGBoostJob"),
        ("TFJob", "a TFJob"),
        ("JAXJob", "a JAXJob"),
        ("PyTorchJob", "a PyTorchJob"),
        ("LeaderWorkerSet", "a LeaderWorkerSet"),
        ("AppWrapper", "an AppWrapper"),
    ],
)
def test_a_kind_takes_the_article_of_the_sound_its_first_letter_makes(name: str, said: str) -> None:
    assert with_article(name) == said
