"""A rollout simulator for the fake API server: the Deployment controller and kubelet, in brief.

When a Deployment's pod template changes, its pods are replaced by new ones whose imageID is the
digest the real registry serves for the image now (or a crash loop, a pull failure, a passed
progress deadline, or nothing at all, per Deployment). An annotation-only change is simply
observed (status.observedGeneration catches up), as the real controller does.

A failed pull is the kubelet's (pkg/kubelet/images/image_manager.go `EnsureImageExists`): the
container waits `ErrImagePull` with the runtime's error as its message (containerd's words).
`pull-fail`: the registry says the image does not exist, at every retry. `pull-retry` (a
Deployment's): the registry answered 503 once; after the kubelet's back-off (`PULL_RETRY_READS`
pod reads) the pull succeeds, the new pods run the newest digest, Ready, and the rollout goes on
as an `ok` one.

The replacement follows the Deployment's strategy as the controller runs it:

- `Recreate` (pkg/controller/deployment/recreate.go): every old pod is stopped first, and the
  new pods start only once no old pod is left, terminating ones included (`oldPodsRunning`).
- `RollingUpdate` (rolling.go), with `maxSurge` and `maxUnavailable` resolved as
  util/deployment_util.go `ResolveFenceposts` resolves them (25% each by default, surge rounded
  up, unavailable rounded down, unavailable 1 when both come to 0): new pods that become
  available replace every old one; new pods that never do leave the rollout where the
  controller's loop stops, `min(replicas, surge + unavailable)` new pods beside
  `replicas - unavailable` old ones, the old unhealthy pods stopped first
  (`cleanupUnhealthyReplicas`). With `maxSurge: 0` on one replica no old pod stays. The
  batches in between are not modelled, only where a rollout ends.
- A pod is Ready (its Ready condition, with the time it became so) when it runs; it is available
  once it has been Ready for `minReadySeconds` (pkg/api/v1/pod/util.go `IsPodAvailable`). Until
  then the old pods of a rolling update stay, and the status counts the new pods as not yet
  available; the controller writes the status again when they are (it requeues the Deployment
  after minReadySeconds).
- The status is computed from the pods as sync.go `calculateStatus` sums its ReplicaSets:
  `replicas`, `updatedReplicas`, `readyReplicas`, `availableReplicas`, `unavailableReplicas`.
  Its Progressing condition is progress.go `syncRolloutStatus`'s: none without a progress
  deadline (the controller removes it); else `NewReplicaSetAvailable` once the rollout is
  complete, and kept while copies are replaced under the same template (`isCompleteDeployment`:
  no new ReplicaSet, every copy updated), `ReplicaSetUpdated` while a new template rolls out,
  `ProgressDeadlineExceeded` past the deadline.
- A stored Deployment's pods belong to the ReplicaSet of their template, as sync.go
  `getNewReplicaSet` writes it: named `<deployment>-<pod-template-hash>`, the Deployment's
  whole template (its annotations too) with the template's labels and the Deployment's
  selector each with `pod-template-hash` added, controlled by the Deployment; each pod
  carries the hash label and the ReplicaSet as its controller.

StatefulSets and DaemonSets (`settle` installs one with its pods) roll out one pod at a time,
the old pod gone before its replacement starts, and stop at the first replacement that is not
Ready, as their controllers do:

- A StatefulSet (pkg/controller/statefulset/stateful_set_control.go `updateStatefulSet`):
  ordinals from the highest down to `rollingUpdate.partition` are replaced, each keeping its
  name (`<set>-<ordinal>`); the status (`computeReplicaStatus`) counts `replicas` (every pod),
  `readyReplicas`, `availableReplicas`, and `currentReplicas`/`updatedReplicas` (pods that are
  not terminating, by their `controller-revision-hash` label against `currentRevision` and
  `updateRevision`); once every pod is updated and Ready, `currentRevision` becomes
  `updateRevision` (stateful_set_utils.go `completeRollingUpdate`). The revision's name is
  `<set>-<hash of the template>`, not the controller's fnv hash.
- A DaemonSet (pkg/controller/daemon/update.go `rollingUpdate`, maxSurge 0, maxUnavailable 1):
  one node after another, the old pod stopped, then the new one started on that node; the status
  (daemon_controller.go `updateDaemonSetStatus`, pods that are not terminating) counts
  `desiredNumberScheduled` (the nodes given to `settle`), `currentNumberScheduled`,
  `numberReady`, `updatedNumberScheduled` (by `controller-revision-hash`), `numberAvailable`
  and `numberUnavailable`.
- `updateStrategy: OnDelete`: a template change replaces nothing (only the revision moves).
- `join_node`: a machine joins while a DaemonSet's update stands; its copy is made at the
  update revision (daemon_controller.go `syncNodes`), so the counts rise with no old copy
  replaced.
- Their behaviours (`ORDERED_BEHAVIOURS`) add `unready` and `last-unready`: a new pod that
  runs and is never Ready (a readiness probe that keeps failing: Running, Ready False, no
  waiting reason), at the first pod replaced or at the last. The controller waits on it
  without end (stateful_set_control.go `updateStatefulSet` "waiting for Pod to update",
  daemon/update.go `rollingUpdate` within maxUnavailable); a later template change replaces it
  again in turn, as a DaemonSet's controller does and a StatefulSet's with
  `podManagementPolicy: Parallel` (with OrderedReady, `processReplica` would wait for it
  first; not modelled).

As on a real cluster (kubernetes/kubectl#1628, kubernetes/kubernetes#110171), the replaced pods
do not vanish when the Deployment reports complete: they stay Terminating for their grace
period (metadata.deletionTimestamp and deletionGracePeriodSeconds set, still phase Running,
still reporting the OLD imageID) while the Deployment's status counts only the pods that are
not terminating (pkg/controller/deployment/sync.go calculateStatus sums the ReplicaSets' active
pods). The status itself may lag the pods: the controller writes it a few reads later. Both
are measured in reads a client makes, never in wall-clock time, so tests stay deterministic;
only `minReadySeconds` is wall-clock time, as it is for the controller.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.support.fake_apiserver import FakeApiServer

Obj = dict[str, Any]
BEHAVIOURS = ("ok", "old-image", "crash", "pull-fail", "pull-retry", "deadline", "stall")
ORDERED_BEHAVIOURS = ("ok", "old-image", "crash", "pull-fail", "stall", "unready", "last-unready")
"""A StatefulSet's or DaemonSet's: `unready`, its first new pod runs and is never Ready (a
readiness probe that keeps failing: no waiting reason, nothing that says it never will);
`last-unready`, every new pod Ready but the last one the update replaces."""
HEALTHY = ("ok", "old-image")
"""The behaviours whose new pods become Ready."""
PULL_RETRY_READS = 2
"""How many pod reads a `pull-retry` pod waits on its failed pull: the kubelet's back-off."""
_PULL_ERROR = 'failed to pull and unpack image "{0}": failed to resolve reference "{0}": '
"""containerd's words for a failed pull, which the kubelet's ErrImagePull message is."""
NO_DEADLINE = 2**31 - 1
"""progressDeadlineSeconds MaxInt32: a Deployment with no progress deadline."""
GRACE_SECONDS = 30
"""terminationGracePeriodSeconds' default (pkg/apis/core/v1/defaults.go)."""
_DEFAULT_FENCEPOST = "25%"
"""maxSurge and maxUnavailable when unset (pkg/apis/apps/v1/defaults.go)."""
_STAMP = "%Y-%m-%dT%H:%M:%SZ"
_POD_READ = re.compile(r"^/api/v1/(?:namespaces/(?P<ns>[^/]+)/)?pods(?:/[^/]+)?$")
_DEPLOYMENT_READ = re.compile(
    r"^/apis/apps/v1/namespaces/(?P<ns>[^/]+)/(?:deployments|statefulsets|daemonsets)(?:/[^/]+)?$"
)
_ORDERED = {"statefulsets": "StatefulSet", "daemonsets": "DaemonSet"}
"""The kinds that replace one pod at a time, by plural."""
REVISION_LABEL = "controller-revision-hash"
"""The label both controllers put on a pod: the revision of the template it was made from."""
TEMPLATE_HASH_LABEL = "pod-template-hash"
"""The label a Deployment's ReplicaSets and their pods carry (apps/v1
DefaultDeploymentUniqueLabelKey)."""
_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""apimachinery/pkg/util/rand `SafeEncodeString`'s letters, which a pod-template-hash uses."""


