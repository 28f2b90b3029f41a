# cubesage: two commands. `make demo` runs the main job, `make test` the whole suite.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
CUBESAGE := $(VENV)/bin/cubesage
STAMP := $(VENV)/.stamp

.PHONY: demo test unit bench bench-regress install install-app install-test lint clean screenshots

## Python env with the app and its pinned dependencies
$(STAMP)-app: pyproject.toml constraints.txt answer/api/web/package-lock.json
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -c constraints.txt -e '.[test]'
	bash answer/api/web/vendor.sh
	touch $@

install-app: $(STAMP)-app

## Everything the tests need: npm Cube, the Elasticsearch jars, Chromium for the browser test
$(STAMP)-test: $(STAMP)-app tests/infra/cube/package-lock.json tests/infra/elasticsearch/pom.xml
	cd tests/infra/cube && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	bash tests/infra/elasticsearch/build.sh
	bash tests/infra/install_browser.sh
	touch $@

install-test: $(STAMP)-test

install: install-app install-test

## The main job: embedded stack, demo warehouse + indices, API + chat page, four sample questions answered
demo: install-app
	$(CUBESAGE) demo run

## The whole suite against real PostgreSQL, Cube and Elasticsearch started by the test session
test: install-test lint
	$(VENV)/bin/pytest -q -p no:cacheprovider tests

## README screenshots of the chat page and the dashboard (docs/screenshots/), on the demo in CUBESAGE_DATA_DIR
screenshots: install-test
	$(PY) -m tests.infra.screenshots --out docs/screenshots

## The unit tests alone: no PostgreSQL, Cube or Elasticsearch (a unit test that asks for one fails collection)
unit: install-app
	$(VENV)/bin/pytest -q -p no:cacheprovider -m unit tests/unit

## Gates (`make test` runs them first, so CI does): ruff (with complexity limits) and ruff format, mypy, the
## import-layer contract
# mypy: strict on cubesage_core and cube_models (pyproject.toml), normal on the rest listed here
MYPY_PACKAGES := cubesage_core cube_models sag_index fourengine router warehouses answer bench demo
lint: install-app
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy $(MYPY_PACKAGES)
	$(VENV)/bin/pytest -q -p no:cacheprovider tests/unit/test_layers.py

## Benchmarks: JSON lines on the console and in bench/results/
BENCH_DATA ?= ../shared/bench-data
RESULTS := bench/results
# the demo's settings (the library leaves them unset; `cubesage demo` sets them for its own commands)
bench: export CUBESAGE_MODEL_DIR = $(CURDIR)/demo/model
bench: export CUBESAGE_DETAIL_VOCABULARY = $(CURDIR)/demo/detail_vocabulary.yaml
bench: export CUBESAGE_GLOSSARY = $(CURDIR)/demo/glossary.yaml
bench: install-test
	mkdir -p $(RESULTS)
	$(CUBESAGE) demo load
	$(CUBESAGE) bench compile | tee $(RESULTS)/compile.jsonl
	$(CUBESAGE) bench schema-linking --data $(BENCH_DATA)/spider-dev | tee $(RESULTS)/schema-linking.jsonl
	$(CUBESAGE) bench engines | tee $(RESULTS)/engines.jsonl
	for backend in postgres elasticsearch; do \
	  $(CUBESAGE) bench multihop --backend $$backend \
	    --questions $(BENCH_DATA)/hotpotqa-100/hotpotqa_train.json \
	    --corpus $(BENCH_DATA)/hotpotqa-100/hotpotqa_train_corpus.json; \
	done | tee $(RESULTS)/multihop.jsonl
	$(CUBESAGE) bench router-fast | tee $(RESULTS)/router-fast.jsonl
	$(CUBESAGE) bench e2e | tee $(RESULTS)/e2e.jsonl
	$(CUBESAGE) bench init | tee $(RESULTS)/init.jsonl
	$(MAKE) --no-print-directory bench-regress
	$(CUBESAGE) bench load | tee $(RESULTS)/load.jsonl
	$(CUBESAGE) bench load --no-answer-cache | tee $(RESULTS)/load-no-answer-cache.jsonl
	$(CUBESAGE) bench load --no-answer-cache --no-memo --requests 1000 | tee $(RESULTS)/load-no-cache.jsonl
	$(CUBESAGE) bench fuzz | tee $(RESULTS)/fuzz.jsonl
	$(CUBESAGE) bench faults | tee $(RESULTS)/faults.jsonl
	$(CUBESAGE) bench scale | tee $(RESULTS)/scale.jsonl

## Regression suites, dev and test apart: the demo suite on the demo DB, then each warehouse pack's suite
## on its own data dir (.cubesage/bench-<pack>) after `cubesage warehouse load <pack>`; packs without a
## suite.yaml are skipped. One summary line per suite and split: bench/results/regress-<warehouse>-<split>.jsonl
SPLITS := dev test
bench-regress:
	mkdir -p $(RESULTS)
	set -e; for split in $(SPLITS); do \
	  out=$$($(CUBESAGE) regress demo/regress/suite.yaml --split $$split --json); \
	  printf '%s\n' "$$out" | tail -n 1 | tee $(RESULTS)/regress-demo-$$split.jsonl; \
	done
	set -e; for suite in warehouses/*/suite.yaml; do \
	  [ -f "$$suite" ] || continue; \
	  name=$$(basename $$(dirname "$$suite")); \
	  export CUBESAGE_DATA_DIR=.cubesage/bench-$$name; \
	  $(CUBESAGE) warehouse load $$name; \
	  for split in $(SPLITS); do \
	    out=$$($(CUBESAGE) regress "$$suite" --split $$split --json); \
	    printf '%s\n' "$$out" | tail -n 1 | tee $(RESULTS)/regress-$$name-$$split.jsonl; \
	  done; \
	done

clean:
	rm -rf $(VENV) tests/infra/cube/node_modules tests/infra/elasticsearch/target
