"""The fidelity benchmark's parts that need no cluster: replaying a real run (yarnctl/bench/replay.py), the
start-up fit, error and ranking arithmetic (yarnctl/bench/fidelity.py).

The "real" runs here are made by the simulator itself under known start-up costs (a stand-in for the
cluster, which tests/integration/test_fidelity_live.py runs for real): the fit must recover them."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from yarnctl.bench import fidelity as fid
from yarnctl.bench.jhist import JobHistory, TaskAttempt, read_jhist
from yarnctl.bench.replay import (job_conf, job_id_of, replay_jobs, sleep_shape, sls_trace, start_costs, to_workload,
                                  workload_doc)
from yarnctl.bench.spec import load_spec
from yarnctl.sim.workload import Startup
from yarnctl.sls.report import read_trace

FIXTURE = Path(__file__).parent / "fixtures" / "sleep-12x1.jhist"


def test_a_sleep_jobs_conf_and_shape_follow_the_cluster_defaults_and_its_own_options() -> None:
    conf = job_conf(["-Dmapreduce.map.memory.mb=2048", "-m", "4"])
    # hadoop-conf/mapred-site.xml's sizes unless the job sets its own; Hadoop's slow start default
    assert (conf["mapreduce.map.memory.mb"], conf["mapreduce.reduce.memory.mb"]) == ("2048", "384")
    assert (conf["yarn.app.mapreduce.am.resource.mb"], conf["mapreduce.job.reduce.slowstart.completedmaps"]) == ("512", "0.05")
    assert sleep_shape(["-m", "12", "-r", "0", "-mt", "15000"]) == {"maps": 12, "reduces": 0, "map_ms": 15000,
                                                                   "reduce_ms": 100}
    assert job_id_of("application_17_0003") == "job_17_0003"


def _records(spec_name: str, submits: list[float]) -> tuple[dict[str, object], ...]:
    spec = load_spec(spec_name)
    return tuple({"job_id": j.id, "app_id": f"application_1_{i + 1:04d}", "final_status": "SUCCEEDED",
                  "submit_ms": 1_000_000 + int(s * 1000), "first_task_ms": None, "finish_ms": None}
                 for i, (j, s) in enumerate(zip(spec.jobs, submits)))


def test_a_sleep_job_is_replayed_from_its_arguments_on_the_runs_own_clock() -> None:
    spec = load_spec("fid-big")
    jobs = replay_jobs(spec, _records("fid-big", [0.4, 5.9, 10.1, 15.0, 21.3]), {}, launch_s=3.0)
    assert [j.submit_s for j in jobs] == pytest.approx([0.0, 5.5, 9.7, 14.6, 20.9])
    b1 = jobs[0]
    assert (b1.am_mb, b1.slowstart, b1.maps.memory_mb, b1.maps.durations) == (512, 0.05, 2048, (10.0,) * 4)
    assert b1.reduces is not None and (b1.reduces.memory_mb, b1.reduces.durations) == (3072, (3.0,))
    w = to_workload(workload_doc("t", spec, jobs, Startup(4.0, 3.0, 0.5)), "t")
    # a replayed job's MR AM takes up its containers on its allocate heartbeat, as the real one did
    assert (len(w.cluster.nodes), w.cluster.startup, w.tasks) == (2, Startup(4.0, 3.0, 0.5, take_up=True), 25)


def test_a_program_that_does_real_work_takes_its_task_times_from_the_history_less_the_launch_cost() -> None:
    h = read_jhist(FIXTURE)
    spec = load_spec("fid-examples")  # e2 is a wordcount: its tasks' times come from the history
    recs = ({"job_id": "e2", "app_id": "application_" + h.job_id.removeprefix("job_"), "final_status": "SUCCEEDED",
             "submit_ms": h.submit_ms},)
    (job,) = replay_jobs(spec, recs, {h.job_id: h}, launch_s=2.0)
    maps = h.of_type("MAP")
    assert len(job.maps.durations) == 12
    assert sorted(job.maps.durations) == pytest.approx(sorted((m.finish_ms - m.start_ms) / 1000 - 2.0 for m in maps))
    # the reduce started during the maps (slow start) and waited for them, as the simulator's does: its work is
    # what it did after the last map, not its whole attempt
    (red,) = h.of_type("REDUCE")
    maps_done = max(m.finish_ms for m in maps)
    assert red.start_ms + 2000 < maps_done < red.finish_ms
    assert job.reduces is not None and job.reduces.durations == pytest.approx(((red.finish_ms - maps_done) / 1000,))


def test_a_job_whose_maps_ran_data_local_asks_for_every_node() -> None:
    """Its splits name the NodeManagers' host (`localhost`, every node of the local cluster), as the example
    programs' file:// splits do: its maps name every node (StageSpec.hosts); a SleepJob's name none."""
    h = read_jhist(FIXTURE)
    spec = load_spec("fid-examples")
    recs = ({"job_id": "e2", "app_id": "application_" + h.job_id.removeprefix("job_"), "final_status": "SUCCEEDED",
             "submit_ms": h.submit_ms},)
    local = dataclasses.replace(h, job_counters={"DATA_LOCAL_MAPS": 12})
    for history, hosts in ((h, ()), (local, ("n0001", "n0002"))):
        (job,) = replay_jobs(spec, recs, {h.job_id: history}, launch_s=2.0)
        w = to_workload(workload_doc("t", spec, [job], Startup(4.0, 3.0, 0.5)), "t")
        assert [s.hosts for s in w.jobs[0].stages] == [hosts, ()]


def _attempt(n: int, start_s: float, finish_s: float, kind: str = "MAP") -> TaskAttempt:
    t = "m" if kind == "MAP" else "r"
    return TaskAttempt(f"attempt_1_0001_{t}_{n:06d}_0", f"task_1_0001_{t}_{n:06d}", kind, int(start_s * 1000),
                       int(finish_s * 1000), "SUCCEEDED", "localhost", f"container_1_0001_01_{n + 2:06d}")


def test_each_attempts_start_cost_is_the_models_at_the_runs_own_concurrency() -> None:
    """Hand-worked: launch 2 s + 4 s per container still starting, shared over 2 NodeManagers."""
    m0, m1, m2, m3 = _attempt(0, 13, 30), _attempt(1, 13, 13.5), _attempt(2, 14, 32), _attempt(3, 40, 50)
    early = _attempt(4, 39, 55, "REDUCE")  # launched at slow start, before the last map (m3) finished at 50 s
    h = JobHistory("job_1_0001", "wc", "root", "default", 0, 10_000, 12_000, 60_000, "SUCCEEDED",
                   (m0, m1, m2, m3, early))
    costs = start_costs({h.job_id: h}, launch_s=2.0, per_concurrent_s=4.0, nodes=2)
    # the AM from 10 s starts alone: 2 s (starting until its JOB_INITED at 12); m0 at 13: nothing starting,
    # 2 s (until 15); m1 at 13: m0 starting, 2 + 4 * 1/2 = 4 s, but it finished at 13.5, so it stops counting
    # then; m2 at 14: m0 only, 4 s. The early reduce at 39 starts alone (2 s, until 41): it waits for the maps,
    # but its JVM starts at launch, as in the simulator, so m3 at 40 starts beside it: 4 s.
    assert costs == {"am:job_1_0001": 2.0, m0.attempt_id: 2.0, m1.attempt_id: 4.0, m2.attempt_id: 4.0,
                     early.attempt_id: 2.0, m3.attempt_id: 4.0}
    # the CPU model: 2 CPU-s per JVM on 1 shared core, no launch cost: the AM alone, 2 s (past its JOB_INITED
    # at 12); m0 at 13 alone, 2 s (until 15); m1 beside m0, 2 x 2 = 4 s (but done at 13.5); m2 at 14 beside
    # m0, 4 s (until 18); the early reduce at 39 alone, 2 s; m3 at 40 beside it, 4 s
    cpu = start_costs({h.job_id: h}, launch_s=0.0, per_concurrent_s=0.0, nodes=2, cpu_s=2.0, cores=1.0)
    assert cpu == {"am:job_1_0001": 2.0, m0.attempt_id: 2.0, m1.attempt_id: 4.0, m2.attempt_id: 4.0,
                   early.attempt_id: 2.0, m3.attempt_id: 4.0}
    # on 2 cores the pair beside each other runs at full speed
    assert set(start_costs({h.job_id: h}, 0.0, 0.0, 2, cpu_s=2.0, cores=2.0).values()) == {2.0}


def test_a_measured_task_is_not_charged_its_crowded_start_twice() -> None:
    h = read_jhist(FIXTURE)
    spec = load_spec("fid-examples")
    recs = ({"job_id": "e2", "app_id": "application_" + h.job_id.removeprefix("job_"), "final_status": "SUCCEEDED",
             "submit_ms": h.submit_ms},)
    (plain,) = replay_jobs(spec, recs, {h.job_id: h}, launch_s=2.0)
    (crowded,) = replay_jobs(spec, recs, {h.job_id: h}, launch_s=2.0, per_concurrent_s=1.0)
    costs = start_costs({h.job_id: h}, 2.0, 1.0, spec.nodes)
    maps = h.of_type("MAP")
    assert max(costs[m.attempt_id] for m in maps) > 2.0  # twelve maps start together: some pay for the others
    assert crowded.maps.durations == pytest.approx(
        tuple(max(0.5, (m.finish_ms - m.start_ms) / 1000 - costs[m.attempt_id]) for m in maps))
    assert sum(crowded.maps.durations) < sum(plain.maps.durations)


def test_the_sls_trace_is_one_sls_accepts(tmp_path: Path) -> None:
    spec = load_spec("fid-reduce")
    jobs = replay_jobs(spec, _records("fid-reduce", [0, 5, 10, 15, 20]), {}, launch_s=2.5)
    docs = sls_trace(jobs, nodes=2, launch_s=2.5)
    path = tmp_path / "trace.json"
    path.write_text("\n".join(json.dumps(d) for d in docs))
    trace = read_trace(path)  # the checks SLSRunner would otherwise crash on
    assert [(t.id, t.start_ms, t.tasks) for t in trace][:2] == [("r1", 0, 10), ("r2", 5000, 10)]
    first = docs[0]["job.tasks"]
    # each task lasts its sleep plus the launch cost; maps at SLS's map priority 20, reduces at 10
    assert {(t["container.type"], t["container.priority"], t["container.end.ms"] - t["container.start.ms"])
            for t in first} == {("map", 20, 10_500), ("reduce", 10, 10_500)}
    assert {t["container.host"] for t in first} == {"/default-rack/node1", "/default-rack/node2"}


def _fake_run(spec_name: str, label: str, truth: Startup) -> fid.RealRun:
    """A run whose 'real' times are the simulator's under `truth` (the cluster's stand-in)."""
    spec = load_spec(spec_name)
    records = _records(spec_name, [j.submit_s for j in spec.jobs])
    blank = fid.RealRun(spec_name, label, spec, records, {})
    sim = fid.sim_times(fid.simulate_run(blank, truth))
    full = tuple({**r, "first_task_ms": r["submit_ms"] + int(1000 * sim[str(r["job_id"])].wait_s),  # type: ignore[operator]
                  "finish_ms": r["submit_ms"] + int(1000 * sim[str(r["job_id"])].completion_s)}  # type: ignore[operator]
                 for r in records)
    return fid.RealRun(spec_name, label, spec, full, {})


def test_the_fit_recovers_the_start_up_costs_that_made_the_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fid, "GRID_AM_S", (2.0, 4.0))
    monkeypatch.setattr(fid, "GRID_LAUNCH_S", (1.0, 3.0, 5.0))
    monkeypatch.setattr(fid, "GRID_PER_CONCURRENT_S", (0.0, 0.5, 1.0))
    truth = Startup(4.0, 3.0, 0.5)
    runs = [_fake_run(m, "native-fifo", truth) for m in ("fid-wide", "fid-mixed")]
    fitted, score = fid.fit_startup(runs)
    assert fitted == truth and score < 0.002  # only the ms rounding of the records is left
    # and a different truth is told apart: no launch cost at all
    other = [_fake_run("fid-wide", "native-fifo", Startup(2.0, 1.0, 0.0))]
    assert fid.fit_startup(other)[0] == Startup(2.0, 1.0, 0.0)


def test_the_cpu_models_fit_recovers_its_costs_and_every_candidate_is_a_valid_workload(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`--model cpu`: runs made under a client's and an AM's CPU are told apart from runs made without them."""
    from yarnctl.bench.replay import startup_doc
    from yarnctl.sim.workload.parse import Parser

    grid = fid.model_grid("cpu")
    assert len(grid) == 2880 and all(st.launch_shared and st.launch_cores > 0 for st in grid)
    assert all(Parser("t", 0).startup(startup_doc(st)) == st for st in grid)  # what a replay writes is what was fitted
    with pytest.raises(ValueError, match="nope: no such start-up model; known: linear, cpu"):
        fid.model_grid("nope")
    monkeypatch.setattr(fid, "GRID_CPU", {"am_s": (1.0, 3.0), "launch_s": (1.0,), "launch_cpu_s": (2.0,),
                                          "am_cpu_s": (0.0, 3.0), "client_cpu_s": (0.0, 3.0), "launch_cores": (1.5,)})
    truth = Startup(am_s=1.0, launch_s=1.0, launch_cpu_s=2.0, am_cpu_s=3.0, client_cpu_s=3.0, launch_cores=1.5,
                    launch_shared=True)
    runs = [_fake_run(m, "native-fifo", truth) for m in ("fid-wide", "fid-mixed")]
    fitted, score = fid.fit_startup(runs, grid=fid.model_grid("cpu"))
    assert fitted == truth and score < 0.002
    quiet = dataclasses.replace(truth, am_s=3.0, am_cpu_s=0.0, client_cpu_s=0.0)
    assert fid.fit_startup([_fake_run("fid-wide", "native-fifo", quiet)], grid=fid.model_grid("cpu"))[0] == quiet
    assert fid.describe(fid.costs(truth)) == ("AM 1 s, launch 1 s, 0 s per start, JVM 2 CPU-s, AM start-up 3 CPU-s, "
                                              "client 3 CPU-s, on 1.5 cores")
    assert fid.describe(fid.costs(Startup(10.0, 3.0, 3.0))) == "AM 10 s, launch 3 s, 3 s per start"


