"""The command line: parse arguments, call one function per command, render, exit.

Nothing below this module prints or exits; expected errors arrive here as TruegreenError
and leave as one plain line on stderr.
"""

import contextlib
import gc
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from truegreen import __version__
from truegreen.exitcodes import ExitCode

if TYPE_CHECKING:
    from truegreen.console import Consoles

F = TypeVar("F", bound=Callable[..., Any])


FailureDocument = Callable[[int, str, str], object]
"""The JSON document of a run that failed before it had a result: (exit code, what happened,
what to do)."""


def _reporting_errors(failure_json: FailureDocument | None) -> Callable[[F], F]:
    """Turn expected errors into one line and their exit code; tracebacks only with --debug.
    With `-o json` and `failure_json`, stdout still gets one JSON document saying why."""

    def decorate(command: F) -> F:
        @wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            from truegreen.errors import TruegreenError

            debug = bool(kwargs.get("debug"))
            as_json = failure_json is not None and kwargs.get("output") == "json"
            try:
                return command(*args, **kwargs)
            except TruegreenError as error:
                if debug:
                    _print_traceback()
                if as_json and failure_json is not None:
                    what = f"{error.what}: {error.why}" if error.why else error.what
                    _emit_json(failure_json(int(error.exit_code), what, error.todo))
                click.echo(f"truegreen: {error.line()}", err=True)
                sys.exit(error.exit_code)
            except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
                raise
            except BrokenPipeError:
                _quiet_after_broken_pipe()  # the reader went away (`| head -1`)
            except Exception as error:  # noqa: BLE001 - a bug still exits 1 with one line
                if debug:
                    _print_traceback()
                what = f"internal error ({type(error).__name__}); this is a bug in truegreen"
                todo = "Run again with --debug and report the traceback."
                if as_json and failure_json is not None:
                    _emit_json(failure_json(int(ExitCode.BROKEN), what, todo))
                click.echo(f"truegreen: {what}. {todo}", err=True)
                sys.exit(ExitCode.BROKEN)

        return wrapper  # type: ignore[return-value]

    return decorate


_report_errors = _reporting_errors(None)


def _common_output(command: F) -> F:
    for option in reversed(
        [
            click.option(
                "-o",
                "--output",
                type=click.Choice(["text", "json"]),
                default="text",
                show_default=True,
                help="Text for people, JSON (alone on stdout) for machines.",
            ),
            click.option("-v", "--verbose", is_flag=True, help="Show Kubernetes details."),
            click.option("--no-color", is_flag=True, help="No colour (NO_COLOR is honoured too)."),
            click.option("--debug", is_flag=True, help="Show tracebacks for errors."),
        ]
    ):
        command = option(command)
    return command


def _connection_options(command: F) -> F:
    for option in reversed(
        [
            click.option(
                "--kubeconfig",
                type=click.Path(path_type=Path, dir_okay=False),
                help="Kubeconfig (default: $KUBECONFIG, then ~/.kube/config, then in-cluster).",
            ),
            click.option("--context", help="Kubeconfig context (default: the current one)."),
            click.option(
                "-n",
                "--namespace",
                help="Namespace (default: the context's namespace, else 'default').",
            ),
            click.option(
                "--request-timeout",
                type=click.FloatRange(min=0.1),
                default=10.0,
                show_default=True,
                help="Seconds for each API request, from connecting to the last byte of the "
                "answer; doctor and snapshot also stop reading after 30 times this in all.",
            ),
            click.option(
                "--insecure-skip-tls-verify",
                is_flag=True,
                help="Do not verify the cluster's TLS certificate (prints a warning).",
            ),
        ]
    ):
        command = option(command)
    return command


