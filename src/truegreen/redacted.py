"""What a redacted value reads, in one place: the redaction policy writes it (cluster/redact.py)
and the readers of redacted objects (lint's probe rules, run by doctor on live objects) know it
for a value they cannot see."""

REDACTED = "<redacted>"
"""What a redacted value reads, for every rule of the policy (cluster/redact.py)."""
