"""Parameter studies: every (workload, policy, parameters, seed) cell of a grid simulated once, cached, reported with confidence.

    yarnctl sweep run SWEEP.yaml --out DIR       run the missing cells (local processes or Dask), write DIR/results.csv
    yarnctl sweep report DIR --baseline fifo     per cell mean and 95% interval over seeds, paired differences

spec.py expands a sweep file (or flags) into cells; cell.py runs one cell into a row of metrics;
store.py keeps each finished cell under its content hash, so a sweep resumes; executors.py runs
cells on local processes or a Dask cluster; stats.py computes intervals and paired differences.
"""