class _Group(click.Group):
    """A click group whose usage errors are one line and a pointer to --help, exit 64
    (EX_USAGE) instead of click's three lines and 2."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            try:
                return super().main(*args, **kwargs)
            finally:
                sys.stdout.flush()  # a closed pipe surfaces here, not at interpreter exit
        except BrokenPipeError:
            _quiet_after_broken_pipe()
        except SystemExit as done:
            if isinstance(done.__context__, BrokenPipeError):  # rich's own exit on a closed pipe
                _quiet_after_broken_pipe()
            raise
        except click.exceptions.UsageError as error:
            _show_usage_error(error)
            argv = kwargs.get("args") or (args[0] if args else None) or sys.argv[1:]
            _usage_error_json(error, list(argv))
            sys.exit(ExitCode.USAGE)
        except click.exceptions.Abort:
            click.echo("truegreen: aborted", err=True)
            sys.exit(ExitCode.BROKEN)
        except click.exceptions.Exit as done:
            sys.exit(done.exit_code)
        except click.ClickException as error:
            click.echo(f"truegreen: {_one_line(error.format_message())}", err=True)
            sys.exit(ExitCode.USAGE)


def _show_usage_error(error: click.exceptions.UsageError) -> None:
    """One line saying what is wrong, then where to look: not click's usage block."""
    path = error.ctx.command_path if error.ctx is not None else "truegreen"
    click.echo(f"truegreen: {_one_line(error.format_message())}", err=True)
    click.echo(f"Try '{path} --help'.", err=True)


def _usage_error_json(error: click.exceptions.UsageError, argv: list[str]) -> None:
    """A bad flag on a run that asked for JSON still gets its one JSON document (exit 64)."""
    command = error.ctx.command.name if error.ctx is not None else None
    failure = {"doctor": _doctor_failure, "refresh": _refresh_failure}.get(command or "")
    pairs = zip(argv, [*argv[1:], ""], strict=True)
    asked = any(
        word in ("-ojson", "--output=json") or (word in ("-o", "--output") and value == "json")
        for word, value in pairs
    )
    if failure is not None and asked:
        todo = f"See `truegreen {command} --help`."
        _emit_json(failure(ExitCode.USAGE, _one_line(error.format_message()), todo))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _quiet_after_broken_pipe() -> None:
    """End as a tool killed by SIGPIPE does: no message, exit 128 + 13. stdout now points at
    /dev/null so that Python's own flush at exit cannot complain about the closed pipe."""
    import os
    import signal

    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(128 + signal.SIGPIPE)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="truegreen")
def main() -> None:
    """Tell the truth about a Kubernetes training environment.

    Exit codes: 0 measured good, 2 measured failure, 3 could not check, 1 truegreen broke,
    64 bad usage.
    """


def _loaded() -> None:
    """The command's modules are in: the cyclic garbage collector goes back on if
    truegreen.start turned it off while they loaded (in-process callers never do)."""
    if not gc.isenabled():
        gc.freeze()  # what start-up built lives for the whole run: never walk it again
        gc.enable()


def _emit_json(document: object) -> None:
    import json

    click.echo(json.dumps(document, indent=2, ensure_ascii=False))


def _print_traceback() -> None:
    import traceback  # only with --debug: it pulls in linecache and tokenize

    traceback.print_exc()


def _text_consoles(output: str, no_color: bool) -> "Consoles | None":
    """The consoles for text output; None for JSON and SARIF, which never load rich."""
    if output != "text":
        return None
    from truegreen.console import make_consoles

    return make_consoles(no_color)


def _progress(
    consoles: "Consoles | None", no_color: bool
) -> contextlib.AbstractContextManager[Callable[[str], None] | None]:
    """A progress line on stderr when one is wanted there (text output, a person watching a
    terminal); else nothing to call (None)."""
    if consoles is None:
        return contextlib.nullcontext(None)
    from truegreen.console import progress_line, progress_wanted

    return progress_line(consoles.err if progress_wanted(no_color) else None)


def _doctor_failure(exit_code: int, what: str, todo: str) -> object:
    from truegreen.doctor.render import failure_json

    return failure_json(exit_code, what, todo)


