#!/usr/bin/env bash
# The terminal tour: truegreen as an operator sees it, in a real terminal (tmux), at 120 and 60
# columns, against the fake API server (tests/support/tour_cluster.py) and the bundled examples.
#
#   examples/terminal-tour.sh [BIN] [SCREENS]     # BIN: .venv/bin; SCREENS: a new folder
#
# Each screen is saved as SCREENS/<width>/<scene>.txt exactly as the terminal shows it (colour
# dropped). The progress screens are taken while a command runs. Needs tmux; the refresh scene
# also needs docker-registry.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
bin=$(cd "${1:-.venv/bin}" && pwd)
screens=${2:-$(mktemp -d "${TMPDIR:-/tmp}/truegreen-tour.XXXXXX")}
work=$(mktemp -d "${TMPDIR:-/tmp}/truegreen-tour-work.XXXXXX")
socket="truegreen-tour-$$"
server_pid=""
session=tour0

finish() {
  tmux -L "$socket" kill-server 2>/dev/null || true
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap finish EXIT

# A raw chart template, as it sits in a chart before `helm template` renders it.
mkdir -p "$work/chart/templates"
cat >"$work/chart/templates/deployment.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-trainer
spec:
  template:
    spec:
      containers:
        - name: trainer
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
          livenessProbe:
            httpGet: {path: /healthz, port: 8080}
            failureThreshold: 1
YAML

start_scene() {  # start the fake cluster for scene $1; its kubeconfig lands in $work/$1
  stop_scene
  rm -rf "${work:?}/$1"
  "$bin/python" -m tests.support.tour_cluster "$1" "$work/$1" >"$work/$1.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do
    grep -q '^ready$' "$work/$1.log" 2>/dev/null && return 0
    sleep 0.2
  done
  echo "the fake cluster for $1 did not start:" >&2
  cat "$work/$1.log" >&2
  exit 1
}

stop_scene() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}

open_terminal() {  # a fresh shell at $1 columns; each prompt signals the channel `prompt`
  local previous=$session
  # A new session before the old one goes: the server stays up (killing it and starting
  # another at once races with its shutdown).
  session="tour$((${session#tour} + 1))"
  tmux -L "$socket" -f /dev/null new-session -d -s "$session" -x "$1" -y 60 \
    env -u NO_COLOR TERM=xterm-256color PATH="$bin:$PATH" PS1='$ ' \
    PROMPT_COMMAND="tmux -L $socket wait-for -S prompt" bash --norc --noprofile
  tmux -L "$socket" wait-for prompt
  if [ "$previous" != tour0 ]; then tmux -L "$socket" kill-session -t "$previous"; fi
}

type_in() {  # type one command line and wait for the next prompt
  tmux -L "$socket" send-keys -t "$session" -l "$1"
  tmux -L "$socket" send-keys -t "$session" Enter
  tmux -L "$socket" wait-for prompt
}

save() {  # the terminal as it looks now
  tmux -L "$socket" capture-pane -t "$session" -p >"$screens/$width/$1.txt"
  sed -i -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$screens/$width/$1.txt"  # trailing blank lines
}

run_and_catch() {  # run_and_catch COMMAND TEXT NAME: save the screen once TEXT shows, mid-run
  tmux -L "$socket" send-keys -t "$session" -l "$1"
  tmux -L "$socket" send-keys -t "$session" Enter
  for _ in $(seq 200); do
    if tmux -L "$socket" capture-pane -t "$session" -p | grep -q "$2"; then
      save "$3"
      break
    fi
    sleep 0.05
  done
  tmux -L "$socket" wait-for prompt
}

scene() {  # scene NAME CLUSTER-SCENE COMMAND...: a fresh terminal, the commands, one screen
  local name=$1 cluster=$2
  shift 2
  [ "$cluster" = "-" ] || start_scene "$cluster"
  open_terminal "$width"
  type_in "cd $work && export KUBECONFIG=$work/$cluster/kubeconfig && clear"
  for command in "$@"; do type_in "$command"; done
  save "$name"
}

for width in ${TOUR_WIDTHS:-120 60}; do
  mkdir -p "$screens/$width"
  scene login-refused login-refused 'truegreen doctor' 'echo "exit $?"'
  scene login-plugin-fails login-plugin-fails 'truegreen doctor' 'echo "exit $?"' \
    'truegreen doctor -o json | head -9'
  scene cordoned cordoned 'truegreen doctor' 'echo "exit $?"'
  scene gpu-held-by-notebook gpu-held-by-notebook 'truegreen doctor -v'
  # the support bundle: one archive to attach, read back offline
  scene snapshot-archive gpu-held-by-notebook 'truegreen snapshot' 'echo "exit $?"' \
    'tar tzf truegreen-snapshot-*.tar.gz | sed -n 1,6p' \
    'truegreen doctor --snapshot truegreen-snapshot-*.tar.gz | head -3' \
    'rm truegreen-snapshot-*.tar.gz'

  # While a command runs, stderr shows what it is doing; the results replace it.
  start_scene slow-machines
  open_terminal "$width"
  type_in "cd $work && export KUBECONFIG=$work/slow-machines/kubeconfig && clear"
  run_and_catch 'truegreen doctor' 'Reading' doctor-progress
  stop_scene

  # refresh tells each phase while it waits on the rollout, then says what to do.
  start_scene refresh-fails
  open_terminal "$width"
  type_in "cd $work && export KUBECONFIG=$work/refresh-fails/kubeconfig && clear"
  run_and_catch 'truegreen refresh --rollout-timeout 8' 'Waiting for' refresh-progress
  type_in 'echo "exit $?"'
  type_in 'truegreen doctor'
  save refresh-fails-then-doctor
  stop_scene

  scene lint-raw-chart - 'truegreen lint chart/templates/deployment.yaml' 'echo "exit $?"'
  scene usage-and-pipe - 'truegreen doctor --snapshot examples/snapshots/healthy --frobnicate' \
    'echo "exit $?"' \
    "truegreen doctor --snapshot $repo/examples/snapshots/job-too-large | head -1" \
    "truegreen doctor --snapshot $repo/examples/snapshots/job-too-large | true" \
    'echo "exit $?"' \
    "truegreen refresh --mode bogus" 'echo "exit $?"'
done
echo "$screens"
