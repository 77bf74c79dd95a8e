"""refresh: keep opted-in workloads on the newest image digest, recording only what happened."""
