"""An in-memory Kubernetes API server over real HTTP, faithful enough for kubectl to use.

It serves discovery, list (label and field selectors, limit/continue pagination), get, merge,
strategic-merge and JSON patches (409 on a stale resourceVersion, generation bumps like the real
registries), and injects faults by method, path pattern and count. Every request is logged so
tests can assert on what a client asked for.

The fake is a witness, not the judge: each behaviour below imitates the real kube-apiserver
and names the source it follows (files are in kubernetes/kubernetes unless named otherwise).

| behaviour | real source |
|---|---|
| the listening socket's backlog is the kernel's somaxconn (4096), so many connections opened at once are all accepted | go net/sock_linux.go `maxListenerBacklog` (kube-apiserver listens through Go's net.Listen) |
| list items carry no `kind`/`apiVersion`; only the list says `PodList` etc. | kubernetes/kubernetes#3030, #63676 (kubectl's printers add them back) |
| field selectors: only the labels the kind's conversion function accepts; any other is 400 `BadRequest` with that function's message | pkg/apis/core/v1/conversion.go (Pod, Node, Namespace, Secret, Service, Event), pkg/apis/batch/v1/conversion.go (Job), staging/src/k8s.io/apimachinery/pkg/runtime/helper.go `DefaultMetaV1FieldSelectorConversion` (every other kind), staging/src/k8s.io/apiserver/pkg/endpoints/handlers/get.go (`NewBadRequest(err.Error())`) |
| field values as the registries compute them: pod `spec.hostNetwork` is `false` when unset, `status.podIP` the first of `status.podIPs`, job `status.successful` the succeeded count, event `source` its component | pkg/registry/core/pod/strategy.go `ToSelectableFields`, pkg/registry/batch/job/strategy.go `JobToSelectableFields`, pkg/registry/core/event/strategy.go `ToSelectableFields`, pkg/registry/core/node/strategy.go |
| 429 from priority and fairness (`Fault.TOO_MANY_REQUESTS`): plain text `Too many requests, please try again later.`, `Retry-After: 1`, `text/plain; charset=utf-8`, `X-Content-Type-Options: nosniff` | staging/src/k8s.io/apiserver/pkg/server/filters/maxinflight.go `tooManyRequests` (called by priority-and-fairness.go), Go's `net/http.Error` |
| 429 as a JSON Status (`Fault.TOO_MANY_REQUESTS_STATUS`): `storage is (re)initializing`, reason `TooManyRequests`, `details.retryAfterSeconds` 1 and the same number in `Retry-After` (the watch cache while it starts) | staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go `NewTooManyRequests`, staging/src/k8s.io/apiserver/pkg/storage/cacher (ready wait), staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/writers.go `ErrorNegotiated` |
| a request held by `Fault.DELAY` is served in full once the delay is over, whether or not its client is still there: a create held past the client's timeout (or its Ctrl-C) is stored then, after a delete the client sent meanwhile answered 404, and its answer goes to a closed connection | staging/src/k8s.io/apiserver/pkg/endpoints/handlers/finisher/finisher.go `asyncFinisher` ("the callee goroutine may continue to run after the given context expires"), handlers/create.go `createHandler` (the write bounded by `requestTimeoutUpperBound`, 34 s: handlers/rest.go) |
| a list is written kind, apiVersion, metadata (resourceVersion, continue, remainingItemCount), then items: the continue token comes before the first item | staging/src/k8s.io/api/core/v1/types.go `PodList` (TypeMeta, ListMeta, Items: encoding/json writes fields in declaration order); staging/src/k8s.io/apimachinery/pkg/runtime/serializer/json/collections.go `streamingEncodeList` (`{`, kind, apiVersion, `"metadata":…,`, `"items":[`) |
| a continue token older than the last compaction: 410 `Expired`, no details, the "inconsistent" message and a fresh token in `metadata.continue` that lists the rest at the newest version | staging/src/k8s.io/apiserver/pkg/storage/etcd3/errors.go `handleCompactedErrorForPaging` |
| 404 `NotFound` and 409 `Conflict` Status bodies with `details` {name, group, kind: the resource}; core resources have no group | staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go `NewNotFound`, `NewConflict` |
| a 404 from what is not the API server (`Fault.PAGE_NOT_FOUND`: a server address whose path is wrong, a proxy): Go's plain text `404 page not found`, `text/plain; charset=utf-8`, `X-Content-Type-Options: nosniff`; kubectl reads it as `the server could not find the requested resource` (measured: kubectl against this fake with `/x` appended to the server address) | Go net/http `NotFound` (server.go), staging/src/k8s.io/apiserver/pkg/server/mux/pathrecorder.go (a path nothing handles), staging/src/k8s.io/client-go/rest/request.go `newUnstructuredResponseError` |
| a JSON patch `test` that fails: 422 `Invalid`, the generic message, empty details | staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go `applyJSPatch`, errors.go `NewGenericServerResponse` |
| zero counts are omitted from workload status (`omitempty` int fields); the fields without it stay | staging/src/k8s.io/api/apps/v1/types.go, staging/src/k8s.io/api/batch/v1/types.go |
| a Secret's `stringData` is written into `data` (base64) and never served | pkg/apis/core/v1/conversion.go `Convert_v1_Secret_To_core_Secret` ("StringData overwrites Data") |
| `metadata.generation` bumps on spec changes, and on annotation changes for Deployments | pkg/registry/apps/deployment/strategy.go `PrepareForUpdate` |
| `?watch=1`: a chunked stream of JSON lines `{"type": ADDED, MODIFIED, DELETED, BOOKMARK or ERROR, "object": …}`, each object whole with its kind; from a `resourceVersion`, every change after it; without one (or `0`), the current objects as ADDED first | staging/src/k8s.io/apiserver/pkg/endpoints/handlers/watch.go (`serveWatch`: chunked, one encoded event per flush), staging/src/k8s.io/apimachinery/pkg/watch/json/types.go, staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go |
| a watch with selectors: an object that stops matching is sent as DELETED (the old object, the new version); one that starts matching as ADDED | staging/src/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go `convertToWatchEvent` |
| `allowWatchBookmarks=true`: BOOKMARK events (an empty object of the kind with only `metadata.resourceVersion`) when nothing else is sent, about every minute (`watch_bookmark_seconds`) | cache_watcher.go `nextBookmarkTime`, cacher.go `bookmarkFrequency` |
| a watch from a resourceVersion older than the kept history: 200, then one ERROR event whose object is a 410 `Expired` Status, `too old resource version: R (O)`, and the stream ends | staging/src/k8s.io/apiserver/pkg/storage/cacher/watch_cache.go `getAllEventsSinceLocked` (`errors.NewResourceExpired`), cacher.go `newErrWatcher` |
| `timeoutSeconds`: the server ends the stream (a clean end of the chunked body) after that long | staging/src/k8s.io/apiserver/pkg/endpoints/handlers/get.go `ListResource` (`timeout = time.Duration(*opts.TimeoutSeconds)`), watch.go |
| `pods/log` (GET): the container named by `container` (400 `BadRequest` "a container name must be specified for pod P, choose one of: [...]" when the pod has several, "container C is not valid for pod P" when it has no such container); the kubelet picks the instance: `previous=true` the last terminated one (else 400 `previous terminated container "C" in pod "P" not found`), otherwise the running one, the terminated one, or the last terminated one, else 400 "is waiting to start"; an instance the runtime already removed is 400 "failed to get container status" (the kubelet answers 400 to every error of a log read); `tailLines` picks the last lines, ended by `\n` alone (a `\r` stays inside its line; the fake's runtime writes each line as one record, as containerd does with `max_container_log_line_size = -1`), then `limitBytes` keeps the FIRST that many bytes of them, cutting the line it ends in (the newest bytes are the ones lost); served as `text/plain` | pkg/registry/core/pod/strategy.go `LogLocation`, pkg/kubelet/kubelet_pods.go `validateContainerLogStatus`, pkg/kubelet/kuberuntime/logs/logs.go `ReadLogs` (seek to `tail.FindTailLineStartIndex`, read by `r.ReadBytes(eol[0])`, then `logWriter.write`: `line = line[:w.remain]` and stop), pkg/kubelet/server/server.go `getContainerLogs` (`WriteError(http.StatusBadRequest, err)`), staging/src/k8s.io/apiserver/pkg/registry/generic/rest/response_checker.go (a kubelet 400 becomes `NewBadRequest(body)`) |
| DELETE of a pod: 200 with the pod as last stored, removed at once (the fake's pods have no kubelet to wait for: `gracePeriodSeconds` is not honoured); a stored pod labelled `truegreen.io/trial` is handed to `server.kubelet` (tests/support/fake_kubelet.py), which runs its command and writes its Events, status and log | pkg/registry/core/pod/storage/storage.go, staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go `Delete` |
| PriorityClass (`scheduling.k8s.io/v1`, cluster-scoped) is stored and listed like any object; a pod's `spec.priority` is the one a test writes, as the Priority admission plugin would have set it; a pending pod a preemption is making room for carries `status.nominatedNodeName` and no `spec.nodeName` | plugin/pkg/admission/priority/admission.go `admitPod`, pkg/scheduler/schedule_one.go `handleSchedulingFailure` (the preemptor nominated where its victims were; the patch in pkg/scheduler/framework/api_calls/pod_status_patch.go) |
| Events are listed like any namespaced resource, in storage order (by name), not by time | staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go `GetList` (keys in order) |
| resource.k8s.io/v1 (ResourceClaim, ResourceClaimTemplate, ResourceSlice, DeviceClass) is a built-in group served by default from 1.34; `disable` turns a built-in group off: absent from `/apis`, its paths 404 | staging/src/k8s.io/api/resource/v1/types.go (`+k8s:prerelease-lifecycle-gen:introduced=1.34`), staging/src/k8s.io/apiserver/pkg/server/storage/resource_config.go, cmd/kube-apiserver `--runtime-config` |
| a custom resource (JobSet, TrainJob and its runtimes, Kubeflow's jobs, Ray's, LeaderWorkerSet, Kueue's kinds, the gang schedulers' PodGroups and Volcano's Queue, Cluster API's machine groups at v1beta2 and v1beta1: `CUSTOM_RESOURCE_TYPES`) is served only once its group is installed (`install`): before, `/apis` does not list the group and its paths answer Go's plain text `404 page not found` (the end of the delegation chain), while an unknown resource under a built-in group answers the generic 404 `NotFound` Status `the server could not find the requested resource`; once installed, its list items keep their kind and apiVersion, and its list is a map written with its keys sorted (apiVersion, items, kind, metadata: the continue token after the items) | staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/customresource_handler.go (a path no CRD serves goes to the delegate's NotFound), staging/src/k8s.io/apiserver/pkg/util/notfoundhandler/not_found_handler.go (`http.NotFound` once every path is installed), staging/src/k8s.io/apiserver/pkg/server/handler.go `serviceErrorHandler` (go-restful's 404 as a Status), staging/src/k8s.io/apiserver/pkg/server/mux/pathrecorder.go, staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresource/etcd.go (unstructured objects stored and served whole), staging/src/k8s.io/apimachinery/pkg/runtime/serializer/json/collections.go `streamingEncodeUnstructuredList` |
| Kueue's kinds (LocalQueue, ClusterQueue, ResourceFlavor, Cohort, Workload, AdmissionCheck) are served at v1beta2 and v1beta1 (v1beta2 stored, and first in discovery's versions and `preferredVersion`), or at v1beta1 alone as releases before v0.15 do; a real server converts an object to the version asked for (Kueue's conversion webhook), the fake keeps each version's objects apart, so tests store an object in the version doctor reads | kubernetes-sigs/kueue config/components/crd/bases/kueue.x-k8s.io_clusterqueues.yaml (and the others: `served: true` for both, `storage: true` for v1beta2), apis/kueue/v1beta2/doc.go, staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/customresource_discovery_controller.go (versions sorted by kube-aware version priority, the first preferred) |
| MPIJob at `kubeflow.org/v1` (the Kubeflow training operator's) and at `kubeflow.org/v2beta1` (the MPI operator's) are one CRD, `mpijobs.kubeflow.org`, so a real cluster serves one or the other; `install("kubeflow.org")` with no versions serves both, and a test picks one with `versions` | kubeflow/trainer#1930 (the two operators' MPIJob CRDs collide), kubeflow/training-operator manifests/base/crds/kubeflow.org_mpijobs.yaml, kubeflow/mpi-operator deploy/v2beta1/mpi-operator.yaml |
| old pods stay Terminating (deletionTimestamp, Running, old imageID) after the Deployment reports complete; its status counts non-terminating pods only; the status may lag the pods (`tests/support/rollout.py`) | kubernetes/kubectl#1628, kubernetes/kubernetes#110171, pkg/controller/deployment/sync.go `calculateStatus` |
| `strategy: Recreate`: every old pod is stopped first; the new pods start only once no old pod is listed, terminating ones included (`tests/support/rollout.py`) | pkg/controller/deployment/recreate.go `rolloutRecreate`, `scaleDownOldReplicaSetsForRecreate`, `oldPodsRunning` |
| `RollingUpdate` with `maxSurge` and `maxUnavailable` (25% each when unset; surge rounded up, unavailable rounded down and capped at the replicas, unavailable 1 when both come to 0, so `maxSurge: 0` on one replica stops the old pod first): new pods that become available replace every old one; new pods that never do leave the rollout where the controller's loop stops, `min(replicas, surge + unavailable)` new pods beside `replicas - unavailable` old ones, unhealthy old pods stopped first; the steps in between are not modelled (`tests/support/rollout.py`) | pkg/controller/deployment/rolling.go `reconcileNewReplicaSet`, `reconcileOldReplicaSets`, `cleanupUnhealthyReplicas`, `scaleDownOldReplicaSetsForRollingUpdate`; pkg/controller/deployment/util/deployment_util.go `ResolveFenceposts`, `NewRSNewReplicas`, `MaxUnavailable`; pkg/apis/apps/v1/defaults.go `SetDefaults_Deployment` |
| a running pod is Ready from its start (`Ready` and `ContainersReady` True with `lastTransitionTime`); a crashing, unpulled or never-ready one is not (`ContainersNotReady`, "containers with unready status: [a b]"); a pod is available once Ready for the Deployment's `minReadySeconds` (lastTransitionTime + minReadySeconds at or before now), and a rolling update keeps its old pods until the new ones are; `readyReplicas`, `availableReplicas` and `unavailableReplicas` are counted from the pods (unavailable: the pods that stay, less the available ones), and the status is written again when the new pods become available (`tests/support/rollout.py`) | pkg/kubelet/status/generate.go `GenerateContainersReadyCondition`, `GeneratePodReadyCondition`; pkg/api/v1/pod/util.go `IsPodAvailable`; pkg/controller/replicaset/replica_set_utils.go `calculateStatus`; pkg/controller/replicaset/replica_set.go `syncReplicaSet` (requeued after minReadySeconds); pkg/controller/deployment/sync.go `calculateStatus` |
| a StatefulSet's RollingUpdate replaces one pod at a time from the highest ordinal down to `rollingUpdate.partition`, the old pod gone before its namesake starts, and stops at a new pod that is not Ready; the status counts `replicas`, `readyReplicas`, `availableReplicas`, and `currentReplicas`/`updatedReplicas` (pods not terminating, by `controller-revision-hash`); `currentRevision` becomes `updateRevision` once every pod is updated and Ready; `OnDelete` replaces nothing (`tests/support/rollout.py`, `kubectl rollout status` the oracle in `tests/e2e/test_kubectl_rollout_kinds.py`) | pkg/controller/statefulset/stateful_set_control.go `updateStatefulSet` (the update loop: delete the largest ordinal not at `updateRevision`, wait for unhealthy pods), `computeReplicaStatus`; pkg/controller/statefulset/stateful_set_utils.go `completeRollingUpdate`; pkg/apis/apps/v1/defaults.go `SetDefaults_StatefulSet` (partition 0) |
| a DaemonSet's RollingUpdate (maxSurge 0, maxUnavailable 1) replaces its pods one node at a time, old pod stopped first, and stops at a new pod that is not available; the status counts `desiredNumberScheduled`, `currentNumberScheduled`, `numberReady`, `updatedNumberScheduled` (by `controller-revision-hash`), `numberAvailable`, `numberUnavailable` over the pods not terminating (`tests/support/rollout.py`, kubectl the oracle as above) | pkg/controller/daemon/update.go `rollingUpdate`; pkg/controller/daemon/daemon_controller.go `updateDaemonSetStatus`, `syncDaemonSet` (OnDelete: no update); pkg/apis/apps/v1/defaults.go `SetDefaults_DaemonSet` |
| answers framed as kube-apiserver 1.36 over Go 1.26's net/http sends them to a client that does not ask for gzip: compact JSON and a newline; an answer of at most 2048 bytes with `Content-Length`, a bigger one `Transfer-Encoding: chunked`; a list is written a piece at a time (`{`, each key, `:`, each value, `,`, each item, `]`, `}\n`), which Go's 2048-byte buffer turns into chunks: it fills to 2048 and sends that, and a write longer than an empty buffer goes out as one chunk of its own; a pod log flushes its headers first, so it is always chunked, written in 32 KiB reads. To a client that sends `Accept-Encoding: gzip` (as kubectl does), an answer over 128 KiB is gzip-encoded at level 1 with `Content-Encoding: gzip` and `Vary: Accept-Encoding` (not a watch, not a log) | Go src/net/http/server.go (`bufferBeforeChunkingSize`, `(*chunkWriter).writeHeader`: Content-Length only when the handler is done and the body fit, `(*response).finishRequest`), src/bufio/bufio.go `(*Writer).Write`; kubernetes/apimachinery v0.36.3 pkg/runtime/serializer/json/json.go `doEncode` (`json.NewEncoder(w).Encode`), collections.go `streamingEncodeList`; kubernetes/apiserver v0.36.3 pkg/features/kube_features.go (`StreamingCollectionEncodingToJSON` GA and locked on since 1.34), pkg/server/genericapiserver.go `NewDefaultAPIGroupInfo`, pkg/endpoints/handlers/responsewriters/writers.go `SerializeObject`, `deferredResponseWriter` (gzip above `defaultGzipThresholdBytes`), compression.go (`gzipContentEncodingLevel = 1`, `ContentEncodingSupported`), `StreamObject` (flush, then `io.Copy`) |
| label selectors: `=`, `==`, `!=`, `in`, `notin`, `key`, `!key`, and `>`/`<`: one integer value (else 400 "for 'Gt', 'Lt' operators, the value must be an integer"), matching only a label that is there and reads as a base-10 int64 | staging/src/k8s.io/apimachinery/pkg/labels/selector.go `NewRequirement`, `Requirement.Matches` (`strconv.ParseInt(ls.Get(r.key), 10, 64)`) |
| every answer carries a `Date` header, the server's clock (a trial's end is set on it, so that the probe's deadline and doctor's reading window share one clock) | Go src/net/http/server.go `(*chunkWriter).writeHeader` (`appendTime` when the handler set none) |
"""

