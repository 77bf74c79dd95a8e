"""Text from a file, a cluster or a registry, made safe to show on a terminal.

A name or message read from outside may carry ANSI escape sequences (recolour, move the cursor,
retitle the window, hide what follows), bare carriage returns or line breaks (fake an extra
line), or bidirectional overrides (show text in another order than it is). Every such character
is shown as a visible escape instead. Our own line breaks never pass through here.
JSON and SARIF need none of this: the JSON encoder escapes control characters itself.
"""

# C0 controls, DEL and the C1 controls (0x9b alone is a CSI on many terminals).
_CONTROLS = [*range(0x20), 0x7F, *range(0x80, 0xA0)]
# Bidirectional marks, embeddings, overrides and isolates ("Trojan Source", CVE-2021-42574).
_BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

_ESCAPES: dict[int, str] = {code: f"\\x{code:02x}" for code in _CONTROLS}
_ESCAPES.update({code: f"\\u{code:04x}" for code in _BIDI})
_ESCAPES.update({ord(char): shown for char, shown in _NAMED.items()})


def terminal_safe(text: str) -> str:
    """`text` with every control and bidirectional character shown as a visible escape."""
    return text.translate(_ESCAPES)
