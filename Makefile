# Two commands for a fresh clone: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test test-fast test-torch2.14 bench clean update-docs

install: $(STAMP)

# Re-run the install when the package metadata changes; otherwise it is a no-op.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[test,picture]'
	touch $(STAMP)

# The example fails on purpose (that is the bug being explained), so its exit code is
# reported rather than treated as a failure of `make demo`.
demo: install
	@$(BIN)/autograd-doctor run examples/broken_attention.py; status=$$?; \
	  echo; echo "(the example exited with status $$status, as python would: the report above names the line to change)"

test: install
	$(BIN)/python -m pytest -q

# The fast tier (well under a minute): every catalogue program and bug report diagnosed in-process
# in both modes, compared with its golden report, plus every lint rule's fixtures.
test-fast: install
	$(BIN)/python -m pytest -q tests/golden tests/lint/test_rules.py

# Rewrite the example outputs in README.md and docs/ that no longer match what runs (tests/docs).
update-docs: install
	$(BIN)/python -m pytest -q tests/docs --update-docs

# The suite on the newest torch release we support (a 5.5 GB CUDA build that runs on the CPU),
# in its own venv; not part of `make test` because installing it takes minutes.
TORCH_NEXT := .venv-torch2.14
$(TORCH_NEXT)/.installed: pyproject.toml
	test -x $(TORCH_NEXT)/bin/python || $(PYTHON) -m venv $(TORCH_NEXT)
	$(TORCH_NEXT)/bin/pip install -q --upgrade pip
	$(TORCH_NEXT)/bin/pip install -q torch==2.14.1
	$(TORCH_NEXT)/bin/pip install -q -e '.[test,picture]' torch==2.14.1
	touch $@

test-torch2.14: $(TORCH_NEXT)/.installed
	$(TORCH_NEXT)/bin/python -m pytest -q

bench: install
	$(BIN)/python benchmarks/overhead.py
	$(BIN)/python benchmarks/lint_speed.py

clean:
	rm -rf $(VENV) $(TORCH_NEXT) build dist src/*.egg-info
