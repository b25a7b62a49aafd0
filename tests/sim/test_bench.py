"""The simulator's benchmark script: its inputs build and its flags are checked (its timings are not asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from yarnctl.sim import bench, plots


def test_the_cost_snapshot_has_the_asks_it_promises() -> None:
    snap = bench.cost_snapshot(asks=40)
    assert len(snap.nodes) == 50 and sum(len(rows) for rows in snap.asks.values()) == 40
    assert snap.nodes["n049"].available == snap.nodes["n049"].capacity  # the empty node stays empty


def test_policy_cost_decides_on_the_node_with_room_and_the_empty_node() -> None:
    report = bench.policy_cost(("fifo",), asks=20, repeat=3)
    assert [c["case"] for c in report["cases"]] == ["node with room", "empty node"]
    assert report["cases"][1]["containers_placed"] > 0


@pytest.mark.parametrize(("argv", "message"), [
    (["--policy", "nope"], "--policy: no policy 'nope'"),
    (["--repeat", "0"], "--repeat: must be at least 1, got 0"),
    (["--backlog", "50"], "--backlog: expected at least two job counts >= 1, got '50'"),
    (["--backlog", "5,x"], "--backlog: expected job counts like 50,500, got '5,x'"),
    (["--backlog", "0,5"], "--backlog: expected at least two job counts >= 1, got '0,5'"),
    (["--backlog", "5,50", "--policy-cost"], "--backlog and --policy-cost measure different things"),
    (["--plot", "x.png"], "--plot draws the --backlog measurement: give --backlog too"),
])
def test_a_bad_flag_is_one_line_and_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        bench.main(argv)
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_the_backlog_case_keeps_more_jobs_in_the_system_at_the_higher_level_and_plots(tmp_path: Path) -> None:
    report = bench.backlog((2, 6), ("fifo",))
    small, large = report["cases"]
    assert (small["jobs"], small["tasks"], large["tasks"]) == (2, 200, 600)  # 90 maps and 10 reduces a job
    assert large["mean_jobs_in_system"] > small["mean_jobs_in_system"] > 0
    assert report["slowdown"]["fifo"] == round(small["tasks_per_s"] / large["tasks_per_s"], 2)
    # the slowdown is the growth of the cost per decision times that of the decisions per task
    assert 0 < small["decisions"] <= small["launches"] and 0 < large["decisions"] <= large["launches"]
    cost, per_task = report["decision_cost_growth"]["fifo"], report["decisions_per_task_growth"]["fifo"]
    assert cost == round(large["us_per_decision"] / small["us_per_decision"], 2)
    assert per_task == round(large["decisions"] / 600 / (small["decisions"] / 200), 2)
    assert cost * per_task == pytest.approx(report["slowdown"]["fifo"], rel=0.05)
    assert 0 < small["decide_us"] < small["us_per_decision"] and 0 < large["decide_us"] < large["us_per_decision"]
    assert report["decide_cost_growth"]["fifo"] == round(large["decide_us"] / small["decide_us"], 2)
    png = plots.backlog_throughput(report, tmp_path / "backlog.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_backlog_case_reports_the_median_of_its_runs() -> None:
    report = bench.backlog((2, 3), ("fifo",), repeat=3)
    for case in report["cases"]:
        assert len(case["walls_s"]) == 3 and case["wall_s"] == sorted(case["walls_s"])[1]
