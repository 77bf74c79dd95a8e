"""Text wrapped to a terminal's width at word boundaries, for people.

A word is never broken (at 60 columns `registry` stays whole), and a command in backticks is
one unbreakable word: copied from the terminal, it pastes as one line. A word longer than the
width overflows its line rather than being cut.
"""

from collections.abc import Iterator


def words(text: str) -> Iterator[str]:
    """The words of `text`: runs without spaces, where a backticked span counts as no space.
    A backtick with no partner after it opens no span (text from a file may hold one)."""
    word: list[str] = []
    quoted = False
    unpaired = text.rfind("`") if text.count("`") % 2 else -1
    for position, char in enumerate(text):
        if char == "`" and position != unpaired:
            quoted = not quoted
        if char == " " and not quoted:
            if word:
                yield "".join(word)
            word = []
        else:
            word.append(char)
    if word:
        yield "".join(word)


def wrap(text: str, width: int | None, *, first: int = 0, indent: int = 0) -> list[str]:
    """`text` as lines of at most `width` columns. The first line has `first` columns taken
    already (a prefix printed before it); later lines start after `indent` spaces, which are
    included. Without a width (not a terminal), one line."""
    if width is None:
        return [text]
    lines: list[str] = []
    line = ""
    room = width - first
    for word in words(text):
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= room:
            line += " " + word
        else:
            lines.append(line)
            line = " " * indent + word
            room = width
    lines.append(line)
    return lines