@dataclass
class _Leaving:
    """Replaced pods still Terminating: listed by `reads` more pod reads, then gone."""

    namespace: str
    names: list[str]
    reads: int
    then: Callable[[], None] | None = None
    """What the controller does once they are gone (Recreate starts the new pods)."""


@dataclass
class _LateStatus:
    """A status the controller has computed but not yet written: `reads` more reads of the
    Deployment still see the old one."""

    namespace: str
    name: str
    status: Obj
    reads: int


@dataclass
class _Ordered:
    """A StatefulSet's or DaemonSet's update under way: the pods still to replace, in order."""

    kind: str
    namespace: str
    name: str
    revision: str
    slots: list[str]
    """The names of the pods to replace, in the controller's order."""
    rollout: tuple[int, str]


@dataclass
class _Pulling:
    """A `pull-retry` rollout's new pods in the kubelet's back-off: after `reads` more pod
    reads the pull succeeds."""

    namespace: str
    name: str
    rollout: int
    reads: int


@dataclass
class _Maturing:
    """New pods that are Ready but not yet for minReadySeconds: at `at` they are available, the
    old pods still running (`stop`) go, and the controller writes the status again."""

    namespace: str
    name: str
    at: datetime
    rollout: int
    stop: list[Obj] = field(default_factory=list)


