"""Restart rules: probes that kill work they should leave running, or restart on traffic signals."""

from collections.abc import Iterator

from truegreen.lint.probes import ContainerModel, Probe, ProbeKind, WorkloadModel, same_check
from truegreen.lint.rules.base import Context, Rule, RuleHit, Severity


def _keep_running(workload: WorkloadModel, context: Context) -> Iterator[RuleHit]:
    for container in workload.containers:
        routed = bool(context.services_by_container.get(container.name))
        reason = workload.keeps_work(container, routed=routed)
        # A container that keeps no work itself (a sidecar, a metrics exporter) still kills
        # the work when its restart recreates the whole group (context.group_work).
        if reason is None and not context.group_work:
            continue
        for probe in container.probes:
            # A probe that never runs (a shell's own command without a shell, a named port its
            # container does not declare) never fails, so it never restarts anything:
            # probe-cannot-pass or probe-port-undeclared says what is wrong with it. A
            # startup probe that cannot fail passes at its first try and stops there (the
            # kubelet runs it only until the container has started), before the work has any
            # progress to lose: probe-cannot-fail alone says it checks nothing.
            never_runs = probe.cannot_pass or container.cannot_resolve(probe)
            if never_runs or (probe.kind is ProbeKind.STARTUP and probe.cannot_fail):
                continue
            if probe.kind.restarts_container:
                message = (
                    _restart_message(workload, container, probe, reason)
                    if reason is not None
                    else f"container {container.name} has a {probe.kind}: {_kills(probe)}, and "
                    f"{context.group_work}."
                )
                yield RuleHit(container.name, message, probe=probe.kind)


def _kills(probe: Probe) -> str:
    """How the probe kills the container. One whose command always succeeds still fails when
    the command does not answer within timeoutSeconds: the kubelet counts an exec timeout as a
    failure (pkg/probe/exec/errors.go TimeoutError; the ExecProbeTimeout gate, on since 1.20),
    and a liveness probe keeps trying for the container's whole life."""
    if probe.cannot_fail:
        return (
            f"its command always succeeds, but a try that takes over {probe.timeout} s "
            f"(timeoutSeconds) fails, as on a busy machine, and {probe.failures} in a row kill "
            "the container"
        )
    return "when it fails the kubelet kills the container"


def _restart_message(
    workload: WorkloadModel, container: ContainerModel, probe: Probe, reason: str
) -> str:
    if workload.intent.keep_running is not None:
        return (
            f"container {container.name} is declared keep-running but has a {probe.kind}: "
            f"{_kills(probe)} and the work it keeps running."
        )
    added = (
        f" ({workload.controller} adds its own liveness check of the Ray node when none is set)"
        if container.restarted_by_controller and probe.kind is ProbeKind.LIVENESS
        else ""
    )
    return (
        f"container {container.name} runs work that a restart would kill ({reason}) but has a "
        f"{probe.kind}: {_kills(probe)} and the work in it{added}."
    )


def _no_more_lenient(liveness: Probe, readiness: Probe) -> bool:
    """The liveness probe gives up no later, and waits no longer per try, than readiness."""
    return (
        liveness.gives_up_after <= readiness.gives_up_after
        and liveness.timeout <= readiness.timeout
    )


def _liveness_is_readiness(workload: WorkloadModel, _: Context) -> Iterator[RuleHit]:
    for container in workload.containers:
        liveness = container.probe(ProbeKind.LIVENESS)
        readiness = container.probe(ProbeKind.READINESS)
        if (
            liveness
            and readiness
            and liveness.handler
            and same_check(container, liveness, readiness)
            and _no_more_lenient(liveness, readiness)
        ):
            yield RuleHit(
                container.name,
                f"container {container.name}'s livenessProbe checks exactly what its "
                "readinessProbe checks, and gives up no later "
                f"({liveness.failures} x {liveness.period} s against {readiness.failures} x "
                f"{readiness.period} s): a moment of overload restarts the container instead of "
                "pausing its traffic.",
            )


