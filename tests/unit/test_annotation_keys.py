"""Refresh's annotation keys are valid Kubernetes keys for any container name, and documented."""

import hashlib
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from truegreen.refresh import annotations as a
from truegreen.refresh.annotations import container_key, is_valid_key

DNS_LABEL = st.from_regex(r"\A[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\Z")


@given(DNS_LABEL, st.sampled_from([a.STALE_PIN, a.DANGLING_PIN, a.RECORDED_DIGEST, a.TRACK_TAG]))
def test_every_container_name_gives_a_valid_distinct_key(container: str, kind: str) -> None:
    key = container_key(kind, container)
    assert is_valid_key(key), key
    assert key.startswith(f"truegreen.io/{kind}.")


def test_long_names_stay_distinct() -> None:
    a63 = "a" * 62 + "b"
    b63 = "a" * 62 + "c"
    assert len(a63) == 63
    assert container_key(a.STALE_PIN, a63) != container_key(a.STALE_PIN, b63)
    assert len(container_key(a.STALE_PIN, a63).split("/")[1]) == 63


def test_short_names_stay_readable() -> None:
    assert container_key(a.STALE_PIN, "api") == "truegreen.io/stale-pin.api"


@pytest.mark.parametrize(
    ("key", "valid"),
    [
        ("truegreen.io/x", True),
        ("truegreen.io/" + "a" * 63, True),
        ("truegreen.io/" + "a" * 64, False),
        ("truegreen.io/-x", False),
        ("truegreen.io/", False),
        ("x", True),  # no prefix is allowed
        ("a" * 253 + "/x", True),
        ("a" * 254 + "/x", False),
        ("a/b/c", False),  # a prefix is a DNS subdomain: no slash
        ("/x", False),  # a slash needs a prefix
        ("Truegreen.io/x", False),
    ],
)
def test_key_validity(key: str, valid: bool) -> None:
    assert is_valid_key(key) is valid


def test_every_key_is_documented() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "refresh.md").read_text()
    for name in (a.LATCHED, a.ATTEMPTS, a.PENDING, a.RESTARTED, a.OPT_IN_LABEL):
        assert f"`{name}`" in docs or f"`{name}` (label)" in docs, name
    for kind in (a.STALE_PIN, a.DANGLING_PIN, a.RECORDED_DIGEST, a.TRACK_TAG):
        assert f"`truegreen.io/{kind}.<container>`" in docs, kind
    assert re.search(r"63-character", docs)


def test_a_key_of_exactly_63_characters_is_kept_verbatim() -> None:
    name = "c" * (63 - len("stale-pin."))
    assert container_key(a.STALE_PIN, name) == f"truegreen.io/stale-pin.{name}"
    longer = container_key(a.STALE_PIN, name + "c")
    assert longer != f"truegreen.io/stale-pin.{name}c"
    assert len(longer.split("/")[1]) == 63


def test_characters_a_key_cannot_hold_become_dashes_and_the_name_is_hashed() -> None:
    key = container_key(a.STALE_PIN, "Side Car")
    digest = hashlib.sha256(b"Side Car").hexdigest()[:10]
    assert key == f"truegreen.io/stale-pin.Side-Car-{digest}"
    assert is_valid_key(key)
    assert a.key_prefix(a.STALE_PIN) == "truegreen.io/stale-pin."
