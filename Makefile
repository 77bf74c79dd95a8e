# Two commands matter: `make demo` and `make test`. Both build .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo monitor-demo tour test lint typecheck unit bench bench-programs bench-monitor-fleet mutation mutation-gate clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "truegreen needs Python 3.11 or newer")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

demo: $(STAMP)
	@./examples/demo.sh $(BIN)

# truegreen monitor against the tests' fake API server on http://127.0.0.1:9108/ (Ctrl-C ends it).
monitor-demo: $(STAMP)
	@PYTHONPATH=. $(BIN)/python examples/monitor_demo.py

# A fake cluster to try doctor, snapshot, refresh and --watch on: `make tour` lists the scenes,
# `make tour SCENE=fleet` serves one and prints its kubeconfig and the commands (Ctrl-C ends it).
tour: $(STAMP)
	@PYTHONPATH=. $(BIN)/python -m tests.support.tour_cluster $(SCENE) $(DIR)

# PyTorch's CPU build in a venv of its own, for the trial probe's all-reduce over gloo
# (tests/unit/test_trial_probe_gloo.py, which skips without it; CI builds it). Kept apart from
# .venv: there, every other trial test would import it instead of finding no GPU library.
TORCH_VENV := .venv-torch
$(TORCH_VENV)/.installed:
	rm -rf $(TORCH_VENV)
	$(PYTHON) -m venv $(TORCH_VENV)
	$(TORCH_VENV)/bin/python -m pip install --quiet torch==2.13.0
	@touch $@

lint: $(STAMP)
	$(BIN)/ruff check src tests bench .ci
	$(BIN)/ruff format --check src tests bench .ci
	$(BIN)/lint-imports --no-cache

typecheck: $(STAMP)
	$(BIN)/mypy --strict

# Most tests wait on servers and processes rather than compute: three at a time, even on 2 cores.
# First, which real programs (registry, Prometheus, Chromium...) are missing and how to get them.
unit: $(STAMP)
	@$(BIN)/python -m tests.support.real_parts
	$(BIN)/pytest -n 3

test: lint typecheck unit

# The baselines live in venvs of their own: Checkov's pins clash with the Kubernetes client's.
BENCH_VENVS := .venv-bench
$(BENCH_VENVS)/%/.installed: bench/requirements-%.txt
	rm -rf $(BENCH_VENVS)/$*
	$(PYTHON) -m venv $(BENCH_VENVS)/$*
	$(BENCH_VENVS)/$*/bin/python -m pip install --quiet -r $<
	@touch $@

# truegreen as a user installs it, runtime dependencies only (bench/measure.py INSTALLED);
# reinstalled from this checkout on every run.
$(BENCH_VENVS)/truegreen/.installed: pyproject.toml
	rm -rf $(BENCH_VENVS)/truegreen
	$(PYTHON) -m venv $(BENCH_VENVS)/truegreen
	$(BENCH_VENVS)/truegreen/bin/python -m pip install --quiet .
	@touch $@

# The programs on PATH first (before minutes of venv installs); bench.run checks the venvs too.
bench-programs: $(STAMP)
	@$(BIN)/python -m bench.run --programs-on-path

bench: $(STAMP) bench-programs $(BENCH_VENVS)/kubernetes/.installed $(BENCH_VENVS)/checkov/.installed $(BENCH_VENVS)/truegreen/.installed $(TORCH_VENV)/.installed
	$(BENCH_VENVS)/truegreen/bin/python -m pip install --quiet --no-deps --force-reinstall .
	$(BIN)/python -m bench.run

# One row alone: the monitor over 40 namespaces next to one namespace (bench/monitor_bench.py).
bench-monitor-fleet: $(STAMP) $(BENCH_VENVS)/truegreen/.installed
	$(BENCH_VENVS)/truegreen/bin/python -m pip install --quiet --no-deps --force-reinstall .
	BENCH_PARTS=monitor-fleet $(BIN)/python -m bench.run

mutation: $(STAMP)
	rm -rf mutants
	$(BIN)/mutmut run
	$(BIN)/mutmut export-cicd-stats
	$(BIN)/python .ci/mutation.py report

# The CI gate: the deciding modules, unit tests only, fails below 90%. Only the modules whose
# source or tests changed since .ci/mutation-scores.json are mutated (MUTATION_FULL=1: all).
mutation-gate: $(STAMP)
	$(BIN)/python .ci/mutation.py gate

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
