"""`truegreen doctor`: its options, and its body: the request built from them, doctor run once,
over many namespaces, over many clusters, or kept on screen with --watch, and the report
rendered."""

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from truegreen.cli.output import (
    emit_json,
    loaded,
    progress,
    raised_for,
    reporting_errors,
    stop_on_signals,
    text_consoles,
)
from truegreen.cli.parser import (
    FILE,
    PathArgument,
    allowed_registries,
    command,
    common_output,
    connection,
    connection_options,
    trial_options,
)

if TYPE_CHECKING:
    from truegreen.cluster.context_selection import ContextSelection
    from truegreen.cluster.namespace_selection import NamespaceSelection
    from truegreen.cluster.settings import ActAs
    from truegreen.console import Consoles
    from truegreen.doctor.command.request import DoctorRequest
    from truegreen.failure import Failure


def _doctor_failure(failure: "Failure") -> object:
    from truegreen.doctor.present.report import failure_json

    return failure_json(failure)


def _doctor_arguments(parser: argparse.ArgumentParser) -> None:
    connection_options(parser)
    parser.add_argument(
        "--snapshot",
        type=PathArgument(),
        metavar="PATH",
        help="Check a saved snapshot (an archive or a folder) instead of the live cluster.",
    )
    parser.add_argument(
        "--job-requests",
        metavar="cpu=4,memory=16Gi,nvidia.com/gpu=1",
        help="One training job pod's requests (default: the newest training job's template).",
    )
    parser.add_argument(
        "--job-file",
        type=FILE,
        metavar="FILE",
        help="Check this training job's manifest (or - for standard input) before it is "
        "submitted, instead of the newest training job.",
    )
    parser.add_argument(
        "--credentials-secret",
        metavar="NAME:KEY1,KEY2",
        help="The backend credentials and the keys they must hold.",
    )
    parser.add_argument(
        "--config",
        type=FILE,
        metavar="FILE",
        help="YAML file with the same settings (flags win).",
    )
    parser.add_argument(
        "--admission-dry-run",
        action="store_true",
        help="Also ask the cluster to admit the training job's pod as a dry run (stores "
        "nothing; needs create on pods).",
    )
    trial_options(parser)
    parser.add_argument(
        "--no-registry",
        action="store_true",
        help="Do not ask the registries whether the images are there (they are asked with "
        "the pods' own logins; a snapshot's recorded answers are used offline).",
    )
    parser.add_argument(
        "--registry-allow",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="A registry this computer may ask on its own address (localhost, 127.0.0.1) or "
        "without encryption; repeat for more. Unnamed, such a registry is not asked.",
    )
    parser.add_argument(
        "--watch",
        action="store_true",
        help="Keep the report on screen, redrawn when the cluster changes (Ctrl-C ends it and "
        "exits with the last verdict's code).",
    )
    from truegreen.cluster.context_selection import add_context_flags
    from truegreen.cluster.namespace_selection import add_selection_flags

    add_selection_flags(parser)
    add_context_flags(parser)
    common_output(parser)


@command(_doctor_arguments)
@reporting_errors(_doctor_failure)
def doctor(
    kubeconfig: Path | None,
    context: str | None,
    namespace: str | None,
    request_timeout: float,
    insecure_skip_tls_verify: bool,
    act_as: "ActAs | None",
    snapshot: Path | None,
    job_requests: str | None,
    job_file: Path | None,
    credentials_secret: str | None,
    config: Path | None,
    admission_dry_run: bool,
    no_registry: bool,
    registry_allow: list[str],
    trial: bool,
    trial_timeout: float,
    watch: bool,
    namespaces: str | None,
    all_namespaces: bool,
    namespace_selector: str | None,
    contexts: str | None,
    all_contexts: bool,
    output: str,
    verbose: bool,
    no_color: bool,
    debug: bool,
) -> None:
    """Can this environment run training right now? One headline, a remedy, then the rest.

    Exit 0 ready (warnings allowed), 2 not ready, 3 could not check. With --namespaces, -A or
    --namespace-selector: one line per namespace, the worst first, and the worst exit code;
    with --contexts or --all-contexts, of every cluster too.
    """
    from truegreen.cluster.context_selection import contexts_from_flags
    from truegreen.cluster.namespace_selection import selection_from_flags
    from truegreen.doctor.command.request import DoctorRequest, run_doctor
    from truegreen.doctor.present.report import to_json, to_text

    loaded()
    selection = selection_from_flags(namespace, namespaces, all_namespaces, namespace_selector)
    clusters = contexts_from_flags(context, contexts, all_contexts)
    request = DoctorRequest(
        connection(
            kubeconfig, context, namespace, request_timeout, insecure_skip_tls_verify, act_as
        ),
        snapshot,
        job_requests,
        credentials_secret,
        config,
        admission_dry_run,
        job_file,
        no_registry,
        allowed_registries(registry_allow),
        trial,
        trial_timeout,
    )
    if watch:
        if output == "json":
            from truegreen.errors import UsageError

            raise UsageError("--watch draws on the terminal", "", "drop --output json")
        if selection.many or clusters.many:
            from truegreen.errors import UsageError

            # The clusters first: one namespace may be named already, in each of them.
            many = clusters if clusters.many else selection
            raise UsageError(
                f"--watch follows one {many.noun}; {many.flag()} names many",
                todo=f"drop --watch, or name one {many.noun} with {many.one_flag}",
            )
        _once_only(trial=trial, admission_dry_run=admission_dry_run)
        sys.exit(_watch_doctor(request, verbose=verbose, no_color=no_color))
    consoles = text_consoles(output, no_color)
    if clusters.many:
        sys.exit(_doctor_clusters(request, selection, clusters, consoles, verbose))
    if selection.many:
        sys.exit(_doctor_fleet(request, selection, consoles, verbose, no_color))
    with progress(consoles, no_color) as told:
        report = run_doctor(request, told)
    if consoles is None:
        emit_json(to_json(report))
    else:
        for line in to_text(report, verbose=verbose, width=consoles.width):
            consoles.out.print(line)
    sys.exit(report.exit_code)


