"""lint's text report: plurals, word-boundary wrapping, terminal safety, the rule table."""

from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from truegreen import wrapping
from truegreen.lint.reports import (
    explained_json,
    rule_explained,
    rules_json,
    rules_table,
    to_sarif,
    to_text,
)
from truegreen.lint.rules import ALL_RULES, Severity
from truegreen.lint.run import LintFinding, LintResult
from truegreen.markup import plain as plain_text


def finding(message: str, severity: Severity = Severity.ERROR, name: str = "api") -> LintFinding:
    return LintFinding(
        "readiness-missing",
        severity,
        "deploy/api.yaml",
        12,
        "Deployment",
        "train",
        name,
        "server",
        message,
        "Add a readinessProbe on the port the container serves.",
    )


def plain(lines: list[str]) -> list[str]:
    return [plain_text(line) for line in lines]


def test_counts_are_singular_for_one() -> None:
    one = LintResult((finding("m"), finding("w", Severity.WARNING)), ("a.yaml",), 1)
    assert plain(to_text(one))[-1] == "1 error, 1 warning, 0 info in 1 file (1 object read)."
    many = LintResult((), ("a.yaml", "b.yaml"), 3)
    assert plain(to_text(many))[-1] == "0 errors, 0 warnings, 0 info in 2 files (3 objects read)."


def test_nothing_read_says_nothing_was_checked_unless_allowed() -> None:
    empty = LintResult((), ("notes.txt",), 0)
    assert plain(to_text(empty))[-1].endswith(
        "(0 objects read). No Kubernetes objects found, so nothing was checked. Pass "
        "--allow-empty where that is expected (a hook on any YAML file)."
    )
    allowed = LintResult((), ("notes.txt",), 0, allow_empty=True)
    assert plain(to_text(allowed))[-1] == "0 errors, 0 warnings, 0 info in 1 file (0 objects read)."


WORDS = st.lists(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz:/-.()[]`", min_size=1, max_size=30),
    min_size=1,
    max_size=40,
)


@settings(max_examples=100, deadline=None)
@given(WORDS, st.integers(40, 120))
def test_wrapping_breaks_between_words_never_inside_one(words: list[str], width: int) -> None:
    result = LintResult((finding(" ".join(words), name="-".join(words[:3])),), ("a.yaml",), 1)
    whole, wrapped = plain(to_text(result)), plain(to_text(result, width))
    assert " ".join(wrapped).split() == " ".join(whole).split()
    for line in wrapped:
        # Only a word (or a command in backticks, which pastes whole) longer than the line may
        # stand out, alone on its line.
        alone = len(list(wrapping.words(line))) == 1
        assert len(line) <= width or alone or line.split()[0].isdigit(), line


def test_sixty_columns_keep_a_long_message_readable() -> None:
    message = (
        "container server serves port 8080 (http) but has no readinessProbe: Service api routes "
        "to it, and it counts as Ready as soon as it runs."
    )
    lines = plain(to_text(LintResult((finding(message),), ("deploy/api.yaml",), 1), 60))
    assert lines[:5] == [
        "deploy/api.yaml",
        "     12  error   readiness-missing  Deployment/api container",
        "         server",
        "         container server serves port 8080 (http) but has no",
        "         readinessProbe: Service api routes to it, and it",
    ]
    assert max(map(len, lines)) <= 60


def test_names_and_messages_from_files_are_escaped_and_markup_is_not_obeyed() -> None:
    hostile = replace(
        finding("bad \x1b[2J [bold]x[/bold]", name="a\x1b]0;t\x07"), file="f\x1b[31m.yaml"
    )
    lines = plain(to_text(LintResult((hostile,), ("f\x1b[31m.yaml",), 1)))
    assert lines[0] == "f\\x1b[31m.yaml"
    assert lines[1].endswith("Deployment/a\\x1b]0;t\\x07 container server")
    assert lines[2] == "         bad \\x1b[2J [bold]x[/bold]"


def test_the_rule_table_lists_every_rule_once() -> None:
    rows = rules_table()
    assert [row.split()[0] for row in rows] == [rule.id for rule in ALL_RULES]
    assert all(row.endswith(rule.summary) for row, rule in zip(rows, ALL_RULES, strict=True))


def test_an_explained_rule_wraps_like_everything_else() -> None:
    rule = ALL_RULES[0]
    wrapped = rule_explained(rule, 60)
    assert wrapped[0] == f"{rule.id} ({rule.severity.value})"
    assert max(map(len, wrapped)) <= 60
    assert " ".join(wrapped).split() == " ".join(rule_explained(rule)).split()


def test_the_rule_documents_carry_schema_version_one() -> None:
    """README: `--output json` prints `"schema_version": 1` on every run of every command,
    --list-rules and --explain among them."""
    rule = ALL_RULES[0]
    one = {
        "id": rule.id,
        "severity": rule.severity.value,
        "summary": rule.summary,
        "rationale": rule.rationale,
        "fix": rule.fix,
    }
    assert explained_json(rule) == {"schema_version": 1, "rule": one}
    listed = rules_json(ALL_RULES)
    assert list(listed) == ["schema_version", "rules"]
    assert listed["schema_version"] == 1
    assert listed["rules"][0] == one
    assert [r["id"] for r in listed["rules"]] == [r.id for r in ALL_RULES]


def _sarif_uri(file: str) -> str:
    result = LintResult((replace(finding("m"), file=file),), (file,), 1)
    run = to_sarif(result)["runs"][0]
    return str(run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])


def test_a_sarif_uri_is_a_percent_encoded_uri_reference() -> None:
    """SARIF 2.1.0 §3.4.3 artifactLocation.uri is a URI reference (RFC 3986): a space, `#` or `%`
    in a path is percent-encoded, a path's `/` kept, and other text as UTF-8 bytes."""
    assert _sarif_uri("odd dir/a #1 100%.yaml") == "odd%20dir/a%20%231%20100%25.yaml"
    assert _sarif_uri("./deploy/api.yaml") == "deploy/api.yaml"
    assert _sarif_uri("/abs/déploiement.yaml") == "/abs/d%C3%A9ploiement.yaml"
    assert _sarif_uri("c:x.yaml") == "c%3Ax.yaml"  # not read as a scheme
    assert _sarif_uri("<stdin>") == "stdin"
