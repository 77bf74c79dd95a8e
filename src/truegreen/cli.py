"""The command line: parse arguments, call one function per command, render, exit.

Nothing below this module prints or exits; expected errors arrive here as TruegreenError
and leave as one plain line on stderr.
"""

import sys
from collections.abc import Callable, Iterable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from truegreen import __version__
from truegreen.exitcodes import ExitCode

if TYPE_CHECKING:
    from truegreen.console import Consoles

F = TypeVar("F", bound=Callable[..., Any])


def _print_traceback() -> None:
    import traceback  # only with --debug: it pulls in linecache and tokenize

    traceback.print_exc()


def _report_errors(command: F) -> F:
    """Turn expected errors into one line and their exit code; tracebacks only with --debug."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from truegreen.errors import TruegreenError

        debug = bool(kwargs.get("debug"))
        try:
            return command(*args, **kwargs)
        except TruegreenError as error:
            if debug:
                _print_traceback()
            click.echo(f"truegreen: {error.line()}", err=True)
            sys.exit(error.exit_code)
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except Exception as error:  # noqa: BLE001 - a bug still exits 1 with one line
            if debug:
                _print_traceback()
            click.echo(
                f"truegreen: internal error ({type(error).__name__}); this is a bug in truegreen. "
                "Run again with --debug and report the traceback.",
                err=True,
            )
            sys.exit(ExitCode.BROKEN)

    return wrapper  # type: ignore[return-value]


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
    """A click group whose usage errors exit 64 (EX_USAGE) instead of click's 2."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.exceptions.UsageError as error:
            error.show()
            sys.exit(ExitCode.USAGE)
        except click.exceptions.Abort:
            click.echo("truegreen: aborted", err=True)
            sys.exit(ExitCode.BROKEN)
        except click.exceptions.Exit as done:
            sys.exit(done.exit_code)
        except click.ClickException as error:
            error.show()
            sys.exit(ExitCode.USAGE)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="truegreen")
def main() -> None:
    """Tell the truth about a Kubernetes training environment.

    Exit codes: 0 measured good, 2 measured failure, 3 could not check, 1 truegreen broke,
    64 bad usage.
    """


def _emit_json(document: object) -> None:
    import json

    click.echo(json.dumps(document, indent=2, ensure_ascii=False))


def _consoles(no_color: bool) -> "Consoles":
    from truegreen.console import make_consoles  # rich: for text output only

    return make_consoles(no_color)


def _print_lines(lines: Iterable[str], no_color: bool) -> None:
    out = _consoles(no_color).out
    for line in lines:
        out.print(line)


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
    type=click.Path(path_type=Path, file_okay=False),
    help="Check a saved snapshot folder instead of the live cluster.",
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
@_common_output
@_report_errors
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

    request = DoctorRequest(
        _connection(kubeconfig, context, namespace, request_timeout, insecure_skip_tls_verify),
        snapshot,
        job_requests,
        credentials_secret,
        config,
    )
    report = run_doctor(request)
    if output == "json":
        _emit_json(to_json(report))
    else:
        _print_lines(to_text(report, verbose=verbose), no_color)
    sys.exit(report.exit_code)


@main.command()
@_connection_options
@click.option(
    "-o",
    "--output-dir",
    "output_dir",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="New folder to write the snapshot to.",
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
@click.option("--no-color", is_flag=True, help="No colour.")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@_report_errors
def snapshot(
    kubeconfig: Path | None,
    context: str | None,
    namespace: str | None,
    request_timeout: float,
    insecure_skip_tls_verify: bool,
    output_dir: Path,
    job_requests: str | None,
    credentials_secret: str | None,
    config: Path | None,
    no_color: bool,
    debug: bool,
) -> None:
    """Save every read doctor makes (failed reads too, secrets redacted) for offline checks."""
    from truegreen.console import make_consoles
    from truegreen.doctor.command import DoctorRequest, take_snapshot

    request = DoctorRequest(
        _connection(kubeconfig, context, namespace, request_timeout, insecure_skip_tls_verify),
        job_requests=job_requests,
        credentials_secret=credentials_secret,
        config=config,
    )
    summary = take_snapshot(request, output_dir)
    failed = f", {summary.failed_reads} could not be read" if summary.failed_reads else ""
    make_consoles(no_color).err.print(
        f"Saved {summary.reads} reads of '{summary.namespace}' to {summary.directory}{failed}. "
        f"Check it with: truegreen doctor --snapshot {summary.directory}",
        markup=False,
    )


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
@click.option("--no-color", is_flag=True, help="No colour (NO_COLOR is honoured too).")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@_report_errors
def lint(
    paths: tuple[str, ...], config: Path | None, output: str, no_color: bool, debug: bool
) -> None:
    """Refuse health probes that lie or that kill long-running work.

    PATHS are files or folders (*.yaml, *.yml, *.json, searched recursively); `-` reads stdin,
    so `helm template . | truegreen lint -` works. Exit 2 when any finding is an error.
    """
    from truegreen.lint.reports import to_json, to_sarif, to_text
    from truegreen.lint.run import lint as run_lint

    if not paths and sys.stdin.isatty():
        from truegreen.errors import UsageError

        raise UsageError(
            "nothing to lint",
            "no path was given and stdin is a terminal",
            "pass files, folders or -",
        )
    result = run_lint(list(paths), config)
    if output == "json":
        _emit_json(to_json(result))
    elif output == "sarif":
        _emit_json(to_sarif(result))
    else:
        _print_lines(to_text(result), no_color)
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
@click.option("--mode", type=click.Choice(["restart", "pin"]), default="restart", show_default=True)
@click.option("--max-attempts", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--rollout-timeout", type=click.FloatRange(min=1), default=600.0, show_default=True)
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
@_report_errors
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

    Exit 0 converged or deliberately held, 2 a rollout failed (or a pin dangles), 3 a read failed.
    """
    from truegreen.cluster.live import LiveCluster
    from truegreen.errors import UsageError
    from truegreen.refresh.plan import RefreshMode
    from truegreen.refresh.registry import RegistryAccess
    from truegreen.refresh.render import to_json, to_text
    from truegreen.refresh.tick import RefreshSettings, run_tick

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
        consoles = _consoles(no_color) if output == "text" else None
        if consoles is not None and consoles.err.is_terminal:
            from rich.progress import Progress

            with Progress(console=consoles.err, transient=True) as bar:

                def progress(total: int) -> Any:
                    task = bar.add_task("Looking up image digests", total=total)
                    return lambda: bar.advance(task)

                report = run_tick(cluster, settings, progress=progress)
        else:
            report = run_tick(cluster, settings)
    if output == "json":
        _emit_json(to_json(report, dry_run=dry_run))
    else:
        _print_lines(to_text(report, verbose=verbose), no_color)
    sys.exit(report.exit_code)
