"""The container usage trace CSV: both layouts, a round trip, and one clear error per kind of bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from yarnctl.errors import WorkloadError
from yarnctl.trace.usage import ContainerUsage, mean_of_samples, read_trace, write_trace

HEADER = "container,job,user,memory_mb,vcores,start_s,end_s,used_memory_mb,used_vcores"


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "trace.csv"
    p.write_text(text)
    return p


def test_means_layout_reads_rows_in_file_order_and_ignores_other_columns(tmp_path: Path) -> None:
    p = write(tmp_path, "node," + HEADER + ",is_am\n"
                        "n1,c2,j1,alice,2048,1,0,100,512,0.5,0\n"
                        "n2,c1,j1,alice,4096,2,10,20,4096,3,1\n")
    got = read_trace(p)
    assert got == [ContainerUsage("c2", "j1", "alice", 2048, 1, 0, 100, 512, 0.5, False),
                   ContainerUsage("c1", "j1", "alice", 4096, 2, 10, 20, 4096, 3, True)]
    assert got[1].duration_s == 10


def test_samples_layout_is_time_weighted(tmp_path: Path) -> None:
    # c1 lives 0..100: 1000 MB for 0..10, 3000 MB for 10..100 -> (10 * 1000 + 90 * 3000) / 100 = 2800
    p = write(tmp_path, HEADER + ",t_s\n"
                        "c1,j,u,4096,2,0,100,3000,2,10\n"  # samples need not be sorted
                        "c1,j,u,4096,2,0,100,1000,0,0\n"
                        "c2,j,u,1024,1,5,5,100,1,5\n")  # no time to weigh by: the plain mean
    c1, c2 = read_trace(p)
    assert (c1.used_memory_mb, c1.used_vcores) == pytest.approx((2800.0, 1.8))
    assert (c2.container, c2.used_memory_mb) == ("c2", 100.0)


@pytest.mark.parametrize("samples, start, end, want", [
    ([(0, 10, 1), (50, 30, 3)], 0, 100, (20, 2)),  # two halves
    ([(-10, 99, 9), (0, 10, 1)], 0, 10, (10, 1)),  # a sample before the start counts only from the start
    ([(0, 10, 1), (20, 99, 9)], 0, 10, (10, 1)),  # and one after the end not at all
    ([(5, 4, 2), (5, 6, 4)], 5, 5, (5, 3)),  # an instant: plain mean
], ids=["halves", "before-start", "after-end", "instant"])
def test_mean_of_samples(samples: list[tuple[float, float, float]], start: float, end: float,
                         want: tuple[float, float]) -> None:
    assert mean_of_samples(samples, start, end) == pytest.approx(want)


def test_write_then_read_round_trips(tmp_path: Path) -> None:
    rows = [ContainerUsage("c1", "j1", "u", 2048, 1, 0.125, 345.5121, 409.6, 0.9, False),
            ContainerUsage("c2", "j1", "u", 1536, 1, 0, 10, 1536, 1, True)]
    p = write_trace(tmp_path / "sub" / "t.csv", rows, ("node",), [("n1",), ("n2",)])
    assert p.read_text().splitlines()[0] == HEADER + ",is_am,node"
    assert read_trace(p) == rows


@pytest.mark.parametrize("text, message", [
    ("", "empty file; expected a header row"),
    ("container,job,user,memory_mb\n", "header: missing column(s) vcores,start_s,end_s,used_memory_mb,used_vcores"),
    (HEADER + "\n", "no containers (only a header)"),
    (HEADER + "\nc1,j,u,2048,1,0,10\n", "line 2: 7 fields, the header has 9"),
    (HEADER + "\nc1,j,u,2GB,1,0,10,1,1\n", "line 2, memory_mb: not a number: '2GB'"),
    (HEADER + "\nc1,j,u,2048,1,0,nan,1,1\n", "line 2, end_s: not a finite number of at most 1e+15: 'nan'"),
    (HEADER + "\nc1,j,u,0,1,0,10,1,1\n", "line 2, memory_mb: the allocation must be > 0, got 0"),
    (HEADER + "\nc1,j,u,2048,1,0,10,-1,1\n", "line 2, used_memory_mb: negative use -1"),
    (HEADER + "\nc1,j,u,2048,1,10,5,1,1\n", "line 2, end_s: 5 is before start_s 10"),
    (HEADER + "\nc1,,u,2048,1,0,10,1,1\n", "line 2, job: empty"),
    (HEADER + "\nc1,j,u,2048,1,0,10,1,1\n\nc1,j,u,2048,1,0,10,1,1\n", "line 4, container: 'c1' already on line 2"),
    (HEADER + ",is_am\nc1,j,u,2048,1,0,10,1,1,yes\n", "line 2, is_am: expected 0 or 1, got 'yes'"),
    (HEADER + ",t_s\nc1,j,u,2048,1,0,10,1,1,0\nc1,j,v,2048,1,0,10,1,1,5\n", "line 3, user: container 'c1' has user 'u'"),
    (HEADER + ",t_s\nc1,j,u,2048,1,0,10,1,1,0\nc1,j,u,4096,1,0,10,1,1,5\n", "line 3, memory_mb: container 'c1' has"),
    (HEADER + "\nc1,j,u,1e-200,1,0,1e-200,1,1\n",
     "line 2, memory_mb: 1e-200 held for 1e-200 s is too small an allocation to measure E = used / allocated"),
    (HEADER + "\nc1,j,u,2048,1,0,1e-320,1,1\n", "line 2, memory_mb: 2048 held for 9.99989e-321 s is too small"),
    # alone its E overflowed; two of 1e307 overflowed their job's sums, whose E showed as "-"
    (HEADER + "\nc1,j,u,1e307,1,0,10,1,1\n", "line 2, memory_mb: not a finite number of at most 1e+15: '1e307'"),
    (HEADER + "\nc1,j,u,2048,1e-300,0,10,1,1e15\n",
     "line 2, used_vcores: 1e15 of 1e-300 allocated for 10 s: E = used / allocated is beyond a float"),
], ids=["empty", "missing-columns", "header-only", "short-row", "not-a-number", "nan", "zero-allocation",
        "negative-use", "end-before-start", "empty-job", "duplicate-container", "bad-is-am",
        "sample-user-differs", "sample-allocation-differs", "allocation-underflows", "duration-underflows",
        "allocation-overflows", "efficiency-overflows"])
def test_bad_input_names_the_line_and_column(tmp_path: Path, text: str, message: str) -> None:
    p = write(tmp_path, text)
    with pytest.raises(WorkloadError) as e:
        read_trace(p)
    assert str(e.value).startswith(f"{p}: {message}")
    assert "\n" not in str(e.value)


def test_missing_file_is_a_workload_error(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="cannot read: No such file"):
        read_trace(tmp_path / "nope.csv")


def test_binary_file_is_a_workload_error(tmp_path: Path) -> None:
    p = tmp_path / "x.csv"
    p.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    with pytest.raises(WorkloadError, match="not a CSV text file"):
        read_trace(p)
