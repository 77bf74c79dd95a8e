"""The namespace's training work as the cluster will run it: each job as its pod sets.

A training job is rarely one pod. Each common form is read as the pod sets its controller
creates (a pod template times how many of it run at once), from the fields that controller reads:
- batch/v1 Job: `parallelism` pods at once, at most `completions` (pkg/controller/job/
  job_controller.go); an Indexed Job whose parallelism equals its completions is a set of ranks
  that must all run (torchrun, `completionMode: Indexed`); CronJob: its `jobTemplate`.
- JobSet (jobset.x-k8s.io/v1alpha2, api/jobset/v1alpha2/jobset_types.go): one set per
  replicated job, `replicas` times its Job's pods; a replicated job that another waits for to
  complete (`dependsOn` … `status: Complete`) runs before it, not beside it.
- TrainJob (trainer.kubeflow.org/v1alpha1, pkg/apis/trainer/v1alpha1): its runtime's JobSet
  template, with `trainer.numNodes` pods in the replicated job of the trainer step and
  `trainer.resourcesPerNode` on the containers named `node`.
- Kubeflow's PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob (kubeflow.org/v1) and MPIJob
  (kubeflow.org/v2beta1 and v1): one set per replica type, `replicas` each (default 1, an
  MPIJob's Worker 0: training-operator pkg/apis/kubeflow.org/v1/*_defaults.go, mpi-operator
  pkg/apis/kubeflow/v2beta1/default.go); `runPolicy.suspend` (training-operator
  pkg/apis/kubeflow.org/v1/common_types.go); a PyTorchJob's Workers, when it has a Master, also
  get the operator's init container `INIT_PYTORCH` in the pods it creates (`PodSet.added`).
- RayCluster and RayJob (ray.io/v1): the head, and per worker group `replicas` held between
  `minReplicas` and `maxReplicas`, times `numOfHosts` (ray-operator/apis/ray/v1/
  raycluster_types.go; controllers/ray/utils/util.go GetWorkerGroupDesiredReplicas).
- LeaderWorkerSet (leaderworkerset.x-k8s.io/v1): per group one leader and `size` - 1 workers,
  `replicas` groups (api/leaderworkerset/v1/leaderworkerset_types.go).
Everything here is pure: a function of the objects read, unit-tested value by value.

One module past 600 lines: one table of every training kind's shape, each read the same way
(pod sets, replicas, all at once or not), so that a new kind is one more row.
"""

from bisect import bisect_right
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Got, Kind, KubeObject, Listed, ListRead, ReadFailure

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
"""The label that hands a job to a Kueue queue (kueue pkg/controller/constants)."""
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
KUBEFLOW_JOB_LABEL = "training.kubeflow.org/job-name"
KUBEFLOW_ROLE_LABEL = "training.kubeflow.org/replica-type"
RAY_CLUSTER_LABEL = "ray.io/cluster"
RAY_GROUP_LABEL = "ray.io/group"
RAY_HEAD_GROUP = "headgroup"
"""The `ray.io/group` value of a Ray head pod (ray-operator pkg/utils/constant.go)."""
JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
"""The annotation that holds an Indexed Job's pod's index; the Job controller reads the index
from it alone (pkg/controller/job/indexed_job_utils.go getCompletionIndex)."""
LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
LWS_WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
TRAINER_NODE = "node"
"""The container a TrainJob's trainer settings apply to (trainer pkg/constants `Node`)."""
TRAINER_STEP_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER_STEP = "trainer"
"""The runtime's replicated job labelled as the trainer step runs the TrainJob's nodes."""

KUBEFLOW_REPLICA_SPECS = {
    Kind.PYTORCH_JOB: "pytorchReplicaSpecs",
    Kind.TF_JOB: "tfReplicaSpecs",
    Kind.MPI_JOB: "mpiReplicaSpecs",
    Kind.MPI_JOB_V1: "mpiReplicaSpecs",
    Kind.XGBOOST_JOB: "xgbReplicaSpecs",
    Kind.PADDLE_JOB: "paddleReplicaSpecs",
    Kind.JAX_JOB: "jaxReplicaSpecs",
}
"""The field each Kubeflow kind keeps its replica types in."""
OPTIONAL_KINDS = (
    Kind.JOB_SET,
    Kind.TRAIN_JOB,
    *KUBEFLOW_REPLICA_SPECS,
    Kind.RAY_JOB,
    Kind.RAY_CLUSTER,
    Kind.LEADER_WORKER_SET,
)
"""The training kinds that exist only where their controller is installed."""
CONTROLLERS = {
    Kind.JOB_SET: "the JobSet controller",
    Kind.TRAIN_JOB: "Kubeflow Trainer",
    Kind.PYTORCH_JOB: "the Kubeflow training operator",
    Kind.TF_JOB: "the Kubeflow training operator",
    Kind.MPI_JOB: "the MPI operator",
    Kind.MPI_JOB_V1: "the Kubeflow training operator",
    Kind.XGBOOST_JOB: "the Kubeflow training operator",
    Kind.PADDLE_JOB: "the Kubeflow training operator",
    Kind.JAX_JOB: "the Kubeflow training operator",
    Kind.RAY_JOB: "the KubeRay operator",
    Kind.RAY_CLUSTER: "the KubeRay operator",
    Kind.LEADER_WORKER_SET: "the LeaderWorkerSet controller",
}
"""What installs (its CRD) and runs each optional kind: kubernetes-sigs/jobset, kubeflow/
trainer, kubeflow/training-operator (its MPIJob is v1), kubeflow/mpi-operator (v2beta1),
ray-project/kuberay, kubernetes-sigs/lws."""
_MAY_BE_ABSENT = frozenset({Kind.CRON_JOB, *OPTIONAL_KINDS})
"""Kinds a server may not serve at all: a list of them answered 404 finds them absent."""
TRAINING_KIND_NAMES = frozenset(k.spec.name for k in (Kind.JOB, Kind.CRON_JOB, *OPTIONAL_KINDS))
"""The kinds whose objects are training jobs, by the name objects carry in `kind`."""
_PART_OF_OTHER_WORK = frozenset(k.spec.name for k in OPTIONAL_KINDS)
"""Owners whose Jobs, JobSets or RayClusters are part of their own work (a TrainJob's JobSet, a
RayJob's RayCluster, a JobSet's Jobs): such an object is read through its owner. A CronJob's
Jobs are ordinary Jobs, and read as such."""


