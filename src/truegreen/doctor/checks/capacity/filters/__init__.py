"""kube-scheduler's filter plugins, one module each, as `pkg/scheduler/framework/plugins/` lays
them out."""
