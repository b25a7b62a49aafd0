"""`yarnctl sweep`: grids and seeds expanded, cells kept under content hashes, resumed, reported with intervals."""

from __future__ import annotations

import json
import logging
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from yarnctl.cli.main import main
from yarnctl.errors import ConfigError, YarnctlError
from yarnctl.sim.workload import load_workload
from yarnctl.sweep.run import keyed_cells, run_sweep
from yarnctl.sweep.spec import Cell, RunOptions, cell_key, load_spec, parse_seeds, parse_values, resolve_baseline
from yarnctl.sweep.stats import baseline_label, cell_means, interval, margin_side, paired_differences, report_table

ROOT = Path(__file__).resolve().parents[2]
SMALL = dict(workloads=["haste-mixed1"], params=["ffd-dp.memory_weight=0.5,1,2", "dress.initial_reserve=0.1:0.3:0.1"],
             seeds="0:2")


@pytest.mark.parametrize("text,values", [
    ("0.1:0.5:0.1", (0.1, 0.2, 0.3, 0.4, 0.5)),
    ("1:7:3", (1, 4, 7)),
    ("log:0.01:1:3", (0.01, 0.1, 1.0)),
    ("0.1,0.2,fifo", (0.1, 0.2, "fifo")),
    ([1, 2], (1, 2)),
    (0.3, (0.3,)),
])
def test_values(text: object, values: tuple[object, ...]) -> None:
    assert parse_values(text, "x") == values


