# The arena's two set-up commands are `make demo` and `make test`; both install what they need.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install system-deps demo test test-fast test-nojit typecheck lint lint-workflows bench clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --upgrade pip
	@$(PY) -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

install: $(STAMP) system-deps

# System packages: bubblewrap for the embedded sandbox, chromium for the site's browser test.
system-deps:
	@sh scripts/system-deps.sh

demo: install
	$(VENV)/bin/arena demo --out _demo --site _site

# The suite goes two tests at a time on pytest-xdist workers (most of a test's time is spent
# waiting on a sandbox, a subprocess or a docker engine, which leaves a core idle): the suite
# without the act tests took 9 min 48 s one at a time, 3 min 56 s two at a time. The workflow
# runs under act (tests/github/test_act_*.py; round, the longest, sorts first) go after it, two
# at a time too, on their own: each holds one workflow's jobs.
ACT_TESTS := $(sort $(wildcard tests/github/test_act_*.py))

test: install lint lint-workflows typecheck
	$(PY) -m pytest -q -n 2 --dist worksteal $(addprefix --ignore=,$(ACT_TESTS))
	$(PY) -m pytest -q -n 2 --dist worksteal $(ACT_TESTS)
	NUMBA_DISABLE_JIT=1 $(PY) -m pytest -q -m "not slow" tests/engine tests/test_differential.py tests/test_paper_conformance.py

# mypy over engine/ and grader/ as pyproject.toml configures it (strict module by module); its
# cache in .mypy_cache/ makes a run after a small change take seconds.
typecheck: install
	$(VENV)/bin/mypy

# One style, kept by a tool: ruff lays the Python files out and lints them (pyproject.toml's
# [tool.ruff]); `ruff format .` and `ruff check --fix .` put a change right.
lint: install
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .

# zizmor (offline) over the workflows: nothing above low that is not explained in zizmor's own
# ignore comment; actionlint too where it is on PATH.
lint-workflows: install
	$(VENV)/bin/zizmor --offline --min-severity medium .github/workflows
	@if command -v actionlint >/dev/null 2>&1; then actionlint .github/workflows/*.yml; else echo "actionlint is not on PATH: skipped"; fi

test-fast: install
	$(PY) -m pytest -q -m "not slow"

test-nojit: install
	NUMBA_DISABLE_JIT=1 $(PY) -m pytest -q -m "not slow"

bench: install
	$(PY) -m benchmarks

clean:
	rm -rf $(VENV) _site _demo .pytest_cache .mypy_cache
