"""Where the autoscalers say what they did: the sources of their Events, and the ConfigMap
cluster-autoscaler writes its status to (what they said is read in autoscaling.py)."""

AUTOSCALER_SOURCES = ("cluster-autoscaler", "karpenter")
"""The event sources read, each by its own field selector (`source=…`)."""
STATUS_CONFIG_MAP = ("kube-system", "cluster-autoscaler-status")
"""Where cluster-autoscaler writes its status by default: the namespace of its `--namespace`
flag ("Namespace in which cluster-autoscaler run.", default kube-system) under the name of its
`--status-config-map-name` (config/flags/flags.go). Its Helm chart passes the release's own
namespace (charts/cluster-autoscaler/templates/deployment.yaml `--namespace={{
.Release.Namespace }}`), so the status is looked for in every namespace by this name, and read
at this place only where that list is refused (doctor/reads/autoscaler_status.py)."""