from __future__ import annotations

import base64
import copy
import gzip
import json
import re
import socket
import ssl
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from email.utils import formatdate
from enum import Enum
from functools import partial
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import yaml

from tests.support import fake_admission

if TYPE_CHECKING:
    from tests.support.fake_kubelet import FakeKubelet

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class ResourceType:
    """One API resource the fake serves."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    custom: bool = False
    """Served from a CustomResourceDefinition: there only once installed (`install`)."""

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def resource(self) -> str:
        """The qualified resource as Status messages name it: `deployments.apps`, `pods`."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


RESOURCE_TYPES = (
    ResourceType("", "v1", "Pod", "pods", True, ("po",)),
    ResourceType("", "v1", "Node", "nodes", False, ("no",)),
    ResourceType("", "v1", "Namespace", "namespaces", False, ("ns",)),
    ResourceType("", "v1", "Secret", "secrets", True),
    ResourceType("", "v1", "ConfigMap", "configmaps", True, ("cm",)),
    ResourceType("", "v1", "Service", "services", True, ("svc",)),
    ResourceType("", "v1", "ServiceAccount", "serviceaccounts", True, ("sa",)),
    ResourceType("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, ("pvc",)),
    ResourceType("", "v1", "PersistentVolume", "persistentvolumes", False, ("pv",)),
    ResourceType("", "v1", "LimitRange", "limitranges", True, ("limits",)),
    ResourceType("", "v1", "Event", "events", True, ("ev",)),
    ResourceType("apps", "v1", "Deployment", "deployments", True, ("deploy",)),
    ResourceType("apps", "v1", "StatefulSet", "statefulsets", True, ("sts",)),
    ResourceType("apps", "v1", "DaemonSet", "daemonsets", True, ("ds",)),
    ResourceType("apps", "v1", "ReplicaSet", "replicasets", True, ("rs",)),
    ResourceType("batch", "v1", "Job", "jobs", True),
    ResourceType("batch", "v1", "CronJob", "cronjobs", True, ("cj",)),
    ResourceType("storage.k8s.io", "v1", "StorageClass", "storageclasses", False, ("sc",)),
    ResourceType("storage.k8s.io", "v1", "CSIDriver", "csidrivers", False),
    ResourceType("", "v1", "ResourceQuota", "resourcequotas", True, ("quota",)),
    ResourceType("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", True),
    ResourceType("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, ("pc",)),
    ResourceType("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", False),
    ResourceType(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        False,
    ),
    ResourceType(
        "admissionregistration.k8s.io",
        "v1",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        False,
    ),
    # Dynamic resource allocation, GA and served by default from 1.34
    # (staging/src/k8s.io/api/resource/v1/types.go); `disable` takes it away as
    # `--runtime-config=resource.k8s.io/v1=false` (or an older server) does.
    ResourceType("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", True),
    ResourceType("resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates", True),
    ResourceType("resource.k8s.io", "v1", "ResourceSlice", "resourceslices", False),
    ResourceType("resource.k8s.io", "v1", "DeviceClass", "deviceclasses", False),
)


def _custom(
    group: str, version: str, kind: str, plural: str, namespaced: bool = True
) -> ResourceType:
    return ResourceType(group, version, kind, plural, namespaced, custom=True)


CUSTOM_RESOURCE_TYPES = (
    # sigs.k8s.io/jobset config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml
    _custom("jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets"),
    # kubeflow/trainer manifests/base/crds (trainer.kubeflow.org_*.yaml)
    _custom("trainer.kubeflow.org", "v1alpha1", "TrainJob", "trainjobs"),
    _custom("trainer.kubeflow.org", "v1alpha1", "TrainingRuntime", "trainingruntimes"),
    _custom(
        "trainer.kubeflow.org",
        "v1alpha1",
        "ClusterTrainingRuntime",
        "clustertrainingruntimes",
        namespaced=False,
    ),
    # kubeflow/training-operator manifests/base/crds (kubeflow.org_*.yaml)
    _custom("kubeflow.org", "v1", "PyTorchJob", "pytorchjobs"),
    _custom("kubeflow.org", "v1", "TFJob", "tfjobs"),
    _custom("kubeflow.org", "v1", "XGBoostJob", "xgboostjobs"),
    _custom("kubeflow.org", "v1", "PaddleJob", "paddlejobs"),
    _custom("kubeflow.org", "v1", "JAXJob", "jaxjobs"),
    # its MPIJob (kubeflow.org_mpijobs.yaml, v1): the same CRD as mpi-operator's below, so a
    # real cluster has one or the other (kubeflow/trainer#1930); `versions` picks one.
    _custom("kubeflow.org", "v1", "MPIJob", "mpijobs"),
    # kubeflow/mpi-operator manifests/base/kubeflow.org_mpijobs.yaml
    _custom("kubeflow.org", "v2beta1", "MPIJob", "mpijobs"),
    # ray-project/kuberay ray-operator/config/crd/bases/ray.io_*.yaml
    _custom("ray.io", "v1", "RayJob", "rayjobs"),
    _custom("ray.io", "v1", "RayCluster", "rayclusters"),
    # kubernetes-sigs/lws config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml
    _custom("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet", "leaderworkersets"),
    # kubernetes-sigs/karpenter pkg/apis/crds/karpenter.sh_nodeclaims.yaml (cluster-scoped).
    _custom("karpenter.sh", "v1", "NodeClaim", "nodeclaims", False),
    # pkg/apis/crds/karpenter.sh_nodepools.yaml (cluster-scoped).
    _custom("karpenter.sh", "v1", "NodePool", "nodepools", False),
    # kubernetes-sigs/kueue config/components/crd/bases/kueue.x-k8s.io_*.yaml: every kind
    # served at v1beta2 (stored) and v1beta1 since v0.15, at v1beta1 alone before (the
    # `versions` of `install`); v1beta2 is listed first, as discovery prefers it.
    *(
        _custom("kueue.x-k8s.io", version, kind, plural, namespaced)
        for version in ("v1beta2", "v1beta1")
        for kind, plural, namespaced in (
            ("LocalQueue", "localqueues", True),
            ("ClusterQueue", "clusterqueues", False),
            ("ResourceFlavor", "resourceflavors", False),
            ("Cohort", "cohorts", False),
            ("Workload", "workloads", True),
            ("AdmissionCheck", "admissionchecks", False),
        )
    ),
    # kubernetes-sigs/cluster-api config/crd/bases/cluster.x-k8s.io_machinedeployments.yaml,
    # _machinesets.yaml, _machinepools.yaml: served at v1beta2 (stored, Cluster API v1.11 on)
    # and v1beta1; v1beta2 listed first, as discovery prefers it.
    *(
        _custom("cluster.x-k8s.io", version, kind, plural)
        for version in ("v1beta2", "v1beta1")
        for kind, plural in (
            ("MachineDeployment", "machinedeployments"),
            ("MachineSet", "machinesets"),
            ("MachinePool", "machinepools"),
        )
    ),
    # volcano-sh/volcano config/crd/volcano/bases/scheduling.volcano.sh_podgroups.yaml and
    # _queues.yaml (volcano-sh/apis pkg/apis/scheduling/v1beta1/types.go)
    _custom("scheduling.volcano.sh", "v1beta1", "PodGroup", "podgroups"),
    _custom("scheduling.volcano.sh", "v1beta1", "Queue", "queues", namespaced=False),
    # kubernetes-sigs/scheduler-plugins manifests/crds/scheduling.x-k8s.io_podgroups.yaml
    _custom("scheduling.x-k8s.io", "v1alpha1", "PodGroup", "podgroups"),
    # NVIDIA/KAI-Scheduler deployments/crds (scheduling.run.ai_podgroups.yaml)
    _custom("scheduling.run.ai", "v2alpha2", "PodGroup", "podgroups"),
    # (scheduling.run.ai_queues.yaml: cluster-scoped, v2 the stored version)
    _custom("scheduling.run.ai", "v2", "Queue", "queues", namespaced=False),
)
"""Kinds a cluster serves only where their controller's CRDs are installed (`install`)."""
WATCH_HISTORY = 10_000
"""Changes kept for watches to start from; a watch from before them is 410 Expired. (The
real watch cache keeps a window of 100 to 100,000 events, watch_cache.go.)"""
WATCH_TIMEOUT_SECONDS = 1800.0
"""A watch without timeoutSeconds ends after this long (the server's --min-request-timeout)."""
PRIORITY_AND_FAIRNESS_RETRY_AFTER = "1"
"""maxinflight.go's retryAfter: the seconds priority and fairness asks a client to wait."""
GO_WRITE_BUFFER = 2048
"""Go net/http's bufferBeforeChunkingSize: a handler's writes gather here; an answer that fits
when the handler returns gets a Content-Length, any other goes out chunked."""
LOG_READ = 32 * 1024
"""io.Copy's buffer: the most a pod log's proxied body is written in at once."""


@dataclass(frozen=True)
class Wire:
    """An answer's framing header (`Content-Length: N` or `Transfer-Encoding: chunked`) and
    its body as framed on the wire."""

    framing: str
    data: bytes


_GO_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def encode(value: Any) -> bytes:
    """JSON as Go's json.Marshal writes it: compact, UTF-8 unescaped, but `<`, `>`, `&` and the
    two line separators escaped (they only ever occur inside strings, so the text is safe)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.translate(_GO_ESCAPES).encode()


def list_writes(
    kind: str, api_version: str, metadata: bytes, items: list[bytes]
) -> Iterator[bytes]:
    """The writes collections.go's streamingEncodeList makes for a list, each value encoded."""
    yield b"{"
    for key, value in (("kind", kind), ("apiVersion", api_version)):
        yield from (encode(key), b":", encode(value), b",")
    yield from (b'"metadata"', b":", metadata, b",", b'"items":[')
    for index, item in enumerate(items):
        yield item
        if index < len(items) - 1:
            yield b","
    yield from (b"]", b"}\n")


def framed(writes: Iterable[bytes], *, flushed: bool = False) -> Wire:
    """`writes` as net/http frames them: through its bufio.Writer of GO_WRITE_BUFFER bytes, each
    flush of it and each write too long for an empty buffer a chunk. `flushed`: the handler
    flushed its headers before writing, so even a small body is chunked."""
    chunks: list[bytes] = []
    buffer = bytearray()
    for write in writes:
        rest = write
        while len(rest) > GO_WRITE_BUFFER - len(buffer):
            if not buffer:
                chunks.append(rest)
                rest = b""
            else:
                room = GO_WRITE_BUFFER - len(buffer)
                chunks.append(bytes(buffer) + rest[:room])
                buffer.clear()
                rest = rest[room:]
        buffer += rest
    if not chunks and not flushed:
        return Wire(f"Content-Length: {len(buffer)}", bytes(buffer))
    if buffer:
        chunks.append(bytes(buffer))
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in chunks)
    return Wire("Transfer-Encoding: chunked", body + b"0\r\n\r\n")


GZIP_THRESHOLD = 128 * 1024
"""kube-apiserver gzips an answer larger than this to a client that asks (writers.go
defaultGzipThresholdBytes), at level 1 (compression.go gzipContentEncodingLevel)."""


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an Accept-Encoding value names gzip, as compression.go ContentEncodingSupported
    reads it: comma-separated tokens, one of them `gzip` once trimmed."""
    return any(token.strip() == "gzip" for token in accept_encoding.split(","))


def answer_wire(writes: Iterable[bytes], gzipped: bool) -> tuple[Wire, dict[str, str]]:
    """An answer's framing and the headers its encoding adds: gzip-encoded when the client
    asked and the body passes the threshold (deferredResponseWriter.unbufferedWrite: then
    `Content-Encoding: gzip` and `Vary: Accept-Encoding`), else the writes framed as they are."""
    pieces = list(writes)
    body = b"".join(pieces)
    if not gzipped or len(body) <= GZIP_THRESHOLD:
        return framed(pieces), {}
    encoded = {"Content-Encoding": "gzip", "Vary": "Accept-Encoding"}
    return framed([gzip.compress(body, compresslevel=1, mtime=0)]), encoded


class CustomList(dict[str, Any]):
    """A custom resource's list: a map, written with its keys sorted."""


def _answer_writes(payload: JsonObject | list[Any]) -> Iterator[bytes]:
    """A list streamed item by item (json.go doEncode: a type of TypeMeta, ListMeta and Items
    only); anything else encoded whole, one write (encoding/json's Encoder adds the newline).
    A custom resource's list is an unstructured map: its keys are written sorted, so its items
    come before its metadata (collections.go streamingEncodeUnstructuredList)."""
    if isinstance(payload, CustomList):
        yield b"{"
        yield from (encode("apiVersion"), b":", encode(payload["apiVersion"]), b",")
        yield b'"items":['
        for index, item in enumerate(payload["items"]):
            yield encode(item)
            if index < len(payload["items"]) - 1:
                yield b","
        yield from (b"],", encode("kind"), b":", encode(payload["kind"]), b",")
        yield from (b'"metadata":', encode(payload["metadata"]), b"}\n")
    elif isinstance(payload, dict) and set(payload) == {"kind", "apiVersion", "metadata", "items"}:
        items = [encode(item) for item in payload["items"]]
        yield from list_writes(
            payload["kind"], payload["apiVersion"], encode(payload["metadata"]), items
        )
    else:
        yield encode(payload) + b"\n"


_VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]
# The registries that bump metadata.generation; Deployments also count annotation changes
# because the Deployment registry copies annotations to its ReplicaSets.
_GENERATION_ON_ANNOTATIONS = {"deployments"}
_GENERATION_ON_SPEC = {
    "deployments",
    "statefulsets",
    "daemonsets",
    "replicasets",
    "jobs",
    "cronjobs",
}


