"""Whose login a cloud registry refused (`failed to fetch oauth token: … 403 Forbidden`): the
machines' own where the pod names no login for that registry (doctor/checks/workloads/
missing_login.py `machines_refused`)."""

import base64
import json
from typing import Any

from truegreen.cluster import Got
from truegreen.doctor.checks.workloads.missing_login import LoginReads, machines_refused

PKG = "us-docker.pkg.dev/acme/ml/jobs-manager:1.5"


def _login(registry: str) -> Got:
    auth = base64.b64encode(b"_json_key:secret").decode()
    config = json.dumps({"auths": {registry: {"auth": auth}}}).encode()
    return Got(
        {
            "kind": "Secret",
            "metadata": {"name": "regcred"},
            "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": base64.b64encode(config).decode()},
        },
    )


ACCOUNT = {"default": Got({"kind": "ServiceAccount", "metadata": {"name": "default"}})}
"""The pod's service account, read, naming no login."""


def _spec(**more: Any) -> dict[str, Any]:
    return {"containers": [{"name": "c", "image": PKG}], **more}


def test_no_login_for_the_registry_means_the_machines_own_was_refused() -> None:
    assert machines_refused(PKG, _spec(), LoginReads(ACCOUNT, {}))


def test_a_login_the_pod_names_for_the_registry_may_be_the_refused_one() -> None:
    named = _spec(imagePullSecrets=[{"name": "regcred"}])
    assert not machines_refused(
        PKG, named, LoginReads(ACCOUNT, {"regcred": _login("us-docker.pkg.dev")})
    )
    # A login for another registry leaves the machines' own as the one sent here.
    assert machines_refused(PKG, named, LoginReads(ACCOUNT, {"regcred": _login("ghcr.io")}))
    # A named login doctor could not read may be the one sent: not known.
    assert not machines_refused(PKG, named, LoginReads(ACCOUNT, {}))


def test_a_registry_the_machines_do_not_log_in_to_is_never_theirs() -> None:
    assert not machines_refused("ghcr.io/acme/jobs-manager:1.5", _spec(), LoginReads(ACCOUNT, {}))
    assert not machines_refused("not a reference", _spec(), LoginReads(ACCOUNT, {}))
