"""Which API answers are sent again: client-go's rule (rest/with_retry.go checkWait and
rest/request.go retryAfterSeconds), never past the request's deadline."""

import pytest

from truegreen.cluster.throttle import MAX_RETRIES, may_resend_after_drop, may_retry, retry_wait


@pytest.mark.parametrize(
    ("status", "retry_after", "wait"),
    [
        (429, "1", 1.0),
        (429, "0", 0.0),
        (500, "2", 2.0),
        (503, "+3", 3.0),
        (599, "1", 1.0),
        (429, "-1", 0.0),  # Atoi accepts it; a negative wait is no wait
        (429, None, None),  # throttled without Retry-After: client-go does not retry
        (503, None, None),
        (429, "1.5", None),  # not whole seconds
        (429, " 1", None),  # Atoi refuses spaces
        (429, "1_0", None),  # Python's int() would take it; Go's Atoi does not
        (429, "Wed, 21 Oct 2015 07:28:00 GMT", None),  # an HTTP date: not seconds
        (429, "9999999999", None),  # longer than any deadline; refused rather than parsed
        (499, "1", None),
        (404, "1", None),
        (409, "1", None),
        (200, "1", None),
    ],
)
def test_retry_wait_follows_client_go(
    status: int, retry_after: str | None, wait: float | None
) -> None:
    assert retry_wait(status, retry_after) == wait


def test_ten_retries_at_most() -> None:
    assert MAX_RETRIES == 10
    assert may_retry(9, 0.0, 5.0)
    assert not may_retry(10, 0.0, 5.0)


def test_never_wait_past_the_deadline() -> None:
    assert may_retry(0, 1.0, 1.01)
    assert not may_retry(0, 1.0, 1.0)  # the retry would start with nothing left
    assert not may_retry(0, 2.0, 1.0)


@pytest.mark.parametrize(
    ("method", "retries_made", "resend"),
    [
        ("GET", 0, True),
        ("GET", MAX_RETRIES - 1, True),
        ("GET", MAX_RETRIES, False),  # the budget throttling retries share
        ("PATCH", 0, False),  # a write may have been acted on: never sent twice
        ("POST", 0, False),
        ("DELETE", 0, False),
    ],
)
def test_a_dropped_connection_resends_reads_only(
    method: str, retries_made: int, resend: bool
) -> None:
    assert may_resend_after_drop(method, retries_made) is resend