@pytest.mark.parametrize("text,message", [
    ("0.5:0.1:0.1", "x: '0.5:0.1:0.1': empty range (STOP < START)"),
    ("0.1:0.5:0", "the step must be > 0"),
    ("0.1:0.5", "expected START:STOP:STEP"),
    ("log:0:1:3", "a log range needs START and STOP > 0"),
    ("log:1:10:0", "empty range"),
    ("a:b:c", "'a' is not a number"),
    ([], "x: empty range"),
    # refused before they are built: the first overflowed math.floor, the second filled the memory
    ("0:1e300:1e-10", "x: '0:1e300:1e-10': inf values; at most 1000000"),
    ("log:1:2:100000000000", "x: 'log:1:2:100000000000': 1e.11 values; at most 1000000"),
])
def test_bad_values_name_the_parameter(text: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_values(text, "x")


def test_seeds() -> None:
    assert parse_seeds("0:3") == (0, 1, 2, 3)
    assert parse_seeds(3) == (0, 1, 2)
    assert parse_seeds("3") == parse_seeds(" 3 ") == (0, 1, 2)  # `--seeds 3` is a count too (it ran seed 3 alone)
    assert parse_seeds("3:3") == (3,)
    assert parse_seeds("4,7") == (4, 7)
    for bad, message in (("3:1", "empty range"), (0, "at least one seed"), ("0", "at least one seed"),
                         ("1,1", "listed twice"), ("a", "not an integer"), (True, "expected FIRST:LAST"),
                         ("0:99999999999", "1e\\+11 values; at most"), ("99999999999", "1e\\+11 values; at most"),
                         ("²", "not an integer")):  # a digit to str.isdigit, not to int()
        with pytest.raises(ConfigError, match=message):
            parse_seeds(bad)


def test_a_spec_expands_into_every_cell_in_a_fixed_order(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text("workloads: [haste-mixed1]\npolicies:\n  fifo: {}\n  dress: {initial_reserve: '0.1:0.2:0.1'}\n"
                 "seeds: 2\nbaseline: fifo\n")
    spec = load_spec(f, params=["ffd-dp.memory_weight=1,2"])
    cells = spec.cells()
    assert len(cells) == (1 + 2 + 2) * 2
    assert cells[0] == Cell("haste-mixed1", "fifo", (), 0)
    assert [c.label for c in cells[2:6:2]] == ["dress[initial_reserve=0.1]", "dress[initial_reserve=0.2]"]
    assert cells[-1] == Cell("haste-mixed1", "ffd-dp", (("memory_weight", 2),), 1)
    assert spec.baseline == "fifo" and spec.name == "s"


@pytest.mark.parametrize("doc,flags,message", [
    ("workloads: [haste-mixed1]\npolicies: {nosuch: {}}\n", {}, "unknown policy 'nosuch'"),
    ("workloads: [haste-mixed1]\npolicies: {dress: {nosuch: 1}}\n", {}, "policy dress: unknown parameter 'nosuch'"),
    ("workloads: [haste-mixed1]\npolicies: {fifo: {}}\nbaseline: fair\n", {}, "baseline 'fair': no such policy or cell; cells: fifo"),
    ("workloads: [haste-mixed1]\npolicies: {fair: {reservations: [false]}}\nbaseline: fair[reservations=True]\n", {},
     r"baseline 'fair\[reservations=True\]': no such policy or cell; cells: fair\[reservations=False\]"),
    # `sweep report` could not tell which of the two the baseline is: the run refuses it first
    ("workloads: [haste-mixed1]\npolicies: {fair: {reservations: [false, true]}}\nbaseline: fair\n", {},
     r"baseline 'fair' was swept over 2 parameter sets; name one: fair\[reservations=False\], fair\[reservations=True\]"),
    ("workloads: [haste-mixed1]\npolicies: {fair: {}}\n", {"params": ["capacity.reservations=false,true"],
                                                           "baseline": "capacity"}, "^--baseline 'capacity' was swept over 2"),
    # the file's baseline named one cell until --param swept its policy: the flag is what to change
    ("workloads: [haste-mixed1]\npolicies: {capacity: {}}\nbaseline: capacity\n",
     {"params": ["capacity.reservations=false,true"]},
     r"s.yaml: baseline 'capacity' was swept over 2 .* \(--param swept it: give --baseline CELL\)$"),
    # ... but not when the file swept it itself and --param touched another policy
    ("workloads: [haste-mixed1]\npolicies: {fair: {reservations: [false, true]}}\nbaseline: fair\n",
     {"params": ["capacity.reservations=true"]}, r"baseline 'fair' was swept over 2 parameter sets; name one: [^(]*$"),
    # an alias named like a cell would merge its cells with that cell's in the report
    ("workloads: [haste-mixed1]\npolicies:\n  fair: {reservations: [false, true]}\n  'fair[reservations=True]': {policy: drf}\n",
     {}, r"policies.fair\[reservations=True\]: an alias's name may not hold '\[' or '\]'"),
    ("policies: {fifo: {}}\n", {}, "no workload"),
    ("workloads: [haste-mixed1]\n", {}, "no policy"),
    ("workloads: [haste-mixed1]\npolicies: {fifo: {}}\nseed: 3\n", {}, "unknown key 'seed'"),
    ("workloads: [haste-mixed1\n", {}, "malformed YAML"),
    ("workloads: [haste-mixed1]\npolicies: {fifo: {}}\n", {"params": ["dress.initial_reserve"]},
     "expected POLICY.KEY=VALUES"),
    # a value between the ends, and two values that are wrong only together, failed cells into the run
    ("workloads: [haste-mixed1]\npolicies: {dress: {theta: [0.5, 7, 0.1]}}\n", {}, "theta: must be in \\[0, 1\\], got 7"),
    ("workloads: [haste-mixed1]\npolicies: {ffd-dp: {memory_weight: [0, 1], vcores_weight: [1, 0]}}\n", {},
     "cannot both be 0"),
])
def test_bad_specs_are_one_clear_error(tmp_path: Path, doc: str, flags: dict[str, list[str]], message: str) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(doc)
    with pytest.raises(ConfigError, match=message):
        load_spec(f, **flags)  # type: ignore[arg-type]


@pytest.mark.parametrize("value,message", [
    (".nan", "expected a number, got nan"),
    ("-5", "expected a number > 0, got -5"),
    ("0", "expected a number > 0, got 0"),
    ("-.inf", "expected a finite number of at most 1e+15, got -inf"),
    ("'600'", "expected a number, got '600'"),
])
def test_max_time_s_is_a_number_of_seconds(tmp_path: Path, value: str, message: str) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(f"workloads: [haste-mixed1]\npolicies: [fifo]\nmax_time_s: {value}\n")
    with pytest.raises(YarnctlError) as e:
        load_spec(f)
    assert str(e.value) == f"{f}: max_time_s: {message}"
    for given, cap in (("600", 600.0), ("null", math.inf), (".inf", math.inf)):  # .inf: no cap, as --max-time inf
        f.write_text(f"workloads: [haste-mixed1]\npolicies: [fifo]\nmax_time_s: {given}\n")
        assert load_spec(f).options.max_time_s == cap


def test_cell_keys_follow_content_not_spelling() -> None:
    a = Cell("w", "dress", (("initial_reserve", 1.0),), 0)
    b = Cell("w", "dress", (("initial_reserve", 1),), 0)
    o = RunOptions()
    assert cell_key(a, "h", "c", o) == cell_key(b, "h", "c", o)
    assert cell_key(a, "h", "c", o) != cell_key(a, "h2", "c", o)  # the workload file changed
    assert cell_key(a, "h", "c", o) != cell_key(a, "h", "c2", o)  # the simulator changed
    assert cell_key(a, "h", "c", o) != cell_key(Cell("w", "dress", a.params, 1), "h", "c", o)
    assert cell_key(a, "h", "c", o) != cell_key(a, "h", "c", RunOptions(3600.0))
    assert cell_key(a, "h", "c", o) != cell_key(a, "h", "c", RunOptions(sharing_settle_s=300.0))  # more metrics


def test_interval_is_students_t_and_a_seeded_bootstrap() -> None:
    xs = np.array([10.0, 12.0, 11.0, 15.0])
    lo, hi = interval(xs)
    half = st.t.ppf(0.975, 3) * xs.std(ddof=1) / math.sqrt(4)
    assert (lo, hi) == pytest.approx((xs.mean() - half, xs.mean() + half))
    b1, b2 = interval(xs, "bootstrap"), interval(xs, "bootstrap")
    assert b1 == b2 and 10.0 <= b1[0] < xs.mean() < b1[1] <= 15.0
    assert all(math.isnan(v) for v in interval(np.array([3.0])))
    assert interval(np.array([2.0, 2.0, 2.0])) == (2.0, 2.0)


def test_paired_differences_use_the_same_seeds_and_mark_significance() -> None:
    df = pd.DataFrame({"workload": ["w"] * 9, "seed": [0, 1, 2] * 3,
                       "policy": ["fifo"] * 3 + ["a"] * 3 + ["b"] * 3, "label": ["fifo"] * 3 + ["a"] * 3 + ["b"] * 3,
                       "m": [10, 20, 30, 11, 21, 31.5, 12, 18, 30]})
    d = paired_differences(df, "m", "fifo").set_index("label")
    # a: +1, +1, +1.5 on each seed: a small but consistent gap, significant; b: +2, -2, 0, not
    assert d.loc["a", "diff"] == pytest.approx(7 / 6) and bool(d.loc["a", "significant"])
    assert d.loc["b", "diff"] == pytest.approx(0.0) and not bool(d.loc["b", "significant"])
    assert d.loc["a", "pairs"] == 3
    means = cell_means(df, "m").set_index("label")
    assert means.loc["fifo", "mean"] == 20 and means.loc["fifo", "n"] == 3
    with pytest.raises(ConfigError, match="no such policy or cell"):
        baseline_label(df, "fair")


def test_a_significant_gap_within_the_simulators_margin_says_so() -> None:
    """a is 2% above fifo on every seed, b 10%: both significant, only b beyond the 5% the simulator calls."""
    base = [100.0, 101.0, 102.0]
    df = pd.DataFrame({"workload": ["w"] * 9, "seed": [0, 1, 2] * 3,
                       "policy": ["fifo"] * 3 + ["a"] * 3 + ["b"] * 3, "label": ["fifo"] * 3 + ["a"] * 3 + ["b"] * 3,
                       "m": base + [102.0, 103.1, 104.2] + [110.0, 111.5, 113.0]})
    diffs = paired_differences(df, "m", "fifo")
    assert diffs["significant"].all()
    table = report_table(cell_means(df, "m"), diffs, "m")
    rows = {line.split("|")[1].strip(): line for line in table.splitlines() if line.startswith("| ")}
    assert rows["a"].endswith("| yes, within 5% |"), rows["a"]
    assert rows["b"].endswith("| **yes** |"), rows["b"]


def test_a_gap_is_within_the_margin_only_when_all_its_interval_is() -> None:
    """The relative interval, not its mean, places a gap against the 5% margin; exactly 5% is within it."""
    assert margin_side(-0.032, -0.048, -0.015) == "within"
    assert margin_side(-0.050, -0.074, -0.026) == "at"  # feedback at alpha 0.5: its mean at 5%, its interval past it
    assert margin_side(0.050, 0.044, 0.057) == "at"
    assert margin_side(0.08, 0.051, 0.11) == "beyond" and margin_side(-0.08, -0.11, -0.051) == "beyond"
    assert margin_side(0.05, 0.05, 0.05) == "within" and margin_side(-0.05, math.nan, math.nan) == "within"
    assert margin_side(0.06, math.nan, math.nan) == "beyond"  # one pair: no interval, its point is all there is
    assert margin_side(math.nan, math.nan, math.nan) == "beyond"  # from a zero baseline: no relative margin
    assert margin_side(0.01, -0.07, 0.09) == "at"  # an interval across both margins: it may be a gap either way


def test_a_significant_gap_whose_interval_spans_the_margin_says_so() -> None:
    """a is 4%, 5% and 6% above fifo on the seeds: significant, its interval reaching both sides of 5%."""
    base = [100.0, 100.0, 100.0]
    df = pd.DataFrame({"workload": ["w"] * 6, "seed": [0, 1, 2] * 2,
                       "policy": ["fifo"] * 3 + ["a"] * 3, "label": ["fifo"] * 3 + ["a"] * 3,
                       "m": base + [104.0, 105.0, 106.0]})
    diffs = paired_differences(df, "m", "fifo")
    x = diffs.set_index("label").loc["a"]
    assert bool(x["significant"]) and x["rel_lo"] < 0.05 < x["rel_hi"]
    rows = [line for line in report_table(cell_means(df, "m"), diffs, "m").splitlines() if line.startswith("| a ")]
    assert rows[0].endswith("| yes, at the 5% margin |"), rows


def test_a_gap_the_seeds_never_vary_is_one_sample_not_a_significant_one() -> None:
    """Two cells that each read the same on all three seeds (a workload the seed does not change): the gap
    has no spread, its interval is the gap itself, and three seeds of it are still one run."""
    df = pd.DataFrame({"workload": ["w"] * 9, "seed": [0, 1, 2] * 3,
                       "policy": ["fifo"] * 3 + ["a"] * 3 + ["b"] * 3, "label": ["fifo"] * 3 + ["a"] * 3 + ["b"] * 3,
                       "m": [10, 10, 10, 12, 12, 12, 11, 12, 11.5]})
    d = paired_differences(df, "m", "fifo").set_index("label")
    assert (d.loc["a", "lo"], d.loc["a", "hi"]) == (2.0, 2.0)
    assert not bool(d.loc["a", "varied"]) and not bool(d.loc["a", "significant"])
    # b varies over the seeds while fifo does not: a real sample, and its +1, +2, +1.5 is significant
    assert bool(d.loc["b", "varied"]) and bool(d.loc["b", "significant"])
    table = report_table(cell_means(df, "m"), paired_differences(df, "m", "fifo"), "m")
    row = next(line for line in table.splitlines() if line.startswith("| a |"))
    assert row.endswith("| no (the same on every seed) |"), row
    # a metric constant in cells whose other metrics move with the seed (failures 1 against 0 on every seed): the seeds
    # did vary the runs, so that gap is a real sample, significant
    df["failed"] = [0, 0, 0, 1, 1, 1, 0, 0, 0]
    df["m"] = [10, 11, 12, 12, 12.5, 13, 11, 12, 11.5]
    d = paired_differences(df, "failed", "fifo").set_index("label")
    assert bool(d.loc["a", "varied"]) and bool(d.loc["a", "significant"])
    assert not bool(d.loc["b", "significant"])  # no gap at all
    with pytest.raises(ConfigError, match="--metric 'nope': not in the results"):
        cell_means(df, "nope")


def test_run_keeps_cells_and_a_rerun_runs_nothing(tmp_path: Path) -> None:
    spec = load_spec(None, **SMALL)  # type: ignore[arg-type]
    first = run_sweep(spec, tmp_path, workers=2)
    assert (first.cells, first.kept, first.ran, first.failed) == (18, 0, 18, ())
    table = pd.read_csv(tmp_path / "results.csv")
    assert len(table) == 18 and table["key"].is_unique
    assert set(table["label"]) == {f"ffd-dp[memory_weight={v}]" for v in ("0.5", "1", "2")} | {
        f"dress[initial_reserve={v}]" for v in ("0.1", "0.2", "0.3")}
    again = run_sweep(spec, tmp_path, workers=2)
    assert (again.kept, again.ran) == (18, 0)
    extended = run_sweep(load_spec(None, **{**SMALL, "seeds": "0:3"}), tmp_path, workers=2)  # type: ignore[arg-type]
    assert (extended.cells, extended.kept, extended.ran) == (24, 18, 6)


def test_a_sweep_killed_half_way_resumes_with_only_the_missing_cells(tmp_path: Path) -> None:
    """SIGKILL the `sweep run` process once half the cells are kept; the re-run runs exactly the rest."""
    argv = [sys.executable, "-m", "yarnctl.cli.main", "sweep", "run", "--workload", "dress-mr20",
            "--param", "dress.initial_reserve=0.1:0.6:0.1", "--seeds", "0:1", "--workers", "1", "--out", str(tmp_path)]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    cells = tmp_path / "cells"
    deadline = time.monotonic() + 120
    while len(list(cells.glob("*.json")) if cells.is_dir() else []) < 6:
        assert proc.poll() is None and time.monotonic() < deadline, "the sweep ended before half its cells"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    kept = len(list(cells.glob("*.json")))
    assert 6 <= kept < 12
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"12 cells: {kept} kept from before, {12 - kept} run now" in done.stdout
    assert len(pd.read_csv(tmp_path / "results.csv")) == 12


def test_a_corrupt_kept_cell_is_named_and_runs_again(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    spec = load_spec(None, workloads=["haste-mixed1"], policies=["fifo"], seeds="0:1")
    run_sweep(spec, tmp_path, workers=1)
    table = pd.read_csv(tmp_path / "results.csv").drop(columns=["cell_s"])
    cell = sorted((tmp_path / "cells").glob("*.json"))[0]
    for text, problem in (("garbage", "unreadable (Expecting value"),
                          ('{"row": 5}', f"not the kept cell {cell.stem}"),
                          (json.dumps({"key": cell.stem, "row": {"makespan_s": "abc"}}),
                           "row.makespan_s: expected a number or null, got 'abc'")):
        cell.write_text(text)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="yarnctl.sweep.store"):
            again = run_sweep(spec, tmp_path, workers=1)
        assert (again.kept, again.ran, again.failed) == (1, 1, ())
        said = [r.getMessage() for r in caplog.records]
        assert len(said) == 1 and said[0].startswith(f"{cell}: {problem}"), said
        assert said[0].endswith("; running its cell again")
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "results.csv").drop(columns=["cell_s"]), table)


