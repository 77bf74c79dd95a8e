"""Plain words every command shares: the headline-and-remedy record, why a read of the cluster
failed and the step that fixes it, and the lines for a cluster that can't be reached or logged
in to. doctor's catalogue and refresh's report are both built from these."""

import functools
from collections.abc import Iterable
from typing import Final

from msgspec import Struct

from truegreen.cluster import CantRead, Kind, ReadFailure
from truegreen.kubectl import Kubectl, truegreen_command


class Wording(Struct, frozen=True):
    """The plain headline and remedy templates for one finding code."""

    headline: str
    remedy: str

    @property
    def placeholders(self) -> frozenset[str]:
        """The names the templates need."""
        from string import Formatter  # only reviews and tests ask; importing compiles a pattern

        return frozenset(
            name
            for template in (self.headline, self.remedy)
            for _, name, _, _ in Formatter().parse(template)
            if name
        )


CLUSTER_WORDING: Final[dict[str, Wording]] = {
    "cluster-unreachable": Wording(
        "Couldn't reach the cluster at {server}: {why}.",
        "Check the cluster address in {source} and your network, then run again; {check} "
        "shows whether kubectl gets through.",
    ),
    "cluster-login-failed": Wording(
        "Couldn't log in to the cluster at {server}: {why}.",
        "{todo}, then run again; {check} shows whether the login works.",
    ),
    "cluster-login-no-answer": Wording(
        "Couldn't log in to the cluster at {server}: {why}.",
        "{todo}, then run again; {check} shows whether the login works.",
    ),
    "cluster-login-refused": Wording(
        "The cluster at {server} did not accept {login}: {message}.",
        "{todo}, then run again; {check} shows whether the login works.",
    ),
}
"""The whole cluster's lines, when nothing could be read."""


class Login(Struct, frozen=True):
    """How a cluster's requests log in, for the lines that say no login could be made."""

    words: str = ""
    """Plain words naming the login (`user 'admin'`, `the credential plugin aws of user …`)."""
    command: str | None = None
    """The credential plugin's command, when one logs in."""
    source: str = ""
    """Where the login details are kept: the kubeconfig file of the context's user."""


# The usual way to log in again for the credential plugins of the big clouds, by command name.
_PLUGIN_LOGINS = {
    "aws": "aws sso login",
    "aws-iam-authenticator": "aws sso login",
    "gke-gcloud-auth-plugin": "gcloud auth login",
    "kubelogin": "az login",
    "doctl": "doctl auth init",
}


def no_login(cant: CantRead, login: Login) -> tuple[str, dict[str, str]] | None:
    """When no login could be made, so nothing was sent (the cluster was never asked): the
    code of `CLUSTER_WORDING` to say so and its fields but `server`, `source` and `check`.
    A plugin stopped for time is named as the one that did not answer
    (`cluster-login-no-answer`, with its command line to run by hand and the cloud's login);
    a plugin that failed, or a token file gone, in its own words (`cluster-login-failed`).
    None for any other failure: the cluster was asked."""
    why = _without_todo(cant)
    if cant.login_stalled:
        return "cluster-login-no-answer", {"why": why, "todo": cant.todo + _cloud_login(login)}
    if cant.failure is ReadFailure.UNAUTHORIZED and not cant.reached:
        return "cluster-login-failed", {"why": why, "todo": login_todo(login, cant.todo)}
    return None


def login_todo(login: Login, advice: str) -> str:
    """What to do about a login: the cloud's own login command, the plugin's advice, or the
    place the login details are kept."""
    name = _command_name(login)
    if name in _PLUGIN_LOGINS:
        return f"log in again with `{_PLUGIN_LOGINS[name]}`"
    if advice:
        return advice.removesuffix(", then retry")
    if login.command:
        return f"log in again the way the plugin `{name}` expects"
    return (
        f"check the login details of {login.words or 'this user'} in {login.source}: they may "
        "have expired or been revoked"
    )


def _without_todo(cant: CantRead) -> str:
    """The failure's words without the advice at their end (the remedy gives it)."""
    ending = f". {cant.todo}"
    reason = (
        cant.reason[: -len(ending)] if cant.todo and cant.reason.endswith(ending) else cant.reason
    )
    return reason.rstrip(".")


def _cloud_login(login: Login) -> str:
    """` (`aws sso login`)` for a plugin whose cloud login is known, else ""."""
    name = _command_name(login)
    return f" (`{_PLUGIN_LOGINS[name]}`)" if name in _PLUGIN_LOGINS else ""


