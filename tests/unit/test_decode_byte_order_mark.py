"""Bytes as text, as kubectl reads a manifest: a byte-order mark picks the encoding
(yamlsafe.decode).

k8s.io/cli-runtime pkg/resource/visitor.go FileVisitor.Visit decodes through
`unicode.BOMOverride(unicode.UTF8.NewDecoder())` (golang.org/x/text encoding/unicode): a UTF-8,
UTF-16LE or UTF-16BE mark at the very start selects that encoding and is dropped; without one the
text is UTF-8. The whole command is in tests/unit/test_lint_byte_order_mark.py.
"""

import codecs

import pytest

from truegreen.yamlsafe import Problem, Refusal, decode


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (codecs.BOM_UTF8 + b"{}", "{}"),
        (codecs.BOM_UTF16_LE + "kind: Pod\n".encode("utf-16-le"), "kind: Pod\n"),
        (codecs.BOM_UTF16_BE + "kind: Pod\n".encode("utf-16-be"), "kind: Pod\n"),
        (codecs.BOM_UTF8 + codecs.BOM_UTF8 + b"a", "\ufeffa"),  # one mark is dropped, once
        ("caf\u00e9\ufeff".encode(), "caf\u00e9\ufeff"),  # a mark later on is text
        (codecs.BOM_UTF8 + b"caf\xe9", Refusal(Problem.NOT_UTF8, "it is not UTF-8 text (byte 7)")),
        (
            codecs.BOM_UTF16_LE + b"k\x00i",  # an odd number of bytes
            Refusal(Problem.NOT_UTF16, "it is not UTF-16 text (byte 5)"),
        ),
        (
            codecs.BOM_UTF16_BE + b"\x00k\xdc\x00",  # a low surrogate alone
            Refusal(Problem.NOT_UTF16, "it is not UTF-16 text (byte 5)"),
        ),
        (
            codecs.BOM_UTF16_LE + "a\0b".encode("utf-16-le"),
            Refusal(Problem.BINARY, "it is a binary file, not text"),
        ),
        (
            "kind: Pod\n".encode("utf-16-le"),
            Refusal(Problem.BINARY, "it is a binary file, not text"),
        ),
    ],
)
def test_decoding_follows_the_byte_order_mark(data: bytes, expected: str | Refusal) -> None:
    assert decode(data) == expected