def _refresh_failure(exit_code: int, what: str, todo: str) -> object:
    from truegreen.refresh.render import failure_json

    return failure_json(exit_code, what, todo)


def _connection(
    kubeconfig: Path | None,
    context: str | None,
    namespace: str | None,
    request_timeout: float,
    insecure_skip_tls_verify: bool,
) -> Any:
    from truegreen.cluster.settings import ConnectionSettings

    def warn(line: str) -> None:
        # The flag and the kubeconfig's insecure-skip-tls-verify both end up here, once.
        click.echo(f"truegreen: warning: {line}", err=True)

    return ConnectionSettings(
        kubeconfig, context, namespace, request_timeout, insecure_skip_tls_verify, warn
    )


@main.command()
@_connection_options
@click.option(
    "--snapshot",
    type=click.Path(path_type=Path),
    help="Check a saved snapshot (an archive or a folder) instead of the live cluster.",
)
@click.option(
    "--job-requests",
    metavar="cpu=4,memory=16Gi,nvidia.com/gpu=1",
    help="One training job pod's requests (default: the newest training job's template).",
)
@click.option(
    "--credentials-secret",
    metavar="NAME:KEY1,KEY2",
    help="The backend credentials and the keys they must hold.",
)
@click.option(
    "--config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="YAML file with the same settings (flags win).",
)
@click.option(
    "--admission-dry-run",
    is_flag=True,
    help="Also ask the cluster to admit the training job's pod as a dry run (stores nothing; "
    "needs create on pods).",
)
@click.option(
    "--watch",
    is_flag=True,
    help="Keep the report on screen, redrawn when the cluster changes (Ctrl-C ends it and "
    "exits with the last verdict's code).",
)
@_common_output
@_reporting_errors(_doctor_failure)
def doctor(
    kubeconfig: Path | None,
    context: str | None,
    namespace: str | None,
    request_timeout: float,
    insecure_skip_tls_verify: bool,
    snapshot: Path | None,
    job_requests: str | None,
    credentials_secret: str | None,
    config: Path | None,
    admission_dry_run: bool,
    watch: bool,
    output: str,
    verbose: bool,
    no_color: bool,
    debug: bool,
) -> None:
    """Can this environment run training right now? One headline, a remedy, then the rest.

    Exit 0 ready (warnings allowed), 2 not ready, 3 could not check.
    """
    from truegreen.doctor.command import DoctorRequest, run_doctor
    from truegreen.doctor.render import to_json, to_text

    _loaded()
    request = DoctorRequest(
        _connection(kubeconfig, context, namespace, request_timeout, insecure_skip_tls_verify),
        snapshot,
        job_requests,
        credentials_secret,
        config,
        admission_dry_run,
    )
    if watch:
        if output == "json":
            from truegreen.errors import UsageError

            raise UsageError("--watch draws on the terminal", "", "drop --output json")
        sys.exit(_watch_doctor(request, verbose=verbose, no_color=no_color))
    consoles = _text_consoles(output, no_color)
    with _progress(consoles, no_color) as told:
        report = run_doctor(request, told)
    if consoles is None:
        _emit_json(to_json(report))
    else:
        for line in to_text(report, verbose=verbose, width=consoles.width):
            consoles.out.print(line)
    sys.exit(report.exit_code)


