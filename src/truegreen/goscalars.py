"""Scalars and keys as Kubernetes reads YAML: sigs.k8s.io/yaml over go-yaml v2.

kubectl and the API server turn YAML into JSON with sigs.k8s.io/yaml, which decodes with go-yaml
v2 (its fork `goyaml.v2/resolve.go` and `decode.go`, now go.yaml.in/yaml/v2) and then converts
the result for JSON (`yaml.go`, `convertToJSONableObject`); kubectl is the tests' oracle. That
reading differs from PyYAML's YAML 1.1 in ways a manifest meets: `=` is a string (PyYAML gives it
a `value` tag it cannot build), `y` and `n` are booleans, `0o17`, `1e3` and `08` are numbers, a
date is a string, a tag nobody knows (`!ENV x`) leaves the text as it is, keys become strings
(`true`, `1`), and NaN or an infinity cannot be sent at all.
"""

import base64
import binascii
import math
import re
import struct

YAML_TAGS = "tag:yaml.org,2002:"
STR = YAML_TAGS + "str"
INT = YAML_TAGS + "int"
FLOAT = YAML_TAGS + "float"
BOOL = YAML_TAGS + "bool"
NULL = YAML_TAGS + "null"
TIMESTAMP = YAML_TAGS + "timestamp"
BINARY = YAML_TAGS + "binary"
MERGE = YAML_TAGS + "merge"
_RESOLVABLE = frozenset({"", STR, BOOL, INT, FLOAT, NULL, TIMESTAMP})

Scalar = str | int | float | bool | None

# resolve.go's resolveMapList: the words that are not strings.
_WORDS: dict[str, tuple[str, Scalar]] = {
    **dict.fromkeys(
        ["y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"], (BOOL, True)
    ),
    **dict.fromkeys(
        ["n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"], (BOOL, False)
    ),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), (NULL, None)),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), (FLOAT, math.nan)),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), (FLOAT, math.inf)),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), (FLOAT, -math.inf)),
    "<<": (MERGE, "<<"),
}
# resolve.go's resolveTable: only these first characters can start anything but a string.
_SIGN_OR_DIGIT = frozenset("+-0123456789")
_IN_WORDS = frozenset("yYnNtTfFoO~")
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_INT64 = (-(2**63), 2**63 - 1)
_UINT64 = 2**64 - 1
_UINT64_DIGITS = len(str(_UINT64))
_DIGITS = {2: frozenset("01"), 8: frozenset("01234567"), 10: frozenset("0123456789")}
_DIGITS[16] = frozenset("0123456789abcdefABCDEF")
# The timestamp layouts go-yaml tries (allowedTimestampFormats): date, then a time after T, t
# or a space (a zone only after T or t), with one- or two-digit fields after the year.
_TIMESTAMP = re.compile(
    r"(\d{4})-(\d\d?)-(\d\d?)"
    r"(?:(?:[Tt](\d\d?):(\d\d?):(\d\d?)(?:\.\d{1,9})?(?:Z|[-+]\d\d:\d\d))"
    r"|(?: (\d\d?):(\d\d?):(\d\d?)(?:\.\d{1,9})?))?"
)


class ScalarError(ValueError):
    """A scalar that Kubernetes' YAML refuses, in go-yaml's words."""


class NotJsonError(ScalarError):
    """A value or key that decodes as YAML but that JSON cannot carry."""


def _go_int(text: str, *, signed: bool) -> tuple[int | None, str]:
    """strconv.ParseInt(text, 0, 64) (signed) or ParseUint: the value, or why not ("syntax" or
    "range"). Base 0 reads 0x, 0o and 0b prefixes in either case, and a leading 0 as octal."""
    body, sign = text, 1
    if signed and body[:1] in ("+", "-"):
        sign, body = (-1 if body[0] == "-" else 1), body[1:]
    base, digits = 10, body
    if body[:2] in ("0x", "0X"):
        base, digits = 16, body[2:]
    elif body[:2] in ("0o", "0O"):
        base, digits = 8, body[2:]
    elif body[:2] in ("0b", "0B"):
        base, digits = 2, body[2:]
    elif body[:1] == "0" and len(body) > 1:
        base, digits = 8, body[1:]
    if not digits or not set(digits) <= _DIGITS[base]:
        return None, "syntax"
    if base == 10 and len(digits) > _UINT64_DIGITS:
        # Out of range for certain, and int() refuses a decimal text past 4,300 digits
        # (sys.get_int_max_str_digits); a decimal here never starts with 0 (that is octal).
        return None, "range"
    value = sign * int(digits, base)
    low, high = _INT64 if signed else (0, _UINT64)
    return (value, "") if low <= value <= high else (None, "range")


def _go_float(text: str) -> float | None:
    """strconv.ParseFloat on the decimal texts go-yaml hands it; None when it errs (an overflow
    to infinity is an error in Go)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isinf(value) and "inf" not in text.lower() else value


def is_timestamp(text: str) -> bool:
    """Whether go-yaml's parseTimestamp accepts the text (one of its four layouts)."""
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        return False
    year, month, day = (int(match.group(n)) for n in (1, 2, 3))
    if not 1 <= month <= 12 or not 1 <= day <= _days_in(year, month):
        return False
    clock = match.group(4, 5, 6) if match.group(4) else match.group(7, 8, 9)
    if clock[0] is None:
        return True
    hour, minute, second = (int(part) for part in clock)
    return hour < 24 and minute < 60 and second < 60


