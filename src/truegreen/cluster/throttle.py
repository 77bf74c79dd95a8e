"""Which answers are sent again, and after how long: client-go's rule, bounded by our deadline.

client-go (`rest/with_retry.go` checkWait, `rest/request.go` retryAfterSeconds) retries an
answer that is 429 or 5xx AND carries a Retry-After of whole seconds, at most 10 times
(`maxRetries: 10`). We do the same, but never wait past the request's deadline: a wait that
would pass it ends the request now, with that answer.
"""

import re

MAX_RETRIES = 10
"""Retries after the first attempt, as client-go's default."""

_SECONDS = re.compile(r"[+-]?[0-9]{1,9}")
"""What Go's strconv.Atoi accepts (bounded in length; a longer number waits past any deadline)."""


def retry_wait(status: int, retry_after: str | None) -> float | None:
    """Seconds to wait before sending again, or None when this answer is final."""
    if status != 429 and status < 500:
        return None
    if retry_after is None or not _SECONDS.fullmatch(retry_after):
        return None
    return float(max(0, int(retry_after)))


def may_retry(retries_made: int, wait: float, seconds_left: float) -> bool:
    """True while retries remain and the wait ends before the deadline."""
    return retries_made < MAX_RETRIES and wait < seconds_left


def may_resend_after_drop(method: str, retries_made: int) -> bool:
    """client-go sends a GET again when the connection was reset or the answer ended early
    (rest/request.go: IsConnectionReset, IsProbableEOF), within the same retry budget; a
    write is never sent twice, the server may have acted on it."""
    return method == "GET" and retries_made < MAX_RETRIES
