"""Exec probe rules: a probe whose command cannot fail checks nothing."""

from collections.abc import Iterator

from truegreen.lint.probes import WorkloadModel
from truegreen.lint.rules.base import Context, Rule, RuleHit, Severity


def _cannot_fail(workload: WorkloadModel, _: Context) -> Iterator[RuleHit]:
    for container in workload.containers:
        for probe in container.probes:
            if probe.cannot_fail:
                yield RuleHit(
                    container.name,
                    f"container {container.name}'s {probe.kind} runs {' '.join(probe.command)!r}, "
                    "which always succeeds: the probe reports healthy whatever the state.",
                )


PROBE_CANNOT_FAIL = Rule(
    id="probe-cannot-fail",
    severity=Severity.WARNING,
    summary="An exec probe whose command always succeeds.",
    rationale="A probe that cannot fail makes the container look healthy whatever its state.",
    fix="Run a command that fails when the program is broken, or remove the probe.",
    check=_cannot_fail,
    reads="Exec probes' commands, and the script of `sh -c` (or bash, ash, dash) followed as "
    "the shell runs it: `true`, `:`, `exit 0`, `echo`, `cmd || true`, a script ending in one of "
    "them, and `test` or `cat` of a path every container has (/proc/1, /etc/hosts, "
    "/etc/hostname, /etc/resolv.conf). A script that can reach `exit 1` (`cmd || exit 1`, an "
    "`if` branch, a `{ …; }` group), a bare `exit` after a failure, `exec cmd`, `set -e` "
    "before a command that can fail, or `${x?}` (which ends the shell when x is not set), can "
    'fail; `${x:-default}`, `${x:=default}` and `echo "$(cmd)"` (echo\'s status, whatever '
    "cmd does) cannot, but `x=$(cmd)` alone can.",
    limits="A script the image holds is not read; loops, `case`, functions, `eval`, `trap`, "
    "background jobs, arithmetic (`$((…))`) and groups, `if`s or subshells nested more than 32 "
    "deep are not followed, and a command that is unclear counts as able to fail.",
)