class PodSet(Struct, frozen=True):
    """Pods of one template that a job runs at the same time."""

    name: str
    """The role: the replica type, replicated job or worker group (`worker`, `Master`)."""
    count: int
    template: Mapping[str, Any]
    """The pod template: `metadata` and `spec`."""
    added: tuple[Mapping[str, Any], ...] = ()
    """Init containers the job's controller appends to every pod it creates from the template
    (a PyTorchJob's Workers: `INIT_PYTORCH`), which the API server admits with the pod."""
    added_from: str = ""
    """The pod the controller created that `added` was read from (a measurement); "" while
    `added` is the operator's default template, assumed."""

    @property
    def spec(self) -> Mapping[str, Any]:
        """The pod spec the set's pods are made from."""
        return o.pod_spec(self.template)

    @property
    def created_spec(self) -> Mapping[str, Any]:
        """The pod spec the controller posts: the template's, with what it adds."""
        if not self.added:
            return self.spec
        return {**self.spec, "initContainers": [*o.init_containers(self.spec), *self.added]}

    @property
    def labels(self) -> Mapping[str, str]:
        """The labels the set's pods are created with."""
        return o.labels_of(self.template)


class TrainingJob(Struct, frozen=True):
    """One training job, in whatever form, as the pods its controller runs."""

    kind: Kind
    name: str
    created: datetime | None
    pod_sets: tuple[PodSet, ...]
    together: bool
    """Every pod must run at once (ranks of one distributed run); a plain parallel Job's pods
    also start one by one."""
    suspended: bool = False
    finished: bool = False
    failed: bool = False
    queue: str = ""
    """The Kueue queue it is handed to (`kueue.x-k8s.io/queue-name`), "" for none."""
    uid: str = ""
    cluster_name: str = ""
    """A RayJob's RayCluster (`status.rayClusterName`), whose pods are the job's."""
    on_existing_cluster: bool = False
    """A RayJob that runs on a RayCluster it did not create (`spec.clusterSelector`): it asks
    for no pods of its own, and is not empty for that."""
    failure: tuple[str, str] = ("", "")
    """The reason and message of the job's failure, as its status says them."""
    refused: bool = False
    """Its controller refused its settings and started none of it (a RayJob's
    `ValidationFailed`); also `failed`."""
    managed_by: str = ""
    """`spec.managedBy`: another controller runs this job (Kueue's MultiKueue), "" for its own."""
    selector_keys: tuple[str, ...] = ()
    """The label keys its controller selects its pods by (a Job's `spec.selector`): it adopts
    any orphan pod that selector matches (pkg/controller/job/job_controller.go getPodsForJob
    -> ClaimPods)."""
    active_wanted: int | None = None
    """A batch Job some of whose pods succeeded: how many pods its controller still wants
    active (`wanted_active`); None where each pod set's count is wanted."""
    taken_up: bool = False
    """Its Kubeflow operator has seen it: the status holds a condition (both operators set
    `Created` first: training-operator pkg/controller.v1/pytorch/pytorchjob_controller.go
    onOwnerCreateFunc, pytorch-operator pkg/controller.v1/pytorch/job.go addPyTorchJob)."""
    failed_indexes: tuple[tuple[int, int], ...] = ()
    """A batch Indexed Job's indexes its controller gave up on (`status.failedIndexes` under
    `spec.backoffLimitPerIndex`), as ranges of first and last index: it makes no pod for them
    again (pkg/controller/job/indexed_job_utils.go isIndexFailed, calculateFailedIndexes;
    firstPendingIndexes counts them as not pending)."""
    failing: bool = False
    """Not yet failed, but bound to: an index is in `failed_indexes`, and no success policy can
    end it first. The Job controller fails a Job `FailedIndexes` once each other index has
    ended, and looks at a success policy only after that (job_controller.go syncJob)."""
    child_jobs: tuple[str, ...] = ()
    """The names of the batch Jobs its controller makes, whose Job controller then makes (and
    may be refused) the pods; a name ending in `-` stands for itself followed by any index (a
    Kubernetes name never ends in `-`). A JobSet's, and a TrainJob's (its JobSet is named after
    it), are `<jobset>-<replicated job>-<index>` for each replicated job, those others wait for
    included (jobset pkg/util/placement/placement.go `GenJobName`); an MPIJob's (v2beta1) is its
    launcher, `<mpijob>-launcher` (mpi-operator pkg/controller/mpi_job_controller.go
    `newLauncherJob`, `launcherSuffix`)."""

    @property
    def ref(self) -> str:
        """`Kind/name`, as findings name the objects they looked at."""
        return f"{self.kind.spec.name}/{self.name}"

    @property
    def pods(self) -> int:
        """How many pods run at once."""
        return sum(s.count for s in self.pod_sets)

    @property
    def empty(self) -> bool:
        """Unfinished, not suspended, and asking for no pods: its controller starts nothing."""
        return (
            not self.finished
            and not self.suspended
            and not self.on_existing_cluster
            and not self.pods
        )

    @property
    def primary(self) -> PodSet:
        """The set with the most pods (the workers), the first of equals: whose template the
        admission gates are tried with."""
        return max(self.pod_sets, key=lambda s: s.count) if self.pod_sets else _NO_POD_SET

    def makes_job(self, name: str) -> bool:
        """Whether its controller names one of the Jobs it makes `name` (`child_jobs`)."""
        return any(
            name == made
            or (made.endswith("-") and name.startswith(made) and _is_index(name[len(made) :]))
            for made in self.child_jobs
        )

    def gave_up_on(self, pod: KubeObject) -> bool:
        """Whether `pod` is of an index its controller gave up on (`failed_indexes`)."""
        index = completion_index(pod)
        if index is None:
            return False
        # The ranges are ordered and apart: the one starting at or before the index holds it.
        at = bisect_right(self.failed_indexes, index, key=lambda r: r[0])
        return at > 0 and self.failed_indexes[at - 1][1] >= index

    def words(self) -> str:
        """`the training job 'run-7'`."""
        return f"the training job '{self.name}'"

    def wanted(self) -> dict[str, int]:
        """Per pod set, how many pods its controller wants running while it is under way: the
        set's count, fewer once some of a batch Job's pods succeeded (the Job controller's own
        arithmetic: `active_wanted`). A job that wants none now is taken whole, as a next
        run."""
        wanted = self.active_wanted
        counts = {
            s.name: s.count if wanted is None else min(s.count, wanted) for s in self.pod_sets
        }
        return counts if any(counts.values()) else {s.name: s.count for s in self.pod_sets}


_NO_POD_SET = PodSet("", 0, {})


