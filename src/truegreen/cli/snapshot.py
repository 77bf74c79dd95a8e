"""`truegreen snapshot`: its options, and its body: the request and the bundle's target built
from them, the snapshot taken, its summary rendered."""

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from truegreen.cli.output import emit_json, loaded, progress, reporting_errors, text_consoles
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
    from truegreen.cluster.settings import ActAs
    from truegreen.failure import Failure


def _snapshot_failure(failure: "Failure") -> object:
    from truegreen.doctor.present.snapshot_report import failure_json

    return failure_json(failure)


def _snapshot_arguments(parser: argparse.ArgumentParser) -> None:
    connection_options(parser)
    parser.add_argument(
        "--archive",
        type=FILE,
        metavar="FILE",
        help="Write the bundle to this new .tar.gz file "
        "(default: truegreen-snapshot-NAMESPACE-TIME.tar.gz in the current folder).",
    )
    parser.add_argument(
        "--output-directory",
        type=PathArgument(file_okay=False),
        metavar="DIRECTORY",
        help="Write a folder instead of an archive (a new or empty folder).",
    )
    parser.add_argument(
        "--job-requests",
        metavar="cpu=4,memory=16Gi,nvidia.com/gpu=1",
        help="Saved with the snapshot; doctor uses it offline.",
    )
    parser.add_argument(
        "--credentials-secret", metavar="NAME:KEY1,KEY2", help="Also save this read (names only)."
    )
    parser.add_argument("--config", type=FILE, metavar="FILE", help="doctor's config.")
    trial_options(parser)
    parser.add_argument(
        "--no-registry",
        action="store_true",
        help="Do not ask the registries whether the images are there (nor save their answers).",
    )
    parser.add_argument(
        "--registry-allow",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="A registry this computer may ask on its own address (localhost, 127.0.0.1) or "
        "without encryption; repeat for more. Unnamed, such a registry is not asked.",
    )
    common_output(parser)


@command(_snapshot_arguments)
@reporting_errors(_snapshot_failure)
def snapshot(
    kubeconfig: Path | None,
    context: str | None,
    namespace: str | None,
    request_timeout: float,
    insecure_skip_tls_verify: bool,
    act_as: "ActAs | None",
    archive: Path | None,
    output_directory: Path | None,
    job_requests: str | None,
    credentials_secret: str | None,
    config: Path | None,
    no_registry: bool,
    registry_allow: list[str],
    trial: bool,
    trial_timeout: float,
    output: str,
    verbose: bool,
    no_color: bool,
    debug: bool,
) -> None:
    """Save a support bundle: every read doctor makes (failed reads too), the namespace's
    newest events and the last lines of failing containers' logs, and with --trial what the
    trial measured, redacted by policy (docs/snapshot.md). Check it offline with
    `truegreen doctor --snapshot FILE`.

    Exit 0 saved, 3 saved but some reads could not be made.
    """
    from truegreen.doctor.command.request import DoctorRequest, SnapshotTarget, take_snapshot
    from truegreen.doctor.present.snapshot_report import exit_code, to_json, to_text
    from truegreen.errors import UsageError

    loaded()
    if archive is not None and output_directory is not None:
        raise UsageError(
            "--archive and --output-directory cannot be used together",
            todo="choose one",
        )
    request = DoctorRequest(
        connection(
            kubeconfig, context, namespace, request_timeout, insecure_skip_tls_verify, act_as
        ),
        job_requests=job_requests,
        credentials_secret=credentials_secret,
        config=config,
        no_registry=no_registry,
        registry_allow=allowed_registries(registry_allow),
        trial=trial,
        trial_timeout=trial_timeout,
    )
    target = SnapshotTarget(output_directory or archive, folder=output_directory is not None)
    consoles = text_consoles(output, no_color)
    with progress(consoles, no_color) as told:
        summary = take_snapshot(request, target, told)
    if consoles is None:
        emit_json(to_json(summary))
    else:
        for line in to_text(summary, verbose=verbose):
            consoles.out.print(line, markup=False)
    sys.exit(exit_code(summary))
