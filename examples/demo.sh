#!/usr/bin/env bash
# `make demo`: run truegreen on the bundled examples. No cluster needed.
set -u
bin="${1:-.venv/bin}"
cd "$(dirname "$0")/.."
tg="$bin/truegreen"

"$tg" --version
if [ -d examples/snapshots ] && ls examples/snapshots/*/ >/dev/null 2>&1; then
  for snapshot in examples/snapshots/*/; do
    name=$(basename "$snapshot")
    echo
    echo "== truegreen doctor --snapshot examples/snapshots/$name"
    "$tg" doctor --snapshot "$snapshot" --no-color
    echo "(exit $?)"
  done
fi
if ls examples/manifests/*.yaml >/dev/null 2>&1; then
  for manifest in examples/manifests/*.yaml; do
    echo
    echo "== truegreen lint $manifest"
    "$tg" lint "$manifest" --no-color
    echo "(exit $?)"
  done
fi
exit 0
