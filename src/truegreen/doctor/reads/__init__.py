"""What doctor reads, once, on one bounded schedule: the environment the checks judge, and
the registries' answers about its images."""
