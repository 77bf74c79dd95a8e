"""`truegreen monitor`: its options, and its body: the request built from them, the monitor run
until stopped, each verdict that changes told on stderr."""

import argparse
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from truegreen.cli.output import loaded, reporting_errors, stop_on_signals, warn
from truegreen.cli.parser import (
    FILE,
    InRange,
    choice,
    command,
    connection,
    connection_options,
    plain_options,
)

if TYPE_CHECKING:
    from truegreen.cluster.settings import ActAs
    from truegreen.failure import Failure


def _monitor_failure(failure: "Failure") -> object:
    from truegreen.failure import failure_document

    return failure_document(failure)


def _monitor_arguments(parser: argparse.ArgumentParser) -> None:
    from truegreen.cluster.namespace_selection import add_selection_flags

    connection_options(parser)
    add_selection_flags(parser)
    parser.add_argument(
        "--job-requests",
        metavar="cpu=4,memory=16Gi,nvidia.com/gpu=1",
        help="One training job pod's requests (default: the newest training job's template).",
    )
    parser.add_argument(
        "--credentials-secret",
        metavar="NAME:KEY1,KEY2",
        help="The backend credentials and the keys they must hold.",
    )
    parser.add_argument("--config", type=FILE, metavar="FILE", help="doctor's config.")
    parser.add_argument(
        "--listen",
        default=":9108",
        metavar="[HOST]:PORT",
        help="Where to serve /metrics, /healthz, /readyz and the status page.",
    )
    parser.add_argument(
        "--interval",
        type=InRange(float, 1.0, 86400.0),
        default=60.0,
        metavar="FLOAT RANGE",
        help="Seconds between evaluations when nothing changes.",
    )
    parser.add_argument(
        "--min-interval",
        type=InRange(float, 0.1, 86400.0),
        default=10.0,
        metavar="FLOAT RANGE",
        help="Seconds at least between two evaluations, however often the cluster changes.",
    )
    parser.add_argument(
        "--max-age",
        type=InRange(float, 1.0, 604800.0),
        default=180.0,
        metavar="FLOAT RANGE",
        help="Seconds a read or a verdict may go unconfirmed by the cluster before it reads "
        "'could not check'.",
    )
    parser.add_argument(
        "--watch-timeout",
        type=InRange(float, 1.0, 86400.0),
        default=300.0,
        metavar="FLOAT RANGE",
        help="Each watch is renewed after this many seconds (up to twice it, at random).",
    )
    parser.add_argument(
        "--no-events", action="store_true", help="Write no Event when the verdict changes."
    )
    parser.add_argument(
        "--cluster-name",
        metavar="NAME",
        help="The cluster label of every metric (default: the kubeconfig's name for the "
        "cluster; in a pod, none: Prometheus's external labels name it).",
    )
    choice(
        parser,
        "-o",
        "--output",
        choices=("text", "json"),
        help="json: a failure to start is one JSON document on stdout, as for every command.",
    )
    plain_options(parser)


@command(_monitor_arguments)
@reporting_errors(_monitor_failure)
def monitor(
    kubeconfig: Path | None,
    context: str | None,
    namespace: str | None,
    request_timeout: float,
    insecure_skip_tls_verify: bool,
    act_as: "ActAs | None",
    job_requests: str | None,
    credentials_secret: str | None,
    config: Path | None,
    listen: str,
    interval: float,
    min_interval: float,
    max_age: float,
    watch_timeout: float,
    no_events: bool,
    cluster_name: str | None,
    namespaces: str | None,
    all_namespaces: bool,
    namespace_selector: str | None,
    output: str,
    no_color: bool,
    debug: bool,
) -> None:
    """doctor kept current: watches the namespace, serves Prometheus metrics and a status page.

    Re-evaluates on a change (at most every --min-interval) and at least every --interval;
    writes an Event on the namespace when the verdict changes. Runs until stopped (exit 0).
    With --namespaces, -A or --namespace-selector one process watches many namespaces.
    """
    from truegreen.cluster.namespace_selection import selection_from_flags
    from truegreen.console import make_consoles
    from truegreen.doctor.command.request import DoctorRequest
    from truegreen.monitor.command import EventOutcome, MonitorRequest, RunningMonitor
    from truegreen.monitor.engine import Evaluation
    from truegreen.monitor.server import WILDCARDS, status_url

    loaded()
    err = make_consoles(no_color).err
    request = MonitorRequest(
        DoctorRequest(
            connection(
                kubeconfig, context, namespace, request_timeout, insecure_skip_tls_verify, act_as
            ),
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
        cluster_name=cluster_name,
        selection=selection_from_flags(namespace, namespaces, all_namespaces, namespace_selector),
    )
    fleet = request.selection.many

    def evaluated(evaluation: Evaluation, previous: Evaluation | None) -> None:
        if previous is None or previous.changed_at != evaluation.changed_at:
            report = evaluation.report
            where = f"{evaluation.namespace} " if fleet else ""
            err.print(
                f"truegreen: {evaluation.at:%Y-%m-%dT%H:%M:%SZ} {where}{report.verdict.value}: "
                f"{report.headline.text}",
                markup=False,
            )

    def event(outcome: EventOutcome) -> None:
        if outcome.failure is not None:
            err.print(
                f"truegreen: warning: could not write the {outcome.reason} Event "
                f"({outcome.failure.reason})",
                markup=False,
            )

    with RunningMonitor(
        request, on_evaluation=evaluated, on_event=event, on_client_error=warn
    ) as running:
        host, port = running.address or ("", 0)
        watched = running.monitor.namespaces()
        what = (
            f"{len(watched)} namespaces ({request.selection.flag()})"
            if fleet
            else f"namespace '{running.monitor.namespace}'"
        )
        everywhere = " and every other address of this machine" if host in WILDCARDS else ""
        err.print(
            f"truegreen: watching {what}; metrics and status on {status_url(host, port)}"
            + everywhere,
            markup=False,
        )
        stop_on_signals(running.stop)
        with contextlib.suppress(KeyboardInterrupt):  # a second Ctrl-C
            running.run()
