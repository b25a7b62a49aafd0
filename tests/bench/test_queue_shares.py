"""Queue shares under contention: the busy period, the RM sampler on recorded responses, the simulator's samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixturerm import FIXTURES, JSON, HttpStub

from yarnctl.bench.shares import RmSampler, busy_shares, from_json, sample_rm
from yarnctl.bench.spec import load_spec, parse_spec
from yarnctl.engine import Engine
from yarnctl.errors import ClusterError, WorkloadError
from yarnctl.policies import make_policy
from yarnctl.rm import HttpSettings, ResourceManager
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.workload import parse_workload
from yarnctl.sim.workload.queues import QueueSpec, site_properties


def test_only_samples_where_every_queue_asks_count() -> None:
    samples = [(0.0, {"a": (0, 0), "b": (0, 512)}),        # a asks nothing yet: not busy
               (1.0, {"a": (7000, 100), "b": (3000, 100)}),
               (2.0, {"a": (8000, 100), "b": (2000, 100)}),
               (3.0, {"a": (9000, 100), "b": (1000, 0)}),  # b has placed everything: not busy
               (4.0, {"a": (10000, 0), "b": (0, 0)})]
    s = busy_shares(samples, 10000, ["a", "b"])
    assert (s.busy_s, s.samples) == (2.0, 2)
    assert s.shares == pytest.approx({"a": 0.75, "b": 0.25})


def test_a_missed_poll_stretches_the_sample_before_it_by_two_steps_at_most() -> None:
    rows = [(float(t), {"a": (1000, 1), "b": (0, 1)}) for t in range(5)] + [(20.0, {"a": (0, 1), "b": (1000, 1)})]
    s = busy_shares(rows, 1000, ["a", "b"])
    # five 1 s samples of a (the last stretched to 2 s, not 16) and one of b at the usual step
    assert s.busy_s == pytest.approx(7.0)
    assert s.shares == pytest.approx({"a": 6 / 7, "b": 1 / 7})


def test_no_busy_period_gives_no_shares() -> None:
    s = busy_shares([(0.0, {"a": (10, 0), "b": (10, 5)})], 100, ["a", "b"])
    assert (s.busy_s, s.shares) == (0.0, {})


class QueuesRM(HttpStub):
    """CapacityScheduler's scheduler page and QueueMetrics beans, recorded from the shim on CapacityScheduler
    during a `bench mr --spec queue-share` run (a 70%, b 30%)."""

    def answer(self, path: str) -> tuple[int, dict[str, str], bytes]:
        name = {"/ws/v1/cluster/scheduler": "scheduler_cs_queues", "/jmx": "rm_jmx_queue_metrics"}.get(path.split("?")[0])
        return (200, JSON, (FIXTURES / f"{name}.json").read_bytes()) if name else (404, JSON, b"{}")


def test_the_sampler_reads_each_leaf_from_the_scheduler_page_and_its_queue_metrics_bean() -> None:
    stub = QueuesRM()
    try:
        rm = ResourceManager([stub.url])
        row = sample_rm(rm)
        # the leaves' resourcesUsed, and PendingMB of the q1=a / q1=b beans (not root's, not a user's)
        scheduler = json.loads((FIXTURES / "scheduler_cs_queues.json").read_text())["scheduler"]["schedulerInfo"]
        used = {q["queueName"]: q["resourcesUsed"]["memory"] for q in scheduler["queues"]["queue"]}
        beans = json.loads((FIXTURES / "rm_jmx_queue_metrics.json").read_text())["beans"]
        pending = {b["name"].rsplit("=", 1)[1]: b["PendingMB"] for b in beans if "q1=" in b["name"]}
        assert row == {q: (used[q], pending[q]) for q in ("a", "b")}
        assert all(p > 0 for _, p in row.values())
    finally:
        stub.stop()


def test_the_sampler_thread_counts_failed_polls_and_keeps_going() -> None:
    stub = QueuesRM()
    stub.stop()  # unreachable from the start
    sampler = RmSampler(ResourceManager([stub.url], settings=HttpSettings(connect_timeout_s=0.2, retries=0)),
                        interval_s=0.05).start()
    import time

    time.sleep(0.5)
    assert sampler.stop() == []
    assert sampler.errors >= 2


def test_an_unexpected_error_in_a_poll_is_counted_not_fatal() -> None:
    """A fake RM (fault injection) whose scheduler page breaks the parser: the thread goes on polling."""

    class Broken:
        def scheduler(self) -> None:
            raise ValueError("PendingMB is null")

    sampler = RmSampler(Broken(), interval_s=0.05).start()  # type: ignore[arg-type]
    import time

    time.sleep(0.3)
    assert sampler.stop() == []
    assert sampler.errors >= 2 and sampler.last_error == "ValueError: PendingMB is null"


def test_samples_from_bench_json_start_at_zero() -> None:
    assert from_json([[5000, {"a": [1, 2]}], [6500, {"a": [3, 4]}]]) == [(0.0, {"a": (1, 2)}), (1.5, {"a": (3, 4)})]


def test_the_tree_becomes_capacity_scheduler_properties() -> None:
    props = site_properties([QueueSpec("root.a", 70), QueueSpec("root.b", 30, 50, running=False),
                             QueueSpec("root.b.x", 100, user_limit_percent=50, user_limit_factor=2)])
    cs = "yarn.scheduler.capacity."
    assert props[cs + "root.queues"] == "a,b" and props[cs + "root.b.queues"] == "x"
    assert (props[cs + "root.a.capacity"], props[cs + "root.b.maximum-capacity"], props[cs + "root.b.state"]) == \
        ("70", "50", "STOPPED")
    assert (props[cs + "root.b.x.minimum-user-limit-percent"], props[cs + "root.b.x.user-limit-factor"]) == ("50", "2")


def test_a_bench_spec_declares_a_tree_and_its_jobs_must_name_running_leaves() -> None:
    spec = load_spec("queue-share")
    assert [q.path for q in spec.queues] == ["root.a", "root.b"] and {j.queue for j in spec.jobs} == {"a", "b"}
    tree = {"queues": [{"path": "root.a", "capacity": 70}, {"path": "root.b", "capacity": 30, "state": "STOPPED"}]}
    with pytest.raises(WorkloadError, match=r"jobs\[0\]\.queue: job j01 names queue 'b'; .* running leaves are a"):
        parse_spec({"cluster": tree, "jobs": [{"program": "sleep", "queue": "b"}]}, "s.yaml", "s")
    with pytest.raises(WorkloadError, match="capacities under root add up to 90%"):
        parse_spec({"cluster": {"queues": [{"path": "root.a", "capacity": 90}]}, "jobs": [{"program": "sleep"}]},
                   "s.yaml", "s")


def test_a_tree_runs_only_under_capacity_scheduler_or_a_policy() -> None:
    from yarnctl.bench.mr import check_labels

    spec = load_spec("queue-share")
    check_labels(["native-capacity", "capacity", "dress"], spec)
    with pytest.raises(ClusterError, match="native-fair: bench queue-share declares cluster.queues"):
        check_labels(["capacity", "native-fair"], spec)


TREE = """
name: shares
cluster:
  nodes: 2
  node: {memory_mb: 8192, vcores: 16}
  queues: [{path: root.a, capacity: 70}, {path: root.b, capacity: 30}]
