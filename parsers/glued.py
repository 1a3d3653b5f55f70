"""Two ranks' prints on one line, where they share a pipe that labels neither.

`print` under PYTHONUNBUFFERED=1 writes a line's text and its newline in two system calls.  Two
workers printing at the same moment into the pipe torchrun (without `--tee`) or srun (without
`--label`) gives them both can so write

    step 5/16 loss 0.200 step_time_ms 50.2step 5/16 loss 0.200 step_time_ms 500.1

and then the two newlines: read as one line, one rank's step was lost, a slow one as easily as
any.  Seen on a busy 2-core machine in about one run of six of a two-node job.

The second print begins as the first does: the same words up to the line's first number.  A
line whose head (at least HEAD_MIN characters before its first digit, three of them letters)
comes again, followed by a digit and not inside a word (`timing_s/step:12`), is cut there.
"""
from __future__ import annotations

import regex

HEAD_MIN, HEAD_MAX = 4, 40
_HEAD = regex.compile(r"[^\d\n]{%d,%d}+(?=\d)" % (HEAD_MIN, HEAD_MAX))
"""The words before a line's first number; possessive, so a line with no digit in reach fails
at once."""


def glued_at(line: str, pos: int = 0) -> int:
    """Where the second of two prints glued into `line[pos:]` begins (0: nowhere)."""
    m = _HEAD.match(line, pos)
    if m is None:
        return 0
    head = m.group()
    if sum(c.isalpha() for c in head) < 3:
        return 0    # `[`, a bare timestamp's punctuation: no words to tell a print's start
    size, at = len(head), line.find(head, m.end())
    while at > 0:
        if line[at + size:at + size + 1].isdigit() and not _in_a_word(line[at - 1]):
            return at
        at = line.find(head, at + 1)
    return 0


def glued_pieces(line: str) -> list[str]:
    """`line` cut where each print after its first begins ([line] where none does); no piece
    holds its own head again, so none is cut further."""
    cuts, at = [0], glued_at(line)
    while at:
        cuts.append(at)
        at = glued_at(line, at)
    if len(cuts) == 1:
        return [line]
    cuts.append(len(line))
    return [line[a:b] for a, b in zip(cuts, cuts[1:])]


def _in_a_word(before: str) -> bool:
    """Does the head found again continue the word before it (`substep 5`, `timing_s/step:5`)?"""
    return before.isalpha() or before in "_/"
