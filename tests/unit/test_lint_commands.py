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
    ],
)
def test_a_command_that_can_fail(command: list[str]) -> None:
    assert not always_succeeds(command)