@main.command()
@_connection_options
@click.option(
    "--archive",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the bundle to this new .tar.gz file "
    "(default: truegreen-snapshot-NAMESPACE-TIME.tar.gz in the current folder).",
)
@click.option(
    "--output-directory",
    type=click.Path(path_type=Path, file_okay=False),
    help="Write a folder instead of an archive (a new or empty folder).",
)
@click.option(
    "--job-requests",
    metavar="cpu=4,memory=16Gi,nvidia.com/gpu=1",
    help="Saved with the snapshot; doctor uses it offline.",
)
@click.option(
    "--credentials-secret", metavar="NAME:KEY1,KEY2", help="Also save this read (names only)."
)
@click.option("--config", type=click.Path(path_type=Path, dir_okay=False), help="doctor's config.")
@_common_output
@_report_errors
def snapshot(
    kubeconfig: Path | None,
    context: str | None,
    namespace: str | None,
    request_timeout: float,
    insecure_skip_tls_verify: bool,
    archive: Path | None,
    output_directory: Path | None,
    job_requests: str | None,
    credentials_secret: str | None,
    config: Path | None,
    output: str,
    verbose: bool,
    no_color: bool,
    debug: bool,
) -> None:
    """Save a support bundle: every read doctor makes (failed reads too), the namespace's
    newest events and the last lines of failing containers' logs, redacted by policy
    (docs/snapshot.md). Check it offline with `truegreen doctor --snapshot FILE`.

    Exit 0 saved, 3 saved but some reads could not be made.
    """
    from truegreen.doctor.command import DoctorRequest, SnapshotTarget, take_snapshot
    from truegreen.doctor.snapshot_report import exit_code, failure_json, to_json, to_text
    from truegreen.errors import TruegreenError, UsageError

    _loaded()
    try:
        if archive is not None and output_directory is not None:
            raise UsageError(
                "--archive and --output-directory cannot be used together",
                todo="choose one",
            )
        request = DoctorRequest(
            _connection(kubeconfig, context, namespace, request_timeout, insecure_skip_tls_verify),
            job_requests=job_requests,
            credentials_secret=credentials_secret,
            config=config,
        )
        target = SnapshotTarget(output_directory or archive, folder=output_directory is not None)
        consoles = _text_consoles(output, no_color)
        with _progress(consoles, no_color) as told:
            summary = take_snapshot(request, target, told)
    except TruegreenError as error:
        if output == "json":  # one document on stdout, whatever happened
            _emit_json(failure_json(error))
        raise
    if consoles is None:
        _emit_json(to_json(summary))
    else:
        for line in to_text(summary, verbose=verbose):
            consoles.out.print(line, markup=False, highlight=False)
    sys.exit(exit_code(summary))


def _print_rules(
    explain: str | None, output: str, consoles: "Consoles | None", width: int | None
) -> None:
    """lint's --list-rules and --explain RULE, from the one rule table."""
    from truegreen.errors import UsageError
    from truegreen.lint import reports
    from truegreen.lint.rules import ALL_RULES, ALL_RULES_BY_ID

    if output == "sarif":
        raise UsageError("--list-rules and --explain print text or JSON", todo="use -o json")
    if explain is not None and explain not in ALL_RULES_BY_ID:
        known = ", ".join(ALL_RULES_BY_ID)
        raise UsageError(f"no rule {explain!r}", todo=f"known rules are {known}")
    if output == "json":
        if explain is None:
            _emit_json([reports.rule_json(rule) for rule in ALL_RULES])
        else:
            _emit_json(reports.rule_json(ALL_RULES_BY_ID[explain]))
        return
    text = (
        reports.rules_table(width)
        if explain is None
        else reports.rule_explained(ALL_RULES_BY_ID[explain], width)
    )
    assert consoles is not None  # text output has its consoles
    for line in text:
        consoles.out.print(line, markup=False)