class RolloutSimulator:
    """Attach with `RolloutSimulator(server, digest_for)`; set `behaviour[name]` per Deployment.

    `terminating_reads`: how many pod reads (lists or gets in the namespace) still see the
    replaced pods Terminating after the rollout; 0 removes them at once.
    `status_lag_reads`: how many reads of the Deployment still see its old status after a
    restart (the controller has not caught up yet); 0 writes it at once.
    """

    def __init__(
        self,
        server: FakeApiServer,
        digest_for: Callable[[str], str],
        *,
        terminating_reads: int = 2,
        status_lag_reads: int = 0,
    ) -> None:
        self.server = server
        self.digest_for = digest_for
        self.behaviour: dict[str, str] = {}
        self.rollouts: dict[str, int] = {}
        self.terminating_reads = terminating_reads
        self.status_lag_reads = status_lag_reads
        self._templates: dict[str, str] = {}
        self._new_pods: dict[str, set[str]] = {}
        """The pods of each Deployment's newest rollout (its new ReplicaSet's)."""
        self._current: dict[str, tuple[int, str]] = {}
        self._new_template: dict[str, bool] = {}
        """Whether each Deployment's newest rollout is of a new template (a new ReplicaSet,
        whose creation moves the Progressing condition off NewReplicaSetAvailable: sync.go
        `getNewReplicaSet`), not copies replaced under the same one."""
        """Each Deployment's newest rollout, numbered, and its behaviour: a step of an older
        rollout is dropped."""
        self._count = 0
        self._leaving: list[_Leaving] = []
        self._late: list[_LateStatus] = []
        self._maturing: list[_Maturing] = []
        self._pulling: list[_Pulling] = []
        self._revisions: dict[str, tuple[str, str]] = {}
        """Each StatefulSet's and DaemonSet's (currentRevision, updateRevision)."""
        self._nodes: dict[str, list[str]] = {}
        """The nodes each DaemonSet should run on."""
        self.replaced: list[str] = []
        """The names of the pods StatefulSets and DaemonSets replaced, in order."""
        # Reentrant: a step the request hook runs (a Recreate's new pods) stops pods in turn.
        self._lock = threading.RLock()
        server.patch_hooks.append(self._on_patch)
        server.request_hooks.append(self._on_request)

    def remember(self, deployment: Obj) -> None:
        """Note a Deployment's current template (call after loading a scenario)."""
        self._templates[self._key(deployment)] = json.dumps(
            deployment["spec"]["template"], sort_keys=True
        )

    @staticmethod
    def _key(workload: Obj) -> str:
        """`namespace/name` for a Deployment, `namespace/Kind/name` for the other kinds: a
        StatefulSet may share a Deployment's name."""
        meta = workload["metadata"]
        kind = workload.get("kind", "Deployment")
        where = "" if kind == "Deployment" else f"{kind}/"
        return f"{meta.get('namespace', '')}/{where}{meta['name']}"

    def settle(self, workload: Obj, nodes: tuple[str, ...] = ("node-1",)) -> None:
        """Store a StatefulSet or DaemonSet rolled out and Ready: its pods (one per ordinal, or
        one per node of `nodes`) made from its template, and the status its controller
        writes."""
        self.server.add(workload)
        meta = workload["metadata"]
        stored = self.server.get_object(workload["kind"], meta["name"], meta["namespace"])
        assert stored is not None
        key = self._key(stored)
        self.remember(stored)
        revision = _revision(stored)
        self._revisions[key] = (revision, revision)
        self._nodes[key] = list(nodes)
        for slot in self._slots(stored, every=True):
            self.server.add(self._slot_pod(stored, slot, revision, "ok", {}))
        self._write_status(
            meta["namespace"], meta["name"], self._ordered_status(stored), stored["kind"]
        )

    def join_node(self, name: str, node: str, namespace: str = "train") -> None:
        """A machine joins the cluster (a cluster autoscaler's): the DaemonSet's controller
        makes its copy from the current template, at the update revision, whatever its update
        stands at (daemon_controller.go `syncNodes`: a machine that should run a copy and has
        none gets one), and counts it (`updateDaemonSetStatus`)."""
        with self._lock:
            stored = self.server.get_object("DaemonSet", name, namespace)
            assert stored is not None
            key = self._key(stored)
            self._nodes[key].append(node)
            update = self._revisions[key][1]
            self.server.add(self._slot_pod(stored, f"{name}-{node}", update, "ok", {}))
            self._publish_ordered("DaemonSet", namespace, name)

    def delete_pods(self, kind: str, name: str, namespace: str = "train") -> None:
        """The operator deletes each of a StatefulSet's or DaemonSet's pods (`kubectl delete
        pod`, the way an `OnDelete` workload takes a new version): its controller makes each
        again at the update revision from the current template (stateful_set_utils.go
        `newVersionedStatefulSetPod`; daemon_controller.go `syncNodes`), and the kubelet pulls
        what the tag names now, Ready; then it writes the status it counts."""
        with self._lock:
            stored = self.server.get_object(kind, name, namespace)
            assert stored is not None
            update = self._revisions[self._key(stored)][1]
            for slot in self._slots(stored, every=True):
                self.server.delete_object("Pod", slot, namespace)
                self.server.add(self._slot_pod(stored, slot, update, "ok", {}))
            self._publish_ordered(kind, namespace, name)

    def _on_patch(self, server: FakeApiServer, plural: str, obj: Obj) -> None:
        if plural not in ("deployments", *_ORDERED):
            return
        key = self._key(obj)
        template = json.dumps(obj["spec"]["template"], sort_keys=True)
        if self._templates.get(key) == template:
            # Like the controller: status is written only when it changes.
            generation = obj["metadata"]["generation"]
            if obj.get("status", {}).get("observedGeneration") != generation:
                observed = copy.deepcopy(obj)
                observed.setdefault("status", {})["observedGeneration"] = generation
                server.update_object(observed)
            return
        self._templates[key] = template
        self.rollouts[obj["metadata"]["name"]] = self.rollouts.get(obj["metadata"]["name"], 0) + 1
        behaviour = self.behaviour.get(obj["metadata"]["name"], "ok")
        if plural in _ORDERED:
            self._roll_ordered(obj, behaviour)
        else:
            self.roll_out(obj, behaviour, new_template=True)

    def _on_request(self, server: FakeApiServer, method: str, path: str) -> None:
        """Between a client's reads: terminating pods finish, new pods become available, a late
        status lands."""
        if method != "GET":
            return
        pods, deployments = _POD_READ.match(path), _DEPLOYMENT_READ.match(path)
        with self._lock:
            now = datetime.now(UTC)
            for maturing in list(self._maturing):
                if maturing.at <= now:
                    self._maturing.remove(maturing)
                    key = f"{maturing.namespace}/{maturing.name}"
                    if self._current.get(key, (0, ""))[0] == maturing.rollout:
                        self._terminate(maturing.namespace, maturing.stop)
                        self._publish(maturing.namespace, maturing.name)
            if pods is not None:
                for pulling in list(self._pulling):
                    if pods["ns"] not in (None, pulling.namespace):
                        continue
                    if pulling.reads > 0:
                        pulling.reads -= 1
                        continue
                    self._pulling.remove(pulling)
                    self._pulled(pulling)
                for leaving in list(self._leaving):
                    if pods["ns"] not in (None, leaving.namespace):
                        continue
                    if leaving.reads > 0:
                        leaving.reads -= 1
                        continue
                    for name in leaving.names:
                        server.delete_object("Pod", name, leaving.namespace)
                    self._leaving.remove(leaving)
                    if leaving.then is not None:
                        leaving.then()
            if deployments is not None:
                for late in list(self._late):
                    if deployments["ns"] != late.namespace:
                        continue
                    if late.reads > 0:
                        late.reads -= 1
                        continue
                    self._write_status(late.namespace, late.name, late.status)
                    self._late.remove(late)

    def _pulled(self, pulling: _Pulling) -> None:
        """The kubelet's pull after its back-off succeeded: the new pods run the newest digest,
        Ready; the Deployment's other copies start and its old ones go, as in an `ok` rollout
        (unless a newer rollout replaced this one)."""
        key = f"{pulling.namespace}/{pulling.name}"
        if self._current.get(key, (0, ""))[0] != pulling.rollout:
            return
        deployment = self.server.get_object("Deployment", pulling.name, pulling.namespace)
        assert deployment is not None
        new = self._new(key)
        for pod in new:
            pod["status"] = self.make_pod(deployment, pod["metadata"]["name"])["status"]
            self.server.update_object(pod)
        generation = deployment["metadata"]["generation"]
        for index in range(len(new), deployment["spec"].get("replicas", 1)):
            pod = self.make_pod(deployment, f"{pulling.name}-g{generation}-{index}")
            self.server.add(pod)
            self._new_pods[key].add(pod["metadata"]["name"])
        names = self._new_pods[key]
        old = [
            p
            for p in pods_of(self.server, deployment)
            if p["metadata"]["name"] not in names and not _terminating(p)
        ]
        self._terminate(pulling.namespace, old)
        self._publish(pulling.namespace, pulling.name)

    def finish_terminating(self) -> None:
        """Every terminating pod's grace period ends now: they are gone."""
        with self._lock:
            for leaving in list(self._leaving):
                for name in leaving.names:
                    self.server.delete_object("Pod", name, leaving.namespace)
                self._leaving.remove(leaving)
                if leaving.then is not None:
                    leaving.then()

    def between_crashes(
        self, kind: str, name: str, restarts: int, *, ready: bool = True, namespace: str = "train"
    ) -> None:
        """The workload's crash-looping pods seen in one of the runs between two crashes, and
        the status its controller writes from them. After its back-off the kubelet starts the
        container again: running, no waiting reason, `restartCount` up and the run that ended
        kept in `lastState.terminated` (pkg/kubelet/kubelet_pods.go
        `convertToAPIContainerStatuses`). With no readiness probe (`ready`) it is Ready as soon
        as it runs (pkg/kubelet/prober/prober_manager.go `UpdatePodStatus`: no prober worker,
        ready), so the controller counts it available and a Deployment's rollout complete
        (progress.go `syncRolloutStatus`); with a probe that has not passed yet it is not."""
        workload = self.server.get_object(kind, name, namespace)
        assert workload is not None
        now = datetime.now(UTC)
        started, ended = now.strftime(_STAMP), (now - timedelta(seconds=5)).strftime(_STAMP)
        for pod in pods_of(self.server, workload):
            statuses = pod["status"]["containerStatuses"]
            waiting = [s.get("state", {}).get("waiting", {}).get("reason") for s in statuses]
            if "CrashLoopBackOff" not in waiting:
                continue
            for status in statuses:
                status |= {
                    "ready": ready,
                    "started": True,
                    "restartCount": restarts,
                    "state": {"running": {"startedAt": started}},
                    "lastState": {
                        "terminated": {"exitCode": 1, "reason": "Error", "finishedAt": ended}
                    },
                }
            readiness: Obj = {"status": "True", "lastTransitionTime": started}
            if not ready:
                unready = " ".join(s["name"] for s in statuses)
                readiness = {
                    "status": "False",
                    "lastTransitionTime": started,
                    "reason": "ContainersNotReady",
                    "message": f"containers with unready status: [{unready}]",
                }
            # pkg/kubelet/status/generate.go: Ready and ContainersReady follow the containers.
            pod["status"]["conditions"] = [
                {"type": c["type"], **readiness} if c["type"] in ("Ready", "ContainersReady") else c
                for c in pod["status"]["conditions"]
            ]
            self.server.update_object(pod)
        if kind == "Deployment":
            self._publish(namespace, name)
        else:
            self._publish_ordered(kind, namespace, name)

    def roll_out(self, deployment: Obj, behaviour: str, *, new_template: bool = False) -> None:
        """Replace the Deployment's pods as its strategy and template say, with `behaviour`:
        a `new_template` (a change to it), or its copies replaced under the same one (the
        controller on its own)."""
        assert behaviour in BEHAVIOURS, behaviour
        if behaviour == "stall":
            return
        with self._lock:
            self._count += 1
            key = self._key(deployment)
            self._current[key] = (self._count, behaviour)
            self._new_template[key] = new_template
            self._new_pods[key] = set()
            current = [p for p in pods_of(self.server, deployment) if not _terminating(p)]
            old_ids = {
                s["name"]: s.get("imageID")
                for pod in current
                for s in pod["status"].get("containerStatuses", [])
            }
            replicas = deployment["spec"].get("replicas", 1)
            namespace, name = deployment["metadata"]["namespace"], deployment["metadata"]["name"]
            strategy = deployment["spec"].get("strategy", {})
            rollout = self._count

            def start(count: int, stop_when_available: list[Obj], *, later: bool) -> None:
                self._start(
                    deployment, count, old_ids, (rollout, behaviour), stop_when_available, later
                )

            if strategy.get("type") == "Recreate":
                # recreate.go: the old pods go first; the new ones start once none is left.
                waiting = bool(current) and self.terminating_reads > 0
                self._terminate(namespace, current, then=lambda: start(replicas, [], later=waiting))
            elif behaviour in HEALTHY:
                start(replicas, current, later=False)
            else:
                surge, unavailable = fenceposts(deployment)
                available = _available_at(deployment)
                stopped, count = _stalled_rolling(current, replicas, surge, unavailable, available)
                self._terminate(namespace, stopped)
                start(count, [], later=False)
                if behaviour == "pull-retry":
                    self._pulling.append(_Pulling(namespace, name, rollout, PULL_RETRY_READS))
            status = self._status(namespace, name)
            if self.status_lag_reads > 0:
                self._late.append(_LateStatus(namespace, name, status, self.status_lag_reads))
            else:
                self._write_status(namespace, name, status)

    def _start(
        self,
        deployment: Obj,
        count: int,
        old_ids: dict[str, Any],
        rollout: tuple[int, str],
        stop_when_available: list[Obj],
        later: bool,
    ) -> None:
        """The new ReplicaSet's pods start; the old pods a rolling update keeps until the new
        ones are available go then (at once without minReadySeconds). `later`: the rollout's
        first status is written already, so the controller writes it again now."""
        key = self._key(deployment)
        if self._current.get(key) != rollout:
            return  # a newer rollout replaced this one before its pods started
        behaviour = rollout[1]
        namespace, name = deployment["metadata"]["namespace"], deployment["metadata"]["name"]
        generation = deployment["metadata"]["generation"]
        for index in range(count):
            pod = self.make_pod(deployment, f"{name}-g{generation}-{index}", behaviour)
            # old-image: a node kept its cached image, so the restart changed nothing
            if behaviour == "old-image":
                for reported in pod["status"]["containerStatuses"]:
                    reported["imageID"] = old_ids.get(reported["name"], reported.get("imageID"))
            self.server.add(pod)
            self._new_pods[key].add(pod["metadata"]["name"])
        wait = deployment["spec"].get("minReadySeconds", 0)
        if behaviour in HEALTHY and wait > 0 and count:
            ready_at = max(_ready_since(p) or datetime.now(UTC) for p in self._new(key))
            at = ready_at + timedelta(seconds=wait)
            self._maturing.append(_Maturing(namespace, name, at, rollout[0], stop_when_available))
        else:
            self._terminate(namespace, stop_when_available)
        if later:
            self._publish(namespace, name)

    def _new(self, key: str) -> list[Obj]:
        namespace = key.split("/", 1)[0]
        names = self._new_pods.get(key, set())
        return [
            p for p in self.server.list_objects("Pod", namespace) if p["metadata"]["name"] in names
        ]

    def _status(self, namespace: str, name: str) -> Obj:
        """The status the controller computes from the pods now (sync.go calculateStatus)."""
        stored = self.server.get_object("Deployment", name, namespace)
        assert stored is not None
        key = self._key(stored)
        replicas = stored["spec"].get("replicas", 1)
        wait = stored["spec"].get("minReadySeconds", 0)
        now = datetime.now(UTC)
        active = [p for p in pods_of(self.server, stored) if not _terminating(p)]
        updated = [p for p in active if p["metadata"]["name"] in self._new_pods.get(key, set())]
        ready = [p for p in active if _ready_since(p) is not None]
        available = [p for p in active if _available(p, wait, now)]
        # deployment_util.go `HasProgressDeadline`: MaxInt32 is no deadline, never exceeded.
        has_deadline = stored["spec"].get("progressDeadlineSeconds") != NO_DEADLINE
        deadline = has_deadline and self._current.get(key, (0, ""))[1] == "deadline"
        complete = len(updated) == replicas == len(active) and len(available) >= replicas
        before = next(
            (
                c.get("reason")
                for c in stored.get("status", {}).get("conditions", [])
                if c.get("type") == "Progressing"
            ),
            None,
        )
        kept = (
            not self._new_template.get(key, False)
            and before == "NewReplicaSetAvailable"
            and len(updated) == len(active)
        )
        if deadline:
            progressing = {"status": "False", "reason": "ProgressDeadlineExceeded"}
        elif complete or kept:
            progressing = {"status": "True", "reason": "NewReplicaSetAvailable"}
        else:
            progressing = {"status": "True", "reason": "ReplicaSetUpdated"}
        conditions = [{"type": "Progressing", **progressing}] if has_deadline else []
        return {
            "observedGeneration": stored["metadata"]["generation"],
            "replicas": len(active),
            "updatedReplicas": len(updated),
            "readyReplicas": len(ready),
            "availableReplicas": len(available),
            "unavailableReplicas": max(len(active) - len(available), 0),
            "conditions": conditions,
        }

    def _publish(self, namespace: str, name: str) -> None:
        """The controller writes the status it computes now; one still waiting to land (a
        lagging controller) is replaced, never written after it."""
        status = self._status(namespace, name)
        for late in self._late:
            if (late.namespace, late.name) == (namespace, name):
                late.status = status
                return
        self._write_status(namespace, name, status)

    def _terminate(
        self, namespace: str, pods: list[Obj], then: Callable[[], None] | None = None
    ) -> None:
        """Delete `pods` gracefully: Terminating for a while, or gone at once; `then` runs once
        they are gone."""
        if self.terminating_reads <= 0 or not pods:
            for pod in pods:
                self.server.delete_object("Pod", pod["metadata"]["name"], namespace)
            if then is not None:
                then()
            return
        until = datetime.now(UTC) + timedelta(seconds=GRACE_SECONDS)
        for pod in pods:
            # registry/rest/delete.go BeforeDelete: the grace period's end, and its length.
            stored = self.server.get_object("Pod", pod["metadata"]["name"], namespace)
            if stored is None:
                continue
            stored["metadata"]["deletionTimestamp"] = until.strftime(_STAMP)
            stored["metadata"]["deletionGracePeriodSeconds"] = GRACE_SECONDS
            self.server.update_object(stored)
        names = [p["metadata"]["name"] for p in pods]
        self._leaving.append(_Leaving(namespace, names, self.terminating_reads, then))

    def _roll_ordered(self, workload: Obj, behaviour: str) -> None:
        """A StatefulSet's or DaemonSet's new template: its pods replaced one at a time, in its
        controller's order, until one is not Ready."""
        assert behaviour in ORDERED_BEHAVIOURS, behaviour
        with self._lock:
            self._count += 1
            key = self._key(workload)
            meta = workload["metadata"]
            current, _ = self._revisions[key]
            revision = _revision(workload)
            self._revisions[key] = (current, revision)
            rollout = (self._count, behaviour)
            self._current[key] = rollout
            strategy = workload["spec"].get("updateStrategy", {}).get("type", "RollingUpdate")
            if behaviour != "stall" and strategy == "RollingUpdate":
                slots = self._slots(workload, every=False)
                state = _Ordered(
                    workload["kind"], meta["namespace"], meta["name"], revision, slots, rollout
                )
                self._next_slot(state)
            self._publish_ordered(workload["kind"], meta["namespace"], meta["name"])

    def _slots(self, workload: Obj, *, every: bool) -> list[str]:
        """The pods' names in the order an update replaces them: a StatefulSet's ordinals from
        the highest down to its partition (all of them with `every`), a DaemonSet's nodes."""
        name = workload["metadata"]["name"]
        if workload["kind"] == "DaemonSet":
            return [f"{name}-{node}" for node in self._nodes[self._key(workload)]]
        rolling = workload["spec"].get("updateStrategy", {}).get("rollingUpdate", {})
        partition = 0 if every else rolling.get("partition", 0)
        replicas = workload["spec"].get("replicas", 1)
        return [f"{name}-{ordinal}" for ordinal in range(replicas - 1, partition - 1, -1)]

    def _slot_pod(
        self, workload: Obj, slot: str, revision: str, behaviour: str, old_ids: dict[str, Any]
    ) -> Obj:
        pod = self.make_pod(workload, slot, behaviour)
        pod["metadata"]["labels"][REVISION_LABEL] = revision
        if workload["kind"] == "DaemonSet":
            pod["spec"]["nodeName"] = slot.removeprefix(workload["metadata"]["name"] + "-")
        if behaviour == "old-image":
            for reported in pod["status"]["containerStatuses"]:
                reported["imageID"] = old_ids.get(reported["name"], reported.get("imageID"))
        return pod

    def _next_slot(self, state: _Ordered) -> None:
        """Stop the next old pod; once it is gone, start its replacement and, if that one is
        Ready, go on (a replacement that is not stops the update where it is)."""
        key = f"{state.namespace}/{state.kind}/{state.name}"
        if self._current.get(key) != state.rollout or not state.slots:
            return
        slot = state.slots.pop(0)
        old = self.server.get_object("Pod", slot, state.namespace)
        old_ids = {
            s["name"]: s.get("imageID")
            for s in (old or {}).get("status", {}).get("containerStatuses", [])
        }

        def replace() -> None:
            if self._current.get(key) != state.rollout:
                return  # a newer update replaced this one while the old pod stopped
            stored = self.server.get_object(state.kind, state.name, state.namespace)
            assert stored is not None
            behaviour = state.rollout[1]
            if behaviour == "last-unready":
                behaviour = "ok" if state.slots else "unready"
            self.server.add(self._slot_pod(stored, slot, state.revision, behaviour, old_ids))
            self.replaced.append(slot)
            if behaviour in HEALTHY:
                self._next_slot(state)
            self._publish_ordered(state.kind, state.namespace, state.name)

        if old is None:
            replace()
        else:
            self._terminate(state.namespace, [old], then=replace)

    def _publish_ordered(self, kind: str, namespace: str, name: str) -> None:
        stored = self.server.get_object(kind, name, namespace)
        assert stored is not None
        self._write_status(namespace, name, self._ordered_status(stored), kind)

    def _ordered_status(self, workload: Obj) -> Obj:
        """The status a StatefulSet's or DaemonSet's controller computes from its pods now."""
        key = self._key(workload)
        current, update = self._revisions[key]
        wait = workload["spec"].get("minReadySeconds", 0)
        now = datetime.now(UTC)
        pods = pods_of(self.server, workload)
        staying = [p for p in pods if not _terminating(p)]
        generation = workload["metadata"]["generation"]
        if workload["kind"] == "DaemonSet":
            nodes = self._nodes[key]
            on_node = {
                node: [p for p in staying if p["spec"].get("nodeName") == node] for node in nodes
            }
            first = [found[0] for found in on_node.values() if found]
            available = sum(_available(p, wait, now) for p in first)
            return {
                "observedGeneration": generation,
                "desiredNumberScheduled": len(nodes),
                "currentNumberScheduled": len(first),
                "numberMisscheduled": 0,
                "numberReady": sum(_ready_since(p) is not None for p in first),
                "updatedNumberScheduled": sum(_revision_of(p) == update for p in first),
                "numberAvailable": available,
                "numberUnavailable": len(nodes) - available,
            }
        ready = sum(_ready_since(p) is not None for p in pods)
        updated = sum(_revision_of(p) == update for p in staying)
        status = {
            "observedGeneration": generation,
            "replicas": len(pods),
            "readyReplicas": ready,
            "availableReplicas": sum(_available(p, wait, now) for p in pods),
            "currentReplicas": sum(_revision_of(p) == current for p in staying),
            "updatedReplicas": updated,
            "currentRevision": current,
            "updateRevision": update,
            "collisionCount": 0,
        }
        replicas = workload["spec"].get("replicas", 1)
        strategy = workload["spec"].get("updateStrategy", {}).get("type", "RollingUpdate")
        if strategy == "RollingUpdate" and updated == ready == len(pods) == replicas:
            status["currentReplicas"], status["currentRevision"] = updated, update
            self._revisions[key] = (update, update)
        return status

    def _write_status(
        self, namespace: str, name: str, status: Obj, kind: str = "Deployment"
    ) -> None:
        stored = self.server.get_object(kind, name, namespace)
        assert stored is not None
        stored["status"] = status
        self.server.update_object(stored)

    def make_pod(self, deployment: Obj, pod_name: str, behaviour: str = "ok") -> Obj:
        """A pod of the Deployment's current template, running (or failing) as `behaviour` says,
        Ready since now when it runs; a stored Deployment's (one with a uid) is its template's
        ReplicaSet's."""
        pod = self._bare_pod(deployment, pod_name, behaviour)
        if deployment.get("kind", "Deployment") == "Deployment" and deployment["metadata"].get(
            "uid"
        ):
            replica_set = self._replica_set(deployment)
            template_hash = replica_set["metadata"]["labels"][TEMPLATE_HASH_LABEL]
            pod["metadata"]["labels"][TEMPLATE_HASH_LABEL] = template_hash
            pod["metadata"]["ownerReferences"] = [controller_reference(replica_set)]
        return pod

    def _replica_set(self, deployment: Obj) -> Obj:
        """The ReplicaSet of the Deployment's current template, stored on first use."""
        meta = deployment["metadata"]
        template = deployment["spec"]["template"]
        digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).digest()
        template_hash = "".join(_SAFE_ALPHABET[b % len(_SAFE_ALPHABET)] for b in digest[:10])
        name = f"{meta['name']}-{template_hash}"
        stored = self.server.get_object("ReplicaSet", name, meta["namespace"])
        if stored is not None:
            return stored
        labels = {**template["metadata"].get("labels", {}), TEMPLATE_HASH_LABEL: template_hash}
        selector = copy.deepcopy(deployment["spec"]["selector"])
        selector.setdefault("matchLabels", {})[TEMPLATE_HASH_LABEL] = template_hash
        replica_set = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "namespace": meta["namespace"],
                "labels": labels,
                "ownerReferences": [controller_reference(deployment)],
            },
            "spec": {
                "replicas": deployment["spec"].get("replicas", 1),
                "selector": selector,
                # The whole template, its annotations too, with the hash label added.
                "template": {
                    **copy.deepcopy(template),
                    "metadata": {**copy.deepcopy(template["metadata"]), "labels": dict(labels)},
                },
            },
        }
        self.server.add(replica_set)
        stored = self.server.get_object("ReplicaSet", name, meta["namespace"])
        assert stored is not None
        return stored

    def _bare_pod(self, deployment: Obj, pod_name: str, behaviour: str) -> Obj:
        template = deployment["spec"]["template"]
        spec = copy.deepcopy(template["spec"])
        spec["nodeName"] = "node-1"
        ready = behaviour in HEALTHY
        statuses = []
        for container in [*spec.get("initContainers", []), *spec["containers"]]:
            image = container["image"]
            status: Obj = {
                "name": container["name"],
                "image": image,
                "restartCount": 0,
                "ready": ready,
            }
            if behaviour in ("pull-fail", "pull-retry"):
                answer = f"{image}: not found"
                if behaviour == "pull-retry":
                    answer = "unexpected status from HEAD request: 503 Service Unavailable"
                message = _PULL_ERROR.format(image) + answer
                status["state"] = {"waiting": {"reason": "ErrImagePull", "message": message}}
            else:
                status["imageID"] = (
                    f"{image.split('@')[0].rsplit(':', 1)[0]}@{self.digest_for(image)}"
                )
                if behaviour == "crash":
                    status["state"] = {"waiting": {"reason": "CrashLoopBackOff"}}
                    status["restartCount"] = 3
                else:
                    status["state"] = {"running": {}}
            statuses.append(status)
        now = datetime.now(UTC).strftime(_STAMP)
        # pkg/kubelet/status/generate.go: Ready and ContainersReady follow the containers.
        readiness: Obj = {"status": "True", "lastTransitionTime": now}
        if not ready:
            unready = " ".join(s["name"] for s in statuses)  # Go prints a []string so
            readiness = {
                "status": "False",
                "lastTransitionTime": now,
                "reason": "ContainersNotReady",
                "message": f"containers with unready status: [{unready}]",
            }
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": pod_name,
                "namespace": deployment["metadata"]["namespace"],
                "labels": dict(template["metadata"].get("labels", {})),
                "annotations": dict(template["metadata"].get("annotations", {})),
            },
            "spec": spec,
            "status": {
                "phase": "Running",
                "conditions": [
                    {"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
                    {"type": "Initialized", "status": "True", "lastTransitionTime": now},
                    {"type": "ContainersReady", **readiness},
                    {"type": "Ready", **readiness},
                ],
                "containerStatuses": statuses,
            },
        }


