"""How far each rank had got when a collective hung, as PyTorch's NCCL watchdog says it.

A collective that times out on one rank hangs on the others too; PyTorch's recent releases then
have the ranks say, in each process group (PG), the number of the last collective they enqueued
and of the last that completed.  A rank that enqueued fewer than the others never reached the
collective they wait in: the culprit, where the ranks that time out are its victims.
- The rank that timed out, after `Watchdog caught collective operation timeout` (`events.py`):
  `[PG ID 0 PG GUID 0(default_pg) Rank 7]  failure detected by watchdog at work sequence id:
  460631 PG status: last enqueued work: 460631, last completed work: 460630`, or, in releases
  before it, `[PG 1 Rank 0] Timeout at NCCL work: 7753, last enqueued NCCL work: 7755, last
  completed NCCL work: 7752.`.
- Every rank the flight recorder's dump signal reaches: `Received a dump signal due to a
  collective timeout from  rank 6 and we will try our best to dump the debug info. Last enqueued
  NCCL work: 460631, last completed NCCL work: 460630.` (`from this local rank` where it timed out).
- The heartbeat monitor, which ends a rank whose watchdog itself hung (in a CUDA call, or held
  from the GIL): `ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress
  in monitoring enqueued collectives.`
"""
from __future__ import annotations

from .base import Pattern

PG = Pattern(r"\[PG (?:ID )?(\d++) (?:PG GUID \w{1,40}+ ?)?(?:\(([^)]{1,200}+)\) ?)?Rank (\d++)\]")
"""The process group a message is of, and the rank's place in it: `[PG ID 0 PG GUID
0(default_pg) Rank 7]`, `[PG ID 2 PG GUID 9 Rank 2]`, `[PG 1 Rank 0]`, `[PG 0 (default_pg) Rank 3]`."""
DUMP = Pattern(r"Received a dump signal due to a collective timeout from\s++(?:rank (\d++)|this local rank) "
               r".{0,200}?Last enqueued \w{1,20}+ work: (-?\d++), last completed \w{1,20}+ work: (-?\d++)")
FAILED_AT = Pattern(r"failure detected by watchdog at work sequence id: (\d++) PG status: "
                    r"last enqueued work: (-?\d++), last completed work: (-?\d++)")
TIMEOUT_AT = Pattern(r"Timeout at NCCL work: (\d++), last enqueued NCCL work: (-?\d++), "
                     r"last completed NCCL work: (-?\d++)")
STUCK = Pattern(r"watchdog got stuck for (\d++) seconds")


def read(line: str, rank: int | None) -> tuple[int | None, dict] | None:
    """(rank, fields) of a watchdog message of how far the rank got; None for any other line.
    Where no launcher put the rank in front, a message of the default PG gives it."""
    timed_out = None
    if "work: " in line:
        m = DUMP.search(line)
        w = None if m is not None else FAILED_AT.search(line) or TIMEOUT_AT.search(line)
        if m is not None:
            fields: dict = {"error": "nccl_dump", "last_enqueued": int(m.group(2)), "last_completed": int(m.group(3))}
            timed_out = int(m.group(1)) if m.group(1) is not None else None
        elif w is not None:
            fields = {"error": "nccl_watchdog", "seq": int(w.group(1)), "last_enqueued": int(w.group(2)),
                      "last_completed": int(w.group(3))}
        else:
            return None
    elif "watchdog got stuck" in line:
        stuck = STUCK.search(line)
        if stuck is None:
            return None
        fields = {"error": "nccl_heartbeat", "stuck_s": int(stuck.group(1))}
    else:
        return None
    pg = PG.search(line)
    if pg is not None:
        fields.update(pg_id=int(pg.group(1)), pg_name=pg.group(2), pg_rank=int(pg.group(3)))
        if rank is None and (pg.group(1) == "0" or pg.group(2) == "default_pg"):
            rank = int(pg.group(3))
    if fields["error"] == "nccl_dump":     # whose watchdog fired (this rank's: `this local rank`)
        fields["timed_out_rank"] = timed_out if timed_out is not None else rank
    return rank, fields
