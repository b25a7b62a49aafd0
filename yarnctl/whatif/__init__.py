"""`yarnctl whatif`: the live cluster as a simulator workload (live.py reads it, build.py turns it into jobs)."""
