"""The refresh command below the CLI: what the operator asked (`RefreshRequest`), and one tick
run for it (`run_refresh`): the selector read, the cluster reached, the tick made; values
returned, nothing printed."""

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from msgspec import Struct

from truegreen.cluster.label_selector import parse_selector
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.namespace_selection import Operator
from truegreen.cluster.settings import ConnectionSettings
from truegreen.errors import UsageError
from truegreen.kubectl import for_connection
from truegreen.plain_words import Login
from truegreen.refresh.plan import RefreshMode
from truegreen.refresh.registry import RegistryAccess
from truegreen.refresh.render import OPT_IN, Cluster, ProgressWords
from truegreen.refresh.report import TickReport
from truegreen.refresh.tick import RefreshSettings, run_tick

Told = Callable[[str], None]
"""Hears one line of progress at a time."""


class RefreshRequest(Struct, frozen=True):
    """What the operator asked one refresh tick to do."""

    connection: ConnectionSettings
    all_namespaces: bool = False
    """`-A`: every namespace, not the connection's one."""
    selector: str = OPT_IN
    """`--selector`, as given: `key=value[,key=value]`."""
    mode: RefreshMode = RefreshMode.RESTART
    max_attempts: int = 3
    rollout_timeout: float = 600.0
    dry_run: bool = False
    insecure_registries: frozenset[str] = frozenset()
    """`--insecure-registry`: hosts that may be reached over plain HTTP."""
    verify_registry_tls: bool = True
    """False with `--registry-skip-tls-verify` (which is warned of)."""
    on_warning: Callable[[str], None] | None = None
    """Told a one-line warning (registries' certificates not verified), if given."""


class RefreshRun(Struct, frozen=True):
    """One tick's report, and the cluster it read (for the words about a failed read)."""

    report: TickReport
    cluster: Cluster


_EQUAL = (Operator.EQUALS, Operator.DOUBLE_EQUALS)


def selector_labels(request: RefreshRequest) -> dict[str, str]:
    """The labels `--selector` names; UsageError for a selector that is not
    `key=value[,key=value]`, or for `-n` together with `--all-namespaces`.

    The selector is read as the API server reads it (apimachinery labels.Parse), so one it
    would refuse is the flag's fault, in Parse's words. Of what Parse takes, only equal labels
    name what `kubectl label` sets to opt a workload in; a label named with two values
    selects nothing, and a selector that names none (empty or blank) selects everything.
    """
    if request.all_namespaces and request.connection.namespace:
        raise UsageError("-n and --all-namespaces cannot be used together")
    not_labels = f"--selector {request.selector!r} is not key=value[,key=value]"
    try:
        parsed = parse_selector(request.selector)
    except UsageError as refused:
        raise UsageError(not_labels, refused.why) from None
    labels: dict[str, str] = {}
    for requirement in parsed.requirements:
        if requirement.operator not in _EQUAL:
            raise UsageError(not_labels)
        (value,) = requirement.values  # Parse gives an equality exactly one value
        if labels.setdefault(requirement.key, value) != value:
            raise UsageError(not_labels)
    if not labels:
        # Parse takes an empty selector as "everything": every workload, none opted in.
        raise UsageError(not_labels, "it names no label, so it would select every workload")
    return labels


def run_refresh(
    request: RefreshRequest, progress: AbstractContextManager[Told | None] | None = None
) -> RefreshRun:
    """One tick over the opted-in workloads of the cluster `request` reaches. `progress` is
    entered once the cluster is reached, and what it gives (if anything) hears the tick's
    steps in plain words."""
    labels = selector_labels(request)
    if not request.verify_registry_tls and request.on_warning is not None:
        request.on_warning(
            "not verifying registries' TLS certificates (--registry-skip-tls-verify)"
        )
    connection = request.connection
    with LiveCluster.connect(connection) as cluster:
        settings = RefreshSettings(
            namespace=None if request.all_namespaces else cluster.namespace,
            selector=labels,
            mode=request.mode,
            max_attempts=request.max_attempts,
            rollout_timeout=request.rollout_timeout,
            dry_run=request.dry_run,
            registry=RegistryAccess(
                timeout=connection.request_timeout,
                insecure_registries=request.insecure_registries,
                verify_tls=request.verify_registry_tls,
            ),
        )
        with progress or nullcontext() as told:
            words = ProgressWords(told) if told is not None else None
            report = run_tick(cluster, settings, progress=words)
        login = Login(cluster.login, cluster.login_command, cluster.login_source)
        reached = Cluster(cluster.server, cluster.source, for_connection(connection), login)
    return RefreshRun(report, reached)
