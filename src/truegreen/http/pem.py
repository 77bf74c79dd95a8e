"""PEM blocks read as Go's encoding/pem `Decode` reads them (golang/go src/encoding/pem/pem.go),
since kubectl's view of a client certificate or key is the one that counts, and written back in
the form `Encode` writes.

Go's rules, which OpenSSL's own PEM reader does not share in every corner: a line's trailing
spaces and tabs, and a CR before its LF, are not part of it (`getLine`); the search starts at
the first END line and takes the last BEGIN line before it, which must begin a line; the lines
right after BEGIN that hold a colon are headers, skipped; the END line must name the same type
and end there; and a block whose body is not padded base64 (once its blanks and line breaks
are dropped) is no block: the search goes on after its END line.
"""

import base64
import binascii

from msgspec import Struct

_BEGIN = b"-----BEGIN "
_END = b"\n-----END "
_DASHES = b"-----"
_LINE_WIDTH = 64
"""Go's `Encode` (pemLineLength) and OpenSSL write base64 lines this long."""


class PemBlock(Struct, frozen=True):
    """One PEM block: its type (`CERTIFICATE`, `PRIVATE KEY`…) and the bytes its base64 holds."""

    kind: str
    der: bytes


def _line(data: bytes, at: int) -> tuple[bytes, int]:
    """The line starting at `at` without its trailing spaces and tabs, its LF or CRLF, and
    where the next line starts (pem.go `getLine`)."""
    newline = data.find(b"\n", at)
    if newline < 0:
        return data[at:].rstrip(b" \t"), len(data)
    end = newline - 1 if newline > at and data[newline - 1] == ord("\r") else newline
    return data[at:end].rstrip(b" \t"), newline + 1


def _body(text: bytes) -> bytes | None:
    """The bytes of a block's base64 body, or None where Go's `base64.StdEncoding` refuses it
    (pem.go drops spaces and tabs first; the decoder skips CR and LF): whole groups of four,
    at most two `=` and only at the very end (Python's strict mode also takes `AAAA====`)."""
    text = text.translate(None, b" \t\r\n")
    unpadded = text.rstrip(b"=")
    if len(text) % 4 or len(text) - len(unpadded) > 2 or b"=" in unpadded:
        return None
    try:
        return binascii.a2b_base64(text, strict_mode=True)
    except binascii.Error:  # a byte outside the base64 alphabet
        return None


def _decode(data: bytes, start: int) -> tuple[PemBlock | None, int]:
    """The first block of `data` from `start` and where the rest begins; (None, len) when no
    block is left. pem.go `Decode`, step by step."""
    trailer_at = start
    while True:
        search_from = trailer_at  # a failed try goes on after the END line it found
        end_at = data.find(_END, search_from)
        if end_at < 0:
            return None, len(data)
        trailer_at = end_at + len(_END)
        begin_at = data.rfind(_BEGIN, search_from, end_at)
        if begin_at < 0 or (begin_at > search_from and data[begin_at - 1] != ord("\n")):
            continue
        type_line, at = _line(data, begin_at + len(_BEGIN))
        if not type_line.endswith(_DASHES):
            continue
        kind = type_line[: -len(_DASHES)]
        headers = 0
        while True:
            if at >= len(data):
                return None, len(data)
            line, following = _line(data, at)
            if b":" not in line:
                break
            headers, at = headers + 1, following
        if headers and end_at < at:
            continue  # the END line itself was read as a header
        if data[trailer_at : trailer_at + len(kind) + len(_DASHES)] != kind + _DASHES:
            continue
        rest_of_end, after = _line(data, trailer_at + len(kind) + len(_DASHES))
        if rest_of_end:
            continue
        der = _body(data[at:end_at]) if end_at > at else b""
        if der is None:
            continue
        return PemBlock(kind.decode("latin-1"), der), after


def pem_blocks(data: bytes) -> list[PemBlock]:
    """Every block of `data`, in order, as repeated calls of Go's `pem.Decode` find them."""
    blocks: list[PemBlock] = []
    at = 0
    while True:
        block, at = _decode(data, at)
        if block is None:
            return blocks
        blocks.append(block)


def pem_encode(block: PemBlock) -> bytes:
    """`block` as Go's `pem.Encode` writes one without headers: what OpenSSL reads alike."""
    text = base64.b64encode(block.der)
    lines = b"".join(text[at : at + _LINE_WIDTH] + b"\n" for at in range(0, len(text), _LINE_WIDTH))
    kind = block.kind.encode("latin-1")
    return b"%s%s-----\n%s-----END %s-----\n" % (_BEGIN, kind, lines, kind)
