# yarnctl: `make demo` runs the main job on built-in workloads, `make test` every test but those marked
# `long` (`make test-long`), `make check` the fast tier (no Hadoop JVM). All set themselves up on a fresh
# machine (a virtualenv in .venv with yarnctl installed).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo check test test-long java typecheck bench bench-shim hadoop-tests soak docker-test install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# the paper policies beside Hadoop's scheduling algorithms on two of the papers' workloads, tables and plots into demo-out/
demo: $(STAMP)
	@echo "== [HaSTE] Table 3 (haste-mixed1): FIFO, Fair and Capacity (Hadoop 2.7's orders, node reservations off) beside FFD-DotProduct and HaSTE"
	@$(BIN)/yarnctl simulate --workload haste-mixed1 --policy fifo,fair,capacity,ffd-dp,haste --no-jobs --out demo-out/haste-mixed1
	@$(BIN)/python -m yarnctl.sim.reproduce haste --workload haste-mixed1
	@echo
	@echo "== [DRESS] Figs. 8-9 (dress-mr20): CapacityScheduler beside DRESS's reservation for small-demand jobs"
	@$(BIN)/yarnctl simulate --workload dress-mr20 --policy capacity,dress --no-jobs --out demo-out/dress-mr20
	@$(BIN)/python -m yarnctl.sim.reproduce dress --workload dress-mr20

# the Java shim: compiles for Java 8, runs its JUnit tests, writes java-bridge/target/yarnctl-shim-0.1.0.jar
java:
	mvn -q -B -f java-bridge package

# types (mypy --strict on the typed packages) and the dependency direction (import-linter, pyproject.toml)
typecheck: $(STAMP)
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy --strict yarnctl/model yarnctl/fairness yarnctl/estimation yarnctl/policies yarnctl/engine.py yarnctl/collector.py yarnctl/paths.py yarnctl/jsonout.py yarnctl/state yarnctl/bridge yarnctl/rm yarnctl/metrics \
		yarnctl/sim/workload yarnctl/sim/records.py yarnctl/sim/cluster.py yarnctl/sim/appmaster.py \
		yarnctl/sim/physics.py yarnctl/sim/bench.py yarnctl/sim/jvmstart.py yarnctl/sim/observe.py yarnctl/sim/parts.py yarnctl/sim/kernel.py yarnctl/sim/mr_am.py yarnctl/sim/spark_am.py yarnctl/sim/spark_drivers.py yarnctl/cli/params.py yarnctl/cluster yarnctl/bench/jhist.py yarnctl/bench/taskstart.py \
		yarnctl/bench/replay.py yarnctl/bench/shares.py yarnctl/bench/fidelity.py yarnctl/bench/jvmcost.py yarnctl/fidelity yarnctl/cli/fidelity.py yarnctl/cli/output.py yarnctl/sim/report.py \
		yarnctl/sweep yarnctl/cli/sweep.py yarnctl/cli/policy.py yarnctl/cli/running.py yarnctl/cli/whatif.py yarnctl/whatif

# the fast tier for everyday work: types, unit, property, CLI and doc tests; no Maven, no Hadoop JVM, none of
# the minutes-long replays (`slow`, `long`); two pytest workers (pytest-xdist), for this machine's two cores
check: typecheck
	$(BIN)/python -m pytest -n 2 -m 'not integration and not slow and not long'

# the suite CI runs: the shim's JUnit tests, everything in `check` and the slow replays (two workers),
# then, one at a time (they time real JVMs), the integration tests that start real Hadoop 2.7.7 clusters
# with the shim (marked `integration`), but for the three marked `long`
test: java typecheck
	$(BIN)/python -m pytest -n 2 -m 'not integration and not long' --durations=10
	$(BIN)/python -m pytest -m 'integration and not long' --durations=30

# the integration tests too long for `make test`'s hour (about 10 min; nothing automated runs them): usage
# feedback's live run beside fifo, two saturated CapacityScheduler queues at 70/30, SLS replaying a trace
# native and shim; and, with no cluster, `bench fidelity --cross-validate`'s full search on the kept runs
test-long: java $(STAMP)
	$(BIN)/python -m pytest -m long --durations=5

bench: $(STAMP)
	$(BIN)/python -m yarnctl.sim.bench --policy all --repeat 1

# the shim + Python fifo against native FifoScheduler at 100, 1,000 and 5,000 nodes, 200 apps, plotted (docs/performance.md)
bench-shim: $(STAMP) java
	$(BIN)/python -m yarnctl.bridge.shimbench --nodes 100,1000,5000 --plot docs/img/bench-shim.png

# Hadoop 2.7.7's own ResourceManager tests (java-bridge/hadoop-tests) under stock FifoScheduler, then under the
# shim (vcore-aware, no Python), compared class by class, then CapacityScheduler's classes under stock CS and the
# shim on CapacityScheduler, then every class with Python deciding (docs/bridge.md); make test runs the quick
# classes with Python deciding and in native fallback (tests/integration/test_hadoop_rm_tests.py)
hadoop-tests: java $(STAMP)
	mvn -q -B -f java-bridge/hadoop-tests test -Dscheduler=stock
	mvn -q -B -f java-bridge/hadoop-tests test -Dscheduler=shim
	python3 java-bridge/hadoop-tests/compare-reports.py
	mvn -q -B -f java-bridge/hadoop-tests test -Dscheduler=stock -Dsuite=capacity
	mvn -q -B -f java-bridge/hadoop-tests test -Dscheduler=shim -Dsuite=capacity
	python3 java-bridge/hadoop-tests/compare-reports.py --suite capacity
	YARNCTL_HADOOP_TESTS=all $(BIN)/python -m pytest -p no:cacheprovider tests/integration/test_hadoop_rm_tests.py -k python_deciding

# an hour of mixed jobs on a local cluster, Python SIGKILLed every 5 min and each NodeManager restarted once;
# the RM's threads, fds, sockets and heap and serve's RSS must not grow (docs/bridge.md, "Soak"; not in `make test`)
soak: $(STAMP) java
	$(BIN)/python -m yarnctl.bench.soak --minutes 60 --out docs/soak

# the docker cluster for real (docker/README.md): as root on a fresh Debian machine, installs podman and
# podman-compose, builds docker/Dockerfile on a bootstrapped Debian base, starts docker/compose.yaml and
# runs the documented journey (wordcount on HDFS under the shim with dress, then native Capacity),
# then tears it all down (docs/deploy.md, "The dockerised cluster"; not in `make test`)
docker-test:
	docker/test.sh

clean:
	rm -rf $(VENV) demo-out build *.egg-info .pytest_cache java-bridge/target java-bridge/cluster/target
