"""The simulator's benchmark script: its inputs build and its flags are checked (its timings are not asserted)."""

from __future__ import annotations

import pytest

from yarnctl.sim import bench


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
])
def test_a_bad_flag_is_one_line_and_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        bench.main(argv)
    assert stop.value.code == 2 and message in capsys.readouterr().err
