"""The `yarnctl` command line: simulate (JSON, tables, files), error handling, listings, the console script."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rich.console import Console

from yarnctl.cli import output
from yarnctl.cli.main import main
from yarnctl.cli.output import best_marks
from yarnctl.sim.workload import builtin_names

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
POLICIES = {"fifo", "fair", "drf", "capacity", "ffd-dp", "haste", "haste-a", "dress", "af", "lt-drf", "lt-af", "hmrf", "feedback", "opera"}


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------- simulate --json

def test_simulate_json_haste_fig1(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "simulate", "--workload", "haste-fig1", "--policy", "fifo,ffd-dp", "--json")
    assert code == 0, err
    doc = json.loads(out)  # exactly one JSON document on stdout
    assert isinstance(doc, dict)
    assert {"workload", "results"} <= set(doc)
    assert doc["workload"] == "haste-fig1"
    results = doc["results"]
    assert list(results) == ["fifo", "ffd-dp"]
    # HaSTE Fig. 1: FIFO needs 5 time units, FFD-DotProduct packs into 4
    assert results["fifo"]["makespan_s"] == 5.0
    assert results["ffd-dp"]["makespan_s"] == 4.0
    for name, r in results.items():
        for key in ("avg_wait_s", "avg_completion_s"):
            assert isinstance(r[key], (int, float)), (name, key)
        util = r["utilization"]
        assert 0 < util["cpu"] <= 1 and 0 < util["memory"] <= 1
        assert [j["id"] for j in r["jobs"]] == ["job1", "job2"]
        for j in r["jobs"]:
            assert {"id", "submit_s", "start_s", "finish_s", "wait_s", "completion_s"} <= set(j)
            assert j["wait_s"] == pytest.approx(j["start_s"] - j["submit_s"])
            assert j["completion_s"] == pytest.approx(j["finish_s"] - j["submit_s"])
        assert max(j["finish_s"] for j in r["jobs"]) == r["makespan_s"]
    # one 4 GB node busy with 8 GB-units of work: 8 / (4 * makespan)
    assert results["fifo"]["utilization"]["memory"] == pytest.approx(16 / 20)
    assert results["ffd-dp"]["utilization"]["memory"] == pytest.approx(1.0)


def test_simulate_json_is_deterministic_per_seed(capsys: pytest.CaptureFixture[str]) -> None:
    def run(seed: str) -> dict:
        code, out, _ = _run(capsys, "simulate", "-w", "haste-simple", "-p", "fifo", "--seed", seed, "--json")
        assert code == 0
        doc = json.loads(out)
        doc["results"]["fifo"].pop("stats")  # holds wall-clock time
        return doc

    first, again = run("3"), run("3")
    assert first == again
    assert first["seed"] == 3


def test_simulate_tables(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "simulate", "--workload", "haste-fig1", "--policy", "fifo,ffd-dp")
    assert code == 0, err
    assert "haste-fig1" in out
    assert "makespan (s)" in out
    assert "fifo" in out and "ffd-dp" in out
    assert "job1" in out and "job2" in out  # per-job table for small workloads


def test_the_best_is_a_call_only_beyond_the_simulators_margin() -> None:
    # lower is better: 100 beats 106 by more than 5% of 100; 104 is within 5% of 100; 105 is exactly 5%
    assert best_marks([100.0, 106.0, 120.0], lower_better=True) == ["call", "", ""]
    assert best_marks([106.0, 100.0, 104.0], lower_better=True) == ["", "close", "close"]
    assert best_marks([105.0, 100.0], lower_better=True) == ["close", "close"]
    # higher is better (utilisation): 0.90 against 0.80 is a call; 0.90 against 0.87 is not
    assert best_marks([0.80, 0.90], lower_better=False) == ["", "call"]
    assert best_marks([0.87, 0.90, 0.50], lower_better=False) == ["close", "close", ""]
    assert best_marks([0.951, 1.0], lower_better=False) == ["close", "close"]  # within 5% of the best (not of the smaller)
    # a missing value is never marked; one value alone is no comparison; equal values tie at any margin
    assert best_marks([None, 50.0, 80.0], lower_better=True) == ["", "call", ""]
    assert best_marks([50.0, None], lower_better=True) == ["", ""]
    assert best_marks([50.0, 50.0], lower_better=True, margin=0.0) == ["close", "close"]
    assert best_marks([50.0, 51.0], lower_better=True, margin=0.0) == ["call", ""]
    # a best of zero (no preemptions) has no relative margin: any other value is beyond it, as in sweep reports
    assert best_marks([0.0, 0.4, 0.0], lower_better=True) == ["close", "", "close"]
    assert best_marks([3.0, 0.0], lower_better=True) == ["", "call"]


def test_simulate_marks_a_best_within_the_margin_bold_not_green(monkeypatch: pytest.MonkeyPatch) -> None:
    """dress-mr20: fifo and capacity end 443.9 / 445.4 s on average, fair 549.2 s."""
    console = Console(record=True, width=200, force_terminal=True, color_system="standard", highlight=False)
    monkeypatch.setattr(output, "out", console)
    assert main(["simulate", "-w", "dress-mr20", "-p", "fifo,fair,capacity", "--no-jobs"]) == 0
    lines = console.export_text(styles=True).splitlines()
    row = next(line for line in lines if "avg completion" in line)
    cells = [c.strip() for c in row.split("│")[2:5]]
    green, bold = "\x1b[1;32m", "\x1b[1m"
    assert cells[0].startswith(bold) and "443.9" in cells[0] and green not in cells[0]
    assert cells[2].startswith(bold) and "445.4" in cells[2] and green not in cells[2]
    assert "549.2" in cells[1] and "\x1b[" not in cells[1]
    # and the avg wait, where fair's 19.0 s is far below the others', is a call
    wait = next(line for line in lines if "avg wait" in line)
    assert green in wait.split("│")[3]


# ---------------------------------------------------------------- --out

def test_out_writes_csv_and_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "results"
    code, out, err = _run(capsys, "simulate", "-w", "haste-fig1", "-p", "fifo,ffd-dp", "--out", str(out_dir))
    assert code == 0, err
    for name in ("summary.csv", "jobs.csv", "utilization.csv"):
        assert (out_dir / name).is_file(), name
    with (out_dir / "summary.csv").open(newline="") as f:
        summary = {row["policy"]: row for row in csv.DictReader(f)}
    assert set(summary) == {"fifo", "ffd-dp"}
    assert float(summary["fifo"]["makespan_s"]) == 5.0
    assert float(summary["ffd-dp"]["makespan_s"]) == 4.0
    with (out_dir / "jobs.csv").open(newline="") as f:
        jobs = list(csv.DictReader(f))
    assert sorted((r["policy"], r["id"]) for r in jobs) == [
        ("ffd-dp", "job1"), ("ffd-dp", "job2"), ("fifo", "job1"), ("fifo", "job2")]
    pngs = sorted(out_dir.glob("*.png"))
    assert len(pngs) >= 3
    assert {"jobs.png", "utilization.png"} <= {p.name for p in pngs}
    for p in pngs:
        assert p.read_bytes()[:8] == PNG_MAGIC, p.name
    assert "summary.csv" in out  # the "wrote ..." line
    with (out_dir / "accumulated.csv").open(newline="") as f:
        acc = [r for r in csv.DictReader(f) if r["policy"] == "fifo" and r["by"] == "user"]
    # HaSTE Fig. 1 under FIFO: 4 x 1 GB x 1 s + 4 x 3 GB x 1 s = 16 GB x s by the end
    assert float(acc[-1]["memory_mb_s"]) == pytest.approx(16 * 1024)


def test_out_no_plots_writes_csv_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "csv-only"
    code, _, err = _run(capsys, "simulate", "-w", "haste-fig1", "-p", "fifo", "--out", str(out_dir),
                        "--no-plots", "--json")
    assert code == 0, err
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "accumulated.csv", "containers-fifo.csv", "jobs.csv", "summary.csv", "utilization.csv"]



def test_out_writes_the_tuning_series_of_tunable_policies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "dress"
    code, _, err = _run(capsys, "simulate", "-w", "dress-mr20", "-p", "dress,capacity", "--out", str(out_dir))
    assert code == 0, err
    with (out_dir / "tuning.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["policy"] for r in rows} == {"dress"}  # capacity has nothing to tune
    delta = [(float(r["t_s"]), float(r["value"])) for r in rows if r["key"] == "dress_reserve_ratio"]
    assert delta[0][0] == 2.5 and len({v for _, v in delta}) > 5  # first tick mid-interval; δ moves (Alg. 3)
    assert all(0.0 <= v <= 1.0 for _, v in delta)
    assert [t for t, _ in delta] == sorted(t for t, _ in delta)
    assert (out_dir / "tuning.png").read_bytes()[:8] == PNG_MAGIC


# ---------------------------------------------------------------- bad input

NOT_A_MAPPING = "- fair\n- drf\n"
NOT_A_MAPPING_OF_MAPPINGS = "fair: 3\n"
BROKEN_WORKLOAD = ("cluster: {nodes: 1, node: {memory_mb: 4096, vcores: 4}}\n"
                   "jobs: [{id: a, maps: {tasks: 1, resource: {memory_mb: 1G, vcores: 1}, duration: 1}}]\n")

# (id, argv after `simulate`, files to create {name: text}, fragments the error line must contain)
BAD_INPUT = [
    ("unknown-policy", ["-w", "haste-fig1", "-p", "fifo,bogus"], {},
     ["'bogus'", "fifo", "fair", "drf", "capacity", "ffd-dp"]),
    ("unknown-workload", ["-w", "no-such-workload", "-p", "fifo"], {}, ["no-such-workload", "haste-fig1"]),
    ("malformed-workload-file", ["-w", "{dir}/broken.yaml", "-p", "fifo"], {"broken.yaml": BROKEN_WORKLOAD},
     ["broken.yaml: jobs[0].maps.resource.memory_mb: ", "'1G'"]),
    ("malformed-workload-yaml", ["-w", "{dir}/syntax.yaml", "-p", "fifo"],
     {"syntax.yaml": "cluster: {nodes: 1\njobs: [\n"}, ["syntax.yaml: line ", "malformed YAML"]),
    ("unknown-param", ["-w", "haste-fig1", "-p", "fair", "--param", "fair.nonsense=1"], {},
     ["fair", "'nonsense'", "assign_multiple"]),
    ("param-without-dot-or-value", ["-w", "haste-fig1", "-p", "fair", "--param", "badformat"], {},
     ["'badformat'", "POLICY.KEY=VALUE"]),
    ("param-bad-value", ["-w", "haste-fig1", "-p", "fair", "--param", "fair.assign_multiple=maybe"], {},
     ["assign_multiple", "'maybe'"]),
    ("policy-config-not-a-mapping", ["-w", "haste-fig1", "-p", "fair", "--policy-config", "{dir}/pc.yaml"],
     {"pc.yaml": NOT_A_MAPPING}, ["pc.yaml", "expected a mapping"]),
    ("policy-config-values-not-mappings",
     ["-w", "haste-fig1", "-p", "fair", "--policy-config", "{dir}/pc2.yaml"],
     {"pc2.yaml": NOT_A_MAPPING_OF_MAPPINGS}, ["pc2.yaml", "expected a mapping"]),
    ("policy-config-missing", ["-w", "haste-fig1", "-p", "fair", "--policy-config", "{dir}/absent.yaml"], {},
     ["absent.yaml", "cannot read"]),
    ("params-for-policy-not-selected", ["-w", "haste-fig1", "-p", "fifo", "--param", "drf.assign_multiple=true"],
     {}, ["'drf'", "--policy fifo"]),
    ("policy-config-for-policy-not-selected",
     ["-w", "haste-fig1", "-p", "fifo", "--policy-config", "{dir}/pc3.yaml"],
     {"pc3.yaml": "fair: {assign_multiple: true}\n"}, ["'fair'", "--policy fifo"]),
    ("policy-listed-twice", ["-w", "haste-fig1", "-p", "fifo,fifo"], {}, ["twice"]),
    ("am-share-out-of-range", ["-w", "haste-fig1", "-p", "fifo", "--max-am-share", "1.5"], {}, ["--max-am-share 1.5"]),
    ("no-policy", ["-w", "haste-fig1", "-p", ","], {}, ["at least one policy"]),
    ("explain-unknown-job", ["-w", "haste-fig1", "-p", "fifo", "--explain", "nope"], {},
     ["--explain: no job 'nope' in workload haste-fig1", "its jobs: "]),
    ("explain-no-job", ["-w", "haste-fig1", "-p", "fifo", "--explain", ","], {}, ["--explain: give at least one"]),
    ("explain-negative-last", ["-w", "haste-fig1", "-p", "fifo", "--explain", "job1", "--explain-last", "-1"], {},
     ["--explain-last: expected a count >= 0"]),
    ("malformed-sls-trace", ["-w", "{dir}/trace.json", "-p", "fifo"], {"trace.json": '{"job.id": \n'},
     ["trace.json: line ", "malformed JSON"]),
    ("model-noise-negative", ["-w", "haste-fig1", "-p", "fifo", "--model-noise", "-2"], {},
     ["--model-noise: expected a number of extra runs >= 0, got -2"]),
    # the --sls-* flags were ignored without a word for other workloads (their sizes: tests/cli/test_argtypes.py)
    ("sls-flag-for-a-yaml-workload", ["-w", "haste-fig1", "-p", "fifo", "--sls-node-mb", "4096"], {},
     ["--sls-node-mb: only for an SLS trace; haste-fig1 is a workload with its own cluster"]),
    ("max-time-nan", ["-w", "haste-fig1", "-p", "fifo", "--max-time", "nan"], {},
     ["--max-time nan: expected seconds > 0"]),  # it set no limit
    ("max-time-negative", ["-w", "haste-fig1", "-p", "fifo", "--max-time", "-5"], {},
     ["--max-time -5: expected seconds > 0"]),  # it left every job unfinished, exit 0
    # --out used to be made after the run, ending its printed results in a FileExistsError traceback
    ("out-is-a-file", ["-w", "haste-fig1", "-p", "fifo", "--out", "{dir}/afile"], {"afile": "x"},
     ["afile: exists and is not a directory"]),
    ("out-under-a-file", ["-w", "haste-fig1", "-p", "fifo", "--out", "{dir}/afile/x"], {"afile": "x"},
     ["afile is a file, not a directory"]),
    ("param-malformed-yaml", ["-w", "haste-fig1", "-p", "fair", "--param", "fair.assign_multiple=[1"], {},
     ["--param 'fair.assign_multiple=[1': malformed value"]),
    ("param-infinite", ["-w", "haste-fig1", "-p", "fair", "--param", "fair.max_assign=.inf"], {},
     ["policy fair: max_assign: expected a finite number, got inf"]),
    ("param-fraction-for-a-count", ["-w", "haste-fig1", "-p", "fair", "--param", "fair.max_assign=2.7"], {},
     ["policy fair: max_assign: expected an integer, got 2.7"]),
    ("param-nan", ["-w", "haste-fig1", "-p", "ffd-dp", "--param", "ffd-dp.memory_weight=.nan"], {},
     ["policy ffd-dp: memory_weight: expected a number, got nan"]),
]


@pytest.mark.parametrize(("argv", "files", "fragments"), [c[1:] for c in BAD_INPUT],
                         ids=[c[0] for c in BAD_INPUT])
def test_bad_input_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     argv: list[str], files: dict[str, str], fragments: list[str]) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    argv = [a.replace("{dir}", str(tmp_path)) for a in argv]
    code, out, err = _run(capsys, "simulate", *argv)
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert "makespan" not in out  # no (partial) results on stdout


def test_sls_sizes_apply_to_a_trace_whatever_its_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An SLS trace named trace.JSON (or with no extension) took the default sizes whatever --sls-node-mb said."""
    job = ('{"job.start.ms": 0, "job.id": "j", "job.tasks": [{"container.host": "/r1/h1", "container.start.ms": 0, '
           '"container.end.ms": 5000}]}')
    for name in ("trace.JSON", "trace"):
        (tmp_path / name).write_text(job)
    for name in ("trace.JSON", "trace", "trace+jitter+jitter"):  # variants stack
        code, out, _ = _run(capsys, "simulate", "-w", str(tmp_path / name), "-p", "fifo", "--sls-node-mb", "4096")
        assert code == 0 and "1 x <4096 MB, 10 vcores>" in out, out
    code, _, err = _run(capsys, "simulate", "-w", f"{tmp_path}/trace+efr", "-p", "fifo", "--sls-node-mb", "4096")
    assert code == 2 and err == "error: --sls-node-mb: +efr sets the nodes' size itself ([FEEDBACK] Sec. V-B)\n"


