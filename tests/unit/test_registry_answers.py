"""What a registry's answer is as doctor keeps it: a failed look-up as an answer, the record a
snapshot saves and reads back (hostile input), and the plain words for each reason an image
could not be checked."""

import json
from typing import Any

import pytest

from tests.support.plain_words import jargon_in
from truegreen.doctor.checks.image_pull.words import REGISTRY_REMEDIES, REGISTRY_WHY
from truegreen.doctor.knowledge.image_presence import (
    ImageLookup,
    OwnLogin,
    Presence,
    RegistryAnswer,
)
from truegreen.doctor.reads.registry_lookups import RecordedRegistry, RecordingRegistry, answer_of
from truegreen.refresh.registry import (
    _SERVED_TYPES,
    INDEX_TYPES,
    MANIFEST_TYPES,
    SCHEMA1_TYPES,
    LookupFailed,
    LookupFailure,
    RegistryLogin,
    _is_document,  # the client's judgement of an answer, tested on its own
    _not_a_manifest,
)


@pytest.mark.parametrize(
    ("failure", "login", "presence"),
    [
        (LookupFailure.NOT_FOUND, None, Presence.MISSING),
        (LookupFailure.UNAUTHORIZED, RegistryLogin("r", "u", "p"), Presence.REFUSED),
        (LookupFailure.UNAUTHORIZED, None, Presence.LOGIN_NEEDED),
        (LookupFailure.NOT_ALLOWED, RegistryLogin("r", "u", "p"), Presence.NOT_ALLOWED),
        (LookupFailure.NOT_ALLOWED, None, Presence.LOGIN_NEEDED),  # Docker Hub's anonymous token
        (LookupFailure.TIMEOUT, None, Presence.TIMEOUT),
        (LookupFailure.UNREACHABLE, None, Presence.UNREACHABLE),
        (LookupFailure.SERVER_ERROR, None, Presence.SERVER_ERROR),
        (LookupFailure.RATE_LIMITED, None, Presence.RATE_LIMITED),
        (LookupFailure.MALFORMED, None, Presence.GARBLED),
        (LookupFailure.DIGEST_MISMATCH, None, Presence.GARBLED),
        (LookupFailure.UNSUPPORTED, None, Presence.GARBLED),
        (LookupFailure.TOO_LARGE, None, Presence.TOO_LARGE),
        (LookupFailure.INSECURE_REFUSED, None, Presence.INSECURE),
    ],
)
def test_a_failed_look_up_as_an_answer(
    failure: LookupFailure, login: RegistryLogin | None, presence: Presence
) -> None:
    assert answer_of(LookupFailed(failure, "why"), login) == RegistryAnswer(presence, "why")


def test_a_snapshot_s_record_reads_back_and_anything_else_is_not_captured() -> None:
    kept = ImageLookup("ghcr.io/a:1", ("regcred",), "linux/amd64")
    answer = RegistryAnswer(Presence.PRESENT, size=42, layers=2)

    class Fixed:
        def look_up(self, wanted: Any) -> dict[ImageLookup, RegistryAnswer]:
            return dict.fromkeys(wanted, answer)

    recording = RecordingRegistry(Fixed())
    assert recording.look_up([kept]) == {kept: answer}
    document = json.loads(json.dumps(recording.document()))
    hostile = [*document, "garbage", {"lookup": {"image": 7}}, {"lookup": None, "answer": {}}]
    recorded = RecordedRegistry.from_document(hostile)
    other = ImageLookup("ghcr.io/a:1", (), "linux/amd64")
    assert recorded.look_up([kept, other]) == {
        kept: answer,
        other: RegistryAnswer(Presence.NOT_CAPTURED, "the snapshot holds no answer for it"),
    }
    assert RecordedRegistry.from_document({"not": "a list"}).look_up([kept])[kept].presence is (
        Presence.NOT_CAPTURED
    )


def test_every_reason_and_remedy_is_plain_and_fills_in() -> None:
    values = {
        "registry": "ghcr.io",
        "image": "ghcr.io/a:1",
        "names": "'regcred'",
        "limit": 64,
        "snapshot": "`truegreen snapshot`",
        "pulled": "ghcr.io/b:1",
    }
    unknowns = {p for p in Presence if not p.is_measurement} | set(OwnLogin)
    assert set(REGISTRY_WHY) == set(REGISTRY_REMEDIES) == unknowns
    for presence in unknowns:
        for text in (REGISTRY_WHY[presence], REGISTRY_REMEDIES[presence]):
            filled = text.format(**values)
            assert "{" not in filled, filled
            assert not jargon_in(filled), filled


@pytest.mark.parametrize(
    ("media_type", "what"),
    [
        ("text/html", "a web page (text/html)"),
        ("", "something it did not name (no Content-Type)"),
        ("application/json", "application/json"),
        ("Text/Plain", "text/plain"),
        ("text/\x1b[31mred", "something that is not a media type"),
        ("a/" + "b" * 128, "something that is not a media type"),  # RFC 6838: 127 at most
        ("a/" + "b" * 127, "a/" + "b" * 127),
    ],
)
def test_an_answer_that_is_no_manifest_says_what_the_host_answered(
    media_type: str, what: str
) -> None:
    """containerd takes the Content-Type as the manifest's media type and refuses any but a
    manifest's or an index's (remotes/docker/resolver.go Resolve; core/images/image.go
    Manifest): the host's answer is named, plainly, and never its hostile text."""
    assert _not_a_manifest("r.example.com", media_type) == LookupFailed(
        LookupFailure.MALFORMED, f"r.example.com answered with {what}, not an image manifest"
    )


def test_the_media_types_a_manifest_answer_may_carry() -> None:
    assert frozenset((*INDEX_TYPES, *MANIFEST_TYPES, *SCHEMA1_TYPES)) == _SERVED_TYPES
    assert "text/plain" not in _SERVED_TYPES
    assert "text/html" not in _SERVED_TYPES


@pytest.mark.parametrize(
    ("body", "document"),
    [
        (b'{"schemaVersion": 2}', True),
        (b"{}", True),
        (b"<html><body>Please sign in</body></html>", False),
        (b"[1, 2]", False),
        (b'"text"', False),
        (b"", False),
        (b"\xff", False),
        (b"[" * 100_000, False),
    ],
)
def test_a_manifest_s_bytes_are_a_json_object(body: bytes, document: bool) -> None:
    assert _is_document(memoryview(body)) is document