def test_bench_fidelity_startup_as_key_value_pairs_and_its_bad_input(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """--startup KEY=VALUE goes through the workload parser: each mistake is one line naming it, exit 2."""
    from yarnctl.cli.main import main

    args = ["bench", "fidelity", "--out", str(tmp_path), "--no-sls", "--no-plots", "--mix", "fid-big"]
    for bad, why in (("am_s=1,launch_cpu_s=2", "cluster.startup.launch_cores: launch_cpu_s needs the cores"),
                     ("am_s=1,bogus=2", "cluster.startup.bogus: unknown field"),
                     ("am_s=x", "am_s: expected a number, got 'x'"),
                     ("am_s", "expected three numbers AM_S,LAUNCH_S,PER_S"),
                     ("=3", "expected KEY=VALUE, got '=3'"),
                     ("client_cpu_s=2,launch_cores=2", "it needs launch_shared: true"),
                     ("am_s=1,am_s=2", "am_s given twice"),
                     ("am_s=inf", "cluster.startup.am_s: expected a finite number of at most 1e+15, got inf"),
                     ("launch_cores=1,am_cpu_s=inf", "cluster.startup.am_cpu_s: expected a finite number"),
                     ("nan,1,1", "cluster.startup.am_s: expected a number, got nan"),
                     ("-1,2,3", "cluster.startup.am_s: expected a number >= 0"),
                     ("launch_shared=yes", "cluster.startup.launch_shared: expected true or false, got 'yes'"),
                     ("am_s=1,take_up=false", "take_up is always on in a replay"),
                     ("1,2,3,4", "expected three numbers AM_S,LAUNCH_S,PER_S")):
        assert main([*args, f"--startup={bad}"]) == 2
        err = capsys.readouterr().err
        assert why in err and len(err.strip().splitlines()) == 1, err
    assert main([*args, "--startup=4,3,0.5", "--model", "cpu"]) == 2
    assert "--model cpu: nothing to fit with --startup given" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "fidelity", "--model", "quadratic"])
    assert exit_.value.code == 2 and "invalid choice: 'quadratic'" in capsys.readouterr().err