class Fault(Enum):
    """What an injected fault does to a matching request."""

    UNAUTHORIZED = 401
    FORBIDDEN = 403
    NOT_FOUND = 404
    """The API server's NotFound Status: naming the object for a path that names one (as
    NewNotFound does), unnamed for a collection or a path it does not serve."""
    PAGE_NOT_FOUND = "page-not-found"
    """404 from something that is not the API server (a server address whose path is wrong,
    a proxy): Go's net/http NotFound, plain text `404 page not found`."""
    CONFLICT = 409
    TOO_MANY_REQUESTS = 429
    """Priority and fairness turning the request away: plain text and Retry-After."""
    TOO_MANY_REQUESTS_STATUS = "429-status"
    """A 429 Status object (reason TooManyRequests, details.retryAfterSeconds, Retry-After)."""
    SERVER_ERROR = 500
    UNAVAILABLE = 503
    DELAY = "delay"
    """Sleep `delay` seconds, then serve the request in full (past the client's timeout: a
    create is stored then, as the API server finishes a write its client gave up on)."""
    RESET = "reset"
    """Close the connection with a TCP reset and no answer."""
    MALFORMED = "malformed"
    """200 with a body that is not JSON."""
    WRONG_KIND = "wrong-kind"
    """200 with valid JSON that is not the promised document."""
    EMPTY_OBJECT = "empty-object"
    """200 with `{}`: an object, but no list, no object's metadata, no groups."""
    FAILURE_STATUS_200 = "failure-status-200"
    """200 with a Failure Status (reason Forbidden, code 403), as a proxy or a broken
    aggregated server may answer; client-go reads it as the error it states."""


_BODIES_OF_200: dict[Fault, Callable[[str], bytes]] = {
    Fault.MALFORMED: lambda path: b'{"kind": "List", "items": [{"metadata": ',
    Fault.WRONG_KIND: lambda path: b'["this", "is", "not", "an", "object"]',
    Fault.EMPTY_OBJECT: lambda path: b"{}",
    Fault.FAILURE_STATUS_200: lambda path: json.dumps(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": f"{path} is forbidden",
            "reason": "Forbidden",
            "code": 403,
        }
    ).encode(),
}
"""The faults answered with 200 and a body that is not what was asked for, by the path asked."""


@dataclass
class FaultRule:
    """Inject `fault` into requests whose method and path match; `count` None means forever."""

    fault: Fault
    path: re.Pattern[str]
    method: str | None = None
    count: int | None = None
    delay: float = 30.0
    after: int = 0
    """Let this many matching requests through before the fault starts."""
    hits: int = 0
    matched: int = 0


