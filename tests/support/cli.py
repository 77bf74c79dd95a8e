"""Run the real `truegreen` command in-process, capturing its exit code, stdout and stderr."""

import io
import json
import sys
from dataclasses import dataclass
from typing import Any

from truegreen.cli import main


@dataclass(frozen=True)
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def _stream(data: bytes = b"", errors: str = "strict") -> io.TextIOWrapper:
    """A text stream over bytes in memory, with the `.buffer` a real standard stream has (lint
    reads stdin's bytes); UTF-8 and the error handling Python gives stdout and stderr."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors=errors, write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8")


def run_cli(*args: str, stdin: str | bytes | None = None) -> CliResult:
    """`truegreen ARGS…` as the console script runs it, with stdin, stdout and stderr in memory;
    exceptions are never swallowed."""
    data = stdin.encode() if isinstance(stdin, str) else stdin or b""
    streams = _stream(data), _stream(), _stream(errors="backslashreplace")
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = streams
    try:
        main(list(args))
        exit_code = 0
    except SystemExit as done:
        exit_code = done.code if isinstance(done.code, int) else int(done.code is not None)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return CliResult(exit_code, _text(streams[1]), _text(streams[2]))
