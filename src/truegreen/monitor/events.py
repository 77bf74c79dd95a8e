"""The Kubernetes Event the monitor leaves on the namespace when the verdict changes.

One Event per change, so `kubectl get events` and every event-based tool show when training
stopped (or started) being able to run, with the headline as the message. Written as client-go's
recorder writes a core/v1 Event (tools/record/event.go `makeEvent`): named `<object>.<hex
nanoseconds>`, count 1, first and last timestamp, the writer in `source.component` and
`reportingComponent`. The involved object is the Namespace; its namespace field is set to the
Event's own, which core/v1 validation requires of an Event stored in that namespace.
"""

from datetime import UTC, datetime, timedelta
from typing import Any

from truegreen.doctor.rollup import Verdict

COMPONENT = "truegreen-monitor"
"""Who the Events say wrote them."""
MESSAGE_LIMIT = 1024
"""events.k8s.io/v1 refuses a note longer than this; core/v1 Events are kept to it too."""
REASONS = {
    Verdict.READY: "TrainingReady",
    Verdict.NOT_READY: "TrainingNotReady",
    Verdict.UNKNOWN: "TrainingUnknown",
}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def event_due(previous: Verdict | None, verdict: Verdict) -> bool:
    """An Event is written for the first verdict the monitor reaches and for every change."""
    return previous is not verdict


def verdict_event(
    verdict: Verdict, headline: str, *, namespace: str, now: datetime, instance: str
) -> dict[str, Any]:
    """The core/v1 Event for reaching `verdict`, with `headline` as its message."""
    nanoseconds = (now - _EPOCH) // timedelta(microseconds=1) * 1000
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    message = headline if len(headline) <= MESSAGE_LIMIT else headline[: MESSAGE_LIMIT - 1] + "…"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{namespace}.{nanoseconds:x}", "namespace": namespace},
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Namespace",
            "name": namespace,
            "namespace": namespace,
        },
        "reason": REASONS[verdict],
        "message": message,
        "type": "Normal" if verdict is Verdict.READY else "Warning",
        "source": {"component": COMPONENT},
        "reportingComponent": COMPONENT,
        "reportingInstance": instance[:128],
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }
