"""Table III in the simulator: a run's completed tasks replayed through OPERA's classifier (Sec. III-B)."""

from __future__ import annotations

from yarnctl.engine import Engine
from yarnctl.estimation.classifier import SHORT, replay
from yarnctl.policies.opera import Opera, OperaConfig
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.opera_classifier import finished_tasks, main
from yarnctl.sim.workload import parse_workload

# maps are short (20 s), the reduces long (90 s, and they wait for the maps): the classifier must
# learn both from the run, starting from nothing
MR = """
cluster: {nodes: 2, node: {memory_mb: 8192, vcores: 8}}
defaults: {am: {memory_mb: 1024, vcores: 1}}
jobs:
  - {id: a1, submit_s: 0, type: mapreduce, name: sort,
     maps: {tasks: 30, resource: {memory_mb: 1024, vcores: 2}, duration: 20, usage: {cpu: 0.3, memory: 0.5}},
     reduces: {tasks: 2, resource: {memory_mb: 1024, vcores: 1}, duration: 90}}
  - {id: a2, submit_s: 60, type: mapreduce, name: sort,
     maps: {tasks: 30, resource: {memory_mb: 1024, vcores: 2}, duration: 20, usage: {cpu: 0.3, memory: 0.5}},
     reduces: {tasks: 2, resource: {memory_mb: 1024, vcores: 1}, duration: 90}}
"""


def test_replay_counts_every_completed_task_with_the_simulators_times():
    policy = Opera(OperaConfig(relief="neutral"))
    run = SimCluster(parse_workload(MR, "t3.yaml", 0), Engine(policy)).run()
    tasks = finished_tasks(run, policy)
    done = {r.id: r for r in run.containers if r.outcome == "done"}
    assert all((t.start_s, t.end_s) == (done[t.id].start_s, done[t.id].end_s) for t in tasks)
    # the policy learns at 5 s ticks, and there is none after the last job ends: only those are missing
    missing = [done[i] for i in set(done) - {t.id for t in tasks}]
    assert all(r.end_s > run.end_s - 5.0 for r in missing) and len(missing) <= 3
    m = replay(tasks)
    assert m.actual(SHORT) == 60  # every map: 20 s
    # the first maps are unknown (long); once some have ended, the second job's maps are all short
    assert 30 <= m.short_as_short < 60 and m.short_as_long > 0
    assert m.recall(SHORT) == m.short_as_short / 60

def test_main_prints_table3(capsys):
    assert main(["--workload", "opera-mr6", "--relief", "aggressive"]) == 0
    out = capsys.readouterr().out
    assert "fact" in out and "accuracy" in out and "aggressive" in out