def _once_only(*, trial: bool, admission_dry_run: bool) -> None:
    """--watch evaluates again and again over its watch cache and starts nothing: the trial's
    pods and the admission dry run's create are made by a single run, never by a watch."""
    from truegreen.errors import UsageError

    for flag, asked in (("--trial", trial), ("--admission-dry-run", admission_dry_run)):
        if asked:
            raise UsageError(
                f"{flag} runs once; --watch checks again and again",
                todo=f"drop --watch, or drop {flag}",
            )


def _doctor_fleet(
    request: "DoctorRequest",
    selection: "NamespaceSelection",
    consoles: "Consoles | None",
    verbose: bool,
    no_color: bool,
) -> int:
    """doctor over many namespaces: the fleet's table or document; its exit code."""
    from truegreen.doctor.command.request import run_fleet
    from truegreen.doctor.present.fleet import fleet_json, fleet_text

    with progress(consoles, no_color) as told:
        fleet = run_fleet(request, selection, told)
    if consoles is None:
        emit_json(fleet_json(fleet))
    else:
        for line in fleet_text(fleet, verbose=verbose, width=consoles.width):
            consoles.out.print(line)
    return int(fleet.exit_code)


def _doctor_clusters(
    request: "DoctorRequest",
    selection: "NamespaceSelection",
    clusters: "ContextSelection",
    consoles: "Consoles | None",
    verbose: bool,
) -> int:
    """doctor over many clusters: the table with a cluster column, or the document."""
    from truegreen.doctor.command.request import run_clusters
    from truegreen.doctor.present.fleet import clusters_json, clusters_text

    run = run_clusters(request, selection, clusters)
    if consoles is None:
        emit_json(clusters_json(run))
    else:
        for line in clusters_text(run, verbose=verbose, width=consoles.width):
            consoles.out.print(line)
    return int(run.exit_code)


def _watch_doctor(request: "DoctorRequest", *, verbose: bool, no_color: bool) -> int:
    """`doctor --watch`: the monitor's engine, its report redrawn in place; the exit code of
    the last verdict when Ctrl-C, SIGTERM or SIGHUP ends it. Ended before any verdict was
    drawn, the run had no result: it ends as every command a signal stopped then (130, 143,
    129)."""
    from datetime import datetime

    from rich.console import Console, Group
    from rich.live import Live
    from rich.text import Text

    from truegreen.console import make_consoles, plain_wanted
    from truegreen.doctor.present.report import to_text
    from truegreen.markup import spans
    from truegreen.monitor.command import MonitorRequest, RunningMonitor
    from truegreen.monitor.engine import Evaluation

    consoles = make_consoles(no_color)
    shown: list[Evaluation] = []
    printed: list[str] = []  # off a terminal: the report last printed
    # rich redraws the report in place; the lines are truegreen's markup, made rich Text span
    # by span, so that rich never reads markup or emoji codes in the cluster's words
    system: Literal["auto"] | None = None if plain_wanted(no_color) else "auto"
    drawn = Console(file=sys.stdout, color_system=system, highlight=False, soft_wrap=True)
    live = Live(console=drawn, auto_refresh=False, redirect_stderr=False)
    # The terminal itself, not rich's guess (FORCE_COLOR makes rich take a pipe for one).
    on_screen = sys.stdout.isatty()

    def text_of(line: str) -> Text:
        text = Text()
        for words, part in spans(line):
            text.append(part, style=" ".join(words) or None)
        return text

    def draw(evaluation: Evaluation, previous: Evaluation | None) -> None:
        shown[:] = [evaluation]
        changed = evaluation.changed_at.astimezone().strftime("%H:%M:%S")
        checked = datetime.now().astimezone().strftime("%H:%M:%S")
        report_lines = to_text(evaluation.report, verbose=verbose, width=consoles.width)
        lines = [text_of(line) for line in report_lines]
        footer = f"Last change {changed}; checked {checked}. Ctrl-C to stop."
        if not on_screen:
            # Nothing to redraw in place on a pipe or a file: each new report in whole lines,
            # as doctor prints it there (a live display would crop them to its width), once.
            if report_lines != printed:
                printed[:] = report_lines
                for line in [*report_lines, "", footer, ""]:
                    consoles.out.print(line)
            return
        live.update(Group(*lines, Text(""), Text(footer, style="dim")), refresh=True)

    watching = MonitorRequest(request, listen=None, min_interval=2.0, events=False)
    shown_live = live if on_screen else contextlib.nullcontext()
    with (
        RunningMonitor(watching, on_evaluation=draw, on_event=lambda _: None) as running,
        shown_live,
    ):
        # A Ctrl-C until here is the KeyboardInterrupt of a run with no result yet.
        stopped_by = stop_on_signals(running.stop)
        with contextlib.suppress(KeyboardInterrupt):  # a second Ctrl-C
            running.run()
    if shown:
        return int(shown[-1].report.exit_code)
    # run() returns only once stopped: by the signal stopped_by names, or a second Ctrl-C
    raise raised_for(stopped_by())
