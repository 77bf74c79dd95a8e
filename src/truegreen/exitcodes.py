"""The one exit-code contract shared by every command."""

from enum import IntEnum


class ExitCode(IntEnum):
    """What a truegreen process tells its caller."""

    GOOD = 0
    """Measured good; warnings are allowed."""
    BROKEN = 1
    """truegreen itself broke (a bug, not a finding)."""
    FAILED = 2
    """A measured failure: not ready, a rollout failed, lint errors."""
    UNKNOWN = 3
    """Something could not be checked and nothing failed."""
    USAGE = 64
    """Bad usage: wrong flags, unreadable configuration."""
    HUNG_UP = 129
    """Stopped by SIGHUP, which the kernel sends when the terminal or ssh session that ran it
    went away: 128 + 1."""
    INTERRUPTED = 130
    """Stopped by Ctrl-C (SIGINT): 128 + 2, as a shell reports a program the signal ended."""
    TERMINATED = 143
    """Stopped by SIGTERM: 128 + 15."""
