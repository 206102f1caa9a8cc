# emu: the two commands a fresh machine needs are `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install run test bench fuzz soak lint format docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/emu run scenarios/three-jobs.toml --output-dir out/three-jobs

test: $(STAMP)
	$(VENV)/bin/pytest -q

bench: $(STAMP)
	$(PY) -m emu.bench

# 100,000 bad requests to each of the five endpoints alongside a replay; prints the counts.
fuzz: $(STAMP)
	$(PY) -m tests.fuzzing --count 100000

# HOURS simulated hours at 1,000 nodes with faults; memory sampled, invariants on.
HOURS ?= 24
soak: $(STAMP)
	$(PY) -m emu.soak --hours $(HOURS)

lint: $(STAMP)
	$(VENV)/bin/ruff check emu tests
	$(VENV)/bin/ruff format --check emu tests

format: $(STAMP)
	$(VENV)/bin/ruff format emu tests
	$(VENV)/bin/ruff check --fix emu tests

docs: $(STAMP)
	$(PY) -m emu.docs

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache
