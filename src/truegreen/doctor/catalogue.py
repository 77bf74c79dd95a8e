"""Every headline and remedy doctor can print, keyed by finding code.

Assembled from the whole cluster's lines (truegreen.plain_words), doctor's own, and each
check's catalogue, which lives beside the check: one table, so that a test can hold every
sentence against the jargon list and a golden file can show each wording change in review.
Placeholders are filled with names and plain amounts.
"""

from typing import Final

from truegreen.doctor.checks import credentials, evidence, freshness, probes, storage, trial
from truegreen.doctor.checks.admission import words as admission
from truegreen.doctor.checks.capacity import words as capacity
from truegreen.doctor.checks.image_pull import words as image_pull
from truegreen.doctor.checks.queue import words as queue
from truegreen.doctor.checks.workloads import words as workloads
from truegreen.plain_words import CLUSTER_WORDING, Wording, fill

WORDING: Final[dict[str, Wording]] = {
    **CLUSTER_WORDING,
    "ready": Wording("Ready: training can run.", ""),
    "namespace-name-impossible": Wording(
        "Couldn't check '{name}': the cluster listed it as an environment's space, but no space "
        "can have that name.",
        "Ask your cluster admin what answers at this cluster's address: a real cluster lists no "
        "such name; {check} shows the spaces it lists.",
    ),
    "monitor-stale": Wording(
        "Couldn't keep the verdict current: nothing was confirmed for {age} seconds.",
        "Check that truegreen monitor is running and can reach the cluster; its log says why.",
    ),
    "watch-stale": Wording(
        "Couldn't keep the verdict current: nothing was confirmed for {age} seconds.",
        "Check that this computer still reaches the cluster; --watch checks again by itself "
        "as soon as the cluster answers.",
    ),
    **credentials.WORDS,
    **image_pull.WORDS,
    **storage.WORDS,
    **queue.WORDS,
    **admission.WORDS,
    **workloads.WORDS,
    **evidence.WORDS,
    **capacity.WORDS,
    **probes.WORDS,
    **freshness.WORDS,
    **trial.WORDS,
}

OFFLINE_REMEDY: Final = (
    "The snapshot holds no answer from the cluster: take a new one with {snapshot} where the "
    "cluster answers ({check} shows whether it does), and check that one."
)
"""What to do when a snapshot's cluster could not be read: no address can be fixed offline."""

NOT_ASKED_HINTS: Final[dict[str, str]] = {
    "credentials": "name the backend login with `--credentials-secret NAME:KEY1,KEY2` to check it",
}
"""How to ask for a check that was not asked for, by check id."""


def render(code: str, **fields: object) -> tuple[str, str]:
    """The headline and remedy for `code`, filled in, each starting as a sentence does;
    KeyError when a field is missing."""
    return fill(WORDING[code], **fields)
