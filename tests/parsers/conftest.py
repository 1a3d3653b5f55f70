from __future__ import annotations

import functools
from pathlib import Path

import pytest

from ridgescope.parsers import Dispatcher

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"


@functools.lru_cache(maxsize=None)
def _parse(rel: str, log_format: str | None = None) -> tuple:
    disp = Dispatcher(log_format)
    out = []
    with open(CORPUS / rel, "rb") as fh:
        for raw in fh:
            out.extend(disp.feed(raw))
    out.extend(disp.flush())
    return tuple(out), dict(disp.stats)


@pytest.fixture
def parse_log():
    def run(rel: str, log_format: str | None = None) -> list[dict]:
        return list(_parse(rel, log_format)[0])
    return run


@pytest.fixture
def parse_stats():
    def run(rel: str, log_format: str | None = None) -> dict:
        return _parse(rel, log_format)[1]
    return run


def feed_all(lines, log_format=None, rank=None):
    d = Dispatcher(log_format)
    out = []
    for line in lines:
        out.extend(d.feed(line, rank))
    out.extend(d.flush())
    return out, d
