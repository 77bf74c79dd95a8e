"""The admission check: whether the API server would let the training job's pods in
(ResourceQuota, LimitRange, Pod Security, webhooks, a dry-run create)."""