def test_report_refuses_a_corrupt_sweep_json_a_cell_that_is_no_number_and_a_column_that_is_no_metric(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_sweep(load_spec(None, workloads=["haste-mixed1"], policies=["fifo", "fair"], seeds="0:1"), tmp_path, workers=1)
    sweep_json, table = tmp_path / "sweep.json", tmp_path / "results.csv"
    good = table.read_text()

    def report(*argv: str) -> str:
        assert main(["sweep", "report", str(tmp_path), "--no-plot", *argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        return err

    for column in ("policy", "seed", "label", "workload", "key"):
        assert report("--metric", column).startswith(f"error: --metric {column!r}: names the cells, it is not a "
                                                     f"metric; metrics: makespan_s, ")
    sweep_json.write_text("not json")
    assert report().startswith(f"error: {sweep_json}: unreadable (Expecting value")
    sweep_json.write_text("[1]")
    assert report() == f"error: {sweep_json}: expected a mapping, got a list\n"
    sweep_json.unlink()
    df = pd.read_csv(table)
    df["avg_completion_s"] = df["avg_completion_s"].astype(object)
    df.loc[2, "avg_completion_s"] = "abc"
    df.to_csv(table, index=False)
    assert report() == f"error: {table}: line 4, avg_completion_s: not a number: 'abc'\n"
    table.write_text(good)
    assert main(["sweep", "report", str(tmp_path), "--no-plot"]) == 0


def test_cli_errors_are_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv, message in (
        (["sweep", "run", "--workload", "haste-mixed1", "--param", "dress.nosuch=1", "--out", str(tmp_path)],
         "unknown parameter 'nosuch'"),
        (["sweep", "run", "--workload", "haste-mixed1", "--param", "dress.initial_reserve=0.5:0.1:0.1", "--out",
          str(tmp_path)], "dress.initial_reserve: '0.5:0.1:0.1': empty range"),
        (["sweep", "run", "--workload", "nosuch", "--policy", "fifo", "--out", str(tmp_path)], "nosuch: no such file or built-in workload"),
        (["sweep", "run", "--workload", "haste-mixed1", "--policy", "fifo", "--scheduler", "tcp://x:1", "--out",
          str(tmp_path)], "add --executor dask"),
        (["sweep", "report", str(tmp_path / "none")], "no results"),
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err


def test_report_prints_and_writes_the_table_and_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_sweep(load_spec(None, workloads=["haste-mixed1"], policies=["fifo"], params=["ffd-dp.memory_weight=0.5,1"],
                        seeds="0:2", baseline="fifo"), tmp_path, workers=1)
    assert main(["sweep", "report", str(tmp_path), "--metric", "makespan_s"]) == 0
    out = capsys.readouterr().out
    assert "| ffd-dp[memory_weight=0.5] | 3 |" in out and "vs fifo [95% CI]" in out
    for suffix in (".md", ".csv", ".png"):
        assert (tmp_path / f"report-makespan_s{suffix}").stat().st_size > 0


def test_a_sweep_files_baseline_may_be_one_cell_of_a_grid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A baseline naming a cell's label (as `sweep report --baseline` takes) is what the report compares against."""
    f = tmp_path / "s.yaml"
    f.write_text("workloads: [haste-mixed1]\nseeds: 2\nbaseline: ffd-dp[memory_weight=1]\n"
                 "policies:\n  fifo: {}\n  ffd-dp: {memory_weight: [0.5, 1]}\n")
    run_sweep(load_spec(f), tmp_path / "o", workers=1)
    assert main(["sweep", "report", str(tmp_path / "o"), "--metric", "makespan_s", "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "vs ffd-dp[memory_weight=1] [95% CI]" in out and "| ffd-dp[memory_weight=1] | 2 |" in out


def test_run_and_report_take_the_same_baselines() -> None:
    """A policy run only under an alias names the alias's one cell, in the sweep file as in `sweep report`."""
    spec = load_spec(None, workloads=["haste-mixed1"], policies=["fifo"], params=["ffd-dp.memory_weight=0.5,1"],
                     baseline="fifo")
    assert spec.parameter_sets() == [("fifo", "fifo"), ("ffd-dp", "ffd-dp[memory_weight=0.5]"),
                                     ("ffd-dp", "ffd-dp[memory_weight=1]")]
    sets = [("capacity", "static"), ("fifo", "fifo")]
    df = pd.DataFrame({"policy": [p for p, _ in sets], "label": [label for _, label in sets]})
    for name, label in (("capacity", "static"), ("static", "static"), ("fifo", "fifo")):
        assert resolve_baseline(name, sets) == baseline_label(df, name) == label


def test_the_yarn_executor_needs_a_running_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["sweep", "run", "--workload", "haste-mixed1", "--policy", "fifo", "--executor", "yarn",
                 "--cluster-dir", str(tmp_path / "none"), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and f"--executor yarn: no running cluster in {tmp_path / 'none'}" in err, err


def test_the_streaming_task_runs_cells_from_lines_with_or_without_offsets() -> None:
    from yarnctl.sweep.task import decode, encode, run_lines

    cell = Cell("haste-mixed1", "ffd-dp", (("memory_weight", 1),), 2)
    line = encode("k1", cell, RunOptions())
    assert decode(line) == ("k1", cell, RunOptions()) == decode(f"0\t{line}")
    measured = RunOptions(3600.0, sharing_settle_s=300.0)
    assert decode(encode("k3", cell, measured)) == ("k3", cell, measured)
    bad = encode("k2", Cell("nosuch-workload", "fifo", (), 0), RunOptions(10.0))
    out = list(run_lines([f"17\t{line}\n", "\n", bad]))
    assert [o.split("\t")[0] for o in out] == ["k1", "k2"]
    import json
    assert json.loads(out[0].split("\t")[1])["row"]["makespan_s"] > 0
    assert "nosuch-workload" in json.loads(out[1].split("\t")[1])["error"]


# tasks that start light (a quarter of their memory) and then use all of it: usage feedback sees the light
# start, offers the node more than its allowance, and the node's memory overflows when they grow (Sec. IV, V-B)
RAMP = """
cluster: {nodes: 1, node: {memory_mb: 4096, vcores: 16}}
defaults: {am: false}
jobs:
  - id: j
    submit_s: 0
    type: spark
    executors:
      tasks: 12
      resource: {memory_mb: 1024, vcores: 1}
      duration: 60
      usage: {profile: [{at: 0.0, cpu: 0.2, memory: 0.25}, {at: 0.5, cpu: 0.2, memory: 1.0}]}
"""


def test_a_row_counts_oom_kills_over_submitted_tasks(tmp_path: Path) -> None:
    """The damping-factor sweep's measure ([FEEDBACK] Sec. V-C): feedback overfills the node, fifo never does."""
    from yarnctl.sweep.cell import run_cell

    w = tmp_path / "ramp.yaml"
    w.write_text(RAMP)
    fifo = run_cell(Cell(str(w), "fifo", (), 0))
    fb = run_cell(Cell(str(w), "feedback", (("alpha", 0.5),), 0))
    assert fifo["oom_kills"] == 0 and fifo["tasks"] == 12
    assert fb["oom_kills"] > 0 and fb["oom_kill_fraction"] == pytest.approx(fb["oom_kills"] / 12)


def test_the_alpha_sweep_is_a_builtin_sweep_file() -> None:
    spec = load_spec(Path("feedback-alpha"))
    assert spec.workloads == ("feedback-day", "feedback-day+efr") and spec.baseline == "fifo"
    assert len(spec.cells()) == 2 * (1 + 7) * 10
    with pytest.raises(ConfigError, match="no such sweep file or built-in sweep; built-ins: dress-delta, dress-theta, "
                       "feedback-alpha, haste-reservations, hmrf-reservations, opera-reservations, opera-threshold, repro-dress"):
        load_spec(Path("nope"))


@pytest.mark.parametrize("name", sorted(p.stem for p in (ROOT / "yarnctl" / "sweep" / "builtin").glob("*.yaml")))
def test_every_builtin_sweep_expands_with_ten_seeds_and_its_baseline(name: str) -> None:
    """docs/reproduction.md's tables come from these files: each must load, and carry ten seeds and a baseline."""
    spec = load_spec(Path(name))
    assert spec.baseline in {c.alias or c.policy for c in spec.cells()} | {c.label for c in spec.cells()}
    assert sorted({c.seed for c in spec.cells()}) == list(range(10))


def test_grids_refuse_duplicates_and_labels_keep_values_apart(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="x: a value is listed twice"):
        parse_values("1,1.0", "x")
    a, b = (Cell("w", "p", (("k", v),), 0) for v in (0.1234561, 0.1234564))
    assert a.label != b.label  # a report groups by label: close values must not pool
    f = tmp_path / "mine.yaml"
    f.write_text((ROOT / "yarnctl" / "sim" / "builtin" / "haste-mixed1.yaml").read_text())
    spec = load_spec(None, workloads=[str(f.relative_to(Path.cwd())) if f.is_relative_to(Path.cwd()) else str(f)],
                     policies=["fifo"])
    assert spec.workloads == (str(f.resolve()),)  # absolute: YARN tasks run elsewhere


def test_paired_differences_over_partly_overlapping_seeds() -> None:
    """Only the seeds both ran count, for the difference and for the relative change alike."""
    df = pd.DataFrame({"workload": ["w"] * 5, "seed": [0, 1, 2, 0, 1], "policy": ["f"] * 3 + ["a"] * 2,
                       "label": ["f"] * 3 + ["a"] * 2, "m": [10.0, 20.0, 1000.0, 12.0, 22.0]})
    d = paired_differences(df, "m", "f").iloc[0]
    assert d["pairs"] == 2 and d["diff"] == pytest.approx(2.0)
    assert d["rel"] == pytest.approx((2 / 10 + 2 / 20) / 2)  # the mean of the per-seed changes, 20% and 10%
    assert d["rel_lo"] < 0.10 and d["rel_hi"] > 0.20  # two seeds: a wide t interval around it


def test_a_relative_difference_is_undefined_where_the_baseline_is_zero() -> None:
    df = pd.DataFrame({"workload": ["w"] * 4, "seed": [0, 1, 0, 1], "policy": ["f", "f", "a", "a"],
                       "label": ["f", "f", "a", "a"], "m": [0.0, 1.0, 1.0, 2.0]})
    d = paired_differences(df, "m", "f").iloc[0]
    assert d["diff"] == pytest.approx(1.0) and math.isnan(d["rel"]) and math.isnan(d["rel_lo"])


def test_a_per_type_metric_gets_its_own_report_files(tmp_path: Path) -> None:
    from yarnctl.sweep.report import write_report

    run_sweep(load_spec(None, workloads=["dress-mr20"], policies=["fifo"], seeds="0:1"), tmp_path, workers=1)
    _, written = write_report(tmp_path, "avg_completion_s.MAPREDUCE", plot=False)
    assert [p.name for p in written] == ["report-avg_completion_s.MAPREDUCE.md", "report-avg_completion_s.MAPREDUCE.csv"]
    _, plain = write_report(tmp_path, "avg_completion_s", plot=False)
    assert plain[0].name == "report-avg_completion_s.md" and written[0].exists()
    # [DRESS]'s classes are tags of the workload's jobs: a metric per tag that splits the jobs
    df = pd.read_csv(tmp_path / "results.csv")
    small = df["avg_completion_s.tag=small-demand"]
    large = df["avg_completion_s.tag=large-demand"]
    n_small = sum("small-demand" in j.tags for j in load_workload("dress-mr20").jobs)
    assert n_small == 6 and ((n_small * small + (20 - n_small) * large) / 20).round(3).tolist() == \
        df["avg_completion_s"].round(3).tolist()


# queue a takes the one node at 0 s; queue b's two tasks arrive at 10 s and wait for a's to end at 100 s
TWO_QUEUES = """
cluster: {nodes: 1, node: {memory_mb: 4096, vcores: 4}}
defaults: {am: false}
jobs:
  - {id: a, queue: a, submit_s: 0, type: spark, executors: {tasks: 4, resource: {memory_mb: 1024, vcores: 1}, duration: 100}}
  - {id: b, queue: b, submit_s: 10, type: spark, executors: {tasks: 2, resource: {memory_mb: 1024, vcores: 1}, duration: 100}}
"""


def test_a_row_measures_sharing_degrees_when_asked(tmp_path: Path) -> None:
    """[H-MRF] Eq. 2-3 on a run: under fifo queue b waits 90 s while below its half, a sharing loss; a gains."""
    from yarnctl.sweep.cell import run_cell

    w = tmp_path / "two.yaml"
    w.write_text(TWO_QUEUES)
    plain = run_cell(Cell(str(w), "fifo", (), 0))
    assert "beta_min" not in plain  # measured only when the sweep asks
    row = run_cell(Cell(str(w), "fifo", (), 0), RunOptions(sharing_settle_s=0.0))
    assert row["makespan_s"] == plain["makespan_s"] == pytest.approx(200, abs=3)
    assert row["beta_min.queue=b"] < 0.05  # nothing while it waits
    assert row["beta_end.queue=a"] > 1 > row["beta_end.queue=b"] == row["beta_end_min"]
    assert row["beta_min"] == row["beta_min.queue=b"]
    # b is below 1 from its arrival until the end (its 90 s wait is never paid back under fifo): from the
    # probe's first sample after 10 s, at 30 s, to 200 s
    assert row["sharing_loss_fraction"] == pytest.approx(170 / 200, abs=0.02)
    late = run_cell(Cell(str(w), "fifo", (), 0), RunOptions(sharing_settle_s=150.0))
    assert late["beta_min.queue=b"] > row["beta_min.queue=b"]  # the wait is before the settle time


def test_a_sweep_file_asks_for_sharing_degrees(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text("workloads: [haste-mixed1]\npolicies: [fifo]\nsharing: {settle_s: 300}\n")
    assert load_spec(f).options == RunOptions(sharing_settle_s=300.0)
    f.write_text("workloads: [haste-mixed1]\npolicies: [fifo]\nsharing: {settle: 300}\n")
    with pytest.raises(ConfigError, match=r"s.yaml: sharing: expected true or \{settle_s: SECONDS\}"):
        load_spec(f)
    f.write_text("workloads: [haste-mixed1]\npolicies: [fifo]\nsharing: {settle_s: -1}\n")
    with pytest.raises(ConfigError, match="sharing.settle_s: -1 is negative"):
        load_spec(f)


THREE_QUEUES = """
cluster: {nodes: 3, node: {memory_mb: 8192, vcores: 8}}
defaults: {am: {memory_mb: 1024, vcores: 1}}
jobs:
  - {id: a, queue: a, submit_s: 0, type: mapreduce,
     maps: {tasks: 40, resource: {memory_mb: 1024, vcores: 2}, duration: {dist: lognormal, median: 30, sigma: 0.5}},
     reduces: {tasks: 4, resource: {memory_mb: 2048, vcores: 1}, duration: 20}}
  - {id: b, queue: b, submit_s: 15, type: spark, executors: {tasks: 12, resource: {memory_mb: 3072, vcores: 1}, duration: {dist: lognormal, median: 50, sigma: 0.5}}}
  - {id: c, queue: c, submit_s: 400, type: spark, executors: {tasks: 3, resource: {memory_mb: 1024, vcores: 1}, duration: 10}}
"""


@pytest.mark.parametrize("policy", ["drf", "hmrf"])
def test_trackers_read_only_snapshots_of_a_changed_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         policy: str) -> None:
    """Skipping the reads of an unchanged state (equal store versions) changes no decision and no sample of β."""
    import dataclasses

    import yarnctl.fairness.accounting as accounting
    from yarnctl.sim.report import summarize
    from yarnctl.sim.sharing import run_with_probe
    from yarnctl.sim.workload import load_workload
    from yarnctl.state.store import ClusterState

    w = tmp_path / "three.yaml"
    w.write_text(THREE_QUEUES)
    reads = 0  # one per entity per snapshot read
    nonsharing = accounting.nonsharing_allocation

    def counted(*args: Any) -> Any:
        nonlocal reads
        reads += 1
        return nonsharing(*args)

    monkeypatch.setattr(accounting, "nonsharing_allocation", counted)
    run_fast, fast = run_with_probe(load_workload(str(w)), policy)
    reads_fast, reads = reads, 0
    take = ClusterState.snapshot
    # a copy is not the store's snapshot: its version is -1, so the trackers read it every time
    monkeypatch.setattr(ClusterState, "snapshot", lambda self, now: dataclasses.replace(take(self, now)))
    run_every, every = run_with_probe(load_workload(str(w)), policy)
    assert reads > 3 * reads_fast  # read at every heartbeat, against only after a change
    assert [(j.id, j.completion_s) for j in summarize(run_fast).jobs] == \
        [(j.id, j.completion_s) for j in summarize(run_every).jobs]
    assert len(fast.samples) == len(every.samples) > 10
    assert fast.samples[-1][1].keys() == {"a", "b", "c"}
    for (t1, v1), (t2, v2) in zip(fast.samples, every.samples):
        assert t1 == t2 and v1.keys() == v2.keys()
        for q in v1:
            assert v1[q] == pytest.approx(v2[q], rel=1e-9)


def test_an_alias_names_one_parameter_set_of_a_policy(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text("workloads: [haste-mixed1]\nseeds: 2\nbaseline: half\npolicies:\n  fifo: {}\n"
                 "  half: {policy: capacity, queues: [{default: {capacity: 50, maximum_capacity: 50}}]}\n")
    spec = load_spec(f)
    half = [c for c in spec.cells() if c.alias == "half"]
    assert [c.label for c in half] == ["half", "half"] and {c.policy for c in half} == {"capacity"}
    assert half[0].params == (("queues", {"default": {"capacity": 50, "maximum_capacity": 50}}),)
    from yarnctl.sweep.task import decode, encode
    assert decode(encode("k", half[0], RunOptions())) == ("k", half[0], RunOptions())
    out = tmp_path / "o"
    run_sweep(spec, out, workers=1)
    df = pd.read_csv(out / "results.csv")
    assert sorted(set(df["policy"])) == ["fifo", "half"] and sorted(set(df["label"])) == ["fifo", "half"]
    # the alias caps the one queue at half the cluster: fifo, with all of it, finishes sooner
    assert df[df["policy"] == "half"]["makespan_s"].mean() > df[df["policy"] == "fifo"]["makespan_s"].mean()


@pytest.mark.parametrize(("entry", "message"), [
    ("half: {policy: nosuch}", "policies.half.policy: 'nosuch' is not a policy; known: "),
    ("fifo: {policy: capacity}", "policies.fifo: a policy's own name"),
    ("half: {policy: dress, initial_reserve: 0.1:0.3:0.1}",
     "policies.half.initial_reserve: an alias names one parameter set; sweep initial_reserve under `dress:`"),
    ("half: {policy: dress, nosuch: 1}", "nosuch"),
])
def test_a_bad_alias_is_one_line(tmp_path: Path, entry: str, message: str) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(f"workloads: [haste-mixed1]\npolicies:\n  {entry}\n")
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_spec(f)


def test_a_flag_cannot_sweep_an_alias(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text("workloads: [haste-mixed1]\npolicies:\n  half: {policy: dress}\n")
    with pytest.raises(ConfigError, match="policies.half.initial_reserve: an alias names one parameter set"):
        load_spec(f, params=["half.initial_reserve=0.1:0.3:0.1"])
    assert load_spec(f, params=["half.initial_reserve=0.2"]).cells()[0].params == (("initial_reserve", 0.2),)


def test_every_kept_reports_significance_is_what_the_tool_says_now() -> None:
    """Each kept report under docs/sweep reads, cell by cell, the significance its own CSV gives today (no stale label)."""
    from yarnctl.sweep.stats import _significance

    checked = 0
    for md in sorted((ROOT / "docs" / "sweep").glob("*/report-*.md")):
        df = pd.read_csv(md.with_suffix(".csv"))
        workload = ""
        for line in md.read_text().splitlines():
            if line.startswith("### "):
                workload = line[4:].rsplit(": ", 1)[0]
            elif line.startswith("| ") and "baseline" not in line and not line.startswith("| cell"):
                label, shown = line.split(" | ")[0][2:], line.rstrip(" |").rsplit(" | ", 1)[1]
                row = df[(df["workload"] == workload) & (df["label"] == label)].iloc[0]
                assert shown == _significance(row), (md.name, workload, label)
                checked += 1
    assert checked >= 200  # 214 rows in 25 reports on 2026-12-02