def _command_name(login: Login) -> str:
    """The plugin program's own name (`aws` of `/usr/local/bin/aws`); "" without a plugin."""
    return login.command.rsplit("/", 1)[-1] if login.command else ""


READ_REMEDIES: Final[dict[ReadFailure, str]] = {
    ReadFailure.UNAUTHORIZED: "Log in to the cluster anew and run again; {check} shows "
    "whether the login works.",
    ReadFailure.FORBIDDEN: "Ask your cluster admin to let you read {noun}; {check} answers "
    "yes once you may.",
    ReadFailure.TIMEOUT: "Run again, or allow each answer more time with --request-timeout 30.",
    ReadFailure.UNREACHABLE: "Check your network to the cluster and run again; {health} shows "
    "whether kubectl gets through.",
    ReadFailure.SERVER_ERROR: "Run again; if it stays, ask your cluster admin to check the "
    "cluster's health ({health}).",
    ReadFailure.MALFORMED: "Check for a proxy between you and the cluster that changes its "
    "answers, then run again.",
    ReadFailure.TOO_LARGE: "Ask your cluster admin why {noun} are so many or so large; "
    "{count} lists them.",
    ReadFailure.NOT_CAPTURED: "Take a new snapshot with {snapshot} and check that one.",
    # Lengthening the limit is never the step: the monitor refuses one too short for a quiet,
    # healthy cluster (monitor/age.py), and doctor --watch has none to lengthen.
    ReadFailure.UNCONFIRMED: "Check that the cluster is well ({health}) and that the "
    "connection to it stays open: a healthy cluster confirms what it follows about once a "
    "minute, even when nothing changes.",
    ReadFailure.NOT_FOUND: "Check that {noun} exist; {count} lists them.",
}
"""What to do when a read could not look, per failure: the step that fixes that read."""


# Read one by one, by name; the rest are listed.
_GOT_BY_NAME = frozenset(
    {
        Kind.CONFIG_MAP,
        Kind.SECRET,
        Kind.SERVICE_ACCOUNT,
        Kind.PERSISTENT_VOLUME_CLAIM,
        Kind.STORAGE_CLASS,
        Kind.RUNTIME_CLASS,
        Kind.NAMESPACE,
        Kind.PERSISTENT_VOLUME,
        Kind.CSI_DRIVER,
        Kind.RESOURCE_CLAIM_TEMPLATE,
        Kind.MACHINE_DEPLOYMENT,
        Kind.MACHINE_SET,
        Kind.MACHINE_POOL,
        Kind.MACHINE_DEPLOYMENT_V1BETA1,
        Kind.MACHINE_SET_V1BETA1,
        Kind.MACHINE_POOL_V1BETA1,
    }
)