def test_a_file_that_is_not_a_mapping_is_not_echoed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A token file passed as a workload by mistake: the error says what the file is, never what it holds."""
    (tmp_path / "bridge.token").write_text("tok-secret-abcdef\n")
    code, _, err = _run(capsys, "simulate", "-w", str(tmp_path / "bridge.token"), "-p", "fifo")
    assert code == 2 and err == f"error: {tmp_path}/bridge.token: expected a mapping, got a line of text (17 characters)\n"


def test_simulate_explain_lists_why_a_job_waited(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "simulate", "-w", "dress-mr20", "-p", "capacity,dress", "--no-jobs",
                        "--explain", "j10", "--explain-last", "3")
    assert code == 0
    assert "why j10 waited under capacity: the last 3 of" in out and "why j10 waited under dress" in out
    assert "dress-reserve" in out and "no-room" in out
    code, out, _ = _run(capsys, "simulate", "-w", "dress-mr20", "-p", "dress", "--explain", "j10", "--json")
    waits = json.loads(out)["waits"]["dress"]
    assert waits and {w["job"] for w in waits} == {"j10"}
    assert {"t", "node", "code", "text", "values"} <= set(waits[0])
    assert any(w["code"] == "dress-reserve" and 0 <= w["values"]["delta"] <= 1 for w in waits)


def test_simulate_model_noise_reruns_each_policy_and_says_whether_the_ranking_held(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "simulate", "-w", "haste-simple", "-p", "fifo,fair", "--model-noise", "3", "--json")
    assert code == 0
    doc = json.loads(out)
    noise = doc["model_noise"]
    assert noise["orders"] == 4 and all(1 <= n <= 4 for n in noise["ranking_held"].values())
    assert set(noise["ranking_held"]) == {"avg_completion_s", "makespan_s"}
    for policy in ("fifo", "fair"):
        runs = noise["policies"][policy]["avg_completion_s"]
        assert len(runs) == 4 and runs[0] == pytest.approx(doc["results"][policy]["avg_completion_s"])
    assert len(set(noise["policies"]["fifo"]["makespan_s"])) > 1  # haste-simple's FIFO moves with the phases
    code, out, _ = _run(capsys, "simulate", "-w", "haste-simple", "-p", "fifo,fair", "--model-noise", "2", "--no-jobs")
    assert code == 0
    text = " ".join(out.split())  # the console wraps at 80 columns
    assert "model noise: 3 runs of each policy" in text
    assert "ranking by avg completion, fifo < fair: held in 3 of 3 runs; fifo below fair in 3" in text
    assert "ranking by makespan, fifo < fair: held in 3 of 3 runs; fifo below fair in 3" in text


def test_model_noise_warns_of_runs_that_left_jobs_unfinished(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "simulate", "-w", "haste-simple", "-p", "fifo", "--max-time", "200",
                        "--model-noise", "1", "--no-jobs")
    assert code == 0
    assert "warning: 2 of the 2 runs of fifo left jobs unfinished or failed" in " ".join(err.split())


def test_no_command_prints_help_and_returns_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys)
    assert code == 2
    assert "simulate" in out and "workloads" in out and "policies" in out


def test_simulate_help_mentions_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["simulate", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "example" in out
    assert "yarnctl simulate --workload haste-fig1" in out
    for option in ("--workload", "--policy", "--json", "--out", "--param", "--policy-config", "--no-plots"):
        assert option in out


# ---------------------------------------------------------------- listings

def test_workloads_json_lists_every_builtin(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "workloads", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert [r["name"] for r in rows] == builtin_names()
    for r in rows:
        assert isinstance(r["jobs"], int) and r["jobs"] > 0
        assert isinstance(r["tasks"], int) and r["tasks"] >= r["jobs"]
    fig1 = next(r for r in rows if r["name"] == "haste-fig1")
    assert (fig1["jobs"], fig1["tasks"], fig1["source"]) == (2, 8, "[HaSTE] Fig. 1")


def test_workloads_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "workloads")
    assert code == 0
    assert "haste-fig1" in out and "[HaSTE] Fig. 1" in out


def test_policies_json_lists_policies_and_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "policies", "--json")
    assert code == 0, err
    rows = {r["name"]: r for r in json.loads(out)}
    assert set(rows) == POLICIES
    for r in rows.values():
        assert isinstance(r["parameters"], dict)
        assert r["summary"]
    assert rows["fifo"]["parameters"] == {}
    assert {"assign_multiple", "max_assign", "queues"} <= set(rows["fair"]["parameters"])
    assert {"assign_multiple", "max_assign", "queues"} <= set(rows["drf"]["parameters"])
    assert {"queues", "max_am_resource_percent"} <= set(rows["capacity"]["parameters"])
    assert rows["ffd-dp"]["parameters"] == {"memory_weight": 1.0, "vcores_weight": 1.0}
    assert rows["fair"]["parameters"]["assign_multiple"] is False
    # the ranges of nested parameters too: each queue's, under queues.* (a queue name is the key)
    assert rows["capacity"]["ranges"]["queues.*.capacity"] == "in [0, 100]"
    assert rows["fair"]["ranges"]["queues.*.weight"] == ">= 0" and rows["fair"]["ranges"]["max_assign"] == ">= -1"
    assert (rows["fifo"]["paper"], rows["dress"]["paper"], rows["hmrf"]["paper"]) == (None, "[DRESS]", "[H-MRF]")


def test_json_output_is_strict_and_writes_an_infinite_default_as_inf(capsys: pytest.CaptureFixture[str]) -> None:
    """hmrf's window_s defaults to inf: `policies --json` wrote a bare Infinity (JSON.parse refuses it, jq 1.6 reads
    1.8e308)."""
    code, out, err = _run(capsys, "policies", "--json")
    assert code == 0, err
    rows = {r["name"]: r for r in json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in --json output"))}
    assert rows["hmrf"]["parameters"]["window_s"] == "inf"
    # the value as written is one `--param` takes back
    code, out, err = _run(capsys, "simulate", "--workload", "haste-fig1", "--policy", "hmrf", "--param",
                          f"hmrf.window_s={rows['hmrf']['parameters']['window_s']}", "--json")
    assert code == 0, err


# ---------------------------------------------------------------- console script

def _console_script() -> Path:
    script = Path(sys.executable).parent / ("yarnctl.exe" if sys.platform == "win32" else "yarnctl")
    assert script.exists(), f"console script not installed next to {sys.executable}"
    return script


def test_console_script_end_to_end() -> None:
    proc = subprocess.run([str(_console_script()), "simulate", "--workload", "haste-fig1", "--policy", "fifo"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "makespan" in proc.stdout
    assert "5.0" in proc.stdout


def test_console_script_reports_errors_without_traceback() -> None:
    proc = subprocess.run([str(_console_script()), "simulate", "--workload", "haste-fig1", "--policy", "nope"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: unknown policy 'nope'")
    assert "Traceback" not in proc.stderr


def test_max_am_share_overrides_every_policys_own(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Eight 2 GB AMs on 2 x 8 GB nodes (tests/policies/test_am_limit.py's deadlock): dress's own limit (0.5)
    finishes every job; with --max-am-share 1 every AM starts, no task fits and the jobs are left unfinished."""
    from tests.policies.test_am_limit import EIGHT_JOBS

    path = tmp_path / "am-deadlock.yaml"
    path.write_text(EIGHT_JOBS)
    code, out, err = _run(capsys, "simulate", "-w", str(path), "-p", "dress", "--json")
    assert code == 0, err
    assert json.loads(out)["results"]["dress"]["unfinished"] == 0
    code, out, err = _run(capsys, "simulate", "-w", str(path), "-p", "dress", "--json", "--max-am-share", "1")
    assert code == 0, err
    assert json.loads(out)["results"]["dress"]["unfinished"] == 8


def test_cluster_up_prints_the_metrics_port_the_os_chose(tmp_path: Path) -> None:
    """`cluster up --metrics-port 0` printed http://127.0.0.1:0/metrics; the policy server's status file names the port."""
    from yarnctl.cli.cluster import _metrics_port

    status = tmp_path / "serve-status.json"
    assert _metrics_port(9464, status) == 9464  # given: as given, the file not read
    assert _metrics_port(0, status) == f"PORT (the OS chose it: metrics_port in {status})"  # no file yet
    status.write_text('{"policy": "fifo", "metrics_port": 41234}')
    assert _metrics_port(0, status) == 41234
    status.write_text('{"policy": "fifo", "metrics_port": null}')
    assert str(_metrics_port(0, status)).startswith("PORT")
