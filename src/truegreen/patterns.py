"""Regular expressions compiled on their first use.

Compiling a pattern costs 0.1 to 0.7 ms, and a process compiles anew every pattern a module holds
when it is imported. Most of the cluster's words that doctor recognises (an autoscaler's
back-off, a kubelet's pull error, a scheduler's reason) appear in few runs; compiled at import,
they cost a healthy namespace's run about 5 ms of its start-up (bench/imports.py).
"""

import re
from collections.abc import Callable, Iterator


class LazyPattern:
    """A regular expression that compiles itself the first time it is matched.

    Two threads matching it first at once both compile it; each gets the same pattern, and one
    of the two is kept.
    """

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern."""
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._source, self._flags)
        return compiled

    def search(self, text: str) -> re.Match[str] | None:
        """`re.Pattern.search`."""
        return self.pattern.search(text)

    def match(self, text: str) -> re.Match[str] | None:
        """`re.Pattern.match`."""
        return self.pattern.match(text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        """`re.Pattern.fullmatch`."""
        return self.pattern.fullmatch(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """`re.Pattern.finditer`."""
        return self.pattern.finditer(text)

    def sub(self, replacement: str | Callable[[re.Match[str]], str], text: str) -> str:
        """`re.Pattern.sub`."""
        return self.pattern.sub(replacement, text)
