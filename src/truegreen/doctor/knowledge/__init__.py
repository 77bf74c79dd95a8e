"""Kubernetes knowledge several checks share, without prose: the training job's shape, the pod
the API server stores, the cluster's own evidence, requests and fit, the usage per machine,
Kueue's model, the registries' answers, admission webhooks."""
