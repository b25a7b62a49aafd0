"""The decision log: one line per call with the request embedded as sent, and a reader that survives a cut-off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from wirefixtures import STATE, compact, doc, text

from yarnctl.bridge.decisionlog import DecisionLog, DecisionLogError, LogReader
from yarnctl.bridge.service import PolicyService
from yarnctl.policies import make_policy
from yarnctl.policies.contract import PolicyBase


def _drive(path: Path, *requests: str) -> list[str]:
    dlog = DecisionLog(path)
    s = PolicyService(make_policy("fifo"), dlog)
    answers = [s.decide(r) for r in requests]
    dlog.close()
    return answers


def test_one_line_per_call_with_raw_request_and_response(tmp_path: Path) -> None:
    one_line = compact(doc("request-full.json"))
    requests = [one_line, text("request-delta.json"), "garbage", compact({**doc("request-delta.json"), "seq": 4})]
    answers = _drive(tmp_path / "d.jsonl", *requests)
    raw = (tmp_path / "d.jsonl").read_text()
    lines = raw.splitlines()
    assert len(lines) == 4 and raw.endswith("\n")
    assert f'"req":{one_line},' in lines[0]  # embedded as-is, not re-encoded
    recs = list(LogReader(tmp_path / "d.jsonl"))
    assert [r["outcome"] for r in recs] == ["ok", "ok", "error", "resync"]
    assert [r["seq"] for r in recs] == [1, 2, 3, 4]
    assert [r["resp"] for r in recs] == [json.loads(a) for a in answers]
    assert recs[1]["req"] == doc("request-delta.json")  # multi-line JSON is folded into the one line
    assert recs[2]["req"] == "garbage"
    assert all(r["node"] in ("n1:45454", "n2:45454", "") and r["policy"] == "fifo" and r["us"] >= 0
               and r["t"] > 1_600_000_000_000 for r in recs)


def test_a_text_utf8_cannot_hold_is_written_escaped_and_the_next_record_stays_whole(tmp_path: Path) -> None:
    """A record is written in pieces: one that could not be encoded would leave its head to glue onto the next.
    The service never logs one (the wire refuses lone surrogates), so the log is written to directly here."""
    dlog = DecisionLog(tmp_path / "d.jsonl")
    dlog.write(1, "n1:1", "fifo", "ok", 5, '{"seq":1,"x":"\ud800"}', True, '{"a":[]}', [])
    dlog.write(2, "n1:1", "fifo", "ok", 5, '{"seq":2}', True, '{"a":[]}', [])
    dlog.close()
    recs = list(LogReader(tmp_path / "d.jsonl"))
    assert [r["seq"] for r in recs] == [1, 2]
    assert recs[0]["req"] == {"seq": 1, "x": "\ud800"} and recs[1]["req"] == {"seq": 2}


def test_rejections_are_logged(tmp_path: Path) -> None:
    class Greedy(PolicyBase):
        name = "greedy"

        def decide(self, snap, node_id):  # type: ignore[no-untyped-def]
            from yarnctl.model import Assignment, Decision
            return Decision((Assignment("application_1700000000000_0001", 10, node_id, 5),))

    dlog = DecisionLog(tmp_path / "d.jsonl")
    PolicyService(Greedy(), dlog).decide(text("request-full.json"))  # type: ignore[arg-type]
    dlog.close()
    [rec] = LogReader(tmp_path / "d.jsonl")
    assert rec["resp"] == {"seq": 1}
    assert rec["rejected"] == [["a", "application_1700000000000_0001", "over-outstanding",
                                "5 containers for application_1700000000000_0001 priority 10, only 1 requested"]]


def test_the_policys_reasons_are_logged(tmp_path: Path) -> None:
    class Explaining(PolicyBase):
        name = "explaining"

        def decide(self, snap, node_id):  # type: ignore[no-untyped-def]
            from yarnctl.model import Assignment, Decision
            app = "application_1700000000000_0001"
            return Decision((Assignment(app, 10, node_id, 1),), reasons={app: "fitness 12.0, urgency 0.5"})

    dlog = DecisionLog(tmp_path / "d.jsonl")
    PolicyService(Explaining(), dlog).decide(text("request-full.json"))  # type: ignore[arg-type]
    dlog.close()
    [rec] = LogReader(tmp_path / "d.jsonl")
    assert rec["why"] == {"application_1700000000000_0001": "fitness 12.0, urgency 0.5"}
    assert rec["resp"]["a"]  # the assignment went out
    fifo = _drive(tmp_path / "f.jsonl", text("request-full.json"))
    assert fifo and "why" not in next(iter(LogReader(tmp_path / "f.jsonl")))  # no reasons, no key


def test_flushed_within_a_second_without_close(tmp_path: Path) -> None:
    import time
    dlog = DecisionLog(tmp_path / "d.jsonl")
    PolicyService(make_policy("fifo"), dlog).decide(text("request-full.json"))
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and not (tmp_path / "d.jsonl").read_text():
        time.sleep(0.05)
    assert (tmp_path / "d.jsonl").read_text().count("\n") == 1
    dlog.close()


def test_cut_off_last_line_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    _drive(path, *[text(n) for n in STATE])
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])
    reader = LogReader(path)
    assert [r["seq"] for r in reader] == [1, 2]
    assert reader.truncated and reader.records == 2


@pytest.mark.parametrize(
    "content, message",
    [
        (b'{"t":1}\nnot json\n', "1: not a decision log record (needs"),
        (b"hello\nworld\n", "1: not a decision log record (not JSON)"),
        (b'[1]\n', "1: not a decision log record"),
    ],
    ids=["missing-keys", "not-json", "not-object"],
)
def test_garbage_is_refused_naming_the_line(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(content)
    with pytest.raises(DecisionLogError) as e:
        list(LogReader(path))
    assert str(e.value).startswith(f"{path}:{message}")


def test_missing_log(tmp_path: Path) -> None:
    with pytest.raises(DecisionLogError, match="cannot read the decision log"):
        list(LogReader(tmp_path / "nope.jsonl"))


@pytest.mark.parametrize("under", ["x", "x/y"], ids=["child", "grandchild"])
def test_a_file_where_a_directory_should_be_is_named(tmp_path: Path, under: str) -> None:
    (tmp_path / "afile").write_text("")
    with pytest.raises(DecisionLogError) as e:  # mkdir said only "File exists" / "Not a directory"
        DecisionLog(tmp_path / "afile" / under)
    assert str(e.value) == f"{tmp_path / 'afile' / under}: cannot open the decision log: {tmp_path / 'afile'} is a file, not a directory"
