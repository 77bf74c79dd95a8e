"""The redaction's quick looks (redaction/text.py, cluster/redact.py) decide exactly as its full
rules do.

Each rule is skipped where what it needs is absent (`@` and `://` for userinfo, `AKIA`/`ASIA`
for a key id, 40 characters with an upper-case one for a secret key, a secret word's stem for
the named rules), and the walk takes JSON's own types by exact type. Here every quick look is
compared with the rule it stands for, on text made of the characters those rules read, and the
walk with its general path (the same object as read-only mappings and lists of another type).
"""

from types import MappingProxyType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from truegreen.cluster import redact
from truegreen.cluster.redact import redact_object
from truegreen.redacted import REDACTED
from truegreen.redaction import credential_shapes
from truegreen.redaction import text as rules

# The characters the rules turn on, with the Kelvin sign and the long s, which a
# case-insensitive search folds to `k` and `s`.
_ALPHABET = "aAkKsSpPwWdDtTeEnNcCrRuUlLyYiIvVgGhHfJmoq019/+:=@.-_?& \t\"'\u212a\u017f"
_PIECES = st.sampled_from(
    [
        "postgres://",
        "user:pw@",
        "AKIA",
        "ASIA",
        "ASIAABCDEFGHIJKLMNOP",
        "\u017fecret",
        "ABCDEFGHIJKLMNOP",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "password",
        "Token",
        "api-key",
        "PaSs",
        "conn_str",
        "db.url",
        "sha256:" + "a" * 64,
        "--secret ",
        "--password",
        "=",
        ": ",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
        "&sig=",
        "?X-Goog-Signature=",
        "Signature=",
    ]
)
_TEXT = st.lists(st.one_of(st.text(_ALPHABET, max_size=12), _PIECES), max_size=8).map("".join)


def _every_shape_rule(text: str) -> str:
    text = credential_shapes._JWT.sub(REDACTED, text)
    text = credential_shapes._PREFIXED_TOKEN.sub(REDACTED, text)
    text = credential_shapes._URL_SIGNATURE.sub(credential_shapes._signature_redacted, text)
    text = rules._AWS_KEY_ID.sub(REDACTED, text)
    text = credential_shapes._JWT.sub(REDACTED, text)
    text = credential_shapes._PREFIXED_TOKEN.sub(REDACTED, text)
    text = credential_shapes._URL_SIGNATURE.sub(credential_shapes._signature_redacted, text)
    text = rules._AWS_SECRET_SHAPE.sub(REDACTED, text)
    return rules._redact_userinfo(text)


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_the_stems_rule_out_only_text_without_a_secret_word(text: str) -> None:
    assert rules._has_secret_word(text) == (rules._SECRET_NAME.search(text) is not None)


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_a_shape_rule_skipped_is_one_that_matches_nothing(text: str) -> None:
    assert rules._redact_shapes(text) == _every_shape_rule(text)


def test_the_quick_looks_still_let_each_rule_through() -> None:
    # Preconditions of the properties above: each rule does change text that needs it.
    assert rules._redact_shapes("postgres://u:p@db") == f"postgres://{REDACTED}@db"
    assert rules._redact_shapes("id AKIAABCDEFGHIJKLMNOP") == f"id {REDACTED}"
    assert rules._redact_shapes("id ASIAABCDEFGHIJKLMNOP") == f"id {REDACTED}"
    key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    assert rules._redact_shapes(f"k {key}") == f"k {REDACTED}"
    assert rules._redact_shapes("eyJa.b.c") == REDACTED
    assert rules._redact_shapes("hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567") == REDACTED
    assert rules._redact_shapes("?a=1&SIG=x") == f"?a=1&SIG={REDACTED}"
    assert rules._redact_shapes("?a=1&x-goog-signature=x") == f"?a=1&x-goog-signature={REDACTED}"
    assert rules._has_secret_word("DB_PASSWORD")
    assert rules._has_secret_word("api-\u212aey")  # the Kelvin sign folds to `k`
    assert rules._has_secret_word("\u017fecret")  # the long s folds to `s`, not in lower()
    assert not rules._has_secret_word("registry.example.com/trainer:2.1")


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), _TEXT)
_KEYS = st.one_of(
    st.sampled_from(
        [
            *("metadata", "env", "command", "args", "annotations", "managedFields", "name"),
            *("value", "image", "imageID", "labels", "nodeSelector", "tolerations", "values"),
            *("redis-password", "secretName", "example.com/db-password", "nodeLabels"),
        ]
    ),
    st.just(redact.LAST_APPLIED),
    _TEXT,
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=30,
)


class _Sequence(list[Any]):
    """A list, but not by exact type."""


def _general(value: Any) -> Any:
    """`value` as read-only mappings and lists of another type: what only the walk's general
    path takes."""
    if isinstance(value, dict):
        return MappingProxyType({key: _general(item) for key, item in value.items()})
    if isinstance(value, list):
        return _Sequence(_general(item) for item in value)
    return value


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=5))
def test_the_walk_by_exact_type_redacts_as_the_general_walk(obj: dict[str, Any]) -> None:
    assert redact_object(obj) == redact_object(_general(obj))


def test_the_walk_by_exact_type_keeps_the_rules_of_members() -> None:
    pod = {
        "metadata": {"managedFields": [{"f": 1}], "annotations": {redact.LAST_APPLIED: "{}"}},
        "spec": {"containers": [{"env": [{"name": "DB_PASSWORD", "value": "hunter2"}]}]},
        "args": ["--token", "abc"],
    }
    assert redact_object(pod) == redact_object(_general(pod))
    assert redact_object(pod) == {
        "metadata": {"managedFields": REDACTED, "annotations": {redact.LAST_APPLIED: REDACTED}},
        "spec": {"containers": [{"env": [{"name": "DB_PASSWORD", "value": REDACTED}]}]},
        "args": ["--token", REDACTED],
    }
