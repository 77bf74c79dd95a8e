"""The rollup: the headline rule table, merging repeated statements, the exit from all findings."""

import pytest
from msgspec.structs import replace

from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.rollup import (
    Headline,
    HeadlineRule,
    NotChecked,
    Verdict,
    exit_code_for,
    merge_duplicates,
    pick_headline,
    roll_up,
)
from truegreen.exitcodes import ExitCode


def _unknown(detail: str, obj: str) -> Finding:
    return Finding(
        CheckId.IMAGE_PULL,
        Status.UNKNOWN,
        Basis.CANT_CHECK,
        "image-pull.cant-read",
        "Couldn't check.",
        "Look.",
        (detail,),
        (obj,),
        why="no permission",
    )


def test_repeats_merge_keeping_every_detail_and_object_once() -> None:
    merged = merge_duplicates(
        [_unknown("a", "Secret/a"), _unknown("b", "Secret/b"), _unknown("a", "Secret/a")]
    )
    assert len(merged) == 1
    assert merged[0].details == ("a", "b")
    assert merged[0].objects == ("Secret/a", "Secret/b")


def test_exit_code_is_from_every_finding() -> None:
    ok = Finding(CheckId.STORAGE, Status.OK, Basis.MEASURED, "storage.ok", "Fine.", "")
    warn = Finding(
        CheckId.CAPACITY, Status.WARN, Basis.INFERRED, "capacity.held-by-running-job", "W.", ""
    )
    fail = Finding(CheckId.WORKLOADS, Status.FAIL, Basis.MEASURED, "workloads.crash-loop", "F.", "")
    unknown = _unknown("x", "Secret/x")
    assert exit_code_for([ok, warn]) is ExitCode.GOOD
    assert exit_code_for([ok, unknown, warn]) is ExitCode.UNKNOWN
    assert exit_code_for([warn, unknown, fail]) is ExitCode.FAILED


def test_cant_check_is_only_ever_unknown() -> None:
    with pytest.raises(ValueError, match="unknown status and cant-check basis go together"):
        Finding(CheckId.STORAGE, Status.FAIL, Basis.CANT_CHECK, "storage.cant-read", "x", "y")


def _f(check: CheckId, status: Status, basis: Basis, code: str, *, why: str = "") -> Finding:
    # The headline text names the code so a test can tell which finding a headline came from.
    return Finding(check, status, basis, code, f"says {code}", f"fix {code}", why=why)


UNREACHABLE = _f(CheckId.STORAGE, Status.UNKNOWN, Basis.CANT_CHECK, "cluster-unreachable")
CANT_READ = _f(CheckId.CREDENTIALS, Status.UNKNOWN, Basis.CANT_CHECK, "credentials.cant-read")
ROOT_FAIL = _f(CheckId.STORAGE, Status.FAIL, Basis.MEASURED, "storage.unbound")
SYMPTOM_FAIL = _f(CheckId.WORKLOADS, Status.FAIL, Basis.MEASURED, "workloads.crash-loop")
INFERRED_IN_ROOT_CHECK = _f(CheckId.IMAGE_PULL, Status.FAIL, Basis.INFERRED, "image-pull.stuck")
HELD = _f(CheckId.CAPACITY, Status.WARN, Basis.INFERRED, "capacity.held-by-running-job")
PLAIN_WARN = _f(CheckId.CREDENTIALS, Status.WARN, Basis.MEASURED, "credentials.odd")
OK = _f(CheckId.IMAGE_PULL, Status.OK, Basis.MEASURED, "image-pull.ok")
CLOSING = _f(CheckId.ADMISSION, Status.FAIL, Basis.MEASURED, "admission.namespace-terminating")
GONE = _f(CheckId.ADMISSION, Status.FAIL, Basis.MEASURED, "admission.namespace-missing")
HOOK_DOWN = _f(CheckId.ADMISSION, Status.FAIL, Basis.MEASURED, "admission.webhook-down")
QUOTA_HELD = _f(
    CheckId.ADMISSION, Status.WARN, Basis.INFERRED, "admission.quota-held-by-running-job"
)
VOLUME_HELD = _f(
    CheckId.CAPACITY, Status.WARN, Basis.MEASURED, "capacity.volume-held-by-running-job"
)


