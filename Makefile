# remnic — two commands set everything up:  make demo  ·  make test
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench golden docs install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]' --config-settings editable_mode=compat
	touch $(STAMP)

install: $(STAMP)

## The main job on an embedded default: a demo memory repo, a few memories, sync, recall, X-ray.
demo: $(STAMP)
	$(PY) -m remnic.cli.demo

## Lint, format check and type check (part of `make test`).
lint: $(STAMP)
	$(VENV)/bin/ruff check remnic tests
	$(VENV)/bin/ruff format --check remnic tests
	$(VENV)/bin/mypy

## The whole test suite (what CI runs through .ci/run). With Python's own bytecode cache even where the
## environment turns it off (PYTHONDONTWRITEBYTECODE): the suite starts hundreds of remnic processes, and
## compiling every module from source again was a third of each one's start-up.
test: lint
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -q -n 3

## Benchmarks; results go to docs/benchmarks.md.
bench: $(STAMP)
	$(PY) -m remnic.bench all

## Rewrite golden files ON PURPOSE, then review `git diff golden/`.
golden: $(STAMP)
	$(PY) tests/regen_golden.py

## Regenerate docs/configuration.md (settings) and docs/cli.md (commands) from the code.
docs: $(STAMP)
	$(PY) -c "from remnic.config import settings_markdown; open('docs/configuration.md', 'w').write(settings_markdown())"
	$(PY) -c "from remnic.cli.reference import cli_markdown; open('docs/cli.md', 'w').write(cli_markdown())"

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