# Plain nouns for what a read was after, used in "couldn't check" lines.
_KIND_NOUNS = {
    Kind.POD: "the running programs",
    Kind.NODE: "the machines",
    Kind.SECRET: "the stored logins",
    Kind.SERVICE_ACCOUNT: "the environment's identities",
    Kind.PERSISTENT_VOLUME_CLAIM: "the dataset volumes",
    Kind.LIMIT_RANGE: "the default sizes",
    Kind.CONFIG_MAP: "the autoscaler's status",
    Kind.DEPLOYMENT: "the workloads",
    Kind.STATEFUL_SET: "the workloads",
    Kind.DAEMON_SET: "the workloads",
    Kind.REPLICA_SET: "the workloads",
    Kind.JOB: "the training jobs",
    Kind.CRON_JOB: "the scheduled training jobs",
    Kind.STORAGE_CLASS: "the storage types",
    Kind.PERSISTENT_VOLUME: "the storage behind the dataset volumes",
    Kind.CSI_DRIVER: "the storage drivers",
    Kind.PRIORITY_CLASS: "the priority levels",
    Kind.RUNTIME_CLASS: "the container runtimes",
    Kind.API_GROUPS: "which kinds of training job the cluster knows",
    Kind.JOB_SET: "the training jobs (JobSet)",
    Kind.TRAIN_JOB: "the training jobs (TrainJob)",
    Kind.TRAINING_RUNTIME: "the training runtimes",
    Kind.CLUSTER_TRAINING_RUNTIME: "the cluster's training runtimes",
    Kind.PYTORCH_JOB: "the training jobs (PyTorchJob)",
    Kind.TF_JOB: "the training jobs (TFJob)",
    Kind.MPI_JOB: "the training jobs (MPIJob)",
    Kind.MPI_JOB_V1: "the training jobs (MPIJob)",
    Kind.XGBOOST_JOB: "the training jobs (XGBoostJob)",
    Kind.PADDLE_JOB: "the training jobs (PaddleJob)",
    Kind.JAX_JOB: "the training jobs (JAXJob)",
    Kind.RAY_JOB: "the training jobs (RayJob)",
    Kind.RAY_CLUSTER: "the training clusters (RayCluster)",
    Kind.LEADER_WORKER_SET: "the training groups (LeaderWorkerSet)",
    Kind.RESOURCE_CLAIM: "the devices claimed by programs",
    Kind.RESOURCE_CLAIM_TEMPLATE: "the device requests of the training jobs",
    Kind.RESOURCE_SLICE: "the devices the machines offer",
    Kind.DEVICE_CLASS: "the kinds of device",
    Kind.NODE_CLAIM: "the machines the autoscaler is adding",
    Kind.NODE_POOL: "the autoscaler's machine pools",
    Kind.MACHINE_DEPLOYMENT: "the autoscaler's machine groups (MachineDeployment)",
    Kind.MACHINE_DEPLOYMENT_V1BETA1: "the autoscaler's machine groups (MachineDeployment)",
    Kind.MACHINE_SET: "the autoscaler's machine groups (MachineSet)",
    Kind.MACHINE_SET_V1BETA1: "the autoscaler's machine groups (MachineSet)",
    Kind.MACHINE_POOL: "the autoscaler's machine groups (MachinePool)",
    Kind.MACHINE_POOL_V1BETA1: "the autoscaler's machine groups (MachinePool)",
    Kind.LOCAL_QUEUE: "the queues",
    Kind.LOCAL_QUEUE_V1BETA1: "the queues",
    Kind.CLUSTER_QUEUE: "the shared queues",
    Kind.CLUSTER_QUEUE_V1BETA1: "the shared queues",
    Kind.RESOURCE_FLAVOR: "the queues' machine types",
    Kind.RESOURCE_FLAVOR_V1BETA1: "the queues' machine types",
    Kind.COHORT: "the groups of shared queues",
    Kind.COHORT_V1BETA1: "the groups of shared queues",
    Kind.WORKLOAD: "the queues' records of training jobs",
    Kind.WORKLOAD_V1BETA1: "the queues' records of training jobs",
    Kind.ADMISSION_CHECK: "the queues' start checks",
    Kind.ADMISSION_CHECK_V1BETA1: "the queues' start checks",
    Kind.VOLCANO_POD_GROUP: "the groups a training job starts as",
    Kind.COSCHEDULING_POD_GROUP: "the groups a training job starts as",
    Kind.KAI_POD_GROUP: "the groups a training job starts as",
    Kind.VOLCANO_QUEUE: "the queues of the job placer",
    Kind.KAI_QUEUE: "the queues of the job placer",
    Kind.EVENT: "the activity log",
    Kind.NAMESPACE: "the environment's space",
    Kind.RESOURCE_QUOTA: "the usage limits",
    Kind.ENDPOINT_SLICE: "the servers behind the approval hooks",
    Kind.VALIDATING_WEBHOOK_CONFIGURATION: "the approval hooks",
    Kind.MUTATING_WEBHOOK_CONFIGURATION: "the approval hooks",
}

_FAILURE_WORDS = {
    ReadFailure.UNAUTHORIZED: "the cluster did not accept the login when reading {noun}",
    ReadFailure.FORBIDDEN: "no permission to read {noun}",
    ReadFailure.TIMEOUT: "the cluster did not answer in time when reading {noun}",
    ReadFailure.UNREACHABLE: "the connection broke while reading {noun}",
    ReadFailure.SERVER_ERROR: "the cluster answered with an error when reading {noun}",
    ReadFailure.MALFORMED: "the cluster's answer about {noun} was garbled",
    ReadFailure.TOO_LARGE: "the cluster's answer about {noun} was too large to read",
    ReadFailure.NOT_CAPTURED: "the snapshot doesn't include {noun}",
    ReadFailure.UNCONFIRMED: "the cluster has not confirmed {noun} for longer than the monitor "
    "allows",
    ReadFailure.NOT_FOUND: "{noun} were not found",
}


def kind_noun(kind: Kind) -> str:
    """Plain words for what a read of `kind` is after (`the machines`)."""
    return _KIND_NOUNS[kind]