@pytest.mark.parametrize(
    ("findings", "rule", "code"),
    [
        # Each row adds the finding the rule above it must beat; the first rule that matches wins.
        (
            [PLAIN_WARN, CANT_READ, HELD, SYMPTOM_FAIL, UNREACHABLE],
            "nothing-read",
            "cluster-unreachable",
        ),
        (
            [ROOT_FAIL, SYMPTOM_FAIL, CLOSING, UNREACHABLE],
            "nothing-read",
            "cluster-unreachable",
        ),
        ([ROOT_FAIL, HOOK_DOWN, CLOSING], "namespace-closed", "admission.namespace-terminating"),
        ([ROOT_FAIL, HOOK_DOWN, GONE], "namespace-closed", "admission.namespace-missing"),
        ([PLAIN_WARN, SYMPTOM_FAIL, ROOT_FAIL], "root-cause-failure", "storage.unbound"),
        ([SYMPTOM_FAIL, HOOK_DOWN], "root-cause-failure", "admission.webhook-down"),
        ([INFERRED_IN_ROOT_CHECK, SYMPTOM_FAIL], "measured-failure", "workloads.crash-loop"),
        ([HELD, CANT_READ, INFERRED_IN_ROOT_CHECK], "inferred-failure", "image-pull.stuck"),
        ([PLAIN_WARN, CANT_READ, HELD], "waiting-for-running-job", "capacity.held-by-running-job"),
        (
            [PLAIN_WARN, CANT_READ, QUOTA_HELD],
            "waiting-for-running-job",
            "admission.quota-held-by-running-job",
        ),
        (
            [PLAIN_WARN, CANT_READ, VOLUME_HELD],
            "waiting-for-running-job",
            "capacity.volume-held-by-running-job",
        ),
        ([HELD, QUOTA_HELD, SYMPTOM_FAIL], "measured-failure", "workloads.crash-loop"),
        ([OK, PLAIN_WARN, CANT_READ], "could-not-check", "credentials.cant-read"),
        ([OK, PLAIN_WARN], "warning", "credentials.odd"),
    ],
)
def test_the_first_matching_rule_picks_the_headline(
    findings: list[Finding], rule: str, code: str
) -> None:
    headline = pick_headline(findings)
    assert (headline.rule, headline.code) == (rule, code)
    chosen = next(f for f in findings if f.code == code)
    assert headline.finding is chosen
    # Nothing read speaks for every check: such a headline names none (the finding still does).
    check = None if rule == "nothing-read" else chosen.check
    assert (headline.check, headline.status) == (check, chosen.status)
    assert (headline.text, headline.remedy) == (f"says {code}", f"fix {code}")


def test_within_a_rule_the_first_finding_wins() -> None:
    second_root = _f(CheckId.IMAGE_PULL, Status.FAIL, Basis.MEASURED, "image-pull.login-missing")
    assert pick_headline([ROOT_FAIL, second_root]).code == "storage.unbound"
    assert pick_headline([second_root, ROOT_FAIL]).code == "image-pull.login-missing"


def test_all_ok_is_the_ready_headline() -> None:
    headline = pick_headline([OK])
    assert headline == Headline(
        "ready", None, "ready", Status.OK, "Ready: training can run.", "", None
    )
    assert pick_headline([]) == headline


def test_a_rule_matches_only_on_every_field_it_names() -> None:
    rule = HeadlineRule(
        "r",
        Status.FAIL,
        Basis.MEASURED,
        frozenset({CheckId.STORAGE}),
        frozenset({"storage.unbound"}),
    )
    assert rule.matches(ROOT_FAIL)
    assert not rule.matches(replace(ROOT_FAIL, status=Status.WARN))
    assert not rule.matches(replace(ROOT_FAIL, basis=Basis.INFERRED))
    assert not rule.matches(replace(ROOT_FAIL, check=CheckId.IMAGE_PULL))
    assert not rule.matches(replace(ROOT_FAIL, code="storage.other"))
    assert HeadlineRule("any", Status.FAIL).matches(SYMPTOM_FAIL)


