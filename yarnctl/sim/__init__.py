"""The discrete-event simulator: event kernel, workloads, a simulated YARN cluster and reports."""
