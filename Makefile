# Two commands on a fresh machine with only python3 and make:
#   make run   - create .venv, install mjbot, play a short local riichi match
#   make test  - create .venv, install mjbot[dev], ruff + pytest
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint bench bench-mjai clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/mjbot arena --variant riichi --policies rulebased,greedy,greedy,greedy --hands 100 --workers 2

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check .

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