def controller_reference(owner: Obj) -> Obj:
    """An owner reference to `owner` as its controller, as apimachinery's metav1.NewControllerRef
    writes it (controller and blockOwnerDeletion true)."""
    return {
        "apiVersion": owner.get("apiVersion", "apps/v1"),
        "kind": owner.get("kind", "Deployment"),
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def fenceposts(deployment: Obj) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) in pods, as util/deployment_util.go ResolveFenceposts and
    MaxUnavailable resolve them for a rolling update."""
    replicas = deployment["spec"].get("replicas", 1)
    rolling = deployment["spec"].get("strategy", {}).get("rollingUpdate", {})
    surge = _scaled(rolling.get("maxSurge", _DEFAULT_FENCEPOST), replicas, round_up=True)
    unavailable = _scaled(rolling.get("maxUnavailable", _DEFAULT_FENCEPOST), replicas)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, min(unavailable, replicas)


def _scaled(value: int | str, total: int, *, round_up: bool = False) -> int:
    """intstr.GetScaledValueFromIntOrPercent: a count, or a percent of `total`."""
    if isinstance(value, int):
        return value
    share = int(value.rstrip("%")) * total / 100
    return math.ceil(share) if round_up else math.floor(share)


def _stalled_rolling(
    old: list[Obj],
    replicas: int,
    surge: int,
    unavailable: int,
    available: Callable[[Obj], bool],
) -> tuple[list[Obj], int]:
    """The old pods a rolling update stops, and how many new pods it starts, when the new pods
    never become available: rolling.go's reconcile loop run until it changes nothing."""
    kept = list(old)
    stopped: list[Obj] = []
    new = 0
    minimum = replicas - unavailable
    while True:
        # reconcileNewReplicaSet (util.NewRSNewReplicas): up to replicas + surge pods in all.
        room = min(replicas + surge - len(kept) - new, replicas - new)
        grown = max(room, 0)
        new += grown
        # reconcileOldReplicaSets: the new pods are all unavailable, so only the old count.
        shrink = max(len(kept) - minimum, 0)
        # cleanupUnhealthyReplicas first, then scaleDownOldReplicaSetsForRollingUpdate down to
        # the minimum available.
        healthy = [p for p in kept if available(p)]
        unhealthy = [p for p in kept if not available(p)]
        down = (unhealthy + healthy[: max(len(healthy) - minimum, 0)])[:shrink]
        for pod in down:
            kept.remove(pod)
            stopped.append(pod)
        if not grown and not down:
            return stopped, new


