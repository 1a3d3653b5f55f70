"""Two ranks' prints on one line, where they share a pipe that labels neither.

`print` under PYTHONUNBUFFERED=1 writes a line's text and its newline in two system calls.  Two
workers printing at the same moment into the pipe torchrun (without `--tee`) or srun (without
`--label`) gives them both can so write

    step 5/16 loss 0.200 step_time_ms 50.2step 5/16 loss 0.200 step_time_ms 500.1

and then the two newlines: read as one line, one rank's step was lost, a slow one as easily as
any.  Seen on a busy 2-core machine in two or three of six runs of a two-node job.  (`logging`
writes a record and its newline in one call: lines that begin with a timestamp do not glue.)

The second print begins as the first does: the same words up to the line's first number.  A
line whose head (at least HEAD_MIN characters before its first digit, three of them letters)
comes again, followed by a digit, is cut there.  Not inside a word or a phrase: after `_`, `/`
or `.` (`timing_s/step:12`) or after a word and a space (`Epoch: 0 | Step: 10 | PPO Epoch: 1`,
DeepSpeed-Chat's one print) never, and after a letter (`substep 5`; but a print that ends in a
unit, `step_avg:403.26ms`, glues so too) only where the two pieces are about as long as each
other, two prints of one shape.
"""
from __future__ import annotations

import re

HEAD_MIN, HEAD_MAX = 4, 40
_HEAD = re.compile(r"[^\d\n]{%d,%d}+(?=\d)" % (HEAD_MIN, HEAD_MAX))
"""The words before a line's first number; possessive, so a line with no digit in reach fails
at once.  (`re`: ~0.1 us faster a call than `regex` on this pattern.)"""
ALIKE = 0.25
"""How much longer or shorter than the first the second of two pieces cut after a letter may be."""


def glued_at(line: str, pos: int = 0) -> int:
    """Where the second of two prints glued into `line[pos:]` begins (0: nowhere)."""
    if line.find(line[pos:pos + HEAD_MIN], pos + HEAD_MIN) < 0:
        return 0    # the head's first characters are not there again (most lines: ~0.1 us)
    m = _HEAD.match(line, pos)
    if m is None:
        return 0
    head = m.group()
    size, at = len(head), line.find(head, m.end())
    while at > 0:
        before = line[at - 1]
        if line[at + size:at + size + 1].isdigit() and before not in "_/." and not (
                before == " " and at - 2 >= pos and line[at - 2].isalpha()) and (
                not before.isalpha() or abs(len(line) - 2 * at + pos) <= ALIKE * (at - pos)):
            return at if sum(c.isalpha() for c in head) >= 3 else 0
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
