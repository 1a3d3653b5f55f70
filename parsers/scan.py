"""The pre-check: which log lines might some parser look at.

Most of a log is chatter that no parser reads (argument dumps, launcher and library messages).
`interesting` rejects one such line with a few substring tests in C.  `candidate_lines` does the
same for a whole block of bytes in a handful of vectorised passes, so that a block of chatter
costs well under a microsecond a line: one pass per keyword (`bytes.find`) was the floor before.
"""
from __future__ import annotations

import numpy as np

RATE_PER_UNIT = tuple(f"{digit}s/" for digit in range(10))
"""tqdm's rate where a step takes over a second, `1.52s/it` (or in the loop's own unit,
`s/batch`): a bar's redraw may hold nothing else."""
KEYWORDS = ("tep", "NCCL", "oss", "ime", "iter", "%|", "rror", "Trace", "heckpoint", "poch", "/s", *RATE_PER_UNIT,
            "val", "{", "esum", "estart", "ontinuing", "xitcode", "Kill", "atency", "Speed", "DLL ",
            "[batch=", "emory", "detected", "ppl", "ailed", "chosen_", "CHECKPOINT", "world_rank=",
            "process group for", "[token=", "[sample=", "egmentation fault", "core dumped", "Acc@",
            "% \u2501", "% \u2500", "  all ", "maxDets", "Save weights", "cur metric", "save model in",
            "save best model", "Rtt/Rnk", "Restoring parameters", "noticed that process",
            "Num examples = ", "accumulation) = ", "Parallel GPUs = ", "BAD TERMINATION", "global_ranks=[")
"""Every word that some parser or event looks for, as a stem that covers both cases ('tep' for
step/Step).  A line holding none of them yields no record."""


def interesting(s: str) -> bool:
    """Does the line hold any of KEYWORDS?  (Spelt out: a chain of `in` tests took 1.35 us on a
    line of chatter, a loop over KEYWORDS 1.64 us; a test checks that the two agree.  Each test
    costs a line of chatter ~40 ns: the keywords with a `=` are tested only where there is one.)"""
    return ("tep" in s or "oss" in s or "ime" in s or "iter" in s or "%|" in s or "NCCL" in s
            or "rror" in s or "Trace" in s or "heckpoint" in s or "poch" in s or "/s" in s
            or "val" in s or "{" in s or "esum" in s or "estart" in s or "ontinuing" in s
            or "xitcode" in s or "Kill" in s or "atency" in s or "Speed" in s or "DLL " in s
            or "emory" in s or "detected" in s or "ppl" in s or "ailed" in s
            or "chosen_" in s or "CHECKPOINT" in s or "process group for" in s
            or "egmentation fault" in s or "core dumped" in s or "Acc@" in s
            or ("% " in s and ("% \u2501" in s or "% \u2500" in s)) or "  all " in s or "maxDets" in s
            or "Save weights" in s or "cur metric" in s or "Rtt/Rnk" in s or "Restoring parameters" in s
            or "noticed that process" in s or "BAD TERMINATION" in s
            or ("ave " in s and ("save model in" in s or "save best model" in s))
            or ("=" in s and ("[batch=" in s or "world_rank=" in s or "[token=" in s or "[sample=" in s
                              or "Num examples = " in s or "accumulation) = " in s or "Parallel GPUs = " in s
                              or "global_ranks=[" in s))
            or ("s/" in s and _rate_per_unit(s)))


def _rate_per_unit(s: str) -> bool:
    """Does `s` hold one of RATE_PER_UNIT (a digit, then `s/`)?  (One search for `s/`, which paths
    hold too, then a look at the character before each.)"""
    at = s.find("s/", 1)
    while at > 0:
        if "0" <= s[at - 1] <= "9":
            return True
        at = s.find("s/", at + 2)
    return False


