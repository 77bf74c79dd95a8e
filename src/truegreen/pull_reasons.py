"""The kubelet's waiting reasons for a container whose image it tried to pull and could not.

pkg/kubelet/images/types.go names `ErrImagePull` (a pull that failed) and `ImagePullBackOff`
(the back-off before the next try); image_manager.go `evalCRIPullErr` gives two of the
runtime's errors their own reason, the cri-api's `RegistryUnavailable` (CRI-O: a refused
connection, server/image_pull.go `PullImage`) and `SignatureValidationFailed` (CRI-O: the
machine's signature policy refused the image). Each is a failed pull: the kubelet records it
in its pull back-off (`backOff.Next`) and pulls again after it. `InvalidImageName` is no pull
at all: the kubelet refuses the name before any try."""

from typing import Final

REGISTRY_UNAVAILABLE: Final = "RegistryUnavailable"
SIGNATURE_VALIDATION_FAILED: Final = "SignatureValidationFailed"
FAILED_PULL_REASONS: Final = frozenset(
    {"ErrImagePull", "ImagePullBackOff", REGISTRY_UNAVAILABLE, SIGNATURE_VALIDATION_FAILED}
)
"""The waiting reasons of a container whose image the kubelet failed to pull."""
