"""Per-rank step windows (correlate) and per-job step assembly (aggregate), as pure state machines.

The Faust agents keep the returned state in plain tables, keyed job/rank and job.  Each function
takes the previous state and one message and returns the new state and what to emit, so the
whole flow is testable without Kafka.  States are JSON-friendly dicts (Faust table values).
"""
from __future__ import annotations

import statistics
from collections.abc import MutableMapping

from ridgescope.pipeline import breakdown, verdict

# --- correlate: one rank's open windows ------------------------------------------------------

LANE_HISTORY = 50
"""Recent windows of a rank whose lanes make its own baseline."""
UNTIMED_HOLD_STEPS = 16
"""How many steps' records may come after a save or an evaluation that ran after them (see
`_ran_after`): more than a pipe's lag behind the other."""


def new_rank_state() -> dict:
    return {"open": {}, "closed_through": -1, "hook_seen": False, "lane_history": {},
            "drawn": None, "ended": False, "saved_ms": 0.0, "untimed_work": [], "untimed_after": -1,
            "untimed_read_ns": 0, "untimed_read_at": -1}


def step_rank_row(payload: dict, source: str) -> dict:
    """The step_rank payload for one closed window of one rank."""
    if source == "hook":
        charges = breakdown.rank_lanes_ns(payload)
        arrival = breakdown.arrival_ns(payload["spans"], payload["buckets"], payload["t1_ns"])
    else:
        charges = log_lanes_ns(payload)
        arrival = payload["t1_ns"]
    row = {
        "step": payload["step"], "t0_ns": payload["t0_ns"], "t1_ns": payload["t1_ns"],
        "duration_ms": round((payload["t1_ns"] - payload["t0_ns"]) / 1e6, 3),
        "lanes_ms": breakdown.to_ms(charges), "arrival_ns": arrival,
        "world_size": payload.get("world_size", 0), "source": source,
    }
    for key in ("slowest_ranks", "untimed_work", "lanes_across_ranks", "rank_from_print_order",
                "read_late_ms"):
        if payload.get(key):
            row[key] = payload[key]
    if source == "hook" and any(span[0] == "evaluation" for span in payload["spans"]):
        row["evaluated"] = True     # the hook saw an evaluation loop in the window
    return row


