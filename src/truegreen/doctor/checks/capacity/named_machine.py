"""A pod set whose template names its machine (`spec.nodeName`): no scheduler places it, the
kubelet of that machine admits it or turns it away (kubelet_admission.py).
"""

from collections.abc import Mapping
from typing import Any

from truegreen.doctor.environment import Environment


def named_machine(spec: Mapping[str, Any]) -> str:
    """The machine a pod spec names (`spec.nodeName`); '' when it leaves the choice to the
    scheduler."""
    return str(spec.get("nodeName") or "")


def every_set_named(env: Environment) -> bool:
    """Every pod set of the judged job names its machine: no scheduler places any of them."""
    job = env.judged_job()
    sets = job.pod_sets if job is not None else ()
    return bool(sets) and all(named_machine(s.spec) for s in sets)
