# Inferbase: `make run` serves the gateway on the embedded default; `make test` runs the suite.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
HOST ?= 127.0.0.1

.PHONY: run test lint bench bench-peer eval-routing install install-dev clean

$(VENV)/.runtime: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.dev: requirements-dev.txt $(VENV)/.runtime
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

install: $(VENV)/.runtime
install-dev: $(VENV)/.dev

run: install
	$(PY) manage.py bootstrap
	$(PY) manage.py collectstatic --noinput --verbosity 0
	@echo "Inferbase on http://$(HOST):$(PORT)/api/v1/inference (simulated upstream at /simulated)"
	PORT=$(PORT) $(VENV)/bin/daphne -b $(HOST) -p $(PORT) inferbase.asgi:application

lint: install-dev
	$(VENV)/bin/ruff check .

test: install-dev lint
	$(PY) -m pytest -q -p no:cacheprovider

eval-routing: install
	$(PY) -m routing.classifier.evaluate

# Routing time (token count + classification + decision) by prompt size, then the gateway's
# overhead against going direct and against the bare-consumer floor (~4 minutes in all).
bench: install-dev
	$(PY) -m bench.routing_time
	$(PY) -m routing.engine_bench
	$(PY) -m routing.classifier.bench
	$(MAKE) bench-gateway

clean:
	rm -rf $(VENV) db.sqlite3 var

# Gateway overhead benchmark (bench/, docs/benchmarks.md): direct vs floor vs gateway, ~5 minutes.
.PHONY: bench-gateway
bench-gateway: install
	$(PY) -m bench.run

# The same, against a LiteLLM proxy installed in its own virtual env (.venv-litellm).
bench-peer: install
	test -x .venv-litellm/bin/litellm || ($(PYTHON) -m venv .venv-litellm && .venv-litellm/bin/pip install --quiet --disable-pip-version-check 'litellm[proxy]==1.108.7')
	$(PY) -m bench.run --peer

# Memory under sustained load: the gateway's RSS every slice of requests up to 50,000 (~4 minutes).
.PHONY: bench-soak
bench-soak: install-dev
	$(PY) -m bench.soak

# Scale-out on one host: one gateway process vs two sharing PostgreSQL and Redis (needs both running).
.PHONY: bench-scale
bench-scale: install-dev
	$(PY) -m bench.two_processes

# Logs in the portal on 1,000,000 logged requests: seeds PostgreSQL once (DATABASE_URL, e.g.
# postgres://postgres@127.0.0.1:5432/portal_bench), then times each page (docs/benchmarks.md).
.PHONY: bench-portal
bench-portal: install-dev
	$(PY) -m bench.portal $(if $(ROWS),--rows $(ROWS))