RESTART_PROBE_ON_KEEP_RUNNING = Rule(
    id="restart-probe-on-keep-running",
    severity=Severity.ERROR,
    summary="A liveness or startup probe on a container that keeps work running.",
    rationale=(
        "Liveness and startup probes both restart the container when they fail, and a restart "
        "kills what the container is doing. Training runs and batch work must survive a slow or "
        "briefly unresponsive moment; a restart throws their progress away. Such work is "
        "declared by truegreen.io/keep-running, or recognised from the kind (a Job, JobSet, "
        "Kubeflow or Ray job) and from the container: a distributed launcher in its command, "
        "torch.distributed's env, or GPUs asked for with no port served (none listed, none that "
        "its readinessProbe targets, no Service of the same source routing to it, and not "
        "Knative's serving container). A LeaderWorkerSet whose restartPolicy is "
        "RecreateGroupOnPodRestart (the default) or RecreateGroupAfterStart recreates every pod "
        "of a group when any container of it restarts, a sidecar or a metrics exporter as much "
        "as the trainer (lws pod_controller.go handleRestartPolicy, pod_utils.go "
        "ContainerRestarted): when a container of the set keeps work running, every liveness "
        "and startup probe of the set kills it."
    ),
    fix=(
        "Remove the livenessProbe and startupProbe from this container and keep a readinessProbe: "
        "readiness takes it out of the Service without restarting anything. If the container "
        'really may be restarted, say so with truegreen.io/keep-running: "" (or name the '
        "containers that may not)."
    ),
    check=_keep_running,
    reads="Every container's liveness and startup probes; the truegreen.io/keep-running "
    "annotation (on the object or its pod template), which decides alone when present; else "
    "the kind, then the main container's command, args, env, GPU requests, ports and "
    "readinessProbe, and the Services of the same source that route to it; a LeaderWorkerSet's "
    "leaderWorkerTemplate.restartPolicy, and then every container of its leader and worker "
    "templates, native sidecars too.",
    limits="A launcher hidden in a script file the image holds, run by a program lint does not "
    "list as a wrapper (`sudo`, `stdbuf`), or env set by envFrom, is not seen. A liveness "
    "probe an operator adds itself (KubeRay's, when none is set) is not in the manifest and "
    "not reported. A probe that never runs restarts nothing and is left to the rule that says "
    "why (probe-cannot-pass; probe-port-undeclared: the kubelet cannot resolve its port, "
    "prober.go runProbe, and throws every try away, worker.go doProbe), and so is a startup "
    "probe that cannot fail (probe-cannot-fail): it passes at its first try and stops, "
    "before there is work to lose. "
    "A liveness probe that cannot fail is still reported: the kubelet counts a try that takes "
    "over timeoutSeconds as a failure (pkg/probe/exec/errors.go TimeoutError), so on a busy "
    "machine it kills the work.",
)

LIVENESS_SAME_AS_READINESS = Rule(
    id="liveness-same-as-readiness",
    severity=Severity.WARNING,
    summary="The liveness probe is identical to the readiness probe and no more lenient.",
    rationale=(
        "When both probes check the same thing and liveness gives up as soon as readiness does, "
        "every time the container is briefly not ready it is also restarted, which turns load "
        "spikes into restart storms. A liveness probe with a larger failureThreshold x "
        "periodSeconds (or a longer timeout) than readiness is the usual pattern, and is fine."
    ),
    fix="Make the liveness probe check only that the process is alive, give it a larger "
    "failureThreshold or period than readiness, or remove it.",
    check=_liveness_is_readiness,
    reads="Each container's liveness and readiness probes after the API server's defaults "
    "(defaults.go SetDefaults_HTTPGetAction: a path left out is `/`, a scheme HTTP): handler, "
    "port (a name and its number are the same port), path, scheme, host, httpHeaders (a "
    "name in any case: the kubelet sends it canonical, pkg/probe/http/request.go), grpc "
    "service, command, failureThreshold x periodSeconds and timeoutSeconds. A header value "
    "read redacted (doctor reads live objects redacted, docs/snapshot.md) is unknown: two probes "
    "are never the same on it.",
)
