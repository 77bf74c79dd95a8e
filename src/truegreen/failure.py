"""The one JSON document of a run that stopped before it had a result, for every command.

A bad flag, a path that does not exist, a kubeconfig that cannot be used, a cluster that could
not be reached, a bug: with `-o json` each command prints this document on stdout, whose shape
is docs/failure.schema.json (`schema_version` 1): `schema_version`, `exit_code` (1, 3, 64, or
130, 143 and 129 for a run stopped by Ctrl-C, SIGTERM or SIGHUP) and `headline` {`code`,
`text`, `remedy`}. A command adds its own result's fields, empty, so that a reader of its
results reads its failures too (doctor's `findings`, lint's `files`, refresh's `workloads`).
"""

from typing import Any

from msgspec import Struct

from truegreen.errors import TruegreenError
from truegreen.exitcodes import ExitCode

SCHEMA_VERSION = 1

_BY = {
    ExitCode.INTERRUPTED: "Ctrl-C",
    ExitCode.TERMINATED: "SIGTERM",
    ExitCode.HUNG_UP: "SIGHUP (its terminal or ssh session closed)",
}
"""The signal each exit code of a stopped run names, in the words its line says it."""

INTERNAL_REMEDY = "run again with --debug and report the traceback"


class Failure(Struct, frozen=True):
    """Why a run stopped before it had a result, and what to do."""

    exit_code: ExitCode
    code: str
    """A stable id: `bad-usage`, `setup-failed`, `cluster-unreachable`, `internal-error`..."""
    text: str
    remedy: str

    @classmethod
    def of(cls, error: TruegreenError) -> "Failure":
        """The failure an expected error describes."""
        text = f"{error.what}: {error.why}" if error.why else error.what
        return cls(error.exit_code, error.code, text, error.todo)

    @classmethod
    def internal(cls, error: BaseException) -> "Failure":
        """A bug in truegreen: named by its exception type, never by its message."""
        return cls(
            ExitCode.BROKEN,
            "internal-error",
            f"internal error ({type(error).__name__}); this is a bug in truegreen",
            INTERNAL_REMEDY,
        )

    @classmethod
    def interrupted(
        cls,
        exit_code: ExitCode,
        before: str = "the run had a result",
        remedy: str = "run it again to get one",
    ) -> "Failure":
        """A run stopped by Ctrl-C (INTERRUPTED), SIGTERM (TERMINATED) or SIGHUP (HUNG_UP)
        `before` its end."""
        return cls(exit_code, "interrupted", f"stopped by {_BY[exit_code]} before {before}", remedy)

    def leaving(self, what: str, todo: str) -> "Failure":
        """This failure, saying what the run left in the cluster (`what`) and what removes it
        (`todo`) before its own remedy."""
        return Failure(
            self.exit_code, self.code, f"{self.text}; {what}", f"{todo}, then {self.remedy}"
        )

    def line(self) -> str:
        """The one line on stderr: `what: why. remedy`."""
        return f"{self.text}. {self.remedy}" if self.remedy else self.text


def failure_document(failure: Failure, **result_fields: Any) -> dict[str, Any]:
    """The shared document, with a command's own result fields after it."""
    return {
        "schema_version": SCHEMA_VERSION,
        "exit_code": int(failure.exit_code),
        "headline": {"code": failure.code, "text": failure.text, "remedy": failure.remedy},
        **result_fields,
    }
