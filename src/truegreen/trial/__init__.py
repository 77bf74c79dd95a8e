"""The trial: the training job's own pod shape run for a few seconds, and what it measured.

`probe.py` (and `probe.sh` for images without Python) is the program the trial container runs;
it imports nothing from truegreen. `readback.py` turns what comes back (the probe's JSON line,
the kubelet's events, the container statuses) into findings.
"""
