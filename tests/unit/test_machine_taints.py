"""What a controller's taint says about its machine (doctor/knowledge/taints.py)."""

import pytest

from truegreen.doctor.knowledge.taints import MachineState, SystemTaint, system_taint

_KARPENTER_REMOVING = SystemTaint(
    MachineState.LEAVING,
    "is being removed by Karpenter",
    "are being removed by Karpenter",
    "wait: Karpenter adds a machine for waiting work when its limits allow",
)


@pytest.mark.parametrize(
    "key",
    [
        # kubernetes-sigs/karpenter pkg/apis/v1/taints.go DisruptedTaintKey (v1.0 on).
        "karpenter.sh/disrupted",
        # pkg/apis/v1beta1/taints.go DisruptionTaintKey (v0.32 to v0.37, value `disrupting`).
        "karpenter.sh/disruption",
    ],
)
def test_a_machine_karpenter_disrupts_is_leaving_under_either_api(key: str) -> None:
    assert system_taint(key) == _KARPENTER_REMOVING


def test_a_key_karpenter_does_not_own_is_no_controller_s() -> None:
    assert system_taint("karpenter.sh/disrupting") is None
    assert system_taint("karpenter.sh/capacity-type") is None
