"""Print mutmut's results per module: killed, survived, no tests, pending, and the score.

The score is killed / (killed + survived + no tests + timeout); mutants not run yet are pending.
"""

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
    module = name.split(".x")[0]
    counts[module][status] += 1
header = f"{'module':<36} {'killed':>6} {'survived':>8} {'no tests':>8} {'pending':>7} {'score':>6}"
print(header)
for module, c in sorted(counts.items()):
    judged = c["killed"] + c["survived"] + c["no tests"] + c["timeout"]
    score = f"{100 * c['killed'] / judged:5.1f}%" if judged else "    -"
    print(
        f"{module:<36} {c['killed']:>6} {c['survived']:>8} {c['no tests']:>8} "
        f"{c['not checked']:>7} {score:>6}"
    )
