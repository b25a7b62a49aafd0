"""`python -m yarnctl.sim.workload FILE...`: validate workload files."""

from yarnctl.sim.workload import main

raise SystemExit(main())
