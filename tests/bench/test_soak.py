"""The soak's pure parts: CSV rows, the trend fit and its verdict, the schedule, the table, the flags (no JVM)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from yarnctl.bench.soak import (
    COLUMNS, Counters, Event, JobRecord, Probe, containers_by_app, csv_row, failed_by_nm, heap_per_app, histogram_growth, ls_slope,
    ls_slope_se, main, markdown_table, class_totals, thread_groups, parse_args, parse_histogram, read_samples, schedule, trend, trends, verdict, yarn_1902,
)

MINUTES = [float(m) for m in range(61)]


def grown(base: float, pct_per_h: float) -> list[float | None]:
    """A series growing linearly by `pct_per_h` of `base` per hour, sampled every minute for an hour."""
    return [base * (1 + pct_per_h / 100 * m / 60) for m in MINUTES]


def test_ls_slope_recovers_a_line_and_is_zero_for_a_constant() -> None:
    assert ls_slope([0, 1, 2, 3], [1, 3, 5, 7]) == pytest.approx(2.0)
    assert ls_slope([0, 1, 2], [4, 4, 4]) == 0.0
    assert ls_slope([1], [5]) == 0.0
    assert ls_slope([2, 2], [1, 9]) == 0.0


def test_the_slope_standard_error_is_zero_on_a_line_and_grows_with_scatter() -> None:
    xs = [float(x) for x in range(10)]
    assert ls_slope_se(xs, [2 * x + 1 for x in xs]) == pytest.approx(0.0, abs=1e-9)
    small = ls_slope_se(xs, [x + (0.1 if i % 2 else -0.1) for i, x in enumerate(xs)])
    large = ls_slope_se(xs, [x + (1.0 if i % 2 else -1.0) for i, x in enumerate(xs)])
    assert 0 < small < large and large == pytest.approx(10 * small)
    assert ls_slope_se([1.0, 2.0], [1.0, 5.0]) == 0.0


def test_noisy_samples_report_their_uncertainty_beside_the_growth() -> None:
    noisy: list[float | None] = [100 + (10 if m % 2 else -10) for m in range(61)]
    t = trend("rm_heap_mb", MINUTES, noisy, 60)
    assert t.growth_se_pct_h > 5 and abs(t.growth_pct_h) < 2 * t.growth_se_pct_h


def test_a_flat_heap_passes_the_slope_rule() -> None:
    t = trend("rm_heap_mb", MINUTES, [80.0] * 61, 60)
    assert t.ok and t.growth_pct_h == 0.0
    assert (t.first, t.last, t.min, t.max) == (80.0, 80.0, 80.0, 80.0)


def test_a_heap_growing_30_pct_per_hour_fails_and_the_fit_says_how_much() -> None:
    t = trend("rm_heap_mb", MINUTES, grown(100, 30), 60)
    assert not t.ok
    # 30 MB/h against a second-half median of ~122.5 MB: ~24.5 %/h
    assert t.growth_pct_h == pytest.approx(30 / 1.225, rel=0.01)
    assert "limit 10 %/h" in t.why


def test_growth_just_under_the_limit_passes_and_over_it_fails() -> None:
    assert trend("serve_rss_mb", MINUTES, grown(100, 8), 60).ok
    assert not trend("serve_rss_mb", MINUTES, grown(100, 14), 60).ok


def test_the_slope_ignores_warm_up_growth_in_the_first_half() -> None:
    # steep climb for 20 minutes (JIT, pools filling), flat after: no trend
    values: list[float | None] = [50 + 2 * min(m, 20) for m in MINUTES]
    t = trend("rm_heap_mb", MINUTES, values, 60)
    assert t.ok and t.growth_pct_h == 0.0
    assert t.first == 50 and t.max == 90


def test_noise_around_a_flat_level_passes() -> None:
    values: list[float | None] = [100 + (7 if m % 2 else -7) for m in range(61)]
    assert trend("rm_heap_mb", MINUTES, values, 60).ok


def test_band_rule_for_counts_passes_near_the_level_and_fails_above_it() -> None:
    # level after warm-up (minutes 10-29) is 100; the last 10 minutes sit at 108: within 10 %
    near: list[float | None] = [100.0 if m < 50 else 108.0 for m in MINUTES]
    t = trend("rm_threads", MINUTES, near, 60, rule="band")
    assert t.ok and t.level == 100 and t.end_level == 108
    far: list[float | None] = [100.0 if m < 50 else 115.0 for m in MINUTES]
    assert not trend("rm_threads", MINUTES, far, 60, rule="band").ok


def test_band_rule_has_an_absolute_floor_for_small_counts() -> None:
    small: list[float | None] = [10.0 if m < 50 else 13.0 for m in MINUTES]   # +30 % but only +3 sockets
    assert trend("rm_sockets", MINUTES, small, 60, rule="band").ok
    assert not trend("rm_sockets", MINUTES, [10.0 if m < 50 else 14.0 for m in MINUTES], 60, rule="band").ok


def test_missing_samples_are_skipped_and_too_few_fail() -> None:
    holes: list[float | None] = [None if m % 3 == 0 else 80.0 for m in MINUTES]
    assert trend("rm_heap_mb", MINUTES, holes, 60).ok
    t = trend("rm_heap_mb", MINUTES, [None] * 58 + [1.0, 2.0, 3.0], 60)
    assert not t.ok and math.isnan(t.first) and "only 3 samples" in t.why


def test_an_unknown_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown rule"):
        trend("rm_heap_mb", MINUTES, [1.0] * 61, 60, rule="vibes")


def test_csv_rows_round_trip_with_empty_cells_for_failed_probes(tmp_path: Path) -> None:
    probe = Probe(rm_threads=180, rm_fds=420, rm_sockets=None, rm_heap_mb=61.25, serve_rss_mb=None, serve_pid=4242,
                  extra={"serve_calls": 10})
    row = csv_row(12.345, Counters(submitted=5, succeeded=3, failed=1, running=1, serve_restarts=2), probe)
    assert list(row) == list(COLUMNS)
    assert row["minute"] == "12.35" and row["rm_heap_mb"] == "61.2" and row["rm_sockets"] == ""
    assert row["jobs_failed"] == "1" and row["serve_restarts"] == "2" and row["serve_calls"] == "10"
    assert row["shim_fallback"] == ""
    path = tmp_path / "samples.csv"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerow(row)
    back = read_samples(path)
    assert back[0]["rm_threads"] == 180.0 and back[0]["rm_sockets"] is None and back[0]["minute"] == 12.35


def test_trends_judge_levels_by_slope_and_counts_by_band() -> None:
    rows = [{"minute": m, "rm_threads": 100.0 + m, "rm_fds": 300.0, "rm_sockets": 20.0, "rm_heap_mb": 60.0,
             "serve_rss_mb": 70.0} for m in MINUTES]
    ts = {t.metric: t for t in trends(rows, 60)}
    assert ts["rm_threads"].rule == "band" and not ts["rm_threads"].ok   # +1 thread a minute
    assert ts["rm_heap_mb"].rule == "slope" and ts["rm_heap_mb"].ok
    assert all(ts[m].ok for m in ("rm_fds", "rm_sockets", "serve_rss_mb"))


def test_schedule_puts_serve_kills_off_the_grid_and_nm_restarts_at_thirds() -> None:
    plan = schedule(60, 5, 2)
    kills = [m for m, k, _ in plan if k == "serve-kill"]
    assert kills == [2.5 + 5 * i for i in range(12)]
    assert [(m, i) for m, k, i in plan if k == "nm-restart"] == [(20.0, 0), (40.0, 1)]
    assert plan == sorted(plan)
    assert schedule(6, 0, 0) == []


def test_a_job_failing_during_an_nm_restart_is_excused_and_others_fail_the_run() -> None:
    nm = [Event("nm-restart", 20.0, 20.5, "nodemanager-0")]
    victim = JobRecord(1, "sleep-3x5s", 19.0, 21.0, 1, "application_1_0001")
    late = JobRecord(2, "pi-2x10", 20.2, 25.0, 1, "application_1_0002")        # ends within the 5-min grace
    hung = JobRecord(3, "dshell-2", 18.0, 28.0, 2, "application_1_0003")       # ran across it, failed 7.5 min later
    after = JobRecord(4, "pi-2x10", 21.0, 22.0, 1, "application_1_0004")       # submitted after the node was back
    before = JobRecord(5, "pi-2x10", 10.0, 19.9, 1, "application_1_0005")      # ended before it
    assert failed_by_nm(victim, nm) and failed_by_nm(late, nm)
    assert not any(failed_by_nm(j, nm) for j in (hung, after, before))
    assert not failed_by_nm(victim, [Event("serve-kill", 20.0, 20.1, "serve")])
    flat = [trend("rm_heap_mb", MINUTES, [80.0] * 61, 60)]
    assert verdict(flat, [victim, late], nm) == (True, [])
    ok, reasons = verdict(flat, [victim, hung], nm)
    assert not ok and len(reasons) == 1 and "application_1_0003" in reasons[0]


def test_a_distributed_shell_hang_with_extra_workers_is_yarn_1902_and_does_not_fail_the_run(tmp_path: Path) -> None:
    """Hadoop 2.7's AMRMClient over-allocation (YARN-1902), told apart by the container count in the RM's log."""
    log = tmp_path / "resourcemanager.log"
    log.write_text("\n".join(
        [f"INFO rmcontainer.RMContainerImpl: container_17_0003_01_00000{i} Container Transitioned from NEW to ALLOCATED"
         for i in (1, 2, 3, 4)]  # the AM and 3 workers for 2
        + ["INFO container_17_0003_01_000002 Container Transitioned from ALLOCATED to ACQUIRED"]  # named twice, one container
        + [f"INFO container_17_0004_01_00000{i} allocated" for i in (1, 2, 3)]  # the AM and the 2 asked for
        + ["INFO container_17_0004_02_000001 allocated"]))  # a second attempt's AM: not counted
    counts = containers_by_app(log)
    assert counts == {"application_17_0003": 4, "application_17_0004": 3}
    over = JobRecord(3, "dshell-2", 18.0, 28.0, 2, "application_17_0003")
    fair = JobRecord(4, "dshell-2", 18.0, 28.0, 2, "application_17_0004")
    assert yarn_1902(over, counts) == "YARN-1902: the AM got 3 workers for 2 and never finished"
    assert yarn_1902(fair, counts) is None  # a dshell failure with the containers it asked for is not excused
    assert yarn_1902(JobRecord(5, "pi-2x10", 1.0, 2.0, 1, "application_17_0003"), counts) is None
    assert yarn_1902(JobRecord(6, "dshell-2", 1.0, 2.0, 0, "application_17_0003"), counts) is None  # it succeeded
    flat = [trend("rm_heap_mb", MINUTES, [80.0] * 61, 60)]
    assert verdict(flat, [over], [], counts) == (True, [])
    ok, reasons = verdict(flat, [over, fair], [], counts)
    assert not ok and len(reasons) == 1 and "application_17_0004" in reasons[0]
    assert containers_by_app(tmp_path / "missing.log") == {}


def test_verdict_fails_on_a_growing_metric_and_on_no_jobs() -> None:
    done = [JobRecord(1, "dshell-2", 1.0, 2.0, 0, "application_1_0001")]
    ok, reasons = verdict([trend("rm_heap_mb", MINUTES, grown(100, 30), 60)], done, [])
    assert not ok and "RM heap after GC" in reasons[0]
    ok, reasons = verdict([trend("rm_heap_mb", MINUTES, [80.0] * 61, 60)], [], [])
    assert not ok and reasons == ["no job finished"]


def test_markdown_table_has_a_row_per_metric_with_numbers_and_verdicts() -> None:
    ts = [trend("rm_threads", MINUTES, [150.0] * 61, 60, rule="band"),
          trend("rm_heap_mb", MINUTES, grown(100, 30), 60)]
    table = markdown_table(ts)
    lines = table.strip().splitlines()
    assert len(lines) == 4 and lines[0].startswith("| metric |")
    assert lines[2].startswith("| RM threads | 150 | 150 |") and "flat (band)" in lines[2]
    assert "GROWS (slope)" in lines[3] and "+24.5 ± 0.0 %/h" in lines[3]


@pytest.mark.parametrize("argv, message", [
    (["--minutes", "0"], "must be positive"),
    (["--minutes", "ten"], "not a number"),
    (["--serve-every-min", "-1"], "--serve-every-min must be 0 or more"),
    (["--nm-restarts", "-2"], "--nm-restarts must be 0 or more"),
    (["--minutes", "2", "--sample-s", "60"], "fewer than 4 samples"),
    (["--policy", "nope"], "unknown policy 'nope'"),
    (["--bogus"], "unrecognized arguments: --bogus"),
])
def test_bad_flags_exit_2_with_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        parse_args(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and err.startswith("python -m yarnctl.bench.soak: ")


def test_defaults_are_the_hour_the_acceptance_line_asks_for() -> None:
    a = parse_args([])
    assert (a.minutes, a.policy, a.serve_every_min, a.nm_restarts, a.sample_s) == (60.0, "hmrf", 5.0, 2, 60.0)


HISTO_BEFORE = """
 num     #instances         #bytes  class name (module)
