"""Test doubles for yarnctl.rm: a scripted fake Transport and a fixture loader."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from yarnctl.rm import Reply, TransportFailure

FIXTURES = Path(__file__).resolve().parent / "fixtures"

Answer = Reply | Exception | Callable[[str, Mapping[str, str]], Reply]


def fixture(name: str) -> str:
    return (FIXTURES / f"{name}.json").read_text()


def fixture_doc(name: str) -> Any:
    return json.loads(fixture(name))


class FakeTransport:
    """Answers by (base URL, path suffix) from a table; records every URL asked, in order."""

    def __init__(self, table: dict[tuple[str, str], Answer]) -> None:
        self.table = table
        self.calls: list[str] = []

    def get(self, url: str, params: Mapping[str, str]) -> Reply:
        self.calls.append(url)
        for (base, suffix), answer in self.table.items():
            if url.startswith(base) and url[len(base):].endswith(suffix):
                if isinstance(answer, Exception):
                    raise answer
                if callable(answer):
                    return answer(url, params)
                return Reply(url, answer.status, answer.text, answer.location)
        raise TransportFailure("connection failed ([Errno 111] Connection refused)")


def ok(text: str) -> Reply:
    return Reply("", 200, text)


def info(ha_state: str) -> Reply:
    doc = fixture_doc("cluster_info")
    doc["clusterInfo"]["haState"] = ha_state
    return ok(json.dumps(doc))


def standby_redirect(to: str) -> Reply:
    """What RMWebAppFilter (2.7.7) sends from a standby RM for a REST path."""
    return Reply("", 307, f"This is standby RM. The redirect url is: {to}\n", location=to)
