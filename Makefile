# emu: the two commands a fresh machine needs are `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
TOOLS  := $(VENV)/.installed-tools

.PHONY: hadoop install compile run test test-quick test-oracle regold bench bench-quick fidelity fidelity-ci fidelity-fuzz fuzz soak lint format docs clean screenshots

# Everything: the test tools, the compiled hot modules, Hadoop's schedulers.
install: compile
	@if command -v javac >/dev/null 2>&1 && command -v mvn >/dev/null 2>&1; then $(MAKE) --no-print-directory hadoop; \
	 else echo "make: no Java/Maven: the real-scheduler backend (--scheduler-impl hadoop) is unavailable"; fi

# emu and what it needs to run (seconds): all `make run` waits for.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $(STAMP)

# The test, lint and compile tools, JPype, pandas and Dask (pyproject's `test` extra).
$(TOOLS): $(STAMP)
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(TOOLS)

# The hot modules compiled with mypyc (emu/native.py says which and why);
# a no-op when no source changed since the last build. About 5 minutes on
# 2 cores, so no first run waits for it: emu runs as pure Python until then
# (same outputs, about half the speed). Should it fail (no C compiler), emu
# stays pure Python.
compile: $(TOOLS)
	@PYTHONPATH=$(CURDIR) EMU_PURE_PYTHON=1 $(PY) -m emu.compile || echo "make: compiling failed; emu runs as pure Python (slower)"

# Apache Hadoop's schedulers for --scheduler-impl hadoop: Maven fetches the
# release pinned in emu/hadoop/pom.xml (about 105 MB into ~/.m2, once) and
# javac compiles emu's driver against it (into ~/.cache/emu/hadoop).
hadoop: $(TOOLS)
	$(PY) -m emu.hadoop

run: $(STAMP)
	$(VENV)/bin/emu run scenarios/three-jobs.toml --output-dir out/three-jobs

# One worker per core; a test file's tests stay on one worker (its
# module fixtures are built once, its processes do not race each other),
# but for the Hadoop comparisons', which spread (tests/conftest.py).
# The suite runs whichever form is built (pure Python on a fresh clone;
# .ci/run compiles first, and tests/integration/test_native.py holds both
# forms to the same outputs). Tiers (tests/conftest.py): `make test` runs all
# but `oracle`, which asks real Hadoop and SLS again (`make test-oracle`);
# `make test-quick`, the edit loop, leaves out what needs a JVM, processes
# of its own or many seconds.
PYTEST := $(VENV)/bin/pytest -q -n auto --dist loadgroup
test: $(TOOLS)
	$(PYTEST) -m "not oracle"

test-quick: $(TOOLS)
	$(PYTEST) -m "not (jvm or processes or slow or oracle)"

test-oracle: hadoop
	$(PYTEST) -m oracle

# Rewrite tests/data/golden/ from the reference replays, for a change meant to
# alter outputs; the golden test itself only compares.
regold: $(TOOLS)
	$(PY) -m tests.regold

# Every figure beside its target, each also replayed on BENCH_BASE (the commit
# the speed work started from; any commit) and on this build at once, one core
# each, their CPU seconds compared. BENCH_BASE= (empty): no paired runs.
BENCH_BASE ?= cfa4cec
bench: compile hadoop
	$(PY) -m emu.bench $(if $(BENCH_BASE),--vs $(BENCH_BASE))

# The fidelity suite (scenarios/fidelity/suite.toml): every case replayed with
# emu's scheduler and with Hadoop's, compared, and docs/fidelity.md written.
# fidelity-ci: the short subset, and a fixed-seed random campaign
# (scenarios/fidelity/fuzz-ci.json), failing when a case that agreed exactly
# no longer does (.ci/run runs it after the tests).
fidelity: compile hadoop
	$(PY) -m emu.fidelity --write docs/fidelity.md

fidelity-ci: compile hadoop
	$(PY) -m emu.fidelity --subset ci --check
	$(PY) -m emu.fidelity.fuzz --check scenarios/fidelity/fuzz-ci.json --shrink 0

# The differential campaign (emu.fidelity.fuzz): N random cases from SEED, each
# replayed under emu's scheduler and Hadoop's, twice each; a table per class,
# each divergence shrunk to a reproducer under out/fuzz/seed-SEED/reproducers.
N ?= 1000
SEED ?= 1
fidelity-fuzz: compile hadoop
	$(PY) -m emu.fidelity.fuzz --count $(N) --seed $(SEED) $(if $(HADOOP_VERSION),--hadoop-version $(HADOOP_VERSION)) $(if $(MULTI_NODE),--multi-node)

bench-quick: compile
	$(PY) -m emu.bench --quick

# 100,000 bad requests to each of the five endpoints alongside a replay; prints the counts.
fuzz: compile
	$(PY) -m tests.fuzzing --count 100000

# HOURS simulated hours at 1,000 nodes with faults; memory sampled, invariants on.
HOURS ?= 24
soak: compile
	$(PY) -m emu.soak --hours $(HOURS)

lint: $(TOOLS)
	$(VENV)/bin/ruff check emu tests
	$(VENV)/bin/ruff format --check emu tests
	$(VENV)/bin/mypy emu

format: $(TOOLS)
	$(VENV)/bin/ruff format emu tests
	$(VENV)/bin/ruff check --fix emu tests

docs: $(TOOLS)
	$(PY) -m emu.docs

clean:
	-$(PY) -m emu.compile --clean
	rm -rf $(VENV) out .pytest_cache .ruff_cache build

# README pictures from a shipped scenario: `emu report` over FIFO, Capacity
# and Fair, and the live /simulate page during a run (needs chromium).
SHOTS    := out/screenshots
CHROMIUM ?= chromium --headless --no-sandbox --disable-gpu --hide-scrollbars
WEB_PORT ?= 18188
screenshots: $(TOOLS)
	rm -rf $(SHOTS) && mkdir -p $(SHOTS) docs/img
	for s in fifo capacity fair; do \
	  $(VENV)/bin/emu run scenarios/compare-schedulers.toml --progress never \
	    -D yarn.resourcemanager.scheduler.class=$$s -o $(SHOTS)/$$s >/dev/null || exit 1; done
	$(VENV)/bin/emu report $(SHOTS)/fifo $(SHOTS)/capacity $(SHOTS)/fair -o $(SHOTS)/report.html
	$(CHROMIUM) --window-size=1400,2500 --virtual-time-budget=2000 \
	  --screenshot=$(CURDIR)/docs/img/report.png file://$(CURDIR)/$(SHOTS)/report.html
	$(VENV)/bin/emu run scenarios/compare-schedulers.toml --progress never --rate 25 \
	  -D yarn.resourcemanager.scheduler.class=fair --web-port $(WEB_PORT) >/dev/null 2>&1 & \
	  pid=$$!; sleep 9; \
	  $(CHROMIUM) --window-size=1400,820 --virtual-time-budget=3000 \
	    --screenshot=$(CURDIR)/docs/img/live-simulate.png http://127.0.0.1:$(WEB_PORT)/simulate; \
	  wait $$pid