@dataclass(frozen=True)
class RequestRecord:
    """One request the fake received, and the status it answered with (0 for a reset)."""

    method: str
    path: str
    query: Mapping[str, str]
    status: int
    fault: Fault | None = None


@dataclass(frozen=True)
class HeardRequest:
    """One request's method, path and every header line as sent (names lower-cased; a
    repeated header, such as `Impersonate-Group`, once per line)."""

    method: str
    path: str
    headers: tuple[tuple[str, str], ...]

    def all(self, name: str) -> list[str]:
        """Every value of header `name`, in the order sent."""
        return [value for key, value in self.headers if key == name.lower()]


@dataclass(frozen=True)
class _Change:
    """One stored change, kept for watches: the object after it and before it."""

    rv: int
    rtype: ResourceType
    type: str
    obj: JsonObject
    previous: JsonObject | None


def _event_for(change: _Change, passes: Callable[[JsonObject | None], bool]) -> JsonObject | None:
    """The event one watcher sees for `change`, by its selectors before and after (None: not
    its business), as cache_watcher.go's convertToWatchEvent decides it."""
    now = change.type != "DELETED" and passes(change.obj)
    before = passes(change.previous)
    if now and not before:
        return {"type": "ADDED", "object": copy.deepcopy(change.obj)}
    if now:
        return {"type": "MODIFIED", "object": copy.deepcopy(change.obj)}
    if before:
        gone = copy.deepcopy(change.previous or {})
        gone.setdefault("metadata", {})["resourceVersion"] = str(change.rv)
        return {"type": "DELETED", "object": gone}
    return None


class ApiFailureError(Exception):
    """A failure answered as a Status object; `details` and `list_continue` as the real server
    fills them (None: the field is absent)."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        headers: Mapping[str, str] | None = None,
        *,
        details: JsonObject | None = None,
        list_continue: str = "",
        page_not_found: bool = False,
    ):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.headers = dict(headers or {})
        self.details = details
        self.list_continue = list_continue
        self.page_not_found = page_not_found
        """Sent as Go's net/http `NotFound` (`PAGE_NOT_FOUND_TEXT`) instead of a Status."""

    def body(self) -> JsonObject:
        """The Status object the real server writes for this failure."""
        return status_body(
            self.code, self.reason, self.message, self.details, list_continue=self.list_continue
        )


class Listener(ThreadingHTTPServer):
    """The listening socket with the backlog a Go server has (net/sock_linux.go
    `maxListenerBacklog`: the kernel's somaxconn, 4096 on current Linux), not socketserver's 5,
    so that a client opening many connections at once is not held back by SYN retries.

    Over TLS, each connection's handshake runs on that connection's own thread, as Go's
    net/http runs it in the connection's goroutine (server.go `conn.serve` calls
    `tlsConn.HandshakeContext`), never in the accepting loop: a peer that connects and never
    finishes its handshake holds up only itself, not every connection behind it."""

    request_queue_size = 4096

    def finish_request(self, request: Any, client_address: Any) -> None:
        if isinstance(request, ssl.SSLSocket):
            try:
                request.do_handshake()
            except (OSError, ssl.SSLError):
                return  # the peer's failure, on its own connection
        super().finish_request(request, client_address)


class FakeApiServer:
    """The in-memory API server. Use as a context manager, or start() and stop()."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._objects: dict[tuple[str, str, str], dict[tuple[str, str], JsonObject]] = {}
        self._resource_version = 1000
        self._compacted_before = 0
        self.faults: list[FaultRule] = []
        self.log: list[RequestRecord] = []
        self.heard: list[HeardRequest] = []
        """Every request's header lines, in arrival order (faults and watches included)."""
        self.patch_hooks: list[Callable[[FakeApiServer, str, JsonObject], None]] = []
        self.request_hooks: list[Callable[[FakeApiServer, str, str], None]] = []
        """Called with (server, method, path) before each request is answered: the rollout
        simulator's controllers and kubelet act between a client's reads."""
        self.container_logs: dict[str, str] = {}
        """What the kubelet holds per container instance, by `containerID` (`pods/log`)."""
        self.kubelet: FakeKubelet | None = None
        """The trial pods' kubelet (tests/support/fake_kubelet.py), where a test sets one."""
        self.removed_instances: set[str] = set()
        """Container instances the runtime has already removed (garbage-collected) though the
        pod's status still names them: their log is a 400, as the kubelet answers."""
        self.admission = fake_admission.AdmissionSettings()
        """What pod creates meet (tests/support/fake_admission.py)."""
        self._changes: deque[_Change] = deque(maxlen=WATCH_HISTORY)
        self._expired_through = 0
        """A watch from a resourceVersion below this has missed changes: 410 Expired."""
        self._changed = threading.Condition(self._lock)
        self._watch_epoch = 0
        self.watch_bookmark_seconds = 60.0
        """How often an idle watch that asked for bookmarks gets one (cacher.go: a minute)."""
        self._stopping = threading.Event()
        self._scheme = "http"
        self._tls: tuple[Path, Path] | None = None
        self.frozen = False
        """Frozen: every GET answer is encoded once and then served from those bytes, so that a
        benchmark measures its client and not this server (`freeze()`)."""
        self._encoded: dict[tuple[str, str, bool], tuple[int, Wire, dict[str, str]]] = {}
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._served: tuple[ResourceType, ...] = ()
        self._by_path: dict[tuple[str, str, str], ResourceType] = {}
        self._by_kind: dict[tuple[str, str], ResourceType] = {}
        self._serve(RESOURCE_TYPES)

    def _serve(self, types: Iterable[ResourceType]) -> None:
        with self._lock:
            self._served = tuple(dict.fromkeys((*self._served, *types)))
            self._by_path = {(t.group, t.version, t.plural): t for t in self._served}
            self._by_kind = {(t.group_version, t.kind): t for t in self._served}

    def install(self, *groups: str, versions: Iterable[str] | None = None) -> None:
        """Serve the custom resources of `groups` from now on, as installing their CRDs does:
        discovery lists the group and its versions, and their paths answer. Until then a
        request to them is Go's plain `404 page not found` (`no_such_path`),
        and they are absent from `/apis`. `versions`: only these of their versions (a release
        that serves fewer); each version keeps its own objects, so a test stores an object in
        the version a client reads (the fake does not convert between versions)."""
        unknown = set(groups) - {t.group for t in CUSTOM_RESOURCE_TYPES}
        if unknown:
            raise ValueError(f"the fake has no custom resources of {sorted(unknown)}")
        wanted = None if versions is None else set(versions)
        self._serve(
            t
            for t in CUSTOM_RESOURCE_TYPES
            if t.group in groups and (wanted is None or t.version in wanted)
        )

    def disable(self, *groups: str) -> None:
        """Stop serving the built-in resources of `groups`, as a server whose
        `--runtime-config` turns their versions off (or that predates them) does: discovery
        leaves them out and their paths answer 404 (staging/src/k8s.io/apiserver/pkg/server/
        storage/resource_config.go: a disabled group version is never installed)."""
        with self._lock:
            kept = tuple(t for t in self._served if t.custom or t.group not in groups)
            self._served = ()
            self._serve(kept)

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self, tls: tuple[Path, Path] | None = None, host: str = "127.0.0.1") -> FakeApiServer:
        """Serve on `host` (a loopback address: 127.0.0.1 or ::1); over HTTPS with `tls` =
        (certificate, key) files."""
        handler = _make_handler(self)
        self._tls = tls
        self._server = (_Listener6 if ":" in host else Listener)((host, 0), handler)
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(tls[0]), str(tls[1]))
            self._server.socket = context.wrap_socket(
                self._server.socket, server_side=True, do_handshake_on_connect=False
            )
            self._scheme = "https"
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        with self._changed:
            self._changed.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> FakeApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        shown = str(host)
        return f"{self._scheme}://{f'[{shown}]' if ':' in shown else shown}:{port}"

    def write_kubeconfig(
        self,
        path: Path,
        namespace: str | None = None,
        token: str = "t0ken",
        certificate_authority: Path | None = None,
    ) -> Path:
        """A kubeconfig pointing at this server with one context, `fake`."""
        context: JsonObject = {"cluster": "fake", "user": "fake"}
        cluster: JsonObject = {"server": self.url}
        if certificate_authority is not None:
            cluster["certificate-authority"] = str(certificate_authority)
        if namespace:
            context["namespace"] = namespace
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": cluster}],
            "users": [{"name": "fake", "user": {"token": token}}],
            "contexts": [{"name": "fake", "context": context}],
            "current-context": "fake",
        }
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        return path

    def require_client_certificates(self, authority: Path) -> None:
        """From now on, refuse a TLS client without a certificate `authority` signed.

        kube-apiserver with `--client-ca-file` asks for one and answers 401 when no credential
        is valid; refusing at the handshake is stricter, and proves a certificate was shown.
        Call after `start(tls=…)`: new connections use the changed context.
        """
        assert self._server is not None, "start(tls=…) first"
        assert isinstance(self._server.socket, ssl.SSLSocket), "start(tls=…) first"
        context = self._server.socket.context
        context.load_verify_locations(str(authority))
        context.verify_mode = ssl.CERT_REQUIRED

    # -- objects -----------------------------------------------------------------------------

    def add(self, *objects: Mapping[str, Any]) -> None:
        """Store objects (as the API would after a create), assigning resourceVersion and uid."""
        with self._lock:
            for obj in objects:
                stored = copy.deepcopy(dict(obj))
                rtype = self._by_kind.get((stored.get("apiVersion", ""), stored.get("kind", "")))
                if rtype is None:
                    raise ValueError(
                        f"fake API server does not serve {stored.get('kind')} (install its "
                        "group first when it is a custom resource)"
                    )
                meta = stored.setdefault("metadata", {})
                if rtype.namespaced:
                    meta.setdefault("namespace", "default")
                    self._ensure_namespace(meta["namespace"])
                else:
                    meta.pop("namespace", None)
                meta.setdefault("uid", f"uid-{meta['name']}-{self._resource_version}")
                meta.setdefault("creationTimestamp", "2026-01-01T00:00:00Z")
                if rtype.plural in _GENERATION_ON_SPEC:
                    meta.setdefault("generation", 1)
                meta["resourceVersion"] = self._next_rv()
                bucket = self._objects.setdefault((rtype.group, rtype.version, rtype.plural), {})
                key = (meta.get("namespace", ""), meta["name"])
                previous = bucket.get(key)
                bucket[key] = _as_served(rtype, stored)
                self._record_change(rtype, "MODIFIED" if previous else "ADDED", stored, previous)

    def _ensure_namespace(self, name: str) -> None:
        """Namespaces exist before their objects, as kubectl expects when it explains a 404."""
        bucket = self._objects.setdefault(("", "v1", "namespaces"), {})
        if ("", name) not in bucket:
            bucket[("", name)] = {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": name, "uid": f"uid-ns-{name}", "resourceVersion": "1"},
                "status": {"phase": "Active"},
            }

    def load_yaml(self, text_or_path: str | Path) -> None:
        """Store every object of a (multi-document) YAML text or file; `List` kinds unwrap."""
        text = text_or_path.read_text() if isinstance(text_or_path, Path) else text_or_path
        for doc in yaml.safe_load_all(text):
            if not doc:
                continue
            if str(doc.get("kind", "")).endswith("List"):
                self.add(*doc.get("items", []))
            else:
                self.add(doc)

    def get_object(self, kind: str, name: str, namespace: str = "") -> JsonObject | None:
        """A copy of a stored object, by kind name (e.g. "Deployment")."""
        with self._lock:
            for rtype in self._served:
                if rtype.kind == kind:
                    bucket = self._objects.get((rtype.group, rtype.version, rtype.plural), {})
                    found = bucket.get((namespace if rtype.namespaced else "", name))
                    return copy.deepcopy(found) if found else None
        return None

    def list_objects(self, kind: str, namespace: str | None = None) -> list[JsonObject]:
        """Copies of every stored object of `kind` (e.g. "Pod"), optionally in one namespace."""
        with self._lock:
            found: list[JsonObject] = []
            for rtype in self._served:
                if rtype.kind == kind:
                    for (ns, _), obj in sorted(self._bucket(rtype).items()):
                        if namespace is None or ns == namespace:
                            found.append(copy.deepcopy(obj))
            return found

    def update_object(self, obj: Mapping[str, Any]) -> None:
        """Replace a stored object as a controller would: new resourceVersion, same generation."""
        with self._lock:
            stored = copy.deepcopy(dict(obj))
            rtype = self._by_kind[(stored["apiVersion"], stored["kind"])]
            stored["metadata"]["resourceVersion"] = self._next_rv()
            bucket = self._objects.setdefault((rtype.group, rtype.version, rtype.plural), {})
            key = (stored["metadata"].get("namespace", ""), stored["metadata"]["name"])
            previous = bucket.get(key)
            bucket[key] = _as_served(rtype, stored)
            self._record_change(rtype, "MODIFIED" if previous else "ADDED", stored, previous)

    def delete_object(self, kind: str, name: str, namespace: str = "") -> None:
        with self._lock:
            for rtype in self._served:
                if rtype.kind == kind:
                    bucket = self._objects.get((rtype.group, rtype.version, rtype.plural), {})
                    gone = bucket.pop((namespace if rtype.namespaced else "", name), None)
                    if gone is not None:
                        # The DELETED event carries the last state at the deletion's version.
                        last = copy.deepcopy(gone)
                        last["metadata"]["resourceVersion"] = self._next_rv()
                        self._record_change(rtype, "DELETED", last, gone)

    def twin(self) -> FakeApiServer:
        """A started copy of this cluster: the same objects and resource versions, and the
        same faults with their counters reset, so it answers the same run of requests the
        same way. Requests to the twin never reach this server's log or fault counters.
        The twin of a stopped server is stopped too. Stop it with `stop()`."""
        twin = FakeApiServer()
        twin._served = ()  # exactly what this server serves: installed and disabled groups alike
        twin._serve(self._served)
        with self._lock:
            twin._objects = copy.deepcopy(self._objects)
            twin._resource_version = self._resource_version
            twin._compacted_before = self._compacted_before
            twin.faults = [replace(rule, hits=0, matched=0) for rule in self.faults]
            twin.admission = copy.deepcopy(self.admission)
            twin.container_logs = dict(self.container_logs)
        twin.start(self._tls)
        if self._stopping.is_set():
            twin.stop()
        return twin

    def freeze(self) -> None:
        """Serve every GET from pre-encoded bytes from now on; writes are no longer expected."""
        self.frozen = True

    def compact(self) -> None:
        """Expire every continue token issued so far, as etcd compaction does, and every
        resourceVersion a watch could start from."""
        with self._lock:
            self._compacted_before = self._resource_version + 1
            self._expired_through = self._resource_version + 1
            self._changes.clear()
            self._next_rv()

    def drop_watches(self) -> None:
        """End every open watch stream now, cleanly (an API server restart, a load balancer)."""
        with self._changed:
            self._watch_epoch += 1
            self._changed.notify_all()

    # -- watch ---------------------------------------------------------------------------------

    def _record_change(
        self, rtype: ResourceType, kind: str, obj: JsonObject, previous: JsonObject | None
    ) -> None:
        """Keep a change for watches (the caller holds the lock); the oldest falls off."""
        if len(self._changes) == self._changes.maxlen:
            self._expired_through = self._changes[0].rv
        rv = int(obj["metadata"]["resourceVersion"])
        self._changes.append(_Change(rv, rtype, kind, obj, previous))
        self._changed.notify_all()

    def open_watch(self, path: str, query: Mapping[str, str]) -> Iterator[JsonObject]:
        """The events of a `?watch=1` request, as they happen; ApiFailureError before the
        first one when the request itself is refused (as the real handler refuses it)."""
        parsed = _parse_resource_path(path)
        if parsed is None:
            raise no_such_path(None)
        group, version, rest = parsed
        namespace, plural, name, _ = _split_rest(rest) if rest else (None, "", None, None)
        rtype = self._by_path.get((group, version, plural))
        if rtype is None:
            raise no_such_path(group)
        if name is not None:
            raise ApiFailureError(
                404, "NotFound", "the server could not find the requested resource"
            )
        labels = parse_label_selector(query.get("labelSelector", ""))
        fields = parse_field_selector(query.get("fieldSelector", ""), rtype)
        text = query.get("resourceVersion", "")
        if text and not text.isdigit():
            raise ApiFailureError(
                400, "BadRequest", f'resourceVersion: Invalid value: "{text}": must be a number'
            )
        try:
            timeout = float(query.get("timeoutSeconds") or WATCH_TIMEOUT_SECONDS)
        except ValueError:
            raise ApiFailureError(400, "BadRequest", "timeoutSeconds is not a number") from None

        def passes(obj: JsonObject | None) -> bool:
            if obj is None:
                return False
            meta = obj.get("metadata") or {}
            return (
                (namespace is None or meta.get("namespace", "") == namespace)
                and labels(meta.get("labels") or {})
                and fields(obj)
            )

        with self._lock:
            epoch = self._watch_epoch
            if text in ("", "0"):
                # No version: the current objects first, as synthetic ADDED events.
                start = self._resource_version
                initial = [
                    copy.deepcopy(obj)
                    for _, obj in sorted(self._bucket(rtype).items())
                    if passes(obj)
                ]
            else:
                start, initial = int(text), []
        bookmarks = query.get("allowWatchBookmarks") == "true"
        return self._watch_stream(rtype, passes, start, initial, timeout, bookmarks, epoch)

    def _watch_stream(
        self,
        rtype: ResourceType,
        passes: Callable[[JsonObject | None], bool],
        cursor: int,
        initial: list[JsonObject],
        timeout: float,
        bookmarks: bool,
        epoch: int,
    ) -> Iterator[JsonObject]:
        for obj in initial:
            yield {"type": "ADDED", "object": obj}
        deadline = time.monotonic() + timeout
        next_bookmark = time.monotonic() + self.watch_bookmark_seconds
        while True:
            bookmark: JsonObject | None = None
            expired = 0
            with self._changed:
                while True:
                    if self._stopping.is_set() or epoch != self._watch_epoch:
                        return
                    if cursor < self._expired_through:
                        expired = self._expired_through
                        break
                    fresh = []
                    for change in reversed(self._changes):
                        if change.rv <= cursor:
                            break
                        if change.rtype is rtype:
                            fresh.append(change)
                    if fresh:
                        fresh.reverse()
                        break
                    now = time.monotonic()
                    if now >= deadline:
                        return
                    if bookmarks and now >= next_bookmark:
                        bookmark = {
                            "type": "BOOKMARK",
                            "object": {
                                "kind": rtype.kind,
                                "apiVersion": rtype.group_version,
                                "metadata": {"resourceVersion": str(self._resource_version)},
                            },
                        }
                        cursor = self._resource_version
                        next_bookmark = now + self.watch_bookmark_seconds
                        break
                    wake = min(deadline, next_bookmark) if bookmarks else deadline
                    self._changed.wait(wake - now)
                events = [] if bookmark or expired else [_event_for(c, passes) for c in fresh]
            if expired:
                message = f"too old resource version: {cursor} ({expired})"
                yield {"type": "ERROR", "object": status_body(410, "Expired", message)}
                return
            if bookmark:
                yield bookmark
                continue
            for event in events:
                if event is not None:
                    yield event
            cursor = fresh[-1].rv

    # -- faults and log ----------------------------------------------------------------------

    def inject(
        self,
        fault: Fault,
        path: str,
        *,
        method: str | None = None,
        count: int | None = None,
        delay: float = 30.0,
        after: int = 0,
    ) -> FaultRule:
        """Make requests matching `path` (a regex searched in the URL path) fail with `fault`,
        `count` times (None: always), after letting `after` matching requests through."""
        rule = FaultRule(
            fault, re.compile(path), method.upper() if method else None, count, delay, after
        )
        with self._lock:
            self.faults.append(rule)
        return rule

    def clear_faults(self) -> None:
        with self._lock:
            self.faults.clear()

    def requests(self, method: str | None = None, path: str | None = None) -> list[RequestRecord]:
        """Logged requests, optionally filtered by method and a path regex."""
        with self._lock:
            return [
                r
                for r in self.log
                if (method is None or r.method == method)
                and (path is None or re.search(path, r.path))
            ]

    def _take_fault(self, method: str, path: str) -> FaultRule | None:
        with self._lock:
            for rule in self.faults:
                if rule.method not in (None, method) or not rule.path.search(path):
                    continue
                rule.matched += 1
                if rule.matched <= rule.after:
                    continue
                if rule.count is not None and rule.hits >= rule.count:
                    continue
                rule.hits += 1
                return rule
        return None

    def _record(self, record: RequestRecord) -> int:
        """Log a request; its position in the log."""
        with self._lock:
            self.log.append(record)
            return len(self.log) - 1

    def _complete(self, index: int, record: RequestRecord) -> None:
        """Give a delayed request, logged on arrival, the status it was finally answered with."""
        with self._lock:
            self.log[index] = replace(self.log[index], status=record.status)

    def _next_rv(self) -> str:
        self._resource_version += 1
        return str(self._resource_version)

    # -- request handling --------------------------------------------------------------------

    def handle(
        self,
        method: str,
        path: str,
        query: Mapping[str, str],
        headers: Mapping[str, str],
        body: bytes,
    ) -> tuple[int, JsonObject | list[Any] | bytes, dict[str, str]]:
        """Answer one request; returns status, JSON body (bytes: plain text) and extra
        headers."""
        for hook in list(self.request_hooks):
            hook(self, method, path)
        if path == "/version":
            return 200, _VERSION, {}
        if path in ("/api", "/api/"):
            return (
                200,
                {
                    "kind": "APIVersions",
                    "versions": ["v1"],
                    "serverAddressByClientCIDRs": [
                        {"clientCIDR": "0.0.0.0/0", "serverAddress": self.url.split("//")[1]}
                    ],
                },
                {},
            )
        if path in ("/apis", "/apis/"):
            return 200, _api_group_list(self._served), {}
        parsed = _parse_resource_path(path)
        if parsed is None:
            raise no_such_path(None)
        group, version, rest = parsed
        if not rest:
            return 200, _resource_list(self._served, group, version), {}
        namespace, plural, name, subresource = _split_rest(rest)
        rtype = self._by_path.get((group, version, plural))
        if rtype is None:
            raise no_such_path(group)
        if subresource == "log" and rtype.plural == "pods" and method == "GET" and name:
            return 200, self._pod_log(namespace or "", name, query), {}
        if subresource:
            raise ApiFailureError(
                404, "NotFound", f"subresource {subresource} is not served by the fake"
            )
        if method == "GET" and name is None:
            return 200, self._list(rtype, namespace, query), {}
        if method == "GET" and name is not None:
            return 200, self._get(rtype, namespace, name), {}
        if method == "POST" and name is None and rtype.plural == "events":
            return 201, self._create_event(namespace or "", body), {}
        if method == "POST" and name is None and rtype.plural == "pods" and namespace:
            try:
                created = fake_admission.create_pod(self, namespace, query, body)
            except fake_admission.AdmissionRefusedError as refusal:
                raise ApiFailureError(refusal.code, refusal.reason, refusal.message) from None
            if self.kubelet is not None and query.get("dryRun") != "All":
                self.kubelet.created(created)
            return 201, created, {}
        if method == "DELETE" and name is not None and rtype.plural == "pods" and namespace:
            # pkg/registry/core/pod/storage: the answer is the pod as last stored; a pod the
            # kubelet has not started is removed at once (no node to wait for).
            gone = self._get(rtype, namespace, name)
            self.delete_object("Pod", name, namespace)
            return 200, gone, {}
        if method == "PATCH" and name is not None:
            return (
                200,
                self._patch(rtype, namespace, name, headers.get("content-type", ""), body),
                {},
            )
        raise ApiFailureError(405, "MethodNotAllowed", f"{method} is not supported by the fake")

    def _bucket(self, rtype: ResourceType) -> dict[tuple[str, str], JsonObject]:
        return self._objects.setdefault((rtype.group, rtype.version, rtype.plural), {})

    def _list(
        self, rtype: ResourceType, namespace: str | None, query: Mapping[str, str]
    ) -> JsonObject:
        labels = parse_label_selector(query.get("labelSelector", ""))
        fields = parse_field_selector(query.get("fieldSelector", ""), rtype)
        limit = int(query.get("limit") or 0)
        token = query.get("continue", "")
        with self._lock:
            start_after = ""
            list_rv = self._resource_version
            if token:
                state = _decode_token(token)
                if state is None:
                    raise ApiFailureError(400, "BadRequest", "continue key is not valid")
                if 0 <= state["rv"] < self._compacted_before:
                    # etcd3/errors.go: the rest of the list is still offered, at the newest
                    # version (rv -1), in the Status's own metadata.continue.
                    fresh = _encode_token({"after": state["after"], "rv": -1})
                    raise ApiFailureError(
                        410,
                        "Expired",
                        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
                        list_continue=fresh,
                    )
                start_after = state["after"]
                list_rv = state["rv"] if state["rv"] >= 0 else self._resource_version
            bucket = self._bucket(rtype)
            matching = [
                key
                for key in sorted(bucket)
                if (namespace is None or key[0] == namespace)
                and f"{key[0]}/{key[1]}" > start_after
                and labels(bucket[key].get("metadata", {}).get("labels") or {})
                and fields(bucket[key])
            ]
            # Copy only the page served: copying the whole remainder made every page O(cluster).
            page = matching[:limit] if limit else matching
            # A custom resource's list keeps each item's kind and apiVersion: the objects are
            # stored and served unstructured, whole (apiextensions-apiserver
            # pkg/registry/customresource/etcd.go; UnstructuredList keeps them per item).
            matched = [
                copy.deepcopy(bucket[key]) if rtype.custom else _list_item(bucket[key])
                for key in page
            ]
        metadata: JsonObject = {"resourceVersion": str(list_rv)}
        if limit and len(matching) > limit:
            last = matched[-1]["metadata"]
            after = f"{last.get('namespace', '')}/{last['name']}"
            metadata["continue"] = _encode_token({"after": after, "rv": list_rv})
            metadata["remainingItemCount"] = len(matching) - limit
        listed = {
            "kind": f"{rtype.kind}List",
            "apiVersion": rtype.group_version,
            "metadata": metadata,
            "items": matched,
        }
        return CustomList(listed) if rtype.custom else listed

    def _get(self, rtype: ResourceType, namespace: str | None, name: str) -> JsonObject:
        with self._lock:
            found = self._bucket(rtype).get((namespace or "", name))
            if found is None:
                raise not_found(rtype, name)
            return copy.deepcopy(found)

    def _pod_log(self, namespace: str, name: str, query: Mapping[str, str]) -> bytes:
        """The kubelet's answer to `pods/log`: the chosen instance's text, tailed and cut."""
        pod = self._get(self._by_path[("", "v1", "pods")], namespace, name)
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        names = [
            c.get("name")
            for field in ("initContainers", "containers", "ephemeralContainers")
            for c in spec.get(field) or []
        ]
        container = query.get("container") or ""
        if not container:
            if len(spec.get("containers") or []) != 1:
                raise ApiFailureError(
                    400,
                    "BadRequest",
                    f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]",
                )
            container = spec["containers"][0]["name"]
        if container not in names:
            raise ApiFailureError(
                400, "BadRequest", f"container {container} is not valid for pod {name}"
            )
        statuses = [
            *(status.get("containerStatuses") or []),
            *(status.get("initContainerStatuses") or []),
        ]
        found = next((c for c in statuses if c.get("name") == container), None)
        if found is None:
            raise ApiFailureError(
                400, "BadRequest", f'container "{container}" in pod "{name}" is not available'
            )
        last = (found.get("lastState") or {}).get("terminated")
        state = found.get("state") or {}
        if query.get("previous") == "true":
            if not last or not last.get("containerID"):
                raise ApiFailureError(
                    400,
                    "BadRequest",
                    f'previous terminated container "{container}" in pod "{name}" not found',
                )
            instance = last["containerID"]
        elif "running" in state:
            instance = found.get("containerID", "")
        elif state.get("terminated") and state["terminated"].get("containerID"):
            instance = state["terminated"]["containerID"]
        elif last and last.get("containerID"):
            instance = last["containerID"]
        else:
            reason = (state.get("waiting") or {}).get("reason", "")
            raise ApiFailureError(
                400,
                "BadRequest",
                f'container "{container}" in pod "{name}" is waiting to start: {reason}',
            )
        if instance in self.removed_instances:
            raise ApiFailureError(
                400,
                "BadRequest",
                f'failed to get container status "{instance}": rpc error: code = NotFound '
                f'desc = an error occurred when try to find container "{instance}": not found',
            )
        # the kubelet reads lines up to "\n" only (logs.go `eol`); bytes.splitlines would also
        # end one at "\r", which progress bars write inside a line
        log = self.container_logs.get(instance, "").encode()
        lines = re.findall(rb"[^\n]*\n|[^\n]+\Z", log)  # an unfinished last line counts too
        if query.get("tailLines"):
            lines = lines[-int(query["tailLines"]) :] if int(query["tailLines"]) else []
        text = b"".join(lines)
        return text[: int(query["limitBytes"])] if query.get("limitBytes") else text

    def _create_event(self, namespace: str, body: bytes) -> JsonObject:
        """Create an Event (refresh writes them), as kube-apiserver does: the body's namespace
        must be the request's (`staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go`),
        the involved object's namespace the Event's (`pkg/apis/core/validation/events.go`,
        legacyValidateEvent), a taken name is 409 AlreadyExists; stored with uid and version."""
        try:
            event = json.loads(body or b"{}")
        except ValueError:
            raise ApiFailureError(400, "BadRequest", "the event is not valid JSON") from None
        if not isinstance(event, dict):
            raise ApiFailureError(400, "BadRequest", "the event is not an object")
        meta = event.setdefault("metadata", {})
        if meta.setdefault("namespace", namespace) != namespace:
            raise ApiFailureError(
                400,
                "BadRequest",
                "the namespace of the provided object does not match the namespace sent on the request",
            )
        name = str(meta.get("name") or "")
        involved = str((event.get("involvedObject") or {}).get("namespace") or "")
        if not name or involved != namespace:
            why = (
                "metadata.name: Required value: name or generateName is required"
                if not name
                else f'involvedObject.namespace: Invalid value: "{involved}": does not match event.namespace'
            )
            raise ApiFailureError(422, "Invalid", f'Event "{name}" is invalid: {why}')
        with self._lock:
            bucket = self._objects.setdefault(("", "v1", "events"), {})
            if (namespace, name) in bucket:
                raise ApiFailureError(409, "AlreadyExists", f'events "{name}" already exists')
            meta["uid"] = f"uid-{name}-{self._resource_version}"
            meta["creationTimestamp"] = event.get("firstTimestamp") or "2026-01-01T00:00:00Z"
            meta["resourceVersion"] = self._next_rv()
            bucket[(namespace, name)] = event
            self._record_change(self._by_path[("", "v1", "events")], "ADDED", event, None)
            return copy.deepcopy(event)

    def _patch(
        self, rtype: ResourceType, namespace: str | None, name: str, content_type: str, body: bytes
    ) -> JsonObject:
        try:
            patch = json.loads(body or b"{}")
        except ValueError:
            raise ApiFailureError(400, "BadRequest", "the patch is not valid JSON") from None
        with self._lock:
            key = (namespace or "", name)
            current = self._bucket(rtype).get(key)
            if current is None:
                raise not_found(rtype, name)
            if "json-patch" in content_type:
                updated = _apply_json_patch(current, patch)
            elif isinstance(patch, dict):
                wanted_rv = (patch.get("metadata") or {}).get("resourceVersion")
                if wanted_rv is not None and wanted_rv != current["metadata"]["resourceVersion"]:
                    raise ApiFailureError(
                        409,
                        "Conflict",
                        f'Operation cannot be fulfilled on {rtype.resource} "{name}": the object has been modified; please apply your changes to the latest version and try again',
                        details=_details(rtype, name),
                    )
                strategic = "strategic-merge-patch" in content_type
                updated = _merge(current, patch, strategic=strategic)
            else:
                raise ApiFailureError(400, "BadRequest", "the patch is not an object")
            meta = updated.setdefault("metadata", {})
            meta["name"], meta["uid"] = current["metadata"]["name"], current["metadata"]["uid"]
            spec_changed = updated.get("spec") != current.get("spec")
            annotations_changed = meta.get("annotations") != current["metadata"].get("annotations")
            if (rtype.plural in _GENERATION_ON_SPEC and spec_changed) or (
                rtype.plural in _GENERATION_ON_ANNOTATIONS and annotations_changed
            ):
                meta["generation"] = int(current["metadata"].get("generation", 1)) + 1
            if updated != current:
                meta["resourceVersion"] = self._next_rv()
            else:
                meta["resourceVersion"] = current["metadata"]["resourceVersion"]
            updated = _as_served(rtype, updated)
            self._bucket(rtype)[key] = updated
            if meta["resourceVersion"] != current["metadata"]["resourceVersion"]:
                self._record_change(rtype, "MODIFIED", updated, current)
            result = copy.deepcopy(updated)
        for hook in list(self.patch_hooks):
            hook(self, rtype.plural, result)
        return result


# -- selectors ---------------------------------------------------------------------------------

_LABEL_TERM = re.compile(
    r"^\s*(?:(?P<not>!)\s*(?P<nkey>[\w./-]+)|(?P<key>[\w./-]+)\s*(?:(?P<op>==|=|!=|>|<)\s*(?P<value>[\w.-]*)|\s+(?P<setop>in|notin)\s*\((?P<values>[^)]*)\)|))\s*$"
)

_INT64 = re.compile(r"[+-]?[0-9]{1,19}")
"""What strconv.ParseInt(s, 10, 64) reads (the range aside: the fake's labels stay small)."""


def _split_terms(selector: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    terms, depth, current = [], 0, ""
    for char in selector:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    if current.strip():
        terms.append(current)
    return terms


@dataclass(frozen=True)
class LabelRequirement:
    """One term of a label selector: `key op values`."""

    key: str
    op: str  # "exists", "!exists", "=", "!=", "in", "notin", ">", "<"
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        value = labels.get(self.key)
        if self.op in (">", "<"):
            # Gt and Lt: the label must be there and read as a base-10 int64
            # (selector.go Requirement.Matches, strconv.ParseInt); anything else never matches.
            (bound,) = self.values
            if value is None or not _INT64.fullmatch(value):
                return False
            return int(value) > int(bound) if self.op == ">" else int(value) < int(bound)
        return {
            "exists": self.key in labels,
            "!exists": self.key not in labels,
            "=": value in self.values,
            "!=": value not in self.values,
            "in": value in self.values,
            # notin also selects objects without the key, as the real API server does
            "notin": value not in self.values,
        }[self.op]


@dataclass(frozen=True)
class LabelSelector:
    requirements: tuple[LabelRequirement, ...]

    def __call__(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)


def parse_label_selector(selector: str) -> LabelSelector:
    """A predicate over label maps for a Kubernetes label selector string; 400 if invalid."""
    requirements: list[LabelRequirement] = []
    for term in _split_terms(selector):
        match = _LABEL_TERM.match(term)
        if match is None:
            raise ApiFailureError(400, "BadRequest", f"unable to parse requirement: {term!r}")
        if match["not"]:
            requirements.append(LabelRequirement(match["nkey"], "!exists"))
        elif match["op"] in (">", "<"):
            # selector.go NewRequirement: exactly one value, and it must be an integer
            if not _INT64.fullmatch(match["value"]):
                raise ApiFailureError(
                    400,
                    "BadRequest",
                    f"unable to parse requirement: values[0]: Invalid value: "
                    f"{match['value']!r}: for 'Gt', 'Lt' operators, the value must be an integer",
                )
            values = frozenset({match["value"]})
            requirements.append(LabelRequirement(match["key"], match["op"], values))
        elif match["op"]:
            op = "!=" if match["op"] == "!=" else "="
            requirements.append(LabelRequirement(match["key"], op, frozenset({match["value"]})))
        elif match["setop"]:
            values = frozenset(v.strip() for v in match["values"].split(",") if v.strip())
            requirements.append(LabelRequirement(match["key"], match["setop"], values))
        else:
            requirements.append(LabelRequirement(match["key"], "exists"))
    return LabelSelector(tuple(requirements))


@dataclass(frozen=True)
class FieldRequirement:
    path: str
    equal: bool
    value: str
    plural: str = ""

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return (_selectable(self.plural, obj, self.path) == self.value) is self.equal


@dataclass(frozen=True)
class FieldSelector:
    requirements: tuple[FieldRequirement, ...]

    def __call__(self, obj: Mapping[str, Any]) -> bool:
        return all(r.matches(obj) for r in self.requirements)


# The field labels each kind's conversion function accepts, and its refusal message; a kind
# without one gets DefaultMetaV1FieldSelectorConversion (see the table at the top).
_CORE_REFUSAL = "field label not supported: {label}"
_FIELD_LABELS: dict[str, tuple[frozenset[str], str]] = {
    "pods": (
        frozenset(
            {
                "metadata.name",
                "metadata.namespace",
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "spec.hostNetwork",
                "status.phase",
                "status.podIP",
                "status.podIPs",
                "status.nominatedNodeName",
            }
        ),
        _CORE_REFUSAL,
    ),
    "nodes": (frozenset({"metadata.name", "spec.unschedulable"}), _CORE_REFUSAL),
    "namespaces": (frozenset({"metadata.name", "status.phase"}), _CORE_REFUSAL),
    "secrets": (frozenset({"metadata.name", "metadata.namespace", "type"}), _CORE_REFUSAL),
    "services": (
        frozenset({"metadata.name", "metadata.namespace", "spec.clusterIP", "spec.type"}),
        _CORE_REFUSAL,
    ),
    "events": (
        frozenset(
            {
                "metadata.name",
                "metadata.namespace",
                "involvedObject.kind",
                "involvedObject.namespace",
                "involvedObject.name",
                "involvedObject.uid",
                "involvedObject.apiVersion",
                "involvedObject.resourceVersion",
                "involvedObject.fieldPath",
                "reason",
                "reportingComponent",
                "source",
                "type",
            }
        ),
        _CORE_REFUSAL,
    ),
    "jobs": (
        frozenset({"metadata.name", "metadata.namespace", "status.successful"}),
        'field label "{label}" not supported for batchv1.Job',
    ),
}
_DEFAULT_FIELD_LABELS = (
    frozenset({"metadata.name", "metadata.namespace"}),
    '"{label}" is not a known field selector: only "metadata.name", "metadata.namespace"',
)
# Old v1 clients send spec.host; the Pod conversion function renames it.
_FIELD_RENAMES = {("pods", "spec.host"): "spec.nodeName"}


def parse_field_selector(selector: str, rtype: ResourceType | None = None) -> FieldSelector:
    """A predicate over objects for a field selector (`=`, `==`, `!=` terms). With `rtype`,
    a label its kind does not accept is refused with 400, as the real server refuses it."""
    requirements: list[FieldRequirement] = []
    for term in filter(None, (t.strip() for t in selector.split(","))):
        match = re.match(r"^([\w.]+)\s*(==|=|!=)\s*(.*)$", term)
        if match is None:
            raise ApiFailureError(400, "BadRequest", f"invalid field selector: {term!r}")
        label, op, value = match.groups()
        plural = rtype.plural if rtype is not None else ""
        if rtype is not None:
            label = _FIELD_RENAMES.get((plural, label), label)
            allowed, refusal = _FIELD_LABELS.get(plural, _DEFAULT_FIELD_LABELS)
            if label not in allowed:
                raise ApiFailureError(400, "BadRequest", refusal.format(label=label))
        requirements.append(FieldRequirement(label, op != "!=", value, plural))
    return FieldSelector(tuple(requirements))


def _selectable(plural: str, obj: Mapping[str, Any], label: str) -> str:
    """The value a registry's ToSelectableFields gives `label` for `obj`."""
    status = obj.get("status") or {}
    if plural == "pods" and label == "spec.hostNetwork":
        return "true" if (obj.get("spec") or {}).get("hostNetwork") else "false"
    if plural == "pods" and label == "status.podIP":
        ips = status.get("podIPs") or []
        return str(ips[0].get("ip", "")) if ips else ""
    if plural == "nodes" and label == "spec.unschedulable":
        return "true" if (obj.get("spec") or {}).get("unschedulable") else "false"
    if plural == "jobs" and label == "status.successful":
        return str(status.get("succeeded", 0))
    if plural == "events" and label == "source":
        return str((obj.get("source") or {}).get("component", ""))
    return _field(obj, label)


def _field(obj: Mapping[str, Any], path: str) -> str:
    current: Any = obj
    for part in path.split("."):
        if not isinstance(current, Mapping):
            return ""
        current = current.get(part)
    return "" if current is None else str(current)


# -- the stored and served forms -----------------------------------------------------------------

# Workload status fields declared `omitempty` in staging/src/k8s.io/api/{apps,batch}/v1/types.go:
# a zero there never reaches a client. Fields without it (StatefulSet replicas, DaemonSet
# currentNumberScheduled...) are sent as 0.
_OMITTED_WHEN_ZERO: dict[str, frozenset[str]] = {
    "deployments": frozenset(
        {
            "observedGeneration",
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
        }
    ),
    "statefulsets": frozenset(
        {"observedGeneration", "readyReplicas", "currentReplicas", "updatedReplicas"}
    ),
    "daemonsets": frozenset(
        {"observedGeneration", "updatedNumberScheduled", "numberAvailable", "numberUnavailable"}
    ),
    "replicasets": frozenset(
        {"observedGeneration", "fullyLabeledReplicas", "readyReplicas", "availableReplicas"}
    ),
    "jobs": frozenset({"active", "succeeded", "failed"}),
}


def _as_served(rtype: ResourceType, obj: JsonObject) -> JsonObject:
    """`obj` as the real server would store and send it: zero counts omitted, a Secret's
    write-only `stringData` folded into `data`."""
    string_data = obj.pop("stringData", None) if rtype.plural == "secrets" else None
    if isinstance(string_data, dict) and string_data:
        data = obj.setdefault("data", {})
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()
    omitted = _OMITTED_WHEN_ZERO.get(rtype.plural)
    status = obj.get("status")
    if omitted and isinstance(status, dict):
        for name in omitted & status.keys():
            if status[name] == 0 and not isinstance(status[name], bool):
                del status[name]
    return obj


def _list_item(stored: JsonObject) -> JsonObject:
    """A list item as the real server encodes it: without kind and apiVersion (#3030)."""
    item = copy.deepcopy(stored)
    item.pop("kind", None)
    item.pop("apiVersion", None)
    return item


# -- patches -----------------------------------------------------------------------------------


def _merge(target: Any, patch: Any, *, strategic: bool) -> Any:
    """JSON merge patch (RFC 7386); strategic adds merge-by-name for lists of named objects."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        if value is None:
            result.pop(key, None)
        elif (
            strategic
            and isinstance(value, list)
            and isinstance(result.get(key), list)
            and _named(value)
            and _named(result[key])
        ):
            merged = {item["name"]: item for item in result[key]}
            order = [item["name"] for item in result[key]]
            for item in value:
                if item.get("$patch") == "delete":
                    merged.pop(item["name"], None)
                    continue
                if item["name"] not in merged:
                    order.append(item["name"])
                merged[item["name"]] = _merge(merged.get(item["name"], {}), item, strategic=True)
            result[key] = [merged[n] for n in order if n in merged]
        else:
            result[key] = _merge(result.get(key), value, strategic=strategic)
    return result


def _named(items: list[Any]) -> bool:
    return all(isinstance(i, dict) and "name" in i for i in items)


def _apply_json_patch(target: JsonObject, operations: Any) -> JsonObject:
    result = copy.deepcopy(target)
    if not isinstance(operations, list):
        raise ApiFailureError(400, "BadRequest", "a JSON patch is a list of operations")
    for op in operations:
        parts = [
            p.replace("~1", "/").replace("~0", "~") for p in str(op.get("path", "")).split("/")[1:]
        ]
        parent: Any = result
        for part in parts[:-1]:
            parent = parent[int(part)] if isinstance(parent, list) else parent.setdefault(part, {})
        last = parts[-1]
        if op.get("op") in ("add", "replace"):
            if isinstance(parent, list):
                parent.insert(len(parent) if last == "-" else int(last), op["value"]) if op[
                    "op"
                ] == "add" else parent.__setitem__(int(last), op["value"])
            else:
                parent[last] = op["value"]
        elif op.get("op") == "remove":
            if isinstance(parent, list):
                del parent[int(last)]
            else:
                parent.pop(last, None)
        elif op.get("op") == "test":
            actual = parent[int(last)] if isinstance(parent, list) else parent.get(last)
            if actual != op.get("value"):
                # patch.go: a failed JSON patch is NewGenericServerResponse(422, ...), whose
                # message for 422 is fixed and whose details are empty.
                raise ApiFailureError(
                    422,
                    "Invalid",
                    "the server rejected our request due to an error in our request",
                    details={},
                )
    return result


# -- paths and discovery -----------------------------------------------------------------------


def _parse_resource_path(path: str) -> tuple[str, str, list[str]] | None:
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        return "", parts[1], parts[2:]
    if len(parts) >= 3 and parts[0] == "apis":
        return parts[1], parts[2], parts[3:]
    return None


def _split_rest(rest: list[str]) -> tuple[str | None, str, str | None, str | None]:
    """namespace, plural, name, subresource from the part of a path after the group version."""
    if rest[0] == "namespaces" and len(rest) >= 3:
        return (
            rest[1],
            rest[2],
            (rest[3] if len(rest) > 3 else None),
            (rest[4] if len(rest) > 4 else None),
        )
    return None, rest[0], (rest[1] if len(rest) > 1 else None), (rest[2] if len(rest) > 2 else None)


_VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0",
    "gitCommit": "fake",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.23",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def _api_group_list(served: Iterable[ResourceType]) -> JsonObject:
    groups: dict[str, list[str]] = {}
    for rtype in served:
        if rtype.group and rtype.version not in groups.setdefault(rtype.group, []):
            groups[rtype.group].append(rtype.version)
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [
            {
                "name": name,
                "versions": [{"groupVersion": f"{name}/{v}", "version": v} for v in versions],
                "preferredVersion": {
                    "groupVersion": f"{name}/{versions[0]}",
                    "version": versions[0],
                },
            }
            for name, versions in groups.items()
        ],
    }


def _resource_list(served: Iterable[ResourceType], group: str, version: str) -> JsonObject:
    resources = [
        {
            "name": t.plural,
            "singularName": t.kind.lower(),
            "namespaced": t.namespaced,
            "kind": t.kind,
            "verbs": _VERBS,
            **({"shortNames": list(t.short_names)} if t.short_names else {}),
        }
        for t in served
        if t.group == group and t.version == version
    ]
    if not resources:
        raise no_such_path(group)
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }


def _encode_token(state: Mapping[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(state).encode()).decode()


def _decode_token(token: str) -> dict[str, Any] | None:
    try:
        state = json.loads(base64.urlsafe_b64decode(token.encode()))
    except ValueError:
        return None
    return state if isinstance(state, dict) and {"after", "rv"} <= state.keys() else None


def status_body(
    code: int,
    reason: str,
    message: str,
    details: JsonObject | None = None,
    *,
    list_continue: str = "",
) -> JsonObject:
    """A failure Status object, fields in the order the real server writes them."""
    body: JsonObject = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {"continue": list_continue} if list_continue else {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details is not None:
        body["details"] = details
    body["code"] = code
    return body


def _details(rtype: ResourceType, name: str) -> JsonObject:
    """StatusDetails as NewNotFound and NewConflict fill them; an empty group is omitted."""
    details: JsonObject = {"name": name}
    if rtype.group:
        details["group"] = rtype.group
    details["kind"] = rtype.plural
    return details


def not_found(rtype: ResourceType, name: str) -> ApiFailureError:
    """errors.NewNotFound for one object of `rtype`."""
    return ApiFailureError(
        404, "NotFound", f'{rtype.resource} "{name}" not found', details=_details(rtype, name)
    )


_EVERY_TYPE = {(t.group, t.version, t.plural): t for t in RESOURCE_TYPES + CUSTOM_RESOURCE_TYPES}


def _named_not_found(path: str) -> ApiFailureError | None:
    """The NotFound a path naming one object of a known kind is answered with; None for a
    collection, a subresource or a path of no known kind."""
    parsed = _parse_resource_path(path)
    if parsed is None or not parsed[2]:
        return None
    group, version, rest = parsed
    _, plural, name, subresource = _split_rest(rest)
    rtype = _EVERY_TYPE.get((group, version, plural))
    if rtype is None or name is None or subresource is not None:
        return None
    return not_found(rtype, name)


_BUILT_IN_GROUPS = frozenset(t.group for t in RESOURCE_TYPES)
"""The groups kube-apiserver serves itself, through go-restful."""

PAGE_NOT_FOUND_TEXT = b"404 page not found\n"
"""Go net/http `NotFound`'s body, sent as `text/plain; charset=utf-8` with `nosniff`."""


def no_such_path(group: str | None) -> ApiFailureError:
    """The 404 for a path nothing serves (`group` None: a path outside /api and /apis). Under
    a built-in group go-restful answers it, and the server's service error handler writes the
    generic NotFound Status (genericapiserver handler.go `serviceErrorHandler`, errors.go
    `NewGenericServerResponse`); anywhere else (a custom resource's group not installed, a
    path outside /api and /apis) it falls through the aggregator and apiextensions to the end
    of the delegation chain, Go's plain `404 page not found`
    (staging/src/k8s.io/apiserver/pkg/util/notfoundhandler)."""
    if group is not None and group in _BUILT_IN_GROUPS:
        return ApiFailureError(404, "NotFound", "the server could not find the requested resource")
    return ApiFailureError(404, "NotFound", "404 page not found", page_not_found=True)


_FAULT_MESSAGES = {
    Fault.UNAUTHORIZED: ("Unauthorized", "Unauthorized"),
    Fault.FORBIDDEN: (
        "Forbidden",
        'pods is forbidden: User "system:serviceaccount:train:reader" cannot list resource "pods" in API group "" in the namespace "train"',
    ),
    Fault.NOT_FOUND: ("NotFound", "the server could not find the requested resource"),
    Fault.CONFLICT: (
        "Conflict",
        "Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again",
    ),
    Fault.TOO_MANY_REQUESTS_STATUS: (
        "TooManyRequests",
        "storage is (re)initializing",
    ),
    Fault.SERVER_ERROR: ("InternalError", "Internal error occurred: etcdserver: request timed out"),
    Fault.UNAVAILABLE: (
        "ServiceUnavailable",
        "the server is currently unable to handle the request",
    ),
}


class _Listener6(Listener):
    """The same listener on an IPv6 address."""

    address_family = socket.AF_INET6


def _make_handler(server: FakeApiServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Silence the default stderr access log; the request log is in `server.log`."""

        def _serve(self, method: str) -> None:
            split = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            lines = tuple((name.lower(), value) for name, value in self.headers.items())
            with server._lock:
                server.heard.append(HeardRequest(method, split.path, lines))
            rule = server._take_fault(method, split.path)
            self.arrival: int | None = None
            if rule is not None and self._inject(rule, method, split.path, query):
                return
            # A delayed request was logged when it arrived; serving it late completes that entry.
            arrived = self.arrival
            record = server._record if arrived is None else partial(server._complete, arrived)
            if method == "GET" and query.get("watch") in ("1", "true"):
                self._watch(split.path, query, record)
                return
            gzipped = accepts_gzip(self.headers.get("Accept-Encoding", ""))
            cache_key = (split.path, split.query, gzipped)
            cached = server._encoded.get(cache_key) if method == "GET" else None
            if cached is not None:
                record(RequestRecord(method, split.path, query, cached[0]))
                self._send_wire(cached[0], cached[1], cached[2])
                return
            try:
                status, payload, headers = server.handle(
                    method, split.path, query, {k.lower(): v for k, v in self.headers.items()}, body
                )
            except ApiFailureError as failure:
                if failure.page_not_found:
                    record(RequestRecord(method, split.path, query, failure.code))
                    self._send_page_not_found()
                    return
                status, payload, headers = failure.code, failure.body(), failure.headers
            if isinstance(payload, bytes):  # a log: plain text, never cached
                record(RequestRecord(method, split.path, query, status))
                reads = (payload[at : at + LOG_READ] for at in range(0, len(payload), LOG_READ))
                wire = framed(reads, flushed=True)
                self._send_wire(status, wire, headers, content_type="text/plain")
                return
            wire, encoded = answer_wire(_answer_writes(payload), gzipped)
            if server.frozen and method == "GET" and not headers:
                server._encoded[cache_key] = (status, wire, encoded)
            record(RequestRecord(method, split.path, query, status))
            self._send_wire(status, wire, {**headers, **encoded})

        def _inject(
            self, rule: FaultRule, method: str, path: str, query: Mapping[str, str]
        ) -> bool:
            fault = rule.fault
            if fault is Fault.DELAY:
                self.arrival = server._record(RequestRecord(method, path, query, 0, fault))
                server._stopping.wait(rule.delay)
                return False
            if fault is Fault.RESET:
                server._record(RequestRecord(method, path, query, 0, fault))
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.connection.close()
                self.close_connection = True
                return True
            if fault in _BODIES_OF_200:
                server._record(RequestRecord(method, path, query, 200, fault))
                self._send(200, _BODIES_OF_200[fault](path), {})
                return True
            if fault is Fault.PAGE_NOT_FOUND:
                server._record(RequestRecord(method, path, query, 404, fault))
                self._send_page_not_found()
                return True
            named = _named_not_found(path) if fault is Fault.NOT_FOUND else None
            if named is not None:
                server._record(RequestRecord(method, path, query, 404, fault))
                self._send(404, encode(named.body()) + b"\n", {})
                return True
            if fault is Fault.TOO_MANY_REQUESTS:
                # maxinflight.go tooManyRequests: Retry-After, then net/http.Error's plain text.
                server._record(RequestRecord(method, path, query, 429, fault))
                headers = {
                    "Retry-After": PRIORITY_AND_FAIRNESS_RETRY_AFTER,
                    "X-Content-Type-Options": "nosniff",
                }
                body = b"Too many requests, please try again later.\n"
                self._send(429, body, headers, content_type="text/plain; charset=utf-8")
                return True
            code = 429 if fault is Fault.TOO_MANY_REQUESTS_STATUS else int(fault.value)
            reason, message = _FAULT_MESSAGES[fault]
            details: JsonObject | None = None
            headers = {}
            if fault is Fault.TOO_MANY_REQUESTS_STATUS:
                # ErrorNegotiated copies details.retryAfterSeconds into Retry-After.
                details = {"retryAfterSeconds": 1}
                headers = {"Retry-After": "1"}
            server._record(RequestRecord(method, path, query, code, fault))
            body = encode(status_body(code, reason, message, details)) + b"\n"
            self._send(code, body, headers)
            return True

        def _watch(
            self, path: str, query: Mapping[str, str], record: Callable[[RequestRecord], Any]
        ) -> None:
            """A watch answer: chunked, one JSON line per event, flushed as it happens."""
            for hook in list(server.request_hooks):
                hook(server, "GET", path)
            try:
                events = server.open_watch(path, query)
            except ApiFailureError as failure:
                record(RequestRecord("GET", path, query, failure.code))
                if failure.page_not_found:
                    self._send_page_not_found()
                    return
                self._send(failure.code, encode(failure.body()) + b"\n", failure.headers)
                return
            record(RequestRecord("GET", path, query, 200))
            head = (
                f"HTTP/1.1 200 OK\r\nDate: {formatdate(usegmt=True)}\r\n"
                "Content-Type: application/json\r\n"
                "Cache-Control: no-cache, private\r\nTransfer-Encoding: chunked\r\n\r\n"
            )
            try:
                self.wfile.write(head.encode())
                for event in events:
                    data = encode(event) + b"\n"
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError, OSError):
                self.close_connection = True

        def handle(self) -> None:
            try:
                super().handle()
            except (ConnectionResetError, BrokenPipeError):
                # A client that drops a kept-alive connection (a watch closed early) is normal.
                self.close_connection = True

        def setup(self) -> None:
            super().setup()
            # Without this, headers and body in separate segments meet the client's delayed
            # ACK and every request costs ~40 ms.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def _send_page_not_found(self) -> None:
            """Go net/http's NotFound: 404, its text, `text/plain; charset=utf-8`, `nosniff`."""
            headers = {"X-Content-Type-Options": "nosniff"}
            self._send(404, PAGE_NOT_FOUND_TEXT, headers, content_type="text/plain; charset=utf-8")

        def _send(
            self,
            status: int,
            body: bytes,
            headers: Mapping[str, str],
            content_type: str = "application/json",
        ) -> None:
            """An answer the real server writes in one Write."""
            self._send_wire(status, framed([body]), headers, content_type)

        def _send_wire(
            self,
            status: int,
            wire: Wire,
            headers: Mapping[str, str],
            content_type: str = "application/json",
        ) -> None:
            try:
                phrase = HTTPStatus(status).phrase
            except ValueError:
                phrase = ""
            lines = [
                f"HTTP/1.1 {status} {phrase}",
                # Go's net/http server dates every answer (server.go `appendTime`).
                f"Date: {formatdate(usegmt=True)}",
                f"Content-Type: {content_type}",
                wire.framing,
                *(f"{key}: {value}" for key, value in headers.items()),
            ]
            head = ("\r\n".join(lines) + "\r\n\r\n").encode()
            try:
                self.wfile.write(head + wire.data)  # headers and body in one write
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def do_GET(self) -> None:
            self._serve("GET")

        def do_PATCH(self) -> None:
            self._serve("PATCH")

        def do_POST(self) -> None:
            self._serve("POST")

        def do_PUT(self) -> None:
            self._serve("PUT")

        def do_DELETE(self) -> None:
            self._serve("DELETE")

    return Handler
