"""Reading and writing Kubernetes: live client, snapshot reader/writer, one Read result type.

Nothing outside this package talks to the API server; it does so over `truegreen.http`.
"""

from truegreen.cluster.kinds import Kind
from truegreen.cluster.reader import ClusterReader, FieldIsNot, ReadKey
from truegreen.cluster.reads import (
    CantRead,
    Conflict,
    Created,
    CreateResult,
    Folded,
    FoldRead,
    GetRead,
    Got,
    KubeObject,
    Listed,
    ListRead,
    Patched,
    PatchResult,
    ReadFailure,
)

__all__ = [
    "CantRead",
    "ClusterReader",
    "Conflict",
    "CreateResult",
    "Created",
    "FieldIsNot",
    "FoldRead",
    "Folded",
    "GetRead",
    "Got",
    "Kind",
    "KubeObject",
    "ListRead",
    "Listed",
    "PatchResult",
    "Patched",
    "ReadFailure",
    "ReadKey",
]
