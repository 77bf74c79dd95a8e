"""Whether the API server's answer to a pod's create refuses that pod, or says nothing of it.

The shapes the API builds its answers in tell the two apart:
- apimachinery/pkg/api/errors/errors.go NewForbidden / NewInvalid: `pods "<name>" is forbidden:
  …` (the resource, from admission: quota, Pod Security, namespace lifecycle) and `Pod "<name>"
  is invalid: …` (the kind, `qualifiedKind.String()`, from the create's validation) name the
  object; a refusal by authorization names no object (`pods is forbidden: User … cannot create
  …`: apiserver pkg/endpoints/handlers/responsewriters/errors.go `forbiddenMessage`), so it is
  a missing permission, not a refusal of the pod;
- apiserver/pkg/admission/plugin/webhook/errors/statuserror.go: a webhook's denial carries the
  same `pods "<name>" is forbidden:` prefix, or `Internal error occurred:` for code 500, as does
  a fail-closed webhook that could not be called (`failed calling webhook`);
  NewDryRunUnsupportedErr (`… does not support dry run`) means the create could not be tried;
- a 404 with the server's words: the namespace is not there (namespace lifecycle admission).

doctor's trial start (`--admission-dry-run`, checks/admission/trial.py) and its trial
(`--trial`, checks/trial.py) judge their creates by this one rule.
"""

from truegreen.cluster import CantRead, ReadFailure

_INTERNAL = "Internal error occurred: "
_NO_DRY_RUN = "does not support dry run"
_WEBHOOK_FAILURES = ('admission webhook "', 'failed calling webhook "')


def refusal(answer: CantRead, pod_name: str) -> str | None:
    """The server's words where its `answer` to the create of `pod_name` refuses the pod itself
    (admission, validation, a webhook, a namespace that is not there), less the prefix naming
    the pod; None where it says nothing of the pod: an authorization refusal (no object named),
    a timeout, an error of the server's own, a webhook that cannot take a dry run."""
    message = answer.server_message
    for prefix in (f'pods "{pod_name}" is forbidden: ', f'Pod "{pod_name}" is invalid: '):
        if message.startswith(prefix) and not message.endswith(_NO_DRY_RUN):
            return message.removeprefix(prefix)
    internal = message.removeprefix(_INTERNAL)
    if message.startswith(_INTERNAL) and internal.startswith(_WEBHOOK_FAILURES):
        return internal
    if answer.failure is ReadFailure.NOT_FOUND and message:
        return message
    return None
