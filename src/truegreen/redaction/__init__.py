"""Secrets found in text by their shape or their name, for every command: what doctor and
snapshot redact in what they read (cluster/redact.py walks objects with these rules) and what
lint redacts in what it prints. Below every layer: it knows strings, not Kubernetes."""
