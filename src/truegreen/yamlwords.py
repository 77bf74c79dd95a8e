"""A YAML parser's words turned into an operator's: what is wrong in the file and how it is
usually fixed.

libyaml (and PyYAML) name the grammar ("mapping values are not allowed in this context",
"found character that cannot start any token"); the line number next to them says where. The
words kept as they are: a duplicate key and excessive aliasing, which are the API server's own
(sigs.k8s.io/yaml YAMLToJSONStrict and go-yaml's alias limit), so kubectl users know them.
"""

from truegreen.patterns import LazyPattern

_PLAIN: tuple[tuple[LazyPattern, str], ...] = tuple(
    (LazyPattern(pattern), words)
    for pattern, words in (
        (
            r"^mapping values are not allowed",
            "a ':' where no 'key: value' can start (quote a value that holds ': ', or check "
            "the indentation)",
        ),
        (
            r"^found character that cannot start any token",
            "a character no YAML value can start with, often a tab (YAML indents with spaces)",
        ),
        (r"^did not find expected ',' or '\]'", "a list in [ ] that is not closed"),
        (r"^did not find expected ',' or '\}'", "a map in { } that is not closed"),
        (r"^found undefined alias", "an alias (*name) with no anchor (&name) before it"),
        (
            r"^did not find expected '-' indicator",
            "a list item (- ) and a 'key: value' at the same indentation",
        ),
        (r"^did not find expected key", "a line indented less than the keys above it"),
        (
            r"^found unexpected end of stream",
            "the file ends inside a quoted value or brackets",
        ),
        (r"^could not find expected ':'", "a line that is not 'key: value' where one must be"),
        (
            r"^the tag (\S+) is not supported",
            r"'\1' asks for a kind of value that is not read here (write the value plainly: "
            "text, a number, true or false, a list or a map)",
        ),
    )
)


def plain(detail: str) -> str:
    """`detail`, a parser's reason, in plain words where they are known; else as it is."""
    for pattern, words in _PLAIN:
        if pattern.search(detail):
            return pattern.pattern.sub(words, detail, count=1) if "\\1" in words else words
    return detail