jobs:
  - {id: a1, queue: a, submit_s: 0, type: mapreduce, am: {memory_mb: 512, vcores: 1},
     maps: {tasks: 40, resource: {memory_mb: 1024, vcores: 1}, duration: 30}}
  - {id: b1, queue: b, submit_s: 0, type: mapreduce, am: {memory_mb: 512, vcores: 1},
     maps: {tasks: 18, resource: {memory_mb: 1024, vcores: 1}, duration: 30}}
"""


def test_in_the_simulator_capacity_holds_the_configured_shares_and_fifo_does_not() -> None:
    w = parse_workload(TREE, "shares.yaml")
    got = {}
    for policy in ("capacity", "fifo"):
        run = SimCluster(w, Engine(make_policy(policy, {})), sample_queues_s=1.0).run()
        got[policy] = busy_shares(run.queue_samples, 16384, ["a", "b"])
    assert got["capacity"].busy_s > 60
    assert got["capacity"].shares["a"] == pytest.approx(0.70, rel=0.10)
    assert got["capacity"].shares["b"] == pytest.approx(0.30, rel=0.10)
    assert got["fifo"].shares["b"] < 0.15  # FIFO gives a's job everything it asks first


@pytest.mark.parametrize("policy", ["fair", "drf", "hmrf", "lt-drf", "af"])
def test_the_fair_share_family_weighs_each_queue_by_its_capacity_in_the_tree(policy: str) -> None:
    w = parse_workload(TREE, "shares.yaml")
    s = busy_shares(SimCluster(w, Engine(make_policy(policy, {})), sample_queues_s=1.0).run().queue_samples,
                    16384, ["a", "b"])
    # equal weights (no tree) would split the cluster about half and half
    assert s.shares["a"] == pytest.approx(0.70, rel=0.10) and s.shares["b"] == pytest.approx(0.30, rel=0.12), s


@pytest.mark.parametrize(("policy", "params"), [("fair", {"queues": {"a": {"weight": 1}, "b": {"weight": 1}}}),
                                                ("hmrf", {"weights": {"a": 1, "b": 1}})])
def test_parameters_override_the_trees_weights(policy: str, params: dict[str, object]) -> None:
    w = parse_workload(TREE, "shares.yaml")
    s = busy_shares(SimCluster(w, Engine(make_policy(policy, params)), sample_queues_s=1.0).run().queue_samples,
                    16384, ["a", "b"])
    assert abs(s.shares["a"] - s.shares["b"]) < 0.1, s


def test_sampling_changes_no_decision() -> None:
    w = parse_workload(TREE, "shares.yaml")
    plain = SimCluster(w, Engine(make_policy("capacity", {}))).run()
    sampled = SimCluster(w, Engine(make_policy("capacity", {})), sample_queues_s=1.0).run()
    assert plain.fingerprint() == sampled.fingerprint() and not plain.queue_samples
    assert len(sampled.queue_samples) >= int(sampled.end_s) - 1


def test_a_replayed_bench_run_keeps_its_tree_and_queues(tmp_path: Path) -> None:
    from yarnctl.bench.fidelity import FITTED
    from yarnctl.bench.replay import replay_jobs, to_workload, workload_doc

    spec = load_spec("queue-share")
    records = [{"job_id": j.id, "final_status": "SUCCEEDED", "submit_ms": 1000 + i, "app_id": f"application_1_{i}"}
               for i, j in enumerate(spec.jobs)]
    w = to_workload(workload_doc("qs", spec, replay_jobs(spec, records, {}, FITTED.launch_s), FITTED), "qs")
    assert [q.path for q in w.cluster.queues] == ["root", "root.a", "root.b"]
    assert {j.id: j.queue for j in w.jobs} == {"a1": "a", "b1": "b"}