def test_roll_up_orders_by_check_and_says_what_was_not_measured() -> None:
    storage_cant = _f(
        CheckId.STORAGE, Status.UNKNOWN, Basis.CANT_CHECK, "storage.cant-read", why="no permission"
    )
    capacity_cant = _f(CheckId.CAPACITY, Status.UNKNOWN, Basis.CANT_CHECK, "capacity.cant-read")
    skipped = NotChecked(CheckId.CREDENTIALS, "no backend login asked for", asked=False)
    report = roll_up(
        [PLAIN_WARN, capacity_cant, OK, storage_cant, HELD],
        ran=[CheckId.CAPACITY, CheckId.IMAGE_PULL, CheckId.STORAGE, CheckId.PROBES],
        skipped=[skipped],
    )
    assert [f.code for f in report.findings] == [
        "credentials.odd",
        "image-pull.ok",
        "storage.cant-read",
        "capacity.cant-read",
        "capacity.held-by-running-job",
    ]
    assert (report.verdict, report.exit_code) == (Verdict.UNKNOWN, ExitCode.UNKNOWN)
    assert report.checked == (CheckId.IMAGE_PULL, CheckId.PROBES)
    # The reason is the finding's why when it has one, its headline otherwise; in check order.
    assert report.not_checked == (
        skipped,
        NotChecked(CheckId.STORAGE, "no permission"),
        NotChecked(CheckId.CAPACITY, "says capacity.cant-read"),
    )
    assert report.headline.rule == "waiting-for-running-job"


@pytest.mark.parametrize(
    ("findings", "verdict", "exit_code"),
    [
        ([OK, PLAIN_WARN], Verdict.READY, ExitCode.GOOD),
        ([OK, CANT_READ], Verdict.UNKNOWN, ExitCode.UNKNOWN),
        ([CANT_READ, SYMPTOM_FAIL], Verdict.NOT_READY, ExitCode.FAILED),
    ],
)
def test_the_verdict_follows_the_exit_code(
    findings: list[Finding], verdict: Verdict, exit_code: ExitCode
) -> None:
    report = roll_up(findings, ran=[f.check for f in findings])
    assert (report.verdict, report.exit_code) == (verdict, exit_code)


def test_also_lists_every_other_problem_once() -> None:
    same_words = replace(UNREACHABLE, check=CheckId.CAPACITY)
    report = roll_up([OK, UNREACHABLE, same_words, PLAIN_WARN], ran=[])
    assert report.headline.finding is UNREACHABLE
    # Not the ok finding, not the headline, not a repeat of the headline's words.
    assert report.also == (PLAIN_WARN,)
    # Same words with another status are a different statement and are shown.
    other_status = replace(
        UNREACHABLE, status=Status.FAIL, basis=Basis.MEASURED, check=CheckId.PROBES
    )
    assert roll_up([UNREACHABLE, other_status], ran=[]).also == (other_status,)


def test_merging_keeps_distinct_statements_apart() -> None:
    a = _f(CheckId.STORAGE, Status.FAIL, Basis.MEASURED, "storage.unbound")
    variants = [
        replace(a, check=CheckId.IMAGE_PULL),
        replace(a, status=Status.WARN),
        replace(a, basis=Basis.INFERRED),
        replace(a, code="storage.other"),
        replace(a, headline="other words"),
    ]
    assert merge_duplicates([a, *variants]) == [a, *variants]


def test_checked_lists_the_checks_in_check_order_not_name_order() -> None:
    report = roll_up([], ran=[CheckId.CAPACITY, CheckId.STORAGE, CheckId.CREDENTIALS])
    assert report.checked == (CheckId.CREDENTIALS, CheckId.STORAGE, CheckId.CAPACITY)


def test_no_rule_is_named_like_a_code_it_does_not_stand_for() -> None:
    """`rule` names the rollup's category and `code` the finding: a rule spelled like a code
    (`cluster-unreachable` chose `cluster-login-failed` headlines) reads as a contradiction."""
    from truegreen.doctor.catalogue import WORDING
    from truegreen.doctor.rollup import HEADLINE_RULES

    clashing = {
        rule.id: sorted(rule.codes or ())
        for rule in HEADLINE_RULES
        if rule.id in WORDING and set(rule.codes or ()) != {rule.id}
    }
    assert clashing == {}
