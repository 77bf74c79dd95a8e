"""Print mutmut's results per module: killed, survived, no tests, score."""

import collections
import subprocess
import sys

completed = subprocess.run(
    [sys.executable, "-m", "mutmut", "results", "--all", "true"],
    capture_output=True,
    text=True,
    check=True,
)
counts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
for line in completed.stdout.splitlines():
    name, _, status = line.strip().rpartition(": ")
    if not name:
        continue
    module = name.split(".x")[0].split(".xǁ")[0]
    counts[module][status] += 1
print(f"{'module':<40} {'killed':>6} {'survived':>8} {'no tests':>8} {'score':>6}")
for module, c in sorted(counts.items()):
    total = sum(c.values())
    print(
        f"{module:<40} {c['killed']:>6} {c['survived']:>8} {c['no tests']:>8} "
        f"{100 * c['killed'] / total:>5.1f}%"
    )