def _days_in(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def resolve(text: str, tag: str = "") -> tuple[str, Scalar]:
    """go-yaml v2's `resolve(tag, in)`: the tag a scalar resolves to and its value.

    `tag` is "" for a plain scalar, else the explicit tag. A timestamp resolves to its text, as
    go-yaml decodes one into an untyped value (decode.go: "for backward compatibility ... set it
    as a string").
    """
    if tag not in _RESOLVABLE:
        return tag, text
    rtag, value = _resolve_plain(text, tag)
    if tag in ("", rtag, STR):
        return rtag, value
    if tag == FLOAT and rtag == INT and _INT64[0] <= value <= _INT64[1]:  # type: ignore[operator]
        return FLOAT, float(value)  # type: ignore[arg-type]
    raise ScalarError(f"cannot decode {short(rtag)} `{text}` as a {short(tag)}")


def _resolve_plain(text: str, tag: str) -> tuple[str, Scalar]:
    if tag == STR or (text and text[0] not in _SIGN_OR_DIGIT and text[0] not in _IN_WORDS):
        if tag != STR and text[:1] == ".":
            return _dot(text)
        return STR, text
    word = _WORDS.get(text)
    if word is not None:
        return word
    if not text or text[0] in _IN_WORDS:
        return STR, text
    if is_timestamp(text):
        if tag in ("", TIMESTAMP):
            return TIMESTAMP, text
        return STR, text
    return _number(text)


def _dot(text: str) -> tuple[str, Scalar]:
    word = _WORDS.get(text)
    if word is not None:
        return word
    value = _go_float(text)
    return (FLOAT, value) if value is not None else (STR, text)


def _number(text: str) -> tuple[str, Scalar]:
    plain = text.replace("_", "")
    value, _ = _go_int(plain, signed=True)
    if value is None:
        value, _ = _go_int(plain, signed=False)
    if value is not None:
        return INT, value
    if _YAML_STYLE_FLOAT.fullmatch(plain):
        number = _go_float(plain)
        if number is not None:
            return FLOAT, number
    if plain.startswith("0b"):
        # ParseInt(plain[2:], 2, 64), then ParseUint: a sign after the prefix is read too.
        value = _go_int_base2(plain[2:], signed=True)
        if value is None:
            value = _go_int_base2(plain[2:], signed=False)
        if value is not None:
            return INT, value
    elif plain.startswith("-0b"):
        value = _go_int_base2("-" + plain[3:], signed=True)
        if value is not None:
            return INT, value
    return STR, text


def _go_int_base2(text: str, *, signed: bool) -> int | None:
    body, sign = text, 1
    if signed and body[:1] in ("+", "-"):
        sign, body = (-1 if body[0] == "-" else 1), body[1:]
    if not body or not set(body) <= _DIGITS[2]:
        return None
    value = sign * int(body, 2)
    low, high = _INT64 if signed else (0, _UINT64)
    return value if low <= value <= high else None


def short(tag: str) -> str:
    """go-yaml's shortTag: `tag:yaml.org,2002:int` is `!!int`."""
    return "!!" + tag.removeprefix(YAML_TAGS) if tag.startswith(YAML_TAGS) else tag


def decode_binary(text: str) -> str:
    """`!!binary`: standard base64 (line breaks ignored), the bytes read as text as JSON
    encoding then reads them."""
    try:
        data = base64.b64decode(text.replace("\n", "").replace("\r", ""), validate=True)
    except (binascii.Error, ValueError):
        raise ScalarError("!!binary value contains invalid base64 data") from None
    return data.decode(errors="replace")


def for_json(value: Scalar) -> Scalar:
    """A scalar as JSON carries it: a whole float is written as an integer (encoding/json), NaN
    and the infinities cannot be written at all."""
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            shown = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
            raise NotJsonError(f"json: unsupported value: {shown}")
        if value.is_integer() and abs(value) < 1e21:
            return int(value)
    return value


def key_text(key: Scalar) -> str:
    """A mapping key as JSON needs it (yaml.go convertToJSONableObject): a string as it is, a
    number or a boolean as its text; a null key has no text."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return _format_float32(key)
    raise NotJsonError("a key is null (`~`, `null` or nothing), which JSON cannot hold")


def _format_float32(value: float) -> str:
    """strconv.FormatFloat(value, 'g', -1, 32), with go-yaml's names for the infinities: the
    fewest digits that read back as the same float32, in exponent form below 1e-4 and from 1e6."""
    if math.isnan(value):
        return ".nan"
    if abs(value) > _FLOAT32_MAX:
        return ".inf" if value > 0 else "-.inf"
    single = _float32(value)
    if single == 0:
        return "-0" if math.copysign(1, single) < 0 else "0"
    for places in range(9):
        shown = f"{single:.{places}e}"
        if _float32(float(shown)) == single:
            break
    mantissa, _, exponent_text = shown.partition("e")
    sign = "-" if mantissa.startswith("-") else ""
    figures = mantissa.lstrip("-").replace(".", "").rstrip("0")
    exponent = int(exponent_text)
    if exponent < -4 or exponent >= 6:
        head = figures[0] + ("." + figures[1:] if len(figures) > 1 else "")
        return f"{sign}{head}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    if exponent < 0:
        return f"{sign}0.{'0' * (-exponent - 1)}{figures}"
    whole, rest = figures[: exponent + 1].ljust(exponent + 1, "0"), figures[exponent + 1 :]
    return sign + whole + (f".{rest}" if rest else "")


_FLOAT32_MAX = 3.4028234663852886e38


def _float32(value: float) -> float:
    return float(struct.unpack("f", struct.pack("f", value))[0])
