"""doctor's commands below the CLI: one namespace, a fleet of namespaces, many clusters, a
snapshot; the config file and the job file they read, and the progress they tell."""
