"""The always-on loop: watch cache, evaluation schedule, metrics, status page, Events."""
