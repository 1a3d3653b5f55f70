"""The pre-check: `interesting` is exactly "holds a keyword", and `candidate_lines` never misses
a line that `feed` must see."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ridgescope.parsers.scan import ANCHORS, KEYWORDS, SHORT_KEYWORDS, candidate_lines, interesting

from .conftest import CORPUS
from .test_fuzz import FRAGMENTS

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# pieces of every keyword, so that examples hold keywords, near misses and split keywords
PIECES = sorted({k[i:j] for k in KEYWORDS for i in range(len(k)) for j in range(i + 1, len(k) + 1)})
text = st.lists(st.sampled_from(PIECES + FRAGMENTS) | st.text(max_size=8), max_size=20).map("".join)


def test_every_keyword_is_found_through_an_anchor_or_by_bytes():
    assert set(ANCHORS) | set(SHORT_KEYWORDS) == set(KEYWORDS)
    assert all(len(a) == 3 and a in k for k, a in ANCHORS.items())
    assert all(len(k) < 3 for k in SHORT_KEYWORDS)
    assert all(interesting(f"x {k} y") for k in KEYWORDS)


@SETTINGS
@given(text)
def test_interesting_is_holding_a_keyword(s):
    assert interesting(s) == any(k in s for k in KEYWORDS)


def must_see(line: bytes, max_line: int) -> bool:
    """What `feed` cannot skip: a keyword, a byte outside printable ASCII (tab aside), a long line."""
    return (len(line) > max_line or any(b >= 127 or (b < 32 and b != 9) for b in line)
            or interesting(line.decode("ascii")))


def check_block(data: bytes, max_line: int):
    ends, cands = candidate_lines(data, max_line)
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    assert len(ends) == len(lines)
    assert ends == [i for i, b in enumerate(data) if b == 10] + ([] if data.endswith(b"\n") else [len(data)])
    assert cands == sorted(set(cands)) and all(0 <= j < len(lines) for j in cands)
    found = set(cands)
    missed = [j for j, line in enumerate(lines) if j not in found and must_see(line, max_line)]
    assert not missed, [lines[j] for j in missed]
    return lines, cands


raw_line = (text.map(lambda s: s.encode("utf-8", "surrogatepass")) | st.binary(max_size=40)).map(
    lambda b: b.replace(b"\n", b" "))


@SETTINGS
@given(st.lists(raw_line, min_size=1, max_size=30), st.booleans(), st.sampled_from([5, 40, 16384]))
def test_candidates_hold_every_line_feed_must_see(lines, final_newline, max_line):
    data = b"\n".join(lines) + (b"\n" if final_newline else b"")
    if data:
        check_block(data, max_line)


def test_chatter_is_skipped_and_keywords_at_every_offset_are_found():
    chatter = b"[2024-05-01 10:00:00,123] INFO launching worker on host node-7 with 8 slots"
    for keyword in KEYWORDS:
        for pad in range(4):    # the trigram scan reads every fourth offset four times over
            lines = [chatter] * 5 + [b"x" * pad + keyword.encode() + b" 1"] + [chatter] * 5
            _, cands = check_block(b"\n".join(lines), 16384)
            assert cands == [5], (keyword, pad)


def test_corpus_blocks():
    for path in sorted(CORPUS.rglob("*.log")):
        data = path.read_bytes()
        for pos in range(0, len(data), 65536):
            block = data[pos:pos + 65536]
            if block:
                check_block(block, 16384)