def test_near_best_gives_the_ranges_of_the_candidates_as_good_as_the_fit() -> None:
    scores = [(0.120, Startup(10.0, 3.0, 3.0)), (0.105, Startup(4.0, 2.0, 3.0)), (0.114, Startup(20.0, 1.0, 3.0)),
              (0.116, Startup(2.0, 8.0, 0.5)), (0.105, Startup(6.0, 5.0, 3.0))]
    assert fid.best_fit(scores) == (Startup(4.0, 2.0, 3.0), 0.105)  # the first of two equals: grid order decides
    near = fid.near_best(scores)  # within 0.01 of 0.105: the two best and the 0.114 one, not 0.116 or 0.120
    assert near == {"within": 0.01, "candidates": 3, "am_s": [4.0, 20.0], "launch_s": [1.0, 5.0],
                    "launch_per_concurrent_s": [3.0, 3.0]}
    from yarnctl.fidelity.suite import near_ranges
    assert near_ranges(near) == "AM 4-20 s, launch 1-5 s, 3 s per start"


def test_errors_rankings_and_pairs_by_hand() -> None:
    e = fid.JobError("m", "s", "j", fid.JobTimes(10.0, 50.0), fid.JobTimes(12.0, 45.0), None)
    assert (e.error("sim", "wait_s"), e.error("sim", "completion_s"), e.error("sls", "wait_s")) == (0.2, 0.1, None)
    assert fid.percentile([0.1, 0.2, 0.3, 0.4], 0.5) == pytest.approx(0.25)
    assert fid.percentile([0.1, 0.2, 0.3, 0.4, 1.0], 0.9) == pytest.approx(0.76)
    assert fid.percentile([], 0.5) is None
    real = {"a": 100.0, "b": 103.0, "c": 150.0}  # a and b within 5%: not a clear pair
    assert fid.ranking(real) == ["a", "b", "c"]
    assert fid.rank_agreement(real, {"a": 90.0, "b": 80.0, "c": 200.0}) == (2, 2)
    assert fid.rank_agreement(real, {"a": 160.0, "b": 80.0, "c": 120.0}) == (1, 2)
    assert fid.ranking({"x": 5.0, "w": 5.0, "v": None}) == ["w", "x"]  # ties by name, no value left out