ANCHORS = {"tep": "tep", **{rate: rate for rate in RATE_PER_UNIT}, "NCCL": "NCC", "oss": "oss", "ime": "ime", "iter": "ite", "rror": "ror",
           "Trace": "rac", "heckpoint": "ckp", "poch": "poc", "val": "val", "esum": "esu",
           "estart": "art", "ontinuing": "nui", "xitcode": "itc", "Kill": "Kil", "atency": "ncy",
           "Speed": "Spe", "DLL ": "LL ", "[batch=": "[ba", "emory": "mor", "detected": "det",
           "ppl": "ppl", "ailed": "ail", "chosen_": "sen", "CHECKPOINT": "CKP", "world_rank=": "d_r",
           "process group for": "p f", "[token=": "[to", "[sample=": "[sa",
           "egmentation fault": "egm", "core dumped": "dum", "Acc@": "cc@",
           "% \u2501": "% \u2501", "% \u2500": "% \u2500", "  all ": "  a", "maxDets": "xDe",
           "Save weights": "Sav", "cur metric": "r m", "save model in": "l i", "save best model": "bes", "Rtt/Rnk": "t/R",
           "Restoring parameters": "g p", "noticed that process": "ced", "Num examples = ": "m e",
           "accumulation) = ": "n) ", "Parallel GPUs = ": "l G", "BAD TERMINATION": "BAD",
           "global_ranks=[": "l_r"}
"""For each keyword of three or more characters, three of its characters (the rarest in the
corpus's chatter; of Ultralytics' bar, `% ` and the first byte of its cell, all the table
reads): every line that holds the keyword holds these, so the lines found through
them are a superset, and `interesting` drops the extra ones."""
SHORT_KEYWORDS = ("{", "%|", "/s")
"""The keywords too short for a trigram: found by comparing bytes."""


def _trigram_table():
    """Indexed by three bytes, little-endian.  16 MiB of address space, but calloc'd: only the
    pages of the anchors are ever written, and reads of the rest share the kernel's zero page."""
    table = np.zeros(1 << 24, np.bool_)
    for anchor in ANCHORS.values():
        b = anchor.encode()
        table[b[0] | b[1] << 8 | b[2] << 16] = True
    return table


_TRIGRAMS = _trigram_table()
_LOW3 = np.uint32(0xFFFFFF)
_SPACE = np.uint8(32)
_PAD = b"\0\0\0\0"


def candidate_lines(data: bytes, max_line: int) -> tuple[list[int], list[int]]:
    """Line ends and candidates of a non-empty block of lines.

    Returns ``(ends, lines)``: ``ends[i]`` is the offset of line i's newline (``len(data)`` for
    a last line without one), and ``lines`` the indexes of the lines that hold a keyword, a byte
    outside printable ASCII (tab aside: control characters, ANSI codes, UTF-8 that may be
    invalid) or more than ``max_line`` bytes.  Every other line is one `interesting` rejects."""
    n = len(data)
    buf = data + _PAD
    body = np.frombuffer(buf, np.uint8, count=n)
    newline = body == 10
    marked = (body - _SPACE) >= 95          # below ' ' or above '~'
    marked ^= newline
    marked &= body != 9
    marked |= body == 123                                               # {
    marked[:-1] |= (body[:-1] == 37) & (body[1:] == 124)                # %|
    marked[:-1] |= (body[:-1] == 47) & (body[1:] == 115)                # /s
    for offset in range(4):
        # every fourth position, as four bytes: the low three are the trigram starting there
        quads = np.frombuffer(buf, "<u4", count=(n - offset + 3) // 4, offset=offset)
        marked[offset::4] |= _TRIGRAMS.take(quads & _LOW3)
    ends = np.flatnonzero(newline)
    if data[n - 1] != 10:
        ends = np.append(ends, n)
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    # each line's bytes and its newline (never marked): one segment per line, none empty
    flagged = np.logical_or.reduceat(marked, starts)
    flagged |= ends - starts > max_line
    return ends.tolist(), np.flatnonzero(flagged).tolist()

