"""cluster-autoscaler's status ConfigMap: the one list that finds it wherever cluster-autoscaler
runs, the get at its default place where that list is refused, and which refused list that get
stands in for.

cluster-autoscaler writes its status in the namespace of its `--namespace` flag (default
kube-system; config/flags/flags.go, name from --status-config-map-name), and its Helm chart
passes `--namespace={{ .Release.Namespace }}`: one cluster-wide list by name finds it
(`fieldSelector=metadata.name=…`, which RBAC grants by `resourceNames`: apiserver
pkg/endpoints/request/requestinfo.go takes the selector's name as the request's).
"""

from collections.abc import Iterable

from truegreen.cluster import CantRead, ClusterReader, GetRead, Kind, ListRead, ReadFailure, ReadKey
from truegreen.cluster.reader import field_selector_text
from truegreen.doctor.checks.capacity.autoscaler_sources import STATUS_CONFIG_MAP

_NAMESPACE, _NAME = STATUS_CONFIG_MAP
_FIELDS = {"metadata.name": _NAME}
_LIST = ReadKey("list", Kind.CONFIG_MAP, None, None, "", field_selector_text(_FIELDS))
_GET = ReadKey("get", Kind.CONFIG_MAP, _NAMESPACE, _NAME)
_LIST_NOT_ASKED = frozenset({ReadFailure.FORBIDDEN, ReadFailure.NOT_CAPTURED})
"""Why the list by name tells nothing of the default place: it was not allowed, or not made."""


def read_status(reader: ClusterReader) -> ListRead | GetRead:
    """cluster-autoscaler's status ConfigMap, in whichever namespace it runs: every ConfigMap of
    its name, one list. Where that list is refused (a role granting the `get` alone) or a
    snapshot taken before holds none, the default place is read instead
    (`STATUS_CONFIG_MAP`)."""
    found = reader.list(Kind.CONFIG_MAP, namespace=None, fields=_FIELDS)
    if isinstance(found, CantRead) and found.failure in _LIST_NOT_ASKED:
        return reader.get(Kind.CONFIG_MAP, _NAME, namespace=_NAMESPACE)
    return found


def made_up_for(recorded: Iterable[tuple[ReadKey, object]]) -> frozenset[ReadKey]:
    """The reads of `recorded` that failed and whose fallback read what they were for: the
    refused list of the status, where the get at its default place answered (the status, or
    the API server's NotFound: no status there, a measurement). doctor judges the status by that
    get and says nothing of the list, so the list is no read that could not be made; a get that
    failed too leaves both failed."""
    reads = dict(recorded)
    listed, got = reads.get(_LIST), reads.get(_GET)
    refused = isinstance(listed, CantRead) and listed.failure is ReadFailure.FORBIDDEN
    answered = got is not None and (not isinstance(got, CantRead) or got.is_measurement)
    return frozenset({_LIST}) if refused and answered else frozenset()
