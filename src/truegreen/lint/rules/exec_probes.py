"""Exec probe rules: a probe whose command cannot fail checks nothing, and one that names a
shell's own command without a shell never runs."""

from collections.abc import Iterator

from truegreen.lint.probes import ProbeKind, WorkloadModel
from truegreen.lint.rules.base import Context, Rule, RuleHit, Severity
from truegreen.redaction.text import redact_text


def shown(command: tuple[str, ...]) -> str:
    """A probe's command as a finding quotes it: its words joined, every secret in them
    `<redacted>` by the policy doctor's reads follow (redaction/text.py), since lint's lines
    land in CI logs."""
    return redact_text(" ".join(command))


def _cannot_fail(workload: WorkloadModel, _: Context) -> Iterator[RuleHit]:
    for container in workload.containers:
        for probe in container.probes:
            if probe.cannot_fail:
                yield RuleHit(
                    container.name,
                    f"container {container.name}'s {probe.kind} runs {shown(probe.command)!r}, "
                    "which always succeeds: the probe reports healthy whatever the state.",
                    probe=probe.kind,
                )


PROBE_CANNOT_FAIL = Rule(
    id="probe-cannot-fail",
    severity=Severity.WARNING,
    summary="An exec probe whose command always succeeds.",
    rationale="A probe that cannot fail makes the container look healthy whatever its state. "
    "Where it is the only gate of a container that serves a port, readiness-missing reports "
    "the same container as the error it is: it is Ready at the probe's first run.",
    fix="Run a command that fails when the program is broken, or remove the probe.",
    check=_cannot_fail,
    reads="Exec probes' commands, and the script of `sh -c` (or bash, ash, dash) followed as "
    "the shell runs it: `true`, `:`, `exit 0`, `echo`, `cmd || true`, a script ending in one of "
    "them, and `test` or `cat` of a path every container has (/proc/1, /etc/hosts, "
    "/etc/hostname, /etc/resolv.conf). A script that can reach `exit 1` (`cmd || exit 1`, an "
    "`if` branch, a `{ …; }` group), a bare `exit` after a failure, `exec cmd`, `set -e` "
    "before a command that can fail, or `${x?}` (which ends the shell when x is not set), can "
    'fail; `${x:-default}`, `${x:=default}` and `echo "$(cmd)"` (echo\'s status, whatever '
    "cmd does) cannot, but `x=$(cmd)` alone can. Without a shell, the command's words are a "
    "program and its arguments, which no shell reads: `true`, `echo`, `test` and `cat` as "
    "above, also after `nohup`; `:` and `exit 0` are no programs there (probe-cannot-pass).",
    limits="A script the image holds is not read; loops, `case`, functions, `eval`, `trap`, "
    "background jobs, arithmetic (`$((…))`) and groups, `if`s or subshells nested more than 32 "
    "deep are not followed, and a command that is unclear counts as able to fail.",
)

# What a probe that never runs leaves the container with: the kubelet throws each try's result
# away (pkg/kubelet/prober/worker.go doProbe), so the probe keeps the value it started with
# (newWorker's initialValue): not ready, not started, and, for liveness, never failed. Also the
# words of probe-port-undeclared, whose probes the kubelet cannot run either.
NEVER_RUNS = {
    ProbeKind.READINESS: "the probe can never pass, so the container never becomes ready.",
    ProbeKind.STARTUP: "the probe can never pass, so the container never counts as started and "
    "never becomes ready.",
    ProbeKind.LIVENESS: "the probe can never pass or fail, so it never restarts the container, "
    "whatever its state.",
}


def _cannot_pass(workload: WorkloadModel, _: Context) -> Iterator[RuleHit]:
    for container in workload.containers:
        for probe in container.probes:
            if probe.cannot_pass:
                yield RuleHit(
                    container.name,
                    f"container {container.name}'s {probe.kind} runs {shown(probe.command)!r} "
                    f"without a shell, and {probe.command[0]!r} is a shell's own command, not a "
                    f"program: {NEVER_RUNS[probe.kind]}",
                    probe=probe.kind,
                )


PROBE_CANNOT_PASS = Rule(
    id="probe-cannot-pass",
    severity=Severity.ERROR,
    summary="An exec probe that runs a shell's own command without a shell.",
    rationale="The kubelet runs an exec probe's command without a shell, and `exit`, `:` or "
    "`set` are the shell's own commands, not programs: the container runtime cannot start "
    "them, and the kubelet throws every try away. A readiness or startup probe never passes, "
    "so the container never becomes ready; a liveness probe never acts, so it checks nothing.",
    fix="Run a command that fails when the program is broken; a shell's own command needs a "
    'shell to run it: `["sh", "-c", "…"]`.',
    check=_cannot_pass,
    reads="Exec probes' commands whose first word is one of POSIX's special built-ins: `:`, "
    "`.`, `break`, `continue`, `eval`, `exec`, `exit`, `export`, `readonly`, `return`, `set`, "
    "`shift`, `times`, `trap` or `unset`.",
    limits="A program of one of those names on the container's PATH is assumed absent (POSIX "
    "lets the shell keep them to itself); other words only a shell knows (`if`, `A=1`, "
    "bash's `source`) are not judged.",
)