@main.command()
@click.argument("paths", nargs=-1)
@click.option(
    "--config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="YAML with rules to ignore per namespace or name pattern.",
)
@click.option(
    "-o",
    "--output",
    type=click.Choice(["text", "json", "sarif"]),
    default="text",
    show_default=True,
    help="Text for people, JSON or SARIF 2.1.0 for machines.",
)
@click.option(
    "--allow-empty",
    is_flag=True,
    help="Exit 0, not 3, when the paths hold no Kubernetes object (for hooks on any YAML).",
)
@click.option(
    "--max-file-size",
    type=click.IntRange(min=1),
    default=16,
    show_default=True,
    metavar="MIB",
    help="Refuse a larger file (a finding) or stdin (bad usage), in MiB.",
)
@click.option("--list-rules", is_flag=True, help="Print every rule: id, severity, summary.")
@click.option("--explain", metavar="RULE", help="Print one rule's reason and fix.")
@click.option("--no-color", is_flag=True, help="No colour (NO_COLOR is honoured too).")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@_report_errors
def lint(
    paths: tuple[str, ...],
    config: Path | None,
    output: str,
    allow_empty: bool,
    max_file_size: int,
    list_rules: bool,
    explain: str | None,
    no_color: bool,
    debug: bool,
) -> None:
    """Refuse health probes that lie or that kill long-running work.

    PATHS are files or folders (*.yaml, *.yml, *.json, searched recursively); `-` reads stdin,
    so `helm template CHART | truegreen lint -` works. Exit 2 when any finding is an error,
    3 when no Kubernetes object was found (unless --allow-empty).
    """
    from truegreen.errors import UsageError
    from truegreen.lint import reports
    from truegreen.lint.run import lint as run_lint
    from truegreen.yamlsafe import MIB, Limits

    _loaded()

    consoles = _text_consoles(output, no_color)
    width = consoles.out.width if consoles is not None and consoles.out.is_terminal else None
    if list_rules or explain is not None:
        _print_rules(explain, output, consoles, width)
        return
    if not paths and sys.stdin.isatty():
        raise UsageError(
            "nothing to lint",
            "no path was given and stdin is a terminal",
            "pass files, folders or -",
        )
    result = run_lint(
        list(paths),
        config,
        limits=Limits(max_bytes=max_file_size * MIB),
        stdin=sys.stdin.buffer,
        allow_empty=allow_empty,
    )
    if output == "json":
        _emit_json(reports.to_json(result))
    elif consoles is None:
        _emit_json(reports.to_sarif(result))
    else:
        for line in reports.to_text(result, width):
            consoles.out.print(line)
    sys.exit(result.exit_code)