def test_a_call_is_a_pair_the_prediction_puts_apart_and_the_real_cluster_judges_it() -> None:
    real = {"a": 100.0, "b": 103.0, "c": 150.0, "d": 60.0, "e": None}
    # every pair with a real value is a call (predicted more than 5% apart): a<c, b<c and d<c alike; a<d and b<d
    # reversed (really d 60 first); a<b really within 5%. The pairs with e are not counted: it has no real value
    pred = {"a": 1.0, "b": 1.2, "c": 3.0, "d": 2.0, "e": 9.0}
    assert fid.called_pairs(real, pred) == (3, 2, 1)
    # a prediction within 5% is no call, whichever way it leans
    assert fid.called_pairs({"a": 100.0, "b": 200.0}, {"a": 1.04, "b": 1.0}) == (0, 0, 0)
    assert fid.called_pairs({"a": 100.0, "b": 200.0}, {"a": 1.06, "b": 1.0}) == (0, 1, 0)
    assert fid.called_pairs({"a": 100.0, "b": 200.0}, {"a": 1.0, "b": 1.06}) == (1, 0, 0)
    assert fid.called_pairs({"a": 100.0, "b": 200.0}, {"a": 1.0, "b": None}) == (0, 0, 0)  # nothing predicted
    assert fid.called_pairs({"a": 100.0, "b": 200.0}, {"a": 1.0}) == (0, 0, 0)


