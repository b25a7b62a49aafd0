# yarnctl: `make demo` runs the main job on a built-in workload, `make test` runs every test.
# Both set themselves up on a fresh machine (a virtualenv in .venv with yarnctl installed).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test java bench bench-shim install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/yarnctl simulate --workload haste-mixed1 --policy fifo,fair,drf,capacity,ffd-dp --out demo-out

# the Java shim: compiles for Java 8, runs its JUnit tests, writes java-bridge/target/yarnctl-shim-0.1.0.jar
java:
	mvn -q -B -f java-bridge package

# Python tests, then the integration tests that start a real Hadoop 2.7.7 cluster with the shim
test: $(STAMP) java
	$(BIN)/mypy --strict yarnctl/model yarnctl/fairness yarnctl/estimation yarnctl/policies yarnctl/engine.py yarnctl/bridge yarnctl/rm yarnctl/metrics
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m yarnctl.sim.bench

# the shim + Python fifo against native FifoScheduler, 1,000 nodes and 200 apps (README: Benchmarks)
bench-shim: $(STAMP) java
	$(BIN)/python -m yarnctl.bridge.shimbench

clean:
	rm -rf $(VENV) demo-out build *.egg-info .pytest_cache java-bridge/target java-bridge/cluster/target
