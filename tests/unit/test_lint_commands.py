"""Whether an exec probe's command can fail, read as a shell reads it (lint/commands.py)."""

import pytest

from truegreen.lint.commands import always_succeeds


@pytest.mark.parametrize(
    "command",
    [
        ["true"],
        ["/bin/true"],
        [":"],
        ["exit", "0"],
        ["exit"],
        ["echo", "ok"],
        ["/bin/echo"],
        ["test", "-d", "/proc/1"],
        ["test", "-e", "/etc/hosts"],
        ["[", "-f", "/etc/resolv.conf", "]"],
        ["cat", "/etc/hostname"],
        ["sh", "-c", "exit 0"],
        ["/bin/sh", "-c", "true"],
        ["bash", "-ec", "true"],
        ["sh", "-ce", "exit 0"],
        ["sh", "-c", "echo ok"],
        ["sh", "-c", "curl -f localhost:8080/healthz || true"],
        ["sh", "-c", "wget -q -O- x >/dev/null 2>&1 || exit 0"],
        ["sh", "-c", "check; exit 0"],
        ["sh", "-c", "check\ntrue"],
        ["sh", "-c", "check | true"],
        ["sh", "-c", "true || check"],
        ["sh", "-c", "exec echo ready"],
        ["sh", "-c", "test -d /proc/1 && echo up"],
        ["bash", "-o", "pipefail", "-c", "true | echo x"],
        ["bash", "+o", "pipefail", "-c", "check | true"],  # pipefail turned off again
        ["sh", "-x", "-o", "pipefail", "-c", "true"],
        ["sh", "-c", "-e", "true"],  # -e after -c is still an option
        ["sh", "-c", "'true'"],  # quotes are the shell's
        ["sh", "-c", "set -e"],
        ["sh", "-c", "exit"],
        ["sh", "-c", "exit 0; check"],  # never reaches check
        ["sh", "-c", "set +e; check; true"],
        ["sh", "-c", "A=1 true"],
        ["sh", "-c", "A=1"],
        ["sh", "-c", "echo ok >/dev/null"],
        ["sh", "-c", "echo ok >> /dev/null"],
        ["sh", "-c", "echo ok 2>&1"],
        ["sh", "-c", "echo ok &>/dev/null"],
        ["sh", "-c", "test -d /proc/1 2>/dev/null"],
        ["sh", "-c", "true >/dev/null >/dev/null"],
        ["sh", "-c", "test >/dev/null -d /proc/1"],  # a redirection may stand anywhere
        ["sh", "-c", "echo Xyz"],
        ["test", "-d", "/proc/1/"],
        ["test", "-d", "/"],
    ],
)
def test_a_command_that_cannot_fail(command: list[str]) -> None:
    assert always_succeeds(command)


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["pg_isready"],
        ["sh", "-c", "test -f /tmp/ready"],
        ["true", "x"],
        ["cat", "/tmp/ready", "true"],
        ["cat"],
        ["sh", "-x", "true"],  # runs a script file named true
        ["sh", "-c"],
        ["sh", "-c", "check; exit"],  # exits with check's status
        ["sh", "-c", "true && check"],
        ["sh", "-ec", "check; true"],
        ["sh", "-c", "set -e; check; true"],
        ["sh", "-c", "'true"],  # the shell refuses it
        ["sh", "-c", "echo ok > /tmp/x"],
        ["sh", "-c", "cat < /etc/hosts"],
        ["sh", "-c", "(true)"],
        ["sh", "-c", "true &"],
        ["sh", "-c", "exit 1"],
        ["sh", "-o", "pipefail", "-c", "check | true"],
        ["test", "-d", "/tmp"],
        ["test", "-f", "/proc/1"],
        ["python", "-c", "import torch"],
        ["sh", "-c", ""],
        ["sh", "-o"],
        ["sh", "--", "-c", "true"],  # after `--`, -c is a script file's name
        ["sh", "-e", "-c", "check; true"],
        ["sh", "-ec", "set -x; check; true"],  # set -x leaves -e on
        ["bash", "-o", "pipefail", "-o", "xtrace", "-c", "check | true"],
        ["sh", "-o", "pipefail", "-c", "set -x; check | true"],
        ["sh", "-c", "set -o pipefail; check | true"],
        ["sh", "-c", "test -e /etc/hostnameX"],
        ["sh", "-c", "echo ok >"],
        ["sh", "-c", "echo ok > 1"],  # writes a file, which may fail
        ["sh", "-c", "echo ok 2>&x"],
        ["test", "-d", "/proc/1", "]"],
        ["test", "-d"],
        ["test", "-d", "/procX"],
        ["sh", "-c", "check &&"],
        ["sh", "-c", "A=1 check"],
    ],
)
def test_a_command_that_can_fail(command: list[str]) -> None:
    assert not always_succeeds(command)
