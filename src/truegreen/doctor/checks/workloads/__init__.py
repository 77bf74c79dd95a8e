"""The workloads check: whether the environment's workloads run, are ready and finished
their rollouts, and what the last training job ended with."""