def plain_why(kind: Kind, cant: CantRead, noun: str | None = None) -> str:
    """Why a read could not look, in plain words (`no permission to read the machines`);
    `noun` names what was read where the kind's own noun would not."""
    if cant.failure is ReadFailure.UNREACHABLE and not cant.reached:
        # No connection was made, or what answers is not the API server: the cause, not a
        # broken connection.
        what = noun or _KIND_NOUNS[kind]
        return (
            f"the cluster could not be reached when reading {what} ({plain_connection_why(cant)})"
        )
    return _FAILURE_WORDS[cant.failure].format(noun=noun or _KIND_NOUNS[kind])


def plain_connection_why(cant: CantRead) -> str:
    """Why the cluster could not be reached at all, from the classified reason."""
    detail = cant.reason.rpartition("(")[2].rstrip(")") if "(" in cant.reason else ""
    if cant.failure is ReadFailure.TIMEOUT:
        return "it did not answer in time"
    return detail or "could not connect"


def read_remedy(
    kind: Kind,
    cant: CantRead,
    kubectl: Kubectl,
    *,
    everywhere: bool = False,
    namespace: str | None = None,
    name: str | None = None,
    noun: str | None = None,
    listed: bool = False,
) -> str:
    """The step that fixes one failed read: the permission to ask for (with the `kubectl auth
    can-i` that proves it), the login or network to check, or a new snapshot.
    `everywhere`: the read covered every namespace (the cluster's pods); `namespace`: it was
    of another namespace than the one judged; `name`: one object got by name (a grant limited
    to named objects answers only a question that names one); `noun` names what was read where
    the kind's own noun would not; `listed`: a kind mostly got by name was listed whole."""
    verb = "get" if kind in _GOT_BY_NAME and not listed else "list"
    if everywhere:
        scope = ["--all-namespaces"]
        where = kubectl.cluster
    elif namespace is not None:
        scope = []
        where = functools.partial(kubectl.cluster, "-n", namespace)
    else:
        scope = []
        where = kubectl.here if kind.namespaced else kubectl.cluster
    template = READ_REMEDIES[cant.failure]
    return template.format(
        noun=noun or _KIND_NOUNS[kind],
        check=(
            where("auth", "can-i", verb, f"{kind.plural}/{name}" if name else kind.plural, *scope)
            if cant.failure is ReadFailure.FORBIDDEN
            else kubectl.cluster("auth", "whoami")
        ),
        health=kubectl.cluster("get", "--raw", "/readyz"),
        count=where("get", kind.plural, *scope),
        snapshot=truegreen_command("snapshot", *kubectl.flags()),
    )


def merged_counts(parts: Iterable[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    """Counted phrases (count, the words after a count of one, after a larger count) with
    those of the same words said once, their counts added, where first met: two reasons a
    reader can't tell apart (two different taints, each `is reserved for other work`) are one
    count, `2 are reserved for other work`, never a phrase said twice."""
    totals: dict[tuple[str, str], int] = {}
    for count, one, many in parts:
        totals[(one, many)] = totals.get((one, many), 0) + count
    return [(count, one, many) for (one, many), count in totals.items()]


_SAID_WITH_A_VOWEL = "AEIO"
"""First letters of a word whose sound is a vowel's (a U can be either: an umbrella, a unit)."""
_LETTER_SAID_WITH_A_VOWEL = "AEFHILMNORSX"
"""Letters whose names start with a vowel's sound (em, ex, aitch), said as letters."""


def with_article(name: str) -> str:
    """`name` after "a" or "an", by the sound its first letter makes: in a word, a vowel's (an
    AppWrapper, a PyTorchJob); in a name that starts with two capitals, read letter by letter,
    the letter's name (an MPIJob, an XGBoostJob, a TFJob; JAX's J is "jay": a JAXJob)."""
    spelled = name[:2].isupper()
    sounds = _LETTER_SAID_WITH_A_VOWEL if spelled else _SAID_WITH_A_VOWEL
    return f"{'an' if name[:1].upper() in sounds else 'a'} {name}"


def sentence(text: str) -> str:
    """`text` with its first letter capitalised and the rest untouched (`str.capitalize`
    would lower a name in the middle)."""
    return text[:1].upper() + text[1:]


def fill(wording: Wording, **fields: object) -> tuple[str, str]:
    """The headline and remedy of `wording`, filled in, each starting as a sentence does;
    KeyError when a field is missing."""
    values = {k: str(v) for k, v in fields.items()}
    return sentence(wording.headline.format(**values)), sentence(wording.remedy.format(**values))
