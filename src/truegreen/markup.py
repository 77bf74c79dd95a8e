"""truegreen's text markup: `[style]…[/]` spans, for the few styles truegreen writes, and the
escape that makes text from a cluster print exactly as written.

A tag is rich's (rich/markup.py): `[` then a lower-case letter, `#`, `/` or `@`, up to the next
`]`. A backslash before `[` or before another backslash makes that character text; any other
backslash is text itself (so `\\x1b` needs no escape). Unlike rich, where backslashes count
only before a tag, this reading has no context: escaped text ending in a backslash prints that
backslash once, whether a tag follows or nothing does. truegreen renders the markup itself
(truegreen.console): rich's console takes a fifth of a three-pod doctor run to import, and it
turns `:name:` emoji codes in cluster text into pictures (an event saying `:x:` would print ❌),
which quoting a component in its own words must never do.
"""

from collections.abc import Iterator

from truegreen.patterns import LazyPattern

_TOKEN = LazyPattern(r"\\([\\\[])|\[([a-z#/@][^[]*?)]")
_BACKSLASH_TO_DOUBLE = LazyPattern(r"\\(?=[\\\[]|$)")
_TAG_LIKE = LazyPattern(r"\[(?=[a-z#/@][^[]*?]|$)")

STYLES = {
    "bold": "1",
    "dim": "2",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
}
"""Every style word truegreen's markup uses, with its SGR code (ECMA-48): the eight basic
colours every terminal draws, so no colour depth is detected."""

Span = tuple[tuple[str, ...], str]
"""A run of text and the style words in force over it (outermost first)."""


def escape(text: str) -> str:
    """`text` as markup that renders to `text`, wherever it is placed: each backslash that
    could escape what follows doubled, each `[` that could open a tag made text (a last
    one too, since a tag's rest may follow it)."""
    return _TAG_LIKE.sub(r"\\[", _BACKSLASH_TO_DOUBLE.sub(r"\\\\", text))


def spans(markup: str) -> Iterator[Span]:
    """The styled runs of `markup`. A closing `[/]` ends the newest open tag, `[/word]` the
    newest naming `word`; a style word truegreen does not know is a bug, raised as ValueError."""
    open_tags: list[tuple[str, ...]] = []
    text: list[str] = []
    position = 0

    def style() -> tuple[str, ...]:
        return tuple(word for tag in open_tags for word in tag)

    for match in _TOKEN.finditer(markup):
        start, end = match.span()
        text.append(markup[position:start])
        position = end
        escaped, tag = match.group(1), match.group(2)
        if escaped is not None:
            text.append(escaped)
            continue
        if any(text):
            yield style(), "".join(text)
        text = []
        if tag.startswith("/"):
            _close(open_tags, tag[1:].strip(), markup)
        else:
            words = tuple(tag.split())
            unknown = [word for word in words if word not in STYLES]
            if unknown:
                raise ValueError(f"markup style {unknown[0]!r} is not one truegreen draws")
            open_tags.append(words)
    text.append(markup[position:])
    if any(text):
        yield style(), "".join(text)


def _close(open_tags: list[tuple[str, ...]], name: str, markup: str) -> None:
    for index in range(len(open_tags) - 1, -1, -1):
        if not name or " ".join(open_tags[index]) == name:
            del open_tags[index]
            return
    raise ValueError(f"markup closes a tag it never opened: {markup!r}")


def plain(markup: str) -> str:
    """`markup`'s text without its styles."""
    return "".join(text for _, text in spans(markup))


def ansi(markup: str) -> str:
    """`markup` with each styled run wrapped in its SGR codes and a reset."""
    out = []
    for words, text in spans(markup):
        if words:
            codes = ";".join(dict.fromkeys(STYLES[word] for word in words))
            out.append(f"\x1b[{codes}m{text}\x1b[0m")
        else:
            out.append(text)
    return "".join(out)
