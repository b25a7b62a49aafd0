"""The fidelity benchmark end to end (`yarnctl bench fidelity`): real runs, simulator and SLS replays, files.

It sits above both `bench` (real runs, replay, fit) and `sls` (Hadoop's simulator), so neither depends on the other.
"""
