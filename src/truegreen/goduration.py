"""Go's `time.Duration` as text: how the kubelet prints a pull's time and how Go programs read
their duration flags."""

from truegreen.patterns import LazyPattern

_GO_DURATION_PART = LazyPattern(r"(\d+(?:\.\d*)?)(h|ms|m|s|us|µs|μs|ns)")
_GO_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6}


def go_duration(text: str) -> float | None:
    """Seconds in a Go `time.Duration` as `%v` prints it (`15.981s`, `2m3.5s`, `1h0m0s`,
    `500ms`) and `time.ParseDuration` reads it (`30m`, `1.5h`); None when it is not one."""
    text = text.strip()
    if text == "0s":
        return 0.0
    sign = -1.0 if text.startswith("-") else 1.0
    body = text.lstrip("-")
    position, total = 0, 0.0
    for match in _GO_DURATION_PART.finditer(body):
        if match.start() != position:
            return None
        total += float(match.group(1)) * _GO_UNITS.get(match.group(2), 1e-9)
        position = match.end()
    return sign * total if position == len(body) and position else None
