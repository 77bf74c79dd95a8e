"""The capacity check: whether the training job's pods fit on the machines now, through
kube-scheduler's filters (filters/), gang placement, preemption and the autoscalers."""
