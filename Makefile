# The two commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo test bench bench-parsers clean

setup: $(VENV)/.installed

# torch (the CUDA build from PyPI, about 3 GB with its nvidia-* wheels) is installed once per
# machine and cached by pip; it runs on the CPU here and the same environment works on a GPU.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[torch,test,frameworks]'
	touch $@

demo: setup
	$(BIN)/ridgescope demo

test: setup
	scripts/kafka-test-broker fetch
	scripts/mpi-for-tests
	$(BIN)/pytest

bench: setup
	$(BIN)/python bench/spine/run_bench.py

# The dispatcher's lines/s, pure Python and compiled (a wheel built with RIDGESCOPE_USE_MYPYC=1,
# see setup.py), each into its results file.
COMPILED := build/compiled
bench-parsers: setup
	$(BIN)/python bench/parsers/bench_dispatcher.py --out bench/parsers/results.json
	rm -rf $(COMPILED)
	RIDGESCOPE_USE_MYPYC=1 $(BIN)/python -m pip wheel --quiet --no-deps --no-build-isolation -w $(COMPILED)/dist .
	$(BIN)/python -m zipfile -e $(COMPILED)/dist/ridgescope-*.whl $(COMPILED)/site
	PYTHONPATH=$(COMPILED)/site $(BIN)/python bench/parsers/bench_dispatcher.py --out bench/parsers/results-compiled.json

clean:
	rm -rf $(VENV) .kafka
