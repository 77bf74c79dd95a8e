"""doctor's checks: one module per small check, one folder per large one, each a pure function of
the gathered Environment; registry.py lists them in the order they run (CHECKS)."""
