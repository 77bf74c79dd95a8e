"""apimachinery's rule for qualified names (util/validation `IsQualifiedName`): label and
annotation keys, resource names. An optional prefix, a DNS subdomain of at most 253
characters, and `/`; then a name of 1 to 63 letters, digits, `-`, `_` or `.`, starting and
ending with a letter or digit. One copy, for every reader that judges such a name."""

from truegreen.patterns import LazyPattern

NAME_PART = LazyPattern(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
"""A qualified name's name part, and a label value."""
DNS_SUBDOMAIN = LazyPattern(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
NAME_LIMIT = 63
PREFIX_LIMIT = 253


def is_name_part(text: str) -> bool:
    """Whether `text` is a qualified name's name part (or a non-empty label value)."""
    return len(text) <= NAME_LIMIT and bool(NAME_PART.fullmatch(text))


def is_prefix(text: str) -> bool:
    """Whether `text` is a qualified name's prefix: a DNS subdomain of at most 253 characters."""
    return len(text) <= PREFIX_LIMIT and bool(DNS_SUBDOMAIN.fullmatch(text))


def qualified_name_problem(name: str) -> str | None:
    """Why `name` is not a qualified name, in apimachinery's words; None when it is one."""
    parts = name.split("/")
    if len(parts) > 2:
        return "a qualified name must consist of an optional prefix, '/', and a name"
    if len(parts) == 2 and not is_prefix(parts[0]):
        return "prefix part must be a lowercase RFC 1123 subdomain"
    if not is_name_part(parts[-1]):
        return (
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character, at most 63 characters"
        )
    return None


DNS_LABEL = LazyPattern(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
"""A DNS-1123 label: a namespace's name (pkg/apis/core/validation `ValidateNamespaceName`)."""
NAMESPACE_NAME_RULE = (
    "a name is at most 63 lower-case letters, digits and '-', starting and ending with a letter "
    "or digit"
)


def is_namespace_name(name: str) -> bool:
    """Whether any namespace can have `name` (a DNS-1123 label)."""
    return len(name) <= NAME_LIMIT and DNS_LABEL.fullmatch(name) is not None


DNS_1035_LABEL = LazyPattern(r"[a-z]([-a-z0-9]*[a-z0-9])?")
"""A DNS-1035 label: a Service's name, which starts with a letter (util/validation
`IsDNS1035Label`)."""
