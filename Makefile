# Two commands on a fresh machine with only python3 and make:
#   make run   - create .venv, install mjbot, play a short local riichi match
#   make test  - create .venv, install mjbot[dev], ruff + mypy + pytest
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test test-torch lint bench bench-mjai clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/mjbot arena --variant riichi --policies rulebased,greedy,greedy,greedy --hands 100 --workers 2

# pytest-xdist (the standard plugin; in the dev extra) spreads the test files over worker
# processes: three on the 2-core box the suite is sized for (~5 minutes), since about a third
# of a worker's time is waiting (answer limits, sleeps, subprocesses) that a third overlaps
# (a fresh clone idle: 285.6 s against 331.5 s with two); whole files go to one worker
# (--dist loadfile), so a module's shared fixtures are built once.
# `make test PYTEST_WORKERS=0` runs serially in one process.
PYTEST_WORKERS ?= 3
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile

# The torch tests (tests/test_nn_train.py: the numpy forward against torch's, the golden
# outputs, a tiny training run) skip in `make test`, which has no torch. PyPI's torch for Linux
# is a CUDA build of several GB, so this asks for the CPU build (a local version pip finds only
# where such a wheel is offered, e.g. a wheel folder in pip's find-links) and runs them, never
# skipping. CI installs the same wheel before its one `make test` where it installs (.ci/run).
TORCH_CPU := torch==2.13.0+cpu
test-torch: $(STAMP)
	$(BIN)/python -m pip install --quiet '$(TORCH_CPU)'
	MJBOT_REQUIRE_TORCH=1 $(BIN)/python -m pytest -q tests/test_nn_train.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/mjbot bench shanten
	$(BIN)/mjbot bench log
	$(BIN)/mjbot bench arena

# Opt-in: mjbot against the PyPI mjai package's RulebaseBot. The extra brings mjai's own
# dependencies; mjai goes in without its mahjong~=1.2 pin, which mjbot's mahjong 2 excludes.
bench-mjai: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[mjai]'
	$(BIN)/python -m pip install --quiet --no-deps mjai==0.2.1
	$(BIN)/mjbot bench mjai --games 8

clean:
	rm -rf $(VENV) build *.egg-info