def _is_index(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _number(text: str) -> int | None:
    """A count or index as Go's strconv.Atoi reads one the Job controller wrote: decimal
    digits, at most 18 of them (Atoi refuses what overflows 64 bits, and Python will not read
    a number of thousands of digits); None for anything else."""
    return int(text) if _is_index(text) and len(text) <= 18 else None


class PodSetSummary(Struct, frozen=True):
    """One pod set as the JSON report names it."""

    name: str
    count: int
    requests: Mapping[str, int]
    """Each pod's requests as the API server would store it, in scheduler units (CPU in
    millicores, memory and storage in bytes)."""


class JobSummary(Struct, frozen=True):
    """The training job a report judged: which one, where it came from, and its pod sets."""

    kind: str
    name: str
    source: str
    """Where the pod sets' sizes came from: `newest` (the newest training job of the
    namespace's template), `job-file` (`--job-file`'s), or `job-requests` (`--job-requests`
    gave each pod's requests; the pod sets are still the judged job's)."""
    together: bool
    pod_sets: tuple[PodSetSummary, ...]


class Unshaped(Struct, frozen=True):
    """A training job whose pod sets could not be worked out, and why (its runtime missing)."""

    kind: Kind
    name: str
    why: str
    """Plain words: `its runtime 'torch-distributed' doesn't exist`."""
    cant: CantRead | None = None
    """The read that failed, when one did (an unknown, not a measurement)."""
    created: datetime | None = None

    @property
    def ref(self) -> str:
        """`Kind/name`."""
        return f"{self.kind.spec.name}/{self.name}"


def _count(value: object, default: int = 1) -> int:
    """A replica count as the API defaults it; a negative or non-integer one counts as none."""
    number = o.integer(value, default)
    return max(number, 0)


def pods_of_job_spec(spec: Mapping[str, Any]) -> int:
    """How many pods a Job runs at once: `parallelism` (default 1), at most `completions`."""
    parallelism = _count(spec.get("parallelism"))
    completions = spec.get("completions")
    if isinstance(completions, int) and not isinstance(completions, bool):
        return min(parallelism, max(completions, 0))
    return parallelism


def wanted_active(job: KubeObject) -> int | None:
    """How many pods the Job controller wants active once some succeeded
    (pkg/controller/job/job_controller.go manageJob `wantActive`): with `completions`, those
    still to complete (`completions - succeeded`), at most `parallelism`; without, the pods
    active (after a success a work queue starts no new pod). None before any pod succeeded."""
    spec = o.mapping(job.get("spec"))
    status = o.mapping(job.get("status"))
    succeeded = _count(status.get("succeeded"), 0)
    if not succeeded:
        return None
    completions = spec.get("completions")
    if isinstance(completions, int) and not isinstance(completions, bool):
        return max(min(completions - succeeded, _count(spec.get("parallelism"))), 0)
    return _count(status.get("active"), 0)


def _is_condition(obj: KubeObject, *kinds: str) -> bool:
    return any((c := o.condition(obj, k)) is not None and c.get("status") == "True" for k in kinds)


def completion_index(pod: KubeObject) -> int | None:
    """The index of an Indexed Job's pod, as its controller reads it (`JOB_COMPLETION_INDEX`: a
    number not below 0); None for none."""
    value = o.annotations_of(pod).get(JOB_COMPLETION_INDEX)
    return _number(value) if isinstance(value, str) else None


def parse_indexes(text: str, completions: int) -> tuple[tuple[int, int], ...]:
    """An index list as the Job controller writes it (`1,3-5,7`: indexed_job_utils.go
    orderedIntervals.String) and reads it back (parseIndexesFromString): a part that is no
    number is skipped, a part from `completions` on ends the list, a range ends at
    `completions - 1` at most. Kept as ranges, in order and merged, never expanded: a range of
    a million indexes is one entry, and the parts are at most the text's commas."""
    ranges: list[tuple[int, int]] = []
    for part in text.split(","):
        bounds = [_number(b) for b in part.split("-")]
        first, last = bounds[0], bounds[-1]
        if len(bounds) > 2 or first is None or last is None:
            continue
        if first >= completions:
            break
        if first <= last:
            ranges.append((first, min(last, completions - 1)))
    merged: list[tuple[int, int]] = []
    for first, last in sorted(ranges):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return tuple(merged)


def indexes_text(ranges: Iterable[tuple[int, int]]) -> str:
    """Index ranges as the Job controller writes them: `0,1` for two, `3-5` for more."""
    parts = []
    for first, last in ranges:
        if last == first:
            parts.append(str(first))
        else:
            parts.append(f"{first}{',' if last == first + 1 else '-'}{last}")
    return ",".join(parts)


def _failed_indexes(job: KubeObject) -> tuple[tuple[int, int], ...]:
    """`status.failedIndexes` of an Indexed Job with `backoffLimitPerIndex`: without it the
    controller keeps no failed indexes and makes a pod for every index (hasBackoffLimitPerIndex,
    firstPendingIndexes)."""
    spec = o.mapping(job.get("spec"))
    completions = spec.get("completions")
    text = o.mapping(job.get("status")).get("failedIndexes")
    if (
        spec.get("completionMode") != "Indexed"
        or spec.get("backoffLimitPerIndex") is None
        or not isinstance(completions, int)
        or isinstance(completions, bool)
        or not isinstance(text, str)
    ):
        return ()
    return parse_indexes(text, completions)


def _job_ranks(spec: Mapping[str, Any]) -> bool:
    """An Indexed Job that runs all its indexes at once: ranks of one run."""
    parallelism = _count(spec.get("parallelism"))
    return (
        spec.get("completionMode") == "Indexed"
        and parallelism > 1
        and spec.get("completions") == parallelism
    )


def _failure(obj: KubeObject, *kinds: str) -> tuple[str, str]:
    """The reason and message of the first of the `kinds` of condition that holds."""
    for kind in kinds:
        found = o.condition(obj, kind)
        if found is not None and found.get("status") == "True":
            return str(found.get("reason") or ""), str(found.get("message") or "")
    return "", ""


def _common(obj: KubeObject) -> dict[str, Any]:
    meta = o.mapping(obj.get("metadata"))
    managed_by = o.mapping(obj.get("spec")).get("managedBy")
    return {
        "name": o.name_of(obj),
        "created": o.created_at(obj),
        "queue": str(o.labels_of(obj).get(QUEUE_LABEL) or ""),
        "uid": str(meta.get("uid") or ""),
        "failure": _failure(obj, "Failed"),
        # The Job controller's own name for itself (pkg/apis/batch/types.go JobControllerName).
        "managed_by": ""
        if managed_by in (None, "", "kubernetes.io/job-controller")
        else str(managed_by),
    }


def _selector_keys(job_spec: Mapping[str, Any]) -> tuple[str, ...]:
    """The keys a Job's `spec.selector` names: its matchLabels, then its matchExpressions."""
    selector = o.mapping(job_spec.get("selector"))
    keys = [str(k) for k in o.mapping(selector.get("matchLabels"))]
    keys += [str(o.mapping(e).get("key", "")) for e in o.sequence(selector.get("matchExpressions"))]
    return tuple(dict.fromkeys(k for k in keys if k))


_JOB_FAILED = ("Failed", "FailureTarget")
"""A Job's conditions that say it failed. Since 1.31 the Job controller first writes
`FailureTarget` (or `SuccessCriteriaMet`) and adds `Failed` (or `Complete`) only once every pod
has stopped (pkg/controller/job/job_controller.go newFailureCondition, newSuccessCondition:
delayTerminalCondition()); from the first it starts no pod, so the job's fate is decided."""


def from_job(job: KubeObject) -> TrainingJob:
    """A batch/v1 Job: one set of `parallelism` pods (at most `completions`), and the indexes
    its controller gave up on."""
    spec = o.mapping(job.get("spec"))
    finished = _is_condition(job, "Complete", "SuccessCriteriaMet", *_JOB_FAILED)
    failed = _is_condition(job, *_JOB_FAILED)
    failed_indexes = _failed_indexes(job)
    return TrainingJob(
        kind=Kind.JOB,
        pod_sets=(PodSet("worker", pods_of_job_spec(spec), o.pod_template(job)),),
        together=_job_ranks(spec),
        selector_keys=_selector_keys(spec),
        active_wanted=wanted_active(job),
        suspended=spec.get("suspend") is True,
        finished=finished,
        failed=failed,
        failed_indexes=failed_indexes,
        failing=bool(failed_indexes) and not finished and not spec.get("successPolicy"),
        **{**_common(job), "failure": _failure(job, *_JOB_FAILED)},
    )


def from_cron_job(cron: KubeObject) -> TrainingJob:
    """A CronJob: the Job its next run creates, queued where its template's labels say (the
    Job gets those, never the CronJob's own: kubernetes pkg/controller/cronjob/utils.go
    getJobFromTemplate2)."""
    spec = o.mapping(cron.get("spec"))
    job_template = o.mapping(spec.get("jobTemplate"))
    job_spec = o.mapping(job_template.get("spec"))
    return TrainingJob(
        kind=Kind.CRON_JOB,
        pod_sets=(
            PodSet("worker", pods_of_job_spec(job_spec), o.pod_template({"spec": job_spec})),
        ),
        together=_job_ranks(job_spec),
        suspended=spec.get("suspend") is True,
        selector_keys=_selector_keys(job_spec),
        **{**_common(cron), "queue": str(o.labels_of(job_template).get(QUEUE_LABEL) or "")},
    )


class _ReplicatedJob(Struct, frozen=True):
    name: str
    replicas: int
    job_labels: Mapping[str, str]
    job_spec: Mapping[str, Any]

    def pod_set(self, pods_per_job: int | None = None) -> PodSet:
        per_job = pods_of_job_spec(self.job_spec) if pods_per_job is None else pods_per_job
        return PodSet(self.name, self.replicas * per_job, o.mapping(self.job_spec.get("template")))


def _replicated_jobs(jobset_spec: Mapping[str, Any]) -> list[_ReplicatedJob]:
    """The replicated jobs that run beside each other: one that another waits for to
    complete has finished before that one starts."""
    replicated = [o.mapping(r) for r in o.sequence(jobset_spec.get("replicatedJobs"))]
    before = {
        str(o.mapping(d).get("name"))
        for r in replicated
        for d in o.sequence(r.get("dependsOn"))
        if o.mapping(d).get("status") == "Complete"
    }
    return [
        _ReplicatedJob(
            str(job.get("name") or ""),
            _count(job.get("replicas")),
            o.labels_of(o.mapping(job.get("template"))),
            o.mapping(o.mapping(job.get("template")).get("spec")),
        )
        for job in replicated
        if str(job.get("name") or "") not in before
    ]


def _jobset_jobs(jobset: str, jobset_spec: Mapping[str, Any]) -> tuple[str, ...]:
    """The Jobs a JobSet named `jobset` makes, as `child_jobs` names them: `<jobset>-<replicated
    job>-` and an index, for every replicated job in the JobSet's order."""
    replicated = (o.mapping(r) for r in o.sequence(jobset_spec.get("replicatedJobs")))
    return tuple(f"{jobset}-{r.get('name')}-" for r in replicated if r.get("name"))


def from_jobset(jobset: KubeObject) -> TrainingJob:
    """A JobSet: one set per replicated job that runs beside the others."""
    spec = o.mapping(jobset.get("spec"))
    return TrainingJob(
        kind=Kind.JOB_SET,
        pod_sets=tuple(job.pod_set() for job in _replicated_jobs(spec)),
        child_jobs=_jobset_jobs(o.name_of(jobset), spec),
        together=True,
        suspended=spec.get("suspend") is True,
        finished=_is_condition(jobset, "Completed", "Failed"),
        failed=_is_condition(jobset, "Failed"),
        **_common(jobset),
    )


def runtime_of(train_job: KubeObject) -> tuple[Kind, str]:
    """The runtime a TrainJob names: a ClusterTrainingRuntime unless it says TrainingRuntime."""
    ref = o.mapping(o.mapping(train_job.get("spec")).get("runtimeRef"))
    kind = (
        Kind.TRAINING_RUNTIME
        if ref.get("kind") == "TrainingRuntime"
        else (Kind.CLUSTER_TRAINING_RUNTIME)
    )
    return kind, str(ref.get("name") or "")


def _with_trainer(template: Mapping[str, Any], trainer: Mapping[str, Any]) -> dict[str, Any]:
    """A pod template with the TrainJob's image, command, args and resources applied to its
    container `node`."""
    spec = dict(o.pod_spec(template))
    containers = []
    for container in o.containers(spec):
        changed = dict(container)
        if container.get("name") == TRAINER_NODE:
            for field in ("image", "command", "args"):
                if trainer.get(field):
                    changed[field] = trainer[field]
            resources = o.mapping(trainer.get("resourcesPerNode"))
            if resources.get("limits") or resources.get("requests"):
                changed["resources"] = resources
        containers.append(changed)
    spec["containers"] = containers
    return {**template, "spec": spec}


def from_train_job(train_job: KubeObject, runtime: Got | CantRead) -> TrainingJob | Unshaped:
    """A TrainJob as its runtime's JobSet: the replicated job labelled as the trainer step
    runs `numNodes` pods (the TrainJob's, else the runtime's; under an MPI policy, the job
    named `node` does), and every container `node` takes the trainer's image, command and
    resources (pkg/runtime/framework/plugins/jobset/builder.go `Trainer`)."""
    kind, name = runtime_of(train_job)
    common = _common(train_job)
    if isinstance(runtime, CantRead):
        what = "training runtime" if kind is Kind.TRAINING_RUNTIME else "cluster training runtime"
        if runtime.is_measurement:
            return Unshaped(
                Kind.TRAIN_JOB,
                common["name"],
                f"its {what} '{name}' doesn't exist",
                created=common["created"],
            )
        return Unshaped(
            Kind.TRAIN_JOB,
            common["name"],
            f"its {what} '{name}' could not be read",
            runtime,
            created=common["created"],
        )
    spec = o.mapping(train_job.get("spec"))
    trainer = o.mapping(spec.get("trainer"))
    runtime_spec = o.mapping(runtime.obj.get("spec"))
    jobset_spec = o.mapping(o.mapping(runtime_spec.get("template")).get("spec"))
    policy = o.mapping(runtime_spec.get("mlPolicy"))
    nodes = _count(trainer.get("numNodes", policy.get("numNodes")))
    mpi = o.mapping(policy.get("mpi"))
    sets = []
    for job in _replicated_jobs(jobset_spec):
        pod_set = job.pod_set()
        if mpi and job.name == TRAINER_NODE:
            # An MPI runtime's nodes are the job named `node`; a launcher that runs as a node
            # takes one of them (plugins/mpi/mpi.go EnforceMLPolicy).
            count = max(nodes - 1, 1) if mpi.get("runLauncherAsNode") is True else nodes
            pod_set = PodSet(job.name, count, pod_set.template)
        elif not mpi and job.job_labels.get(TRAINER_STEP_LABEL) == TRAINER_STEP:
            # The trainer step runs one Job of numNodes pods (replicas forced to 1).
            pod_set = PodSet(job.name, nodes, pod_set.template)
        sets.append(PodSet(pod_set.name, pod_set.count, _with_trainer(pod_set.template, trainer)))
    return TrainingJob(
        kind=Kind.TRAIN_JOB,
        pod_sets=tuple(sets),
        child_jobs=_jobset_jobs(common["name"], jobset_spec),
        together=True,
        suspended=spec.get("suspend") is True,
        finished=_is_condition(train_job, "Complete", "Failed"),
        failed=_is_condition(train_job, "Failed"),
        **common,
    )


_MPI_LAUNCHER_SUFFIX = "-launcher"
"""mpi-operator (v2beta1) runs an MPIJob's launcher as a batch Job `<mpijob>-launcher`
(pkg/controller/mpi_job_controller.go `newLauncherJob`); the training operator's MPIJob (v1)
runs it as a pod of its own (pkg/controller.v1/mpi/mpijob_controller.go), no Job."""
_MPI_WORKER = "Worker"
"""An MPIJob's worker replica type, whose `replicas` defaults to 0 (mpi-operator pkg/apis/
kubeflow/v2beta1/default.go setDefaultsTypeWorker; training-operator pkg/apis/kubeflow.org/v1/
mpi_defaults.go SetDefaults_MPIJob); every other replica type of every kind defaults to 1."""


def _default_replicas(kind: Kind, role: str) -> int:
    return 0 if kind in (Kind.MPI_JOB, Kind.MPI_JOB_V1) and role == _MPI_WORKER else 1


INIT_PYTORCH: Mapping[str, Any] = {
    "name": "init-pytorch",
    "image": "alpine:3.10",
    "imagePullPolicy": "IfNotPresent",
    "resources": {
        "limits": {"cpu": "100m", "memory": "20Mi"},
        "requests": {"cpu": "50m", "memory": "10Mi"},
    },
}
"""The init container kubeflow/training-operator v1.4.0 to v1.9 appends to every Worker pod of a
PyTorchJob that has a Master, to wait until the Master's name resolves
(pkg/controller.v1/pytorch/initcontainer.go setInitContainer, called from SetClusterSpec for
each pod it creates; its default `initContainerTemplate`, with no securityContext, and
pkg/config/config.go PyTorchInitContainerImageDefault). The standalone kubeflow/pytorch-operator
from v0.7.0 adds the same to every pod but the Master's (pkg/controller.v1/pytorch/pod.go
createNewPod -> util.go AddInitContainerForWorkerPod; template pkg/common/config/config.go), and
its jobs always have a Master (pkg/apis/pytorch/validation/validation.go): its Workers, too.
Either reads its template from /etc/config/initContainer.yaml when given one. Its `command` (an
nslookup loop) is left out: no gate doctor judges reads it. Kubeflow Trainer v2 (TrainJob) has
no PyTorchJob controller."""
INIT_PYTORCH_ASSUMED = (
    "'init-pytorch' is added by the training operator to every Worker pod of a PyTorchJob with "
    "a Master (kubeflow/training-operator v1.4 to v1.9, pkg/controller.v1/pytorch/"
    "initcontainer.go setInitContainer; kubeflow/pytorch-operator from v0.7.0, pod.go "
    "AddInitContainerForWorkerPod); assumed at its default template (alpine:3.10, requests "
    "cpu 50m memory 10Mi, limits cpu 100m memory 20Mi, no securityContext): no Worker pod of "
    "a PyTorchJob here shows what it adds, and the operator's version and its "
    "--pytorch-init-container-template-file are not visible through the API"
)
"""What doctor assumes of the operator, for the details of a finding about `INIT_PYTORCH`."""


def _added_by_operator(
    kind: Kind, role: str, roles: Iterable[str]
) -> tuple[Mapping[str, Any], ...]:
    """What the training operator appends to the pods of `role`: `INIT_PYTORCH` for a
    PyTorchJob's Workers when it has a Master. The operator compares the lowercased replica
    type (setInitContainer: `rtype == strings.ToLower(Worker)`); the API server stores the
    types CamelCased (pytorch_defaults.go setTypeNamesToCamelCase), a job file may not."""
    has_master = any(r.lower() == "master" for r in roles)
    if kind is Kind.PYTORCH_JOB and role.lower() == "worker" and has_master:
        return (INIT_PYTORCH,)
    return ()


def from_kubeflow(kind: Kind, job: KubeObject) -> TrainingJob:
    """A Kubeflow job: one set per replica type, `replicas` each (when absent, 0 for an
    MPIJob's Worker, else 1), with what the operator adds to the pods of each."""
    spec = o.mapping(job.get("spec"))
    replicas = o.mapping(spec.get(KUBEFLOW_REPLICA_SPECS[kind]))
    roles = [str(role) for role in replicas]
    sets = tuple(
        PodSet(
            str(role),
            _count(o.mapping(r).get("replicas"), _default_replicas(kind, str(role))),
            o.mapping(o.mapping(r).get("template")),
            _added_by_operator(kind, str(role), roles),
        )
        for role, r in replicas.items()
    )
    return TrainingJob(
        kind=kind,
        pod_sets=sets,
        child_jobs=(f"{o.name_of(job)}{_MPI_LAUNCHER_SUFFIX}",) if kind is Kind.MPI_JOB else (),
        together=True,
        suspended=o.mapping(spec.get("runPolicy")).get("suspend") is True,
        finished=_is_condition(job, "Succeeded", "Failed"),
        failed=_is_condition(job, "Failed"),
        taken_up=bool(o.sequence(o.mapping(job.get("status")).get("conditions"))),
        **_common(job),
    )


_MAX_INT32 = 2**31 - 1
"""A Ray worker group's `maxReplicas` when unset (apis/ray/v1/raycluster_types.go)."""


def _ray_workers(group: Mapping[str, Any]) -> int:
    """How many workers kuberay keeps in a group: `replicas`, raised to `minReplicas` (default
    0) when absent or below it, else lowered to `maxReplicas` (default MaxInt32) when above it
    (ray-operator/controllers/ray/utils/util.go GetWorkerGroupDesiredReplicas)."""
    least = _count(group.get("minReplicas"), 0)
    replicas = o.integer(group.get("replicas"), least)
    if replicas < least:
        return least
    return _count(min(replicas, o.integer(group.get("maxReplicas"), _MAX_INT32)))


def _ray_sets(cluster_spec: Mapping[str, Any]) -> tuple[PodSet, ...]:
    head = o.mapping(cluster_spec.get("headGroupSpec"))
    sets = [PodSet(RAY_HEAD_GROUP, 1, o.mapping(head.get("template")))] if head else []
    for group in (o.mapping(g) for g in o.sequence(cluster_spec.get("workerGroupSpecs"))):
        if group.get("suspend") is True:
            continue
        replicas = _ray_workers(group)
        hosts = _count(group.get("numOfHosts"))
        sets.append(
            PodSet(
                str(group.get("groupName") or ""),
                replicas * hosts,
                o.mapping(group.get("template")),
            )
        )
    return tuple(sets)


def from_ray_cluster(cluster: KubeObject) -> TrainingJob:
    """A RayCluster: its head and its worker groups."""
    spec = o.mapping(cluster.get("spec"))
    return TrainingJob(
        kind=Kind.RAY_CLUSTER,
        pod_sets=_ray_sets(spec),
        together=True,
        suspended=spec.get("suspend") is True,
        cluster_name=o.name_of(cluster),
        **_common(cluster),
    )


_RAY_JOB_REFUSED = "ValidationFailed"
"""The jobDeploymentStatus kuberay sets when its checks of the RayJob's settings fail, with the
error as message; it then returns without creating the RayCluster, and no later state follows
(rayjob_controller.go Reconcile: validateRayJob; apis/ray/v1/rayjob_types.go)."""
_RAY_JOB_FAILED = ("Failed", _RAY_JOB_REFUSED)
_RAY_APP_FAILED = "FAILED"
"""The Ray job's own `jobStatus` when its entrypoint failed (apis/ray/v1/rayjob_types.go
`JobStatusFailed`). KubeRay before v1.1.0 ends such a RayJob at jobDeploymentStatus `Complete`
(v1.0.0 rayjob_controller.go Reconcile: `isJobSucceedOrFailed` -> `JobDeploymentStatusComplete`)
or leaves it at `Running` while it keeps the cluster; `Failed` came with v1.1.0 (#1942). So
this status is a failure whatever the deployment status says, but for `Retrying`."""
_RAY_RETRYING = "Retrying"
"""The deployment status of a failed RayJob that kuberay runs again on a new cluster (its
`backoffLimit` not reached, v1.2.0 on: checkBackoffLimitAndUpdateStatusIfNeeded); its
`jobStatus` stays `FAILED` until it resets it to `NEW`. A retry, not an ending."""


def from_ray_job(job: KubeObject) -> TrainingJob:
    """A RayJob: the RayCluster it creates, or none when `spec.clusterSelector` names an
    existing one, whose name is the selector's `ray.io/cluster` (rayjob_controller.go
    initRayJobStatusIfNeed; getOrCreateRayClusterInstance then creates nothing and ignores
    any rayClusterSpec). Failed at a failed deployment status, or at the Ray job's own
    `FAILED` (`_RAY_APP_FAILED`); a `STOPPED` Ray job is one a person stopped, no failure."""
    spec = o.mapping(job.get("spec"))
    status = o.mapping(job.get("status"))
    state = status.get("jobDeploymentStatus")
    common = _common(job)
    app_failed = status.get("jobStatus") == _RAY_APP_FAILED and state != _RAY_RETRYING
    failed = state in _RAY_JOB_FAILED or app_failed
    if failed:
        # KubeRay before v1.1.0 writes no reason: the Ray job's own status stands for one.
        reason = str(status.get("reason") or "")
        reason = reason or (f"jobStatus {_RAY_APP_FAILED}" if app_failed else "")
        common["failure"] = (reason, str(status.get("message") or ""))
    selector = o.mapping(spec.get("clusterSelector"))
    cluster = status.get("rayClusterName") or selector.get(RAY_CLUSTER_LABEL)
    return TrainingJob(
        kind=Kind.RAY_JOB,
        pod_sets=() if selector else _ray_sets(o.mapping(spec.get("rayClusterSpec"))),
        together=True,
        suspended=spec.get("suspend") is True,
        finished=state in ("Complete", *_RAY_JOB_FAILED) or failed,
        failed=failed,
        refused=state == _RAY_JOB_REFUSED,
        cluster_name=str(cluster or ""),
        on_existing_cluster=bool(selector),
        **common,
    )


def from_leader_worker_set(lws: KubeObject) -> TrainingJob:
    """A LeaderWorkerSet: `replicas` groups of one leader and `size` - 1 workers."""
    spec = o.mapping(lws.get("spec"))
    template = o.mapping(spec.get("leaderWorkerTemplate"))
    groups = _count(spec.get("replicas"))
    size = _count(template.get("size"))
    workers = o.mapping(template.get("workerTemplate"))
    leader = o.mapping(template.get("leaderTemplate")) or workers
    sets = [PodSet("leader", groups, leader)]
    if size > 1:
        sets.append(PodSet("worker", groups * (size - 1), workers))
    return TrainingJob(
        kind=Kind.LEADER_WORKER_SET,
        pod_sets=tuple(sets),
        together=True,
        **_common(lws),
    )


def _part_of_other_work(obj: KubeObject) -> bool:
    """An object another training kind created, read through that kind."""
    return any(kind in _PART_OF_OTHER_WORK for kind, _ in o.owner_kinds(obj))


_Key = tuple[str, str, str]
"""How a pod is matched to its job: ("owner", kind, name) or ("label", key, value)."""


def _keys(job: TrainingJob) -> list[_Key]:
    """What marks a pod as one of `job`'s: its controller, or the label the job's controller
    puts on every pod it creates."""
    kind = job.kind
    if kind is Kind.JOB:
        return [("owner", "Job", job.name)]
    if kind in (Kind.JOB_SET, Kind.TRAIN_JOB):
        return [("label", JOBSET_NAME_LABEL, job.name)]  # a TrainJob's JobSet has its name
    if kind in KUBEFLOW_REPLICA_SPECS:
        return [("owner", kind.spec.name, job.name), ("label", KUBEFLOW_JOB_LABEL, job.name)]
    if kind in (Kind.RAY_CLUSTER, Kind.RAY_JOB) and job.cluster_name:
        return [("label", RAY_CLUSTER_LABEL, job.cluster_name)]
    if kind is Kind.LEADER_WORKER_SET:
        return [("label", LWS_NAME_LABEL, job.name)]
    return []


class TrainingWork(Struct, frozen=True):
    """Every training job of the namespace, and the lists that could not be read."""

    jobs: tuple[TrainingJob, ...] = ()
    unshaped: tuple[Unshaped, ...] = ()
    unread: tuple[tuple[Kind, CantRead], ...] = ()
    """Lists of training kinds that could not be read (discovery included)."""
    planned: TrainingJob | None = None
    """The job to check instead of the newest one (`--job-file`): not yet submitted."""
    lookup: Mapping[_Key, int] = {}
    """Which job (its index in `jobs`) a pod's controller or label points at."""
    planned_unshaped: Unshaped | None = None
    """`--job-file`'s job, when its pod sets could not be worked out."""
    planned_not_served: bool = False
    """Discovery measured that the cluster does not serve `--job-file`'s kind
    (`not_served`): the job can never be created here."""
    planned_served_as: tuple[str, ...] = ()
    """Where the planned kind is not served, the apiVersions the cluster serves the same kind
    at instead (`served_instead`): an MPIJob at v2beta1 for a file's v1."""

    @property
    def judged_unshaped(self) -> Unshaped | None:
        """The job to judge when its pod sets could not be worked out: the planned one, or
        one newer than every job whose pod sets are known."""
        if self.planned_unshaped is not None:
            return self.planned_unshaped
        if self.planned is not None or not self.unshaped:
            return None
        newest = max(self.unshaped, key=lambda u: (str(u.created or ""), u.name))
        judged = self.judged
        if judged is None or str(newest.created or "") >= str(judged.created or ""):
            return newest
        return None

    @property
    def judged_unknown(self) -> tuple[tuple[Kind, CantRead], ...]:
        """The lists of training jobs (discovery, which says which kinds there are, included)
        that could not be read, where the judged job is the newest one listed: any of them
        could hold a newer job, so which job the next run is judged by is not known. None
        matters where `--job-file`'s job is judged."""
        return () if self.planned is not None else self.unread

    @property
    def judged(self) -> TrainingJob | None:
        """The job whose shape the next training run is judged by: the planned one, else the
        newest (by creation, then kind and name)."""
        if self.planned is not None:
            return self.planned
        if not self.jobs:
            return None
        return max(self.jobs, key=lambda j: (str(j.created or ""), j.kind.spec.name, j.name))

    def relevant(self) -> list[TrainingJob]:
        """Unfinished jobs, and the judged one even when finished."""
        judged = self.judged
        found = [j for j in self.jobs if not j.finished or j is judged]
        return [*found, self.planned] if self.planned is not None else found

    def job_of(self, pod: KubeObject) -> TrainingJob | None:
        """The training job a pod belongs to, by its controller or its controller's label."""
        for kind, name in o.owner_kinds(pod):
            index = self.lookup.get(("owner", kind, name))
            if index is not None:
                return self.jobs[index]
        for key, value in o.labels_of(pod).items():
            index = self.lookup.get(("label", str(key), str(value)))
            if index is not None:
                return self.jobs[index]
        return None


_TRAINING_POD_LABELS = (
    JOBSET_NAME_LABEL,
    KUBEFLOW_JOB_LABEL,
    RAY_CLUSTER_LABEL,
    LWS_NAME_LABEL,
)


def training_owner(pod: KubeObject) -> str | None:
    """The name of the training job a pod belongs to, from the pod alone: its Job, or the
    label its training controller sets (a JobSet's, a Kubeflow job's, a Ray cluster's, a
    LeaderWorkerSet's); None for a pod of no training job."""
    labels = o.labels_of(pod)
    for label in _TRAINING_POD_LABELS:
        if labels.get(label):
            return str(labels[label])
    return o.job_owner(pod)


def pod_set_of(job: TrainingJob, pod: KubeObject) -> str:
    """The name of the set `pod` belongs to, by the role label its controller sets; the
    job's first set when it has no such label."""
    labels = o.labels_of(pod)
    role = {
        Kind.JOB_SET: labels.get(REPLICATED_JOB_LABEL),
        Kind.TRAIN_JOB: labels.get(REPLICATED_JOB_LABEL),
        Kind.RAY_CLUSTER: labels.get(RAY_GROUP_LABEL),
        Kind.RAY_JOB: labels.get(RAY_GROUP_LABEL),
        Kind.LEADER_WORKER_SET: (
            None
            if LWS_WORKER_INDEX_LABEL not in labels
            else "leader"
            if labels[LWS_WORKER_INDEX_LABEL] == "0"
            else "worker"
        ),
    }.get(job.kind)
    if job.kind in KUBEFLOW_REPLICA_SPECS:
        kubeflow_role = str(labels.get(KUBEFLOW_ROLE_LABEL) or "").lower()
        role = next((s.name for s in job.pod_sets if s.name.lower() == kubeflow_role), None)
    names = [s.name for s in job.pod_sets]
    if role in names:
        return str(role)
    return names[0] if names else ""


def shape(
    kind: Kind, obj: KubeObject, runtime: Got | CantRead | None = None
) -> TrainingJob | Unshaped | None:
    """The training job an object of `kind` is; None for a kind that is no training job. A
    TrainJob needs its runtime's read."""
    if kind is Kind.JOB:
        return from_job(obj)
    if kind is Kind.CRON_JOB:
        return from_cron_job(obj)
    if kind is Kind.JOB_SET:
        return from_jobset(obj)
    if kind is Kind.TRAIN_JOB:
        return from_train_job(obj, runtime if runtime is not None else _NO_RUNTIME)
    if kind in KUBEFLOW_REPLICA_SPECS:
        return from_kubeflow(kind, obj)
    if kind is Kind.RAY_JOB:
        return from_ray_job(obj)
    if kind is Kind.RAY_CLUSTER:
        return from_ray_cluster(obj)
    if kind is Kind.LEADER_WORKER_SET:
        return from_leader_worker_set(obj)
    return None


_NO_RUNTIME = CantRead(ReadFailure.NOT_CAPTURED, "the runtime was not read")


def training_work(
    lists: Mapping[Kind, ListRead],
    runtimes: Mapping[tuple[Kind, str], Got | CantRead],
    planned: TrainingJob | Unshaped | None = None,
) -> TrainingWork:
    """Every training job in `lists` (Jobs, CronJobs and the optional kinds that are served),
    each read once; a Job another training kind created is read through that kind."""
    jobs: list[TrainingJob] = []
    unshaped: list[Unshaped] = []
    unread: list[tuple[Kind, CantRead]] = []
    for kind, read in lists.items():
        if isinstance(read, CantRead):
            # A list the server answers 404 is a kind it does not serve: measured absent.
            if not (read.is_measurement and kind in _MAY_BE_ABSENT):
                unread.append((kind, read))
            continue
        for obj in _own_work(read):
            runtime = runtimes.get(runtime_of(obj)) if kind is Kind.TRAIN_JOB else None
            job = shape(kind, obj, runtime)
            if isinstance(job, TrainingJob):
                jobs.append(job)
            elif isinstance(job, Unshaped):
                unshaped.append(job)
    lookup: dict[_Key, int] = {}
    for index, job in enumerate(jobs):
        for key in _keys(job):
            lookup.setdefault(key, index)
    return TrainingWork(
        tuple(jobs),
        tuple(unshaped),
        tuple(unread),
        planned if isinstance(planned, TrainingJob) else None,
        lookup,
        planned if isinstance(planned, Unshaped) else None,
    )


def _own_work(read: Listed) -> Iterable[KubeObject]:
    return [obj for obj in read.items if not _part_of_other_work(obj)]


JOB_NAME_LABELS = ("batch.kubernetes.io/job-name", "job-name")
"""The labels the API server gives a Job's template, valued the Job's name (k8s.io/api/batch/v1
`JobNameLabel` and its legacy name)."""


def as_created(kind: Kind, document: Mapping[str, Any]) -> Mapping[str, Any]:
    """A job file's object as the API server stores it, where that changes how its pods are
    judged: a Job's template gets the `JOB_NAME_LABELS`, valued its name, unless the Job selects
    its pods itself (pkg/registry/batch/job/strategy.go `PrepareForCreate` ->
    `generateSelectorIfNeeded` -> `generateSelector`; a label the template sets is kept). A Job
    named by `generateName` alone has no name yet, and its uid labels none before create:
    nothing is added for them."""
    spec = o.mapping(document.get("spec"))
    name = o.mapping(document.get("metadata")).get("name")
    if kind is not Kind.JOB or not isinstance(name, str) or not name:
        return document
    if spec.get("manualSelector") is True:
        return document
    template = o.mapping(spec.get("template"))
    metadata = o.mapping(template.get("metadata"))
    labels = {**dict.fromkeys(JOB_NAME_LABELS, name), **o.mapping(metadata.get("labels"))}
    stored = {**template, "metadata": {**metadata, "labels": labels}}
    return {**document, "spec": {**spec, "template": stored}}


PREFIX_KEPT = 58
"""How much of a `generateName` the API server keeps, adding five characters of its own
(apiserver pkg/storage/names/generate.go `maxGeneratedNameLength`: 63 - 5)."""


def shown_name(document: Mapping[str, Any]) -> str:
    """The job's name as doctor says it: `metadata.name`, or its `generateName` and `…` for
    the characters the API server will add; "" for neither."""
    metadata = o.mapping(document.get("metadata"))
    name = str(metadata.get("name") or "")
    prefix = str(metadata.get("generateName") or "")
    return name or (f"{prefix[:PREFIX_KEPT]}…" if prefix else "")


def not_served(kind: Kind, api_groups: Got | CantRead, lists: Mapping[Kind, ListRead]) -> bool:
    """Whether discovery measured that the server does not serve `kind`, an optional training
    kind: its group does not serve its version in `GET /apis`, or the list of the kind itself
    answered 404 (a group served by another kind's CRD: kubeflow.org/v1 with no JAXJob CRD).
    `kubectl create -f` of such an object fails before any request (apimachinery
    pkg/api/meta/errors.go `NoKindMatchError`: "ensure CRDs are installed first"). Batch Jobs
    and CronJobs are built in. False where discovery could not be read: that read's own
    could-not-check says so."""
    if kind not in OPTIONAL_KINDS or not isinstance(api_groups, Got):
        return False
    spec = kind.spec
    if spec.version not in served_versions(api_groups.obj).get(spec.group, ()):
        return True
    listed = lists.get(kind)
    return isinstance(listed, CantRead) and listed.is_measurement


def served_instead(
    kind: Kind, api_groups: Got | CantRead, lists: Mapping[Kind, ListRead]
) -> tuple[str, ...]:
    """The apiVersions at which the server serves `kind` itself at another version: each other
    optional kind of the same group and resource whose list was read and that `not_served`
    does not find absent (MPIJob: mpi-operator's kubeflow.org/v2beta1, the training operator's
    kubeflow.org/v1). One CRD holds a resource, named `<plural>.<group>` (apiextensions-apiserver
    pkg/apis/apiextensions/validation `ValidateCustomResourceDefinition`), so a second operator
    for the same kind cannot be installed beside the first: its CRD is refused, "status.
    storedVersions[0]: Invalid value: \"v2beta1\": must appear in spec.versions"
    (kubeflow/trainer#1930)."""
    spec = kind.spec
    return tuple(
        other.spec.api_version
        for other in OPTIONAL_KINDS
        if other is not kind
        and (other.spec.group, other.spec.plural) == (spec.group, spec.plural)
        and other in lists
        and not not_served(other, api_groups, lists)
    )


def served_versions(api_groups: KubeObject) -> dict[str, tuple[str, ...]]:
    """Each API group the server serves and its versions, from discovery's APIGroupList
    (staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go `APIGroupList`)."""
    served: dict[str, tuple[str, ...]] = {}
    for group in (o.mapping(g) for g in o.sequence(api_groups.get("groups"))):
        versions = [o.mapping(v).get("version") for v in o.sequence(group.get("versions"))]
        served[str(group.get("name") or "")] = tuple(str(v) for v in versions if v)
    return served


def optional_kinds_served(api_groups: KubeObject) -> list[Kind]:
    """The optional training kinds whose group serves their version; of two versions of one
    resource (MPIJob), the first listed in OPTIONAL_KINDS."""
    return optional_kinds_of(served_versions(api_groups))


def optional_kinds_of(served: Mapping[str, tuple[str, ...]]) -> list[Kind]:
    """`optional_kinds_served`, from each served group's versions."""
    kinds: list[Kind] = []
    taken: set[tuple[str, str]] = set()
    for kind in OPTIONAL_KINDS:
        spec = kind.spec
        resource = (spec.group, spec.plural)
        if spec.version in served.get(spec.group, ()) and resource not in taken:
            kinds.append(kind)
            taken.add(resource)
    return kinds
