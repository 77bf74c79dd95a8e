"""Running a credential plugin's process within bounds: time, bytes of answer, bytes of complaint.

client-go runs a plugin with no timeout and reads all it prints (`plugin/pkg/client/auth/exec/
exec.go`, `refreshCredsLocked`); truegreen must never hang or fill memory on a broken plugin, so
it stops the process at a deadline or once the answer outgrows `stdout_cap`, and keeps only the
start of its error output, where a plugin says what went wrong first. The outcome is a value;
deciding what it means is the caller's job.
"""

import os
import selectors
import subprocess
import unicodedata
from collections.abc import Mapping, Sequence
from enum import Enum

from msgspec import Struct

from truegreen.http.deadline import Deadline

_READ_SIZE = 65536


class Ending(Enum):
    """How the plugin's run ended."""

    EXITED = "exited"
    """It exited by itself (any exit code)."""
    TIMED_OUT = "timed-out"
    """It was still running at the deadline and was killed."""
    TOO_MUCH_OUTPUT = "too-much-output"
    """Its answer outgrew the cap and it was killed."""


class PluginRun(Struct, frozen=True):
    """What the plugin did. `repr` never shows its answer, which holds the credential."""

    ending: Ending
    exit_code: int | None
    """The exit code; negative when a signal ended it (Python's convention); None if killed."""
    stdout: bytes
    """Its answer, at most the cap (never echoed anywhere: it holds secrets)."""
    stderr_head: bytes
    """The first bytes it wrote on its error output (empty when that went to the terminal)."""

    def __repr__(self) -> str:
        return (
            f"PluginRun({self.ending.value}, exit_code={self.exit_code}, "
            f"stdout=<{len(self.stdout)} bytes>, stderr_head={self.stderr_head!r})"
        )


def run_plugin(
    argv: Sequence[str],
    *,
    executable: str,
    env: Mapping[str, str],
    interactive: bool,
    timeout_seconds: float,
    stdout_cap: int,
    stderr_cap: int,
) -> PluginRun:
    """Run `argv` (with `executable` as the program) and collect its answer within the bounds.

    Interactive: the plugin shares our standard input and error output with the terminal, as
    under kubectl, so it can prompt; otherwise its input is empty (client-go leaves `Stdin` nil,
    which Go connects to the null device) and its error output is captured for quoting.
    Raises OSError when the program cannot be started.
    """
    process = subprocess.Popen(
        list(argv),
        executable=executable,
        env=dict(env),
        stdin=None if interactive else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=None if interactive else subprocess.PIPE,
    )
    deadline = Deadline.after(timeout_seconds)
    stdout = bytearray()
    stderr = bytearray()
    ending = Ending.EXITED
    with selectors.DefaultSelector() as selector:
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                selector.register(pipe, selectors.EVENT_READ)
        while selector.get_map():
            ready = selector.select(timeout=deadline.remaining())
            if not ready:
                ending = Ending.TIMED_OUT
                break
            for key, _ in ready:
                chunk = os.read(key.fd, _READ_SIZE)
                if not chunk:
                    selector.unregister(key.fileobj)
                elif key.fileobj is process.stdout:
                    stdout += chunk
                else:
                    # the rest is read and dropped, so that the plugin never blocks on a pipe
                    stderr += chunk[: max(0, stderr_cap - len(stderr))]
            if len(stdout) > stdout_cap:
                ending = Ending.TOO_MUCH_OUTPUT
                break
    exit_code: int | None = None
    if ending is Ending.EXITED:
        try:
            exit_code = process.wait(timeout=deadline.remaining())
        except subprocess.TimeoutExpired:
            ending = Ending.TIMED_OUT
    if ending is not Ending.EXITED:
        process.kill()
        process.wait()
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()
    return PluginRun(ending, exit_code, bytes(stdout[:stdout_cap]), bytes(stderr))


def one_line(text: str, *, limit: int | None = None) -> str:
    """`text` as one printable line: lines joined with ` | `, control characters escaped.

    A plugin's complaint or install hint is shown on the operator's terminal; an escape sequence
    in it must not drive that terminal (client-go strips them from installHint too:
    `tools/clientcmd/client_config.go`, `cleanANSIEscapeCodes`).
    """
    lines = [" ".join(line.split()) for line in text.splitlines()]
    joined = " | ".join(line for line in lines if line)
    escaped = "".join(_escape(ch) for ch in joined)
    if limit is not None and len(escaped) > limit:
        return escaped[: limit - 1] + "…"
    return escaped


def _escape(ch: str) -> str:
    if unicodedata.category(ch) not in {"Cc", "Cf"}:
        return ch
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
