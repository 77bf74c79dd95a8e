"""A LazyPattern compiles on its first match, once, and answers as the compiled pattern does."""

import re

from truegreen.patterns import LazyPattern


def test_a_lazy_pattern_compiles_on_first_use_and_only_once() -> None:
    lazy = LazyPattern(r"(?P<count>\d+)/(?P<total>\d+) clients joined", re.IGNORECASE)
    assert lazy._compiled is None
    first = lazy.pattern
    assert lazy.pattern is first
    assert first.flags & re.IGNORECASE


def test_a_lazy_pattern_matches_as_the_compiled_pattern_does() -> None:
    lazy = LazyPattern(r"(\d+)/(\d+)")
    text = "1/2 clients joined, then 2/2"
    eager = re.compile(r"(\d+)/(\d+)")
    assert lazy.search(text) is not None
    assert lazy.search(text).group(0) == "1/2"  # type: ignore[union-attr]
    assert lazy.match("x 1/2") is None
    assert lazy.fullmatch("12/20") is not None
    assert lazy.fullmatch("12/20 ") is None
    assert [m.group(0) for m in lazy.finditer(text)] == ["1/2", "2/2"]
    assert lazy.sub("N", text) == eager.sub("N", text) == "N clients joined, then N"
    assert lazy.sub(lambda m: m.group(2), text) == "2 clients joined, then 2"