@main.command()
@_connection_options
@click.option("-A", "--all-namespaces", is_flag=True, help="Every namespace.")
@click.option(
    "--selector",
    default="truegreen.io/refresh=enabled",
    show_default=True,
    help="Label selector (key=value[,key=value]) of the opted-in workloads.",
)
@click.option(
    "--mode",
    type=click.Choice(["restart", "pin"]),
    default="restart",
    show_default=True,
    help="restart: restart the workload so it pulls the tag again (needs imagePullPolicy "
    "Always); pin: set the image to tag@digest.",
)
@click.option(
    "--max-attempts",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Restarts toward the same digests before refresh stops trying (the latch).",
)
@click.option(
    "--rollout-timeout",
    type=click.FloatRange(min=1),
    default=600.0,
    show_default=True,
    metavar="SECONDS",
    help="How long to wait for a restart to roll out before calling it failed.",
)
@click.option("--dry-run", is_flag=True, help="Print the plan; write nothing.")
@click.option(
    "--insecure-registry",
    multiple=True,
    metavar="HOST",
    help="Allow plain HTTP to this registry (loopback registries always may).",
)
@click.option(
    "--registry-skip-tls-verify",
    is_flag=True,
    help="Do not verify registries' TLS certificates (prints a warning).",
)
@_common_output
@_reporting_errors(_refresh_failure)
def refresh(
    kubeconfig: Path | None,
    context: str | None,
    namespace: str | None,
    request_timeout: float,
    insecure_skip_tls_verify: bool,
    all_namespaces: bool,
    selector: str,
    mode: str,
    max_attempts: int,
    rollout_timeout: float,
    dry_run: bool,
    insecure_registry: tuple[str, ...],
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
    from truegreen.cluster.live import LiveCluster
    from truegreen.errors import UsageError
    from truegreen.kubectl import for_connection
    from truegreen.refresh.plan import RefreshMode
    from truegreen.refresh.registry import RegistryAccess
    from truegreen.refresh.render import ProgressWords, to_json, to_text
    from truegreen.refresh.tick import RefreshSettings, run_tick

    _loaded()

    if all_namespaces and namespace:
        raise UsageError("-n and --all-namespaces cannot be used together")
    labels = {}
    for term in filter(None, (t.strip() for t in selector.split(","))):
        key, sep, value = term.partition("=")
        if not sep or not key or "!" in key:
            raise UsageError(f"--selector {selector!r} is not key=value[,key=value]")
        labels[key.strip()] = value.strip()
    if registry_skip_tls_verify:
        click.echo(
            "truegreen: warning: not verifying registries' TLS certificates "
            "(--registry-skip-tls-verify)",
            err=True,
        )
    connection = _connection(
        kubeconfig, context, namespace, request_timeout, insecure_skip_tls_verify
    )
    with LiveCluster.connect(connection) as cluster:
        settings = RefreshSettings(
            namespace=None if all_namespaces else cluster.namespace,
            selector=labels,
            mode=RefreshMode(mode),
            max_attempts=max_attempts,
            rollout_timeout=rollout_timeout,
            dry_run=dry_run,
            registry=RegistryAccess(
                timeout=request_timeout,
                insecure_registries=frozenset(insecure_registry),
                verify_tls=not registry_skip_tls_verify,
            ),
        )
        consoles = _text_consoles(output, no_color)
        with _progress(consoles, no_color) as told:
            progress = ProgressWords(told) if told is not None else None
            report = run_tick(cluster, settings, progress=progress)
    if consoles is None:
        _emit_json(to_json(report, dry_run=dry_run))
    else:
        kubectl = for_connection(connection)
        lines = to_text(
            report, verbose=verbose, width=consoles.width, kubectl=kubectl, selector=selector
        )
        for line in lines:
            consoles.out.print(line)
    sys.exit(report.exit_code)


def _watch_doctor(request: Any, *, verbose: bool, no_color: bool) -> int:
    """`doctor --watch`: the monitor's engine, its report redrawn in place; the exit code of
    the last verdict when Ctrl-C ends it (3 if no evaluation finished)."""
    from datetime import datetime

    from rich.console import Group
    from rich.live import Live
    from rich.text import Text

    from truegreen.console import make_consoles
    from truegreen.doctor.render import to_text
    from truegreen.monitor.command import MonitorRequest, RunningMonitor
    from truegreen.monitor.engine import Evaluation

    consoles = make_consoles(no_color)
    shown: list[Evaluation] = []
    live = Live(console=consoles.out, auto_refresh=False, redirect_stderr=False)

    def draw(evaluation: Evaluation, previous: Evaluation | None) -> None:
        shown[:] = [evaluation]
        changed = evaluation.changed_at.astimezone().strftime("%H:%M:%S")
        checked = datetime.now().astimezone().strftime("%H:%M:%S")
        report_lines = to_text(evaluation.report, verbose=verbose, width=consoles.width)
        lines = [Text.from_markup(line) for line in report_lines]
        footer = f"Last change {changed}; checked {checked}. Ctrl-C to stop."
        live.update(Group(*lines, Text(""), Text(footer, style="dim")), refresh=True)

    watching = MonitorRequest(request, listen=None, min_interval=2.0, events=False)
    with (
        RunningMonitor(watching, on_evaluation=draw, on_event=lambda _: None) as running,
        live,
        contextlib.suppress(KeyboardInterrupt),
    ):
        _stop_on_signals(running.stop)
        running.run()
    return int(shown[-1].report.exit_code) if shown else 3


def _stop_on_signals(stop: Callable[[], None]) -> None:
    """Ctrl-C and SIGTERM end the loop once the evaluation under way is drawn; a second Ctrl-C
    does not wait for it."""
    import signal

    def first(signum: int, frame: object) -> None:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        stop()

    signal.signal(signal.SIGINT, first)
    signal.signal(signal.SIGTERM, first)


@main.command()
@_connection_options
@click.option(
    "--job-requests",
    metavar="cpu=4,memory=16Gi,nvidia.com/gpu=1",
    help="One training job pod's requests (default: the newest training job's template).",
)
@click.option(
    "--credentials-secret",
    metavar="NAME:KEY1,KEY2",
    help="The backend credentials and the keys they must hold.",
)
@click.option("--config", type=click.Path(path_type=Path, dir_okay=False), help="doctor's config.")
@click.option(
    "--listen",
    default=":9108",
    show_default=True,
    metavar="[HOST]:PORT",
    help="Where to serve /metrics, /healthz, /readyz and the status page.",
)
@click.option(
    "--interval",
    type=click.FloatRange(min=1),
    default=60.0,
    show_default=True,
    help="Seconds between evaluations when nothing changes.",
)
@click.option(
    "--min-interval",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    help="Seconds at least between two evaluations, however often the cluster changes.",
)
@click.option(
    "--max-age",
    type=click.FloatRange(min=1),
    default=180.0,
    show_default=True,
    help="Seconds a read or a verdict may go unconfirmed by the cluster before it reads "
    "'could not check'.",
)
@click.option(
    "--watch-timeout",
    type=click.FloatRange(min=1),
    default=300.0,
    show_default=True,
    help="Each watch is renewed after this many seconds (up to twice it, at random).",
)
@click.option("--no-events", is_flag=True, help="Write no Event when the verdict changes.")
@click.option("--no-color", is_flag=True, help="No colour (NO_COLOR is honoured too).")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@_report_errors
def monitor(
    kubeconfig: Path | None,
    context: str | None,
    namespace: str | None,
    request_timeout: float,
    insecure_skip_tls_verify: bool,
    job_requests: str | None,
    credentials_secret: str | None,
    config: Path | None,
    listen: str,
    interval: float,
    min_interval: float,
    max_age: float,
    watch_timeout: float,
    no_events: bool,
    no_color: bool,
    debug: bool,
) -> None:
    """doctor kept current: watches the namespace, serves Prometheus metrics and a status page.

    Re-evaluates on a change (at most every --min-interval) and at least every --interval;
    writes an Event on the namespace when the verdict changes. Runs until stopped (exit 0).
    """
    from truegreen.console import make_consoles
    from truegreen.doctor.command import DoctorRequest
    from truegreen.monitor.command import EventOutcome, MonitorRequest, RunningMonitor
    from truegreen.monitor.engine import Evaluation

    _loaded()
    err = make_consoles(no_color).err
    request = MonitorRequest(
        DoctorRequest(
            _connection(kubeconfig, context, namespace, request_timeout, insecure_skip_tls_verify),
            job_requests=job_requests,
            credentials_secret=credentials_secret,
            config=config,
        ),
        listen=listen,
        interval=interval,
        min_interval=min_interval,
        max_age=max_age,
        watch_timeout=watch_timeout,
        events=not no_events,
    )

    def evaluated(evaluation: Evaluation, previous: Evaluation | None) -> None:
        if previous is None or previous.changed_at != evaluation.changed_at:
            report = evaluation.report
            err.print(
                f"truegreen: {evaluation.at:%Y-%m-%dT%H:%M:%SZ} {report.verdict.value}: "
                f"{report.headline.text}",
                markup=False,
                highlight=False,
            )

    def event(outcome: EventOutcome) -> None:
        if outcome.failure is not None:
            err.print(
                f"truegreen: warning: could not write the {outcome.reason} Event "
                f"({outcome.failure.reason})",
                markup=False,
            )

    with RunningMonitor(request, on_evaluation=evaluated, on_event=event) as running:
        host, port = running.address or ("", 0)
        err.print(
            f"truegreen: watching namespace '{running.monitor.namespace}'; "
            f"metrics and status on http://{host}:{port}/",
            markup=False,
        )
        _stop_on_signals(running.stop)
        with contextlib.suppress(KeyboardInterrupt):  # a second Ctrl-C
            running.run()
