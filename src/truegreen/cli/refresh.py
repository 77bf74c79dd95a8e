"""`truegreen refresh`: its options, and its body: the request built from them, one tick run by
truegreen.refresh.command, the report rendered."""

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from truegreen.cli.output import (
    emit_json,
    loaded,
    progress,
    reporting_errors,
    say,
    stopped_by,
    text_consoles,
    warn,
)
from truegreen.cli.parser import (
    InRange,
    allowed_registries,
    choice,
    command,
    common_output,
    connection,
    connection_options,
)

if TYPE_CHECKING:
    from truegreen.cluster.settings import ActAs
    from truegreen.console import Consoles
    from truegreen.failure import Failure
    from truegreen.kubectl import Kubectl
    from truegreen.refresh.tick import TickInterrupted


def _refresh_failure(failure: "Failure") -> object:
    from truegreen.refresh.render import failure_json

    return failure_json(failure)


def _refresh_arguments(parser: argparse.ArgumentParser) -> None:
    connection_options(parser)
    parser.add_argument("-A", "--all-namespaces", action="store_true", help="Every namespace.")
    parser.add_argument(
        "--selector",
        default="truegreen.io/refresh=enabled",
        help="Label selector (key=value[,key=value]) of the opted-in workloads.",
    )
    choice(
        parser,
        "--mode",
        choices=("restart", "pin"),
        help="restart: restart the workload so it pulls the tag again (needs imagePullPolicy "
        "Always); pin: set the image to tag@digest.",
    )
    parser.add_argument(
        "--max-attempts",
        type=InRange(int, 1, 1000),
        default=3,
        metavar="INTEGER RANGE",
        help="Restarts toward the same digests before refresh stops trying (the latch).",
    )
    parser.add_argument(
        "--rollout-timeout",
        type=InRange(float, 1.0, 86400.0),
        default=600.0,
        metavar="SECONDS",
        help="How long to wait for a restart to roll out before calling it failed.",
    )
    parser.add_argument("--dry-run", action="store_true", help="Print the plan; write nothing.")
    parser.add_argument(
        "--insecure-registry",
        action="append",
        default=[],
        metavar="HOST",
        help="Allow plain HTTP to this registry (loopback registries always may).",
    )
    parser.add_argument(
        "--registry-skip-tls-verify",
        action="store_true",
        help="Do not verify registries' TLS certificates (prints a warning).",
    )
    common_output(parser)


@command(_refresh_arguments)
@reporting_errors(_refresh_failure)
def refresh(
    kubeconfig: Path | None,
    context: str | None,
    namespace: str | None,
    request_timeout: float,
    insecure_skip_tls_verify: bool,
    act_as: "ActAs | None",
    all_namespaces: bool,
    selector: str,
    mode: str,
    max_attempts: int,
    rollout_timeout: float,
    dry_run: bool,
    insecure_registry: list[str],
    registry_skip_tls_verify: bool,
    output: str,
    verbose: bool,
    no_color: bool,
    debug: bool,
) -> None:
    """One image-refresh tick over the opted-in workloads.

    --request-timeout also bounds each registry look-up as a whole (login, redirects, retries).
    Exit 0 converged, restarted (by this tick or another) or deliberately held, 2 a rollout
    failed (or a pin dangles), 3 a read failed.
    """
    from truegreen.kubectl import for_connection
    from truegreen.refresh.command import RefreshRequest, run_refresh
    from truegreen.refresh.plan import RefreshMode
    from truegreen.refresh.render import to_json, to_text
    from truegreen.refresh.tick import TickInterrupted

    loaded()
    # Checked before the connection: a value that is no registry name is refused unsent.
    insecure_registries = allowed_registries(insecure_registry, "--insecure-registry")
    request = RefreshRequest(
        connection(
            kubeconfig, context, namespace, request_timeout, insecure_skip_tls_verify, act_as
        ),
        all_namespaces=all_namespaces,
        selector=selector,
        mode=RefreshMode(mode),
        max_attempts=max_attempts,
        rollout_timeout=rollout_timeout,
        dry_run=dry_run,
        insecure_registries=insecure_registries,
        verify_registry_tls=not registry_skip_tls_verify,
        on_warning=warn,
    )
    consoles = text_consoles(output, no_color)
    try:
        run = run_refresh(request, progress(consoles, no_color))
    except TickInterrupted as stopped:
        kubectl = for_connection(request.connection)
        _interrupted(stopped, consoles, kubectl, dry_run=dry_run, verbose=verbose)
    report = run.report
    if consoles is None:
        emit_json(to_json(report, dry_run=dry_run, cluster=run.cluster))
    else:
        lines = to_text(
            report,
            verbose=verbose,
            width=consoles.width,
            kubectl=run.cluster.kubectl,
            selector=selector,
            cluster=run.cluster,
        )
        for line in lines:
            consoles.out.print(line)
    sys.exit(report.exit_code)


def _interrupted(
    stopped: "TickInterrupted",
    consoles: "Consoles | None",
    kubectl: "Kubectl",
    *,
    dry_run: bool,
    verbose: bool,
) -> NoReturn:
    """End a tick a signal stopped after its workloads were read: what it did so far (a restart
    it wrote is never left unsaid), then the signal's line and exit code."""
    from truegreen.failure import Failure
    from truegreen.refresh.render import interrupted_json, to_text

    failure = Failure.interrupted(
        stopped_by(stopped.signal),
        "the tick finished",
        "run refresh again: it looks again at each workload marked interrupted",
    )
    say()  # past the ^C the terminal echoed
    if consoles is None:
        emit_json(interrupted_json(stopped.report, failure, dry_run=dry_run))
    else:
        lines = to_text(stopped.report, verbose=verbose, width=consoles.width, kubectl=kubectl)
        for line in lines:
            consoles.out.print(line)
    print(f"truegreen: {failure.line()}", file=sys.stderr)
    sys.exit(failure.exit_code)