def test_only_pairs_every_round_orders_alike_count_as_repeatable() -> None:
    first = {"a": 100.0, "b": 120.0, "c": 150.0, "d": 60.0}
    second = {"a": 100.0, "b": 103.0, "c": 90.0, "d": 50.0}
    # a<b: second round within 5%; a<c then c<a; d first in both, by more than 5%: (a,d), (b,d), (c,d) repeat
    assert fid.repeatable_agreement([first, second], {"a": 1.0, "b": 2.0, "c": 3.0, "d": 0.5}) == (3, 3)
    assert fid.repeatable_agreement([first, second], {"a": 1.0, "b": 0.1, "c": 3.0, "d": 0.5}) == (2, 3)
    assert fid.repeatable_agreement([first, {**second, "d": None}], {"a": 1.0, "b": 2.0, "c": 3.0, "d": 0.5}) == (0, 0)
    assert fid.repeatable_agreement([first], {"a": 1.0, "b": 2.0, "c": 3.0, "d": 0.5}) == fid.rank_agreement(
        first, {"a": 1.0, "b": 2.0, "c": 3.0, "d": 0.5})
    assert fid.repeatable_agreement([], {"a": 1.0}) == (0, 0)


def test_a_repeatable_pair_is_within_reach_when_the_ranges_let_it_be_ordered_alike() -> None:
    first = {"a": 100.0, "b": 120.0, "c": 150.0, "d": 60.0}
    second = {"a": 100.0, "b": 103.0, "c": 90.0, "d": 50.0}
    # as above, only (a,d), (b,d), (c,d) repeat, each with d first
    low, high = {"a": 70.0, "b": 80.0, "c": 90.0, "d": 75.0}, {"a": 72.0, "b": 85.0, "c": 95.0, "d": 88.0}
    # d's lowest 75 is below b's highest 85 and c's 95, but not a's 72
    assert fid.repeatable_within([first, second], low, high) == (2, 3)
    assert fid.repeatable_within([first, second], {**low, "d": 71.0}, high) == (3, 3)
    assert fid.repeatable_within([first, second], {k: v for k, v in low.items() if k != "c"}, high) == (1, 2)
    assert fid.repeatable_within([], low, high) == (0, 0)
    # a range of one point is a single prediction: the same count as repeatable_agreement
    point = {"a": 1.0, "b": 0.1, "c": 3.0, "d": 0.5}
    assert fid.repeatable_within([first, second], point, point) == fid.repeatable_agreement([first, second], point)


