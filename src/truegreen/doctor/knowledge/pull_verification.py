"""Whether a machine's copy of an image spares a pod the pull, as kubelets from 1.35 decide it.

From Kubernetes 1.35 the kubelet's KubeletEnsureSecretPulledImages gate is on by default (beta:
pkg/features/kube_features.go), with `imagePullCredentialsVerificationPolicy` defaulting to
NeverVerifyPreloadedImages (pkg/kubelet/apis/config/v1beta1/defaults.go). Then, for an image
the kubelet itself pulled, image_manager.go EnsureImageExists asks the pull manager
(pkg/kubelet/images/pullmanager/image_pull_manager.go MustAttemptImagePull) whether a pod under
`IfNotPresent` may start from the copy:
- the copy was pulled with no login of a pod (anonymously, or with the machine's own:
  image_manager.go trackedToImagePullCreds records it NodePodsAccessible): every pod may;
- it was pulled with a pod's registry login: only a pod that sends, for that image, one of the
  logins it was pulled or checked with (the same namespace, name and uid, or the same
  credentials); any other pod pulls again, with its own logins (none: anonymously), and a
  private registry refuses that pull on the very machine that holds the image.
Images the kubelet never pulled (preloaded, or pulled before the gate was on) are not checked.

doctor cannot read a kubelet's gates or its configuration: it takes the defaults, so a machine
whose kubelet is 1.35 or later checks. Below that, a copy spares every pod's pull as before.
Here: which machines check, and the copies; `image_presence.spared_pulls` applies the rules.
"""

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject, Listed, ListRead
from truegreen.patterns import LazyPattern

VERIFYING_KUBELET = (1, 35)
"""The first kubelet version whose gate is on by default (pkg/features/kube_features.go:
KubeletEnsureSecretPulledImages, alpha in 1.33 and 1.34 off by default, beta in 1.35 on)."""
_KUBELET_VERSION = LazyPattern(r"v?(\d+)\.(\d+)(?:[.+-]|$)")
"""`status.nodeInfo.kubeletVersion` as kubelets report it: `v1.35.1`, and as distributions
build it, `v1.35.0-eks-4096722`, `v1.35.2+k3s1`, `v1.35.1-gke.1000`."""


def kubelet_version(machine: KubeObject) -> tuple[int, int] | None:
    """(major, minor) of a machine's kubelet; None where it does not say one that parses."""
    info = o.mapping(o.mapping(machine.get("status")).get("nodeInfo"))
    found = _KUBELET_VERSION.match(str(info.get("kubeletVersion", "")))
    return (int(found.group(1)), int(found.group(2))) if found else None


def kubelets_verify(machines: ListRead) -> bool:
    """Whether a pod may land on a machine whose kubelet checks its logins against the copy the
    machine holds: any machine's kubelet at VERIFYING_KUBELET or later (machines of several
    versions, during an upgrade, count as checking). Machines not read, or none that says its
    version: False, the kubelet's behaviour before 1.35."""
    listed = machines.items if isinstance(machines, Listed) else ()
    return any((kubelet_version(m) or (0, 0)) >= VERIFYING_KUBELET for m in listed)


class MachineCopy(Struct, frozen=True):
    """An image a machine holds for a pod of the namespace, and the logins of that pod."""

    image: str
    """The reference, normalised as `image_presence.pulled_images` names it."""
    logins: frozenset[str] | None
    """The names of the pod's imagePullSecrets: a stored pod's list is complete, as the
    ServiceAccount admission plugin copied its account's into it (plugin/pkg/admission/
    serviceaccount/admission.go Admit). Empty: the kubelet pulled or started it with no login
    of a pod. None: the pod is no longer stored (a kubelet's `Pulled` Event is all that says
    so), its logins unknown."""


class MachineCopies(Struct, frozen=True):
    """The images the machines hold for pods of the namespace, and whether their kubelets check
    a pod's logins before starting it from such a copy (`kubelets_verify`)."""

    copies: frozenset[MachineCopy] = frozenset()
    verified: bool = False

    @property
    def images(self) -> frozenset[str]:
        """Every image some machine holds, whoever may start from it."""
        return frozenset(copy.image for copy in self.copies)


NO_COPIES = MachineCopies()
"""No image on any machine: nothing spares a pull."""
