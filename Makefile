# yarnctl: `make demo` runs the main job on a built-in workload, `make test` runs every test.
# Both set themselves up on a fresh machine (a virtualenv in .venv with yarnctl installed).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/yarnctl simulate --workload haste-mixed1 --policy fifo,fair,drf,capacity,ffd-dp --out demo-out

test: $(STAMP)
	$(BIN)/mypy --strict yarnctl/model yarnctl/fairness yarnctl/policies yarnctl/engine.py
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m yarnctl.sim.bench

clean:
	rm -rf $(VENV) demo-out build *.egg-info .pytest_cache