def test_phase_draws_step_the_second_of_two_nodes_and_draw_the_rest_the_same_every_time() -> None:
    assert fid.phase_draws(2, 4) == [(0.0, 0.0), (0.0, 0.25), (0.0, 0.5), (0.0, 0.75)]
    assert fid.phase_draws(1, 4) == [(0.0,)] and fid.phase_draws(0, 4) == []
    five = fid.phase_draws(5, 3)
    assert five == fid.phase_draws(5, 3) and len(five) == 3 and len(set(five)) == 3
    assert all(len(p) == 5 and p[0] == 0.0 and all(0 <= x < 1 for x in p) for p in five)


def test_each_real_scheduler_is_simulated_by_its_counterpart() -> None:
    # FifoScheduler has no AM limit; the local CapacityScheduler allows AMs half the queue; both stock
    # Capacity and Fair reserve nodes; shim policies are themselves
    assert fid.counterpart("native-fifo") == ("fifo", {}, 1.0)
    assert fid.counterpart("native-capacity") == ("capacity", {"max_am_resource_percent": 0.5, "reservations": True},
                                                  None)
    assert fid.counterpart("native-fair") == ("fair", {"reservations": True}, None)
    assert fid.counterpart("dress") == ("dress", {}, None)
    conf = (Path(__file__).parents[2] / "hadoop-conf" / "capacity-scheduler.xml").read_text()
    assert "<value>0.5</value>" in conf.split("maximum-am-resource-percent")[1][:80]


def test_a_kept_file_that_is_not_a_bench_json_is_one_clear_error(tmp_path: Path) -> None:
    from yarnctl.errors import ClusterError

    path = tmp_path / "bench.json"
    for text in ("{bad", '{"runs": 3}', '{"other": []}', '{"runs": [{"label": "fifo"}]}'):
        path.write_text(text)
        with pytest.raises(ClusterError, match="not a bench.json of `yarnctl bench mr`"):
            fid.kept_runs(path)