def _available_at(deployment: Obj) -> Callable[[Obj], bool]:
    wait = deployment["spec"].get("minReadySeconds", 0)
    now = datetime.now(UTC)
    return lambda pod: _available(pod, wait, now)


def _ready_since(pod: Obj) -> datetime | None:
    """When the pod became Ready, or None while it is not."""
    for condition in pod["status"].get("conditions", []):
        if condition.get("type") == "Ready" and condition.get("status") == "True":
            stamp = condition.get("lastTransitionTime")
            return datetime.strptime(stamp, _STAMP).replace(tzinfo=UTC) if stamp else None
    return None


def _available(pod: Obj, min_ready_seconds: int, now: datetime) -> bool:
    """pkg/api/v1/pod/util.go IsPodAvailable: Ready, and for minReadySeconds."""
    since = _ready_since(pod)
    if since is None:
        return False
    return min_ready_seconds == 0 or since + timedelta(seconds=min_ready_seconds) <= now


def _revision(workload: Obj) -> str:
    """The revision name of the workload's template: `<name>-<hash>`."""
    template = json.dumps(workload["spec"]["template"], sort_keys=True)
    return f"{workload['metadata']['name']}-{hashlib.sha256(template.encode()).hexdigest()[:10]}"


def _revision_of(pod: Obj) -> str:
    return str(pod["metadata"].get("labels", {}).get(REVISION_LABEL, ""))


def _terminating(pod: Obj) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def pods_of(server: FakeApiServer, deployment: Obj) -> list[Obj]:
    """Every pod the Deployment's selector matches, terminating ones included."""
    labels = deployment["spec"]["selector"]["matchLabels"]
    return [
        pod
        for pod in server.list_objects("Pod", deployment["metadata"]["namespace"])
        if all(pod["metadata"].get("labels", {}).get(k) == v for k, v in labels.items())
    ]
