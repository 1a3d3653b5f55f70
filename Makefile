# The two commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo test bench clean

setup: $(VENV)/.installed

# torch (the CUDA build from PyPI, about 3 GB with its nvidia-* wheels) is installed once per
# machine and cached by pip; it runs on the CPU here and the same environment works on a GPU.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[torch,test]'
	touch $@

demo: setup
	$(BIN)/ridgescope demo

test: setup
	scripts/kafka-test-broker fetch
	$(BIN)/pytest

bench: setup
	$(BIN)/python bench/spine/run_bench.py

clean:
	rm -rf $(VENV) .kafka