-------------------------------------------------------
   1:         20000        2000000  [B (java.base@17.0.2)
   2:          5000         400000  java.lang.String (java.base@17.0.2)
   3:            10           1000  org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppImpl
Total         25010        2401000
"""
HISTO_AFTER = """
 num     #instances         #bytes  class name (module)
-------------------------------------------------------
   1:         21000        2100000  [B (java.base@17.0.2)
   2:          4000         320000  java.lang.String (java.base@17.0.2)
   3:           210          21000  org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppImpl
   4:             5            500  io.yarnctl.shim.New
   5:            49            784  org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppImpl$AppKilledTransition
Total         25264        2442284
"""


def test_class_histograms_parse_and_the_growth_names_the_classes_that_grew() -> None:
    before, after = parse_histogram(HISTO_BEFORE), parse_histogram(HISTO_AFTER)
    assert before["[B"] == (20000, 2000000) and len(before) == 3   # header and Total lines skipped
    growth = histogram_growth(before, after)
    assert growth == [("[B", 1000, 100000), ("org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppImpl", 200, 20000),
                      ("org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppImpl$AppKilledTransition", 49, 784),
                      ("io.yarnctl.shim.New", 5, 500)]   # String shrank: not listed
    assert histogram_growth(before, after, top=1) == growth[:1]


def test_heap_per_app_is_the_second_half_slope_in_kb() -> None:
    rows = [{"minute": float(m), "rm_apps_completed": 3.0 * m, "rm_heap_mb": 20 + 3.0 * m * 0.01} for m in range(61)]
    assert heap_per_app(rows, 60) == pytest.approx(10.2, abs=0.1)    # 0.01 MB per app
    assert heap_per_app([{"minute": 40.0, "rm_apps_completed": 5.0, "rm_heap_mb": 20.0}], 60) is None


def test_report_only_rejudges_a_finished_run_from_its_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    with (tmp_path / "samples.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for m in range(13):   # a 12-minute run whose heap grows 50 %/h: it must fail
            probe = Probe(rm_threads=200, rm_fds=150, rm_sockets=15, rm_heap_mb=20 * (1 + 0.5 * m / 60),
                          serve_rss_mb=50.0, serve_pid=1)
            w.writerow(csv_row(float(m), Counters(submitted=m, succeeded=m), probe))
    (tmp_path / "jobs.csv").write_text("n,label,start_min,end_min,rc,app_id\n1,pi-2x10,0.5,1.5,0,application_1_0001\n")
    (tmp_path / "summary.json").write_text(json.dumps({
        "args": {"minutes": 12.0, "policy": "hmrf"}, "jobs": {"submitted": 1},
        "events": [{"kind": "serve-kill", "start_min": 2.5, "end_min": 2.52, "detail": "serve pid 1 -> 2"}]}))
    assert main(["--report-only", "--out", str(tmp_path)]) == 1
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert doc["ok"] is False and doc["jobs"]["succeeded"] == 1 and doc["events"][0]["kind"] == "serve-kill"
    assert [r for r in doc["reasons"] if r.startswith("RM heap after GC")]
    assert (tmp_path / "soak.png").stat().st_size > 10_000
    report = (tmp_path / "report.md").read_text()
    assert "| RM heap after GC (MB) | 20 |" in report and "1 policy-server SIGKILLs" in report
    assert "GROWS (slope)" in capsys.readouterr().out


def test_report_only_without_a_run_says_so_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--report-only", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot rebuild the report" in err


def test_class_totals_sum_a_class_or_a_package() -> None:
    h = parse_histogram(HISTO_AFTER)
    assert class_totals(h, "io.yarnctl.") == (5, 500)
    # the class itself, not its inner transition classes
    assert class_totals(h, "org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppImpl") == (210, 21000)
    assert class_totals(h, "nothing.") == (0, 0)


def test_report_only_diffs_the_rm_dumps_found_in_the_cluster_dir(tmp_path: Path) -> None:
    import json

    out, cdir = tmp_path / "out", tmp_path / "c"
    out.mkdir()
    cdir.mkdir()
    with (out / "samples.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for m in range(13):
            w.writerow(csv_row(float(m), Counters(), Probe(200, 150, 15, 20.0, 50.0, 1)))
    (out / "jobs.csv").write_text("n,label,start_min,end_min,rc,app_id\n1,pi-2x10,0.5,1.5,0,application_1_0001\n")
    (out / "summary.json").write_text(json.dumps({"args": {"minutes": 12.0, "policy": "hmrf"}, "jobs": {"submitted": 1},
                                                  "events": []}))
    (cdir / "rm-histo-warm.txt").write_text(HISTO_BEFORE)
    (cdir / "rm-histo-end.txt").write_text(HISTO_AFTER)
    (cdir / "rm-threads-warm.txt").write_text('"main" #1 prio=5\n"ApplicationMasterLauncher #0" #40 prio=5\n')
    (cdir / "rm-threads-end.txt").write_text('"main" #1 prio=5\n"ApplicationMasterLauncher #0" #40 prio=5\n'
                                             '"ApplicationMasterLauncher #1" #41 prio=5\n')
    assert main(["--report-only", "--out", str(out), "--dir", str(cdir)]) == 0
    doc = json.loads((out / "summary.json").read_text())
    assert doc["ok"] is True and doc["rm_thread_growth"] == {"ApplicationMasterLauncher ##": 1}
    assert doc["rm_histogram_growth"][0] == {"class": "[B", "instances": 1000, "bytes": 100000}
    assert doc["rm_key_classes"]["io.yarnctl."] == [[0, 0], [5, 500]]
    report = (out / "report.md").read_text()
    assert "`RMAppImpl` 10 (1.0 KB) → 210 (20.5 KB)" in report and "`io.yarnctl.*` 0 (0.0 KB) → 5 (0.5 KB)" in report
    assert "`ApplicationMasterLauncher ##` +1" in report


def test_thread_groups_count_threads_by_name_with_digits_folded() -> None:
    dump = '"IPC Server handler 1 on 8030" #31 daemon prio=5\n   java.lang.Thread.State: WAITING\n' \
           '"IPC Server handler 2 on 8030" #32 daemon prio=5\n"main" #1 prio=5\n'
    assert thread_groups(dump) == {"IPC Server handler # on #": 2, "main": 1}