def log_lanes_ns(payload: dict) -> dict[str, int]:
    """Lanes from a framework's own printed timers, when it prints them; the rest is idle."""
    window = payload["t1_ns"] - payload["t0_ns"]
    charges = {lane: 0 for lane in breakdown.lanes.PRIORITY}
    for lane, ms in (payload.get("lanes_ms") or {}).items():
        if lane in charges:
            charges[lane] = int(ms * 1e6)
    used = sum(charges.values())
    if used > window:  # printed timers can overlap; scale them into the window
        charges = {k: v * window // used for k, v in charges.items()}
        used = sum(charges.values())
    charges["idle"] = window - used
    return charges


def progress_as_window(msg: dict, state: dict) -> dict | None:
    """A parsed progress record with a step time stands in for a window (stdout-only mode).

    So does a timing record that carries its step's time (Megatron prints its timers after the
    iteration line): it replaces that step's open window, with the lanes of the timers.  A bar
    prints no step time, but the log probe notes when it first drew each step (`drawn_ns`), which
    is when the step ended: the step after a drawn step is the time between the two.  A step
    drawn some steps after the last (a loop that prints every N steps, a bar that redraws at
    most every 0.1 s) gets the mean step between the two, as `ingest` times such lines from
    their timestamps: a stall among them shows, spread over the steps.  The rank's last drawn
    step is kept in ``state["drawn"]``: [step, when, drawn in one read with the one before].
    A step 0 (MaxText's and nanoGPT's first, its compilation) is a step where it prints its time."""
    record = msg["p"]["record"]
    step, step_ms = record.get("step"), record.get("step_time_ms")
    if record.get("kind") not in ("progress", "timing") or not isinstance(step, int) or step < 0:
        return None
    world = msg["p"].get("world_size")  # known to `ridgescope run` from the launcher's flags
    window = {"step": step, "world_size": world if isinstance(world, int) and world > 0 else 0,
              "lanes_ms": record.get("lanes_ms")}
    for flag in ("lanes_across_ranks", "rank_from_print_order"):
        if record.get(flag) is True:
            window[flag] = True
    if isinstance(step_ms, (int, float)) and step_ms > 0:
        t1 = msg["ts_ns"]
        return dict(window, t0_ns=t1 - int(step_ms * 1e6), t1_ns=t1)
    t1 = record.get("drawn_ns")
    if not isinstance(t1, int) or step < 1:
        return None     # (a step 0 is a loop's first, where it counts from 0, and needs its own time)
    before = state.get("drawn")
    # a step drawn in the same read as the one before: the launcher passed several steps on
    # at once (srun holds a bar back until it has 1024 bytes), so that the read's time is
    # when the last of them was drawn, not each
    batched = before is not None and before[0] == step - 1 and before[1] == t1
    state["drawn"] = [step, t1, batched]
    after_batch = len(before or ()) > 2 and before[2]     # states kept before hold two items
    if before is None or before[0] >= step or before[1] >= t1 or after_batch:
        return None      # the first step drawn, or one drawn with another, or the one after
    window = dict(window, t0_ns=t1 - (t1 - before[1]) // (step - before[0]), t1_ns=t1)
    late = msg["p"].get("read_late_ms")
    if isinstance(late, int) and late > 0:      # its ends are read times, each up to this late
        window["read_late_ms"] = late // (step - before[0])
    return window


def printed_save_ms(msg: dict) -> float:
    """The time a checkpoint save took, where the framework printed it (torchtitan's `Finished
    saving the checkpoint in 0.46 seconds.`); 0 for any other message."""
    record = msg["p"].get("record") or {}
    ms = record.get("duration_ms")
    if record.get("kind") != "checkpoint" or record.get("action") != "save" or isinstance(ms, bool) \
            or not isinstance(ms, (int, float)) or ms <= 0:
        return 0.0
    return float(ms)


def spans_the_gap(record: dict) -> bool:
    """Whether the window of this record runs from the line before to this one (a bar's or a
    line's read time, the log's timestamps, or a step time from a wall-clock mean), and so
    holds what ran between the two lines; a step time the framework timed itself times its
    step alone."""
    return not (isinstance(record.get("step_time_ms"), (int, float))
                and not record.get("step_time_from_ts") and not record.get("step_time_wall"))


def with_save(window: dict, record: dict, saved_ms: float) -> dict:
    """The window of the step after a printed checkpoint save, with the save as its checkpoint
    lane: the save ran between the two steps' lines, so inside the window where it spans the
    gap between them."""
    if not saved_ms or not spans_the_gap(record):
        return window
    lanes = dict(window.get("lanes_ms") or {})
    lanes["checkpoint"] = round(lanes.get("checkpoint", 0.0) + saved_ms, 3)
    return dict(window, lanes_ms=lanes)


def untimed_work(record: dict) -> str | None:
    """What a record says ran between two steps' lines, outside any lane: a checkpoint save
    ("checkpoint"; its lane where another line of the same save printed its time), or an
    evaluation ("eval", timed or not: no lane holds it).  None for any other record."""
    kind = record.get("kind")
    if kind == "eval":
        return "eval"
    if kind == "checkpoint" and record.get("action") == "save":
        return "checkpoint"
    return None


def correlate(state: dict, msg: dict) -> tuple[dict, list[dict]]:
    """Feed one raw envelope of a rank; return (state, step_rank payloads to emit).

    A window closes when the next step of the same rank opens, or when the job ends.  The job's
    end comes on another topic than its progress records, and may be read before the last of
    them: a window that opens after its rank ended closes at once.  Hook summaries win over
    stdout records for the same rank: once the hook probe has been seen, progress lines only go
    to the store.  In stdout, a checkpoint save whose time was printed is the checkpoint lane of
    the next step's window (`with_save`); a save or an evaluation with no lane is named in the
    window as its `untimed_work`, for the verdict.
    """
    kind = msg["kind"]
    state = {"open": dict(state["open"]), "closed_through": state["closed_through"],
             "hook_seen": state["hook_seen"],
             "lane_history": {k: list(v) for k, v in state.get("lane_history", {}).items()},
             "drawn": state.get("drawn"), "ended": state.get("ended", False),
             "saved_ms": state.get("saved_ms", 0.0),
             "untimed_work": list(state.get("untimed_work", ())),
             "untimed_after": state.get("untimed_after", -1),
             "untimed_read_ns": state.get("untimed_read_ns", 0),
             "untimed_read_at": state.get("untimed_read_at", -1)}
    if kind == "job_end":
        state, rows = _close(state, upto=None)
        # The lane baseline is ~400 numbers a rank, kept in the worker's memory and changelog
        # for as long as the key lives: an always-on worker would hold every rank of every job
        # it ever saw.  What stays drops replays of the job's steps (`closed_through`).
        state["lane_history"], state["ended"] = {}, True
        return state, rows
    if kind == "step_spans":
        window, source = msg["p"], "hook"
        state["hook_seen"] = True
    elif kind == "progress" and not state["hook_seen"]:
        record = msg["p"]["record"]
        saved = printed_save_ms(msg)
        if saved:
            state["saved_ms"] += saved
            _ran_after(state, record, msg.get("ts_ns"))
            return state, []
        work = untimed_work(record)
        if work is not None:
            if work not in state["untimed_work"]:
                state["untimed_work"] = sorted(state["untimed_work"] + [work])
            _ran_after(state, record, msg.get("ts_ns"))
            return state, []
        if _note_slowest_ranks(state, record):
            return state, []
        if msg["p"].get("timed_elsewhere"):
            return state, []    # the rank's other pipe times its steps (probes/step_streams.py)
        window, source = progress_as_window(msg, state), "log"
        if window is not None and not _before_untimed(state, window):
            # a save that printed its time, too, is timed: its lane, not untimed work
            work = [w for w in state["untimed_work"] if w != "checkpoint" or not state["saved_ms"]]
            window = with_save(window, record, state["saved_ms"])
            if work and spans_the_gap(record):
                window = dict(window, untimed_work=work)
            state["saved_ms"], state["untimed_work"], state["untimed_after"] = 0.0, [], -1
            state["untimed_read_ns"], state["untimed_read_at"] = 0, -1
    else:
        return state, []
    if window is None or window["step"] <= state["closed_through"]:
        return state, []  # a replayed or late duplicate of a closed step
    replaced = state["open"].get(str(window["step"]))
    if replaced is not None and "slowest_ranks" in replaced:     # a timing record after the report
        window = {**window, "slowest_ranks": replaced["slowest_ranks"]}
    state["open"][str(window["step"])] = {**window, "source": source}
    return _close(state, upto=None if state["ended"] else window["step"] - 1)


def _ran_after(state: dict, record: dict, read_ns: int | None) -> None:
    """Note the step a save or an evaluation ran after: its work is the window of a later step.
    A rank's steps and its events can come on two pipes (a bar on stderr, a logger on stdout,
    each read in its own thread, torchrun's `--tee` tailing two files): an evaluation logged
    after step 20 can arrive before step 20's record, whose window it is not.  An event that
    names no step (HF's evaluation dict on stdout, its bar on stderr) ran after every step that
    ended before it was read: its read time is noted, and the rank's last step then."""
    step = record.get("step")
    if isinstance(step, int) and not isinstance(step, bool):
        # (`before_step`: it ran inside the step it names, before that step's training)
        state["untimed_after"] = max(state["untimed_after"], step - 1 if record.get("before_step") else step)
    elif isinstance(read_ns, int) and read_ns > state["untimed_read_ns"]:
        opened = [int(k) for k in state["open"]]
        state["untimed_read_ns"] = read_ns
        state["untimed_read_at"] = max(opened + [state["closed_through"]])


def _before_untimed(state: dict, window: dict) -> bool:
    """Is this window one the noted save or evaluation ran after (see `_ran_after`): a step up
    to the one it named, or one that ended before it was read?  Not where the event's step is
    far ahead of the rank's steps, nor the rank's steps far past the one it was read at: a
    restart, or an event that counts in other units, must not hold the work back for good."""
    step = window["step"]
    if 0 <= state["untimed_after"] - step < UNTIMED_HOLD_STEPS:
        return True
    return (window["t1_ns"] < state["untimed_read_ns"]
            and step - state["untimed_read_at"] <= UNTIMED_HOLD_STEPS)


def _note_slowest_ranks(state: dict, record: dict) -> bool:
    """A framework's report of which rank was slowest in each lane of a step (Megatron's
    straggler detector, printed by rank 0 alone) goes with that step's open window, so that the
    verdict can name a rank that prints no line of its own.  False for any other record."""
    named = record.get("slowest_ranks")
    if record.get("kind") != "timing" or not isinstance(named, dict):
        return False
    window = state["open"].get(str(record.get("step")))
    if window is not None:
        state["open"][str(record["step"])] = {**window, "slowest_ranks": named}
    return True


def _close(state: dict, upto: int | None) -> tuple[dict, list[dict]]:
    emitted = []
    for key in sorted(state["open"], key=int):
        step = int(key)
        if upto is not None and step > upto:
            break
        window = state["open"].pop(key)
        row = step_rank_row(window, window["source"])
        row["lane_baseline_ms"] = _remember_lanes(state["lane_history"], row)
        emitted.append(row)
        state["closed_through"] = max(state["closed_through"], step)
    return state, emitted


def _remember_lanes(history: dict[str, list[float]], row: dict) -> dict[str, float]:
    """This rank's median lanes before this window; then add the window unless it is warm-up,
    a checkpoint step, or one that ran work no lane holds.  Kept here, per rank, so the
    job-wide state stays small."""
    baseline = {lane: round(statistics.median(values), 3) for lane, values in history.items()}
    if row["step"] > verdict.VerdictConfig.warmup_steps and not row["lanes_ms"].get("checkpoint") \
            and not row.get("untimed_work"):
        for lane in breakdown.lanes.PRIORITY:
            values = history.setdefault(lane, [])
            values.append(row["lanes_ms"].get(lane, 0.0))
            del values[:-LANE_HISTORY]
    return baseline


# --- aggregate: one job's steps across ranks ------------------------------------------------

GRACE_NS = 20_000_000_000
"""An incomplete step is judged with the ranks it has this long after its first row arrived."""
MAX_PENDING = 500
"""Bound on a job's steps waiting for ranks; past it the oldest are judged as they are."""
SETTLE_NS = 3_000_000_000
"""Where the job's size is unknown, how long after its first row a step that every rank seen
so far sent still waits for others: each rank's rows come on its own partition, and one
partition may be read seconds after another (a short job read in a burst had every step
judged as rank 0's alone, rank 1's rows stored after the verdicts)."""
SILENT_AFTER = 2
"""Steps judged short of ranks (after GRACE_NS, or behind a later step) after which the ranks
that never sent a row are taken for ranks that print no steps (a job whose rank 0 alone prints,
DeepSpeed's or the HF Trainer's, read from stdout): they stop holding each step for GRACE_NS.
A rank that sent a row once is waited for as before, a straggler above all."""


def new_job_state() -> dict:
    return {"pending": {}, "judged_through": -1, "world_size": 0, "ended": {}, "ended_placed": 0,
            "history": verdict.new_history(), "seen": {}, "seen_placed": 0, "short_steps": 0}


def aggregate(state: dict, row: dict, cfg: verdict.VerdictConfig, now_ns: int,
              rows: MutableMapping) -> tuple[dict, list[dict], list[dict]]:
    """Feed one step_rank row (with ``rank``), a job_end marker or a tick.

    ``state`` is small: which steps wait for which ranks, and the baseline.  The rows
    themselves live in ``rows``, keyed "step/rank", so that storing one row costs the same
    however many ranks and pending steps the job has.  ``state`` is updated in place: a row
    costs the work of its own step and the pending steps' counts, not a copy of every pending
    step's ranks (at 2,048 ranks that copy made a step cost 346 ms of CPU, quadratic in ranks).

    Returns (state, verdicts, late rows).  A step is judged when every expected rank has
    reported (where the job's size is unknown, not before SETTLE_NS after the job's first
    row), when GRACE_NS of processing time passed since its first row (ticks carry the
    time), or when every rank has ended.  Steps are judged in order so the baseline stays
    causal.  A row for a step already judged is late: it no longer changes the verdict but is
    returned, so it still reaches the store.  ``now_ns`` is processing time, not event time:
    partitions are consumed in bursts, so one rank's rows may come well after another's.
    """
    if "ended" not in state:
        state = _upgraded(state)
    state["world_size"] = max(state["world_size"], row.get("world_size", 0))
    if row.get("tick"):
        return (*_judge_ready(state, cfg, now_ns, rows, flush=False), [])
    rank = str(row["rank"])
    if row.get("job_end"):
        if rank not in state["ended"]:
            state["ended"][rank] = 1
            state["ended_placed"] += row["rank"] >= 0
        return (*_judge_ready(state, cfg, now_ns, rows, flush=_all_ended(state)), [])
    if row["step"] <= state["judged_through"]:
        return state, [], [row]
    state.setdefault("first_ns", now_ns)
    entry = state["pending"].setdefault(str(row["step"]), {"first_ns": now_ns, "ranks": {}, "placed": 0})
    if rank not in entry["ranks"]:
        entry["ranks"][rank] = 1
        entry["placed"] += row["rank"] >= 0
    if rank not in state["seen"]:
        state["seen"][rank] = 1
        state["seen_placed"] += row["rank"] >= 0
    rows[f"{row['step']}/{row['rank']}"] = row
    return (*_judge_ready(state, cfg, now_ns, rows, flush=False), [])


def _upgraded(state: dict) -> dict:
    """A state that an earlier version kept in its changelog (lists of ranks), in this shape."""
    pending = {key: {"first_ns": entry["first_ns"], "ranks": {str(r): 1 for r in entry["ranks"]},
                     "placed": _placed(entry["ranks"])} for key, entry in state["pending"].items()}
    seen = {rank: 1 for entry in pending.values() for rank in entry["ranks"]}
    ended = {str(r): 1 for r in state.get("ended_ranks", [])}
    return {"pending": pending, "judged_through": state["judged_through"],
            "world_size": state["world_size"], "history": state["history"],
            "ended": ended, "ended_placed": _placed(ended),
            "seen": seen, "seen_placed": _placed(seen), "short_steps": 0}


def _all_ended(state: dict) -> bool:
    """Has every rank the job expects ended, and the unplaced rank -1 too where it sent rows
    (see `_placed`)?"""
    return (state["ended_placed"] >= max(state["world_size"], state["seen_placed"])
            and ("-1" not in state["seen"] or "-1" in state["ended"]))


def _expected_ranks(state: dict) -> int:
    """The job's ranks (or more, where more sent rows), or, once SILENT_AFTER steps were judged
    short of ranks, those that sent a row at least once."""
    if state["short_steps"] < SILENT_AFTER:
        return max(state["world_size"], state["seen_placed"])
    return state["seen_placed"]


def _placed(ranks) -> int:
    """How many of `ranks` are the job's.  Rank -1 holds the lines no launcher label placed, in
    a job of several ranks: no rank of the job.  Counted as one, its row and rank 0's made a
    step of 2 ranks complete, and its end and rank 0's ended the job, before rank 1's row came."""
    return len([rank for rank in ranks if int(rank) >= 0])


def _judge_ready(state: dict, cfg: verdict.VerdictConfig, now_ns: int, rows: MutableMapping,
                 flush: bool) -> tuple[dict, list[dict]]:
    if not state["pending"]:
        return state, []
    expected = _expected_ranks(state)
    settled = state["world_size"] > 0 or now_ns - state.get("first_ns", now_ns) >= SETTLE_NS
    order = sorted(state["pending"], key=int)
    overflow = len(order) - MAX_PENDING
    ready_through = state["judged_through"]
    for i, key in enumerate(order):
        entry = state["pending"][key]
        if (flush or i < overflow or (entry["placed"] >= expected and settled)
                or now_ns - entry["first_ns"] >= GRACE_NS):
            ready_through = int(key)
    verdicts = []
    for key in order:
        step = int(key)
        if step > ready_through:
            break
        entry = state["pending"].pop(key)
        if not flush and entry["placed"] < expected:
            state["short_steps"] += 1
        step_rows = [rows.pop(f"{step}/{rank}") for rank in entry["ranks"]]
        step_rows = verdict.attribute_wait([dict(r, rank=int(r["rank"])) for r in step_rows])
        result, state["history"] = verdict.judge(step, step_rows, state["history"], cfg)
        result["ranks"] = step_rows
        verdicts.append(result)
        state["judged_through"] = step
    return state, verdicts
