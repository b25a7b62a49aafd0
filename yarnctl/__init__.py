"""yarnctl: Python scheduling policies for Hadoop YARN 2.7, simulated and live."""

__version__ = "0.1.0"
