"""Expected errors: each becomes one plain line on stderr and an exit code, never a traceback."""

from truegreen.exitcodes import ExitCode


class TruegreenError(Exception):
    """An error the operator can act on: what happened, why, and what to do.

    Exit 3 unless a kind says otherwise: the run could not do what it was asked, which is
    neither a pass nor a measured failure; 1 is kept for truegreen's own bugs."""

    exit_code: ExitCode = ExitCode.UNKNOWN
    code = "setup-failed"
    """The stable id of this kind of failure in the JSON failure document (truegreen.failure)."""

    def __init__(self, what: str, why: str = "", todo: str = "", *, code: str = "") -> None:
        self.what = what
        self.why = why
        self.todo = todo
        if code:
            self.code = code
        super().__init__(self.line())

    def line(self) -> str:
        """The single line printed for this error."""
        parts = [self.what]
        if self.why:
            parts.append(self.why)
        text = ": ".join(parts)
        return f"{text}. {self.todo}" if self.todo else text


class UsageError(TruegreenError):
    """The command was called wrongly: a bad flag value or configuration file."""

    exit_code = ExitCode.USAGE
    code = "bad-usage"


class ConnectionSetupError(TruegreenError):
    """The cluster connection settings (kubeconfig, context) cannot be used.

    Exit 3: the cluster could not be checked, which is neither a pass nor a measured failure.
    """

    exit_code = ExitCode.UNKNOWN


class WriteError(TruegreenError):
    """A file could not be written where the operator asked (a full disk, a failing device, a
    place the file system refuses): nothing was saved, so the run has no result (exit 3)."""

    code = "write-failed"
