"""PEM blocks are read as Go's encoding/pem `Decode` reads them (golang/go src/encoding/pem/
pem.go, its cases after pem_test.go `TestDecode`, `badPEMTests` and `getLineTests`), since kubectl
reads a kubeconfig's client certificate and key with it; tests/e2e/test_kubeconfig_kubectl.py
holds the cases kubectl itself judges."""

import base64

import pytest

from truegreen.http.pem import PemBlock, pem_blocks, pem_encode

_BODY = base64.b64encode(b"test").decode()  # dGVzdA==


def _kinds(text: str) -> list[str]:
    return [block.kind for block in pem_blocks(text.encode())]


def test_a_block_is_its_type_and_the_bytes_of_its_base64() -> None:
    assert pem_blocks(f"-----BEGIN FOO-----\n{_BODY}\n-----END FOO-----\n".encode()) == [
        PemBlock("FOO", b"test")
    ]


@pytest.mark.parametrize(
    "text",
    [
        f"-----BEGIN FOO----- \t\n{_BODY}\n-----END FOO-----\n",  # getLine: trailing blanks
        f"-----BEGIN FOO-----\n{_BODY}\n-----END FOO-----\t \n",
        f"-----BEGIN FOO-----\r\n{_BODY}\r\n-----END FOO-----\r\n",  # CRLF
        "-----BEGIN FOO-----\n dGVz\tdA==\n-----END FOO-----",  # blanks in the body, no LF
        f"-----BEGIN FOO-----\nProc-Type: 4,ENCRYPTED\nNote : x\n\n{_BODY}\n-----END FOO-----\n",
        f"-----BEGIN FOO-----\nNote: x\n{_BODY}\n-----END FOO-----\n",  # headers, no blank line
        f"verify return:0\n-----BEGIN FOO-----\n{_BODY}\n-----END FOO-----\n 1 s:/CN=x\n",
        # the last BEGIN before the first END
        f"-----BEGIN FOO-----\n-----BEGIN FOO-----\n{_BODY}\n-----END FOO-----\n",
    ],
    ids=[
        "blanks-after-begin",
        "blanks-after-end",
        "crlf",
        "blanks-in-body-no-final-newline",
        "headers-then-blank-line",
        "header-then-body",
        "text-around",
        "repeated-begin",
    ],
)
def test_what_go_reads_is_read(text: str) -> None:
    assert pem_blocks(text.encode()) == [PemBlock("FOO", b"test")]


@pytest.mark.parametrize(
    "text",
    [
        f"-----BEGIN FOO-----\n{_BODY}\n-----END FOO----",
        f"-----BEGIN FOO-----\n{_BODY}\n-----END FOO------",
        f"-----BEGIN FOO-----\n{_BODY}\n-----END FOO----- .",
        f"-----BEGIN FOO-----\n{_BODY}\n-----END BAR-----",
        f"-----BEGIN FOO-----\n{_BODY}\n-----ENDBAR-----",
        "-----BEGIN FOO-----\nHeader: 1",
        "-----BEGIN \n" * 10,
        f"x -----BEGIN FOO-----\n{_BODY}\n-----END FOO-----\n",
        f"-----BEGIN FOO----- x\n{_BODY}\n-----END FOO-----\n",
        "-----BEGIN FOO-----\nHeader: 1\n-----END FOO-----\n",
        "-----BEGIN FOO-----\nAA*A\n-----END FOO-----\n",
        "-----BEGIN FOO-----\nAAA\n-----END FOO-----\n",
        "-----BEGIN FOO-----\nAAAA====\n-----END FOO-----\n",
        "-----BEGIN FOO-----\nA===\n-----END FOO-----\n",
    ],
    ids=[
        "too-few-ending-dashes",
        "too-many-ending-dashes",
        "trailing-non-blank",
        "other-ending-type",
        "no-space-after-end",
        "no-end-line",
        "repeating-begin",
        "begin-not-starting-a-line",
        "text-after-begin",
        "header-without-blank-line-before-end",
        "body-outside-base64",
        "body-not-whole-groups",
        "padding-after-whole-groups",
        "three-padding",
    ],
)
def test_what_go_does_not_read_is_no_block(text: str) -> None:
    assert pem_blocks(text.encode()) == []


def test_a_block_go_skips_leaves_the_next_one_read() -> None:
    text = (
        "-----BEGIN BAD-----\nAA*A\n-----END BAD-----\n"
        "-----BEGIN EMPTY-----\n-----END EMPTY-----\n"
        "-----BEGIN EMPTY-----\n\n-----END EMPTY-----\n"
        f"-----BEGIN FOO-----\n{_BODY}\n-----END FOO-----\n"
    )
    assert pem_blocks(text.encode()) == [
        PemBlock("EMPTY", b""),
        PemBlock("EMPTY", b""),
        PemBlock("FOO", b"test"),
    ]


def test_a_block_is_written_as_go_writes_it_and_reads_back() -> None:
    block = PemBlock("CERTIFICATE", bytes(range(256)))
    written = pem_encode(block)
    lines = written.decode().splitlines()
    assert lines[0] == "-----BEGIN CERTIFICATE-----"
    assert lines[-1] == "-----END CERTIFICATE-----"
    assert {len(line) for line in lines[1:-2]} == {64}  # pem.go pemLineLength
    assert pem_blocks(written) == [block]
    assert _kinds(written.decode() + written.decode()) == ["CERTIFICATE", "CERTIFICATE"]
