"""docs/rules.md documents every rule, exactly as the rule table says."""

import os
from pathlib import Path

from truegreen.lint.docs import rules_markdown
from truegreen.lint.rules import ALL_RULES

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def test_rules_doc_is_current() -> None:
    if os.environ.get("TRUEGREEN_UPDATE_DOCS"):
        DOCS.write_text(rules_markdown())
    assert DOCS.read_text() == rules_markdown(), (
        "docs/rules.md is stale: rewrite it with TRUEGREEN_UPDATE_DOCS=1 make unit"
    )


def test_every_rule_has_a_section() -> None:
    text = DOCS.read_text()
    for rule in ALL_RULES:
        assert f"## {rule.id}\n" in text
