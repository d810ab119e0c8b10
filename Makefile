# privnoise — every target creates .venv and installs what it needs on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# Every run-time extra, the documentation tools and the test tools.
EXTRAS := all,docs,test

.PHONY: demo test lint docs bench bench-scale reproduce install clean mutation

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[$(EXTRAS)]"
	touch $(STAMP)

install: $(STAMP)

## The main job on the embedded default: sample smart-meter data, optimal noise, releases, a trade-off plot.
demo: $(STAMP)
	$(BIN)/privnoise demo --output privnoise-demo

## The full test suite (unit, statistical, reproduction, CLI, doctests, documentation site and its code blocks,
## README examples, the built wheel in a fresh environment) plus lint. The Spark tests share one local Spark
## session: --dist loadgroup runs them in one worker (their xdist_group), the rest is spread as usual.
test: $(STAMP)
	$(BIN)/python -m ruff check src tests benchmarks docs
	bash scripts/ensure-postgres.sh
	bash scripts/ensure-chromium.sh
	bash scripts/ensure-java.sh
	$(BIN)/python -m pytest -n 2 --dist loadgroup -q --durations=25

lint: $(STAMP)
	$(BIN)/python -m ruff check src tests benchmarks docs
	$(BIN)/python -m mypy

## The documentation site in site/ (warnings are errors; figures come from the reproduction code).
docs: $(STAMP)
	$(BIN)/python -m sphinx -W --keep-going -b html -q docs site

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_samplers.py
	$(BIN)/python benchmarks/bench_dp.py
	$(BIN)/python benchmarks/bench_optimization.py
	$(BIN)/python benchmarks/bench_stream.py
	$(BIN)/python benchmarks/bench_cli.py
	$(BIN)/python benchmarks/bench_fem.py
	$(BIN)/python benchmarks/bench_core.py --skip-files
	$(BIN)/python benchmarks/bench_analyst.py   # OpenDP, diffprivlib, PipelineDP: pip install ".[peers]"

## Chunked Parquet releases of 10⁹ (mean) and 10⁸ (identity) records: peak memory (writes ~2 GiB to a temp dir).
bench-scale: $(STAMP)
	$(BIN)/python benchmarks/bench_core.py

## Mutation testing of the privacy-critical modules (mutation/modules.toml); not part of `make test`.
mutation: $(STAMP)
	$(BIN)/python -c "import mutmut" 2>/dev/null || $(BIN)/python -m pip install --quiet -e ".[$(EXTRAS),mutation]"
	$(BIN)/python mutation/run.py

PAPERS := farokhi-sandberg liu-kawano-cao koufogiannis nageswaran farokhi-optimization

reproduce: $(STAMP)
	for paper in $(PAPERS); do $(BIN)/privnoise reproduce $$paper --output reproduce/$$paper || exit 1; done

clean:
	rm -rf $(VENV) privnoise-demo reproduce site docs/_build docs/_generated .pytest_cache .mypy_cache .ruff_cache
