"""Correlate and aggregate as pure state machines: a synthetic 4-rank DDP job, no Kafka."""
from __future__ import annotations

from ridgescope.pipeline import verdict, windows
from ridgescope.pipeline.verdict import VerdictConfig

MS = 1_000_000
RANKS = 4
CFG = VerdictConfig()


def ddp_step(step, t0, data=None, compute=None, ckpt=None, untimed=None):
    """One step of every rank: data wait, forward+backward, all-reduce that ends when the last
    rank is ready, optimizer.  Faults are {rank: extra ms}; ``untimed`` is host work no probe
    span covers (it shows as idle)."""
    data, compute, ckpt, untimed = data or {}, compute or {}, ckpt or {}, untimed or {}
    ready = {}
    spans = {}
    for r in range(RANKS):
        t = t0[r]
        s = []
        if ckpt.get(r):
            s.append(["checkpoint", t, t + ckpt[r] * MS])
            t += ckpt[r] * MS
        t += untimed.get(r, 0) * MS
        wait = (2 + data.get(r, 0)) * MS
        s.append(["data_wait", t, t + wait])
        t += wait
        fwd = (10 + compute.get(r, 0)) * MS
        s.append(["forward", t, t + fwd])
        t += fwd
        s.append(["backward", t, None])
        ready[r] = t + 20 * MS
        spans[r] = s
    done = max(ready.values()) + 3 * MS
    payloads = {}
    for r in range(RANKS):
        spans[r][-1][2] = done
        t1 = done + 4 * MS
        spans[r].append(["optimizer", done, t1])
        payloads[r] = {"step": step, "t0_ns": t0[r], "t1_ns": t1, "spans": spans[r],
                       "buckets": [[0, ready[r] - 8 * MS, done - 1 * MS], [1, ready[r], done]],
                       "world_size": RANKS}
    return payloads


def envelope(kind, rank, payload, ts=0):
    return {"v": 1, "kind": kind, "job": "j", "rank": rank, "host": "h", "ts_ns": ts, "seq": 0,
            "p": payload}


def run_job(steps=30, faults=None):
    """Feed a job through correlate then aggregate; return the verdicts by step."""
    faults = faults or {}
    rank_state = {r: windows.new_rank_state() for r in range(RANKS)}
    job_state = windows.new_job_state()
    pending_rows = {}
    verdicts = {}
    t0 = {r: 0 for r in range(RANKS)}

    def feed(rows, rank):
        nonlocal job_state
        for row in rows:
            job_state, out, late = windows.aggregate(job_state, dict(row, rank=rank), CFG, 0,
                                                     pending_rows)
            assert not late
            verdicts.update({v["step"]: v for v in out})

    for step in range(1, steps + 1):
        payloads = ddp_step(step, t0, **faults.get(step, {}))
        for r in range(RANKS):
            rank_state[r], rows = windows.correlate(rank_state[r],
                                                    envelope("step_spans", r, payloads[r]))
            feed(rows, r)
            t0[r] = payloads[r]["t1_ns"]
    for r in range(RANKS):
        rank_state[r], rows = windows.correlate(
            rank_state[r], envelope("job_end", r, {"exit_code": 0, "world_size": RANKS}))
        feed(rows, r)
        job_state, out, _ = windows.aggregate(
            job_state, {"job_end": True, "rank": r, "world_size": RANKS}, CFG, 0, pending_rows)
        verdicts.update({v["step"]: v for v in out})
    return verdicts


def test_a_clean_job_has_no_slow_steps_and_lanes_partition_each_window():
    verdicts = run_job()
    assert sorted(verdicts) == list(range(1, 31))
    assert not [s for s, v in verdicts.items() if v["slow"]]
    for v in verdicts.values():
        for row in v["ranks"]:
            assert sum(row["lanes_ms"].values()) == \
                __import__("pytest").approx(row["duration_ms"], abs=0.01)


def test_slow_input_on_one_rank_blames_that_rank_not_the_victims():
    v = run_job(faults={12: {"data": {1: 300}}})[12]
    assert v["slow"] and v["cause"] == "input" and v["culprit_rank"] == 1
    waits = {r["rank"]: r["comm_wait_ms"] for r in v["ranks"]}
    assert waits[1] < 1 and all(waits[r] > 250 for r in (0, 2, 3))


def test_compute_straggler_and_checkpoint_are_told_apart():
    verdicts = run_job(faults={15: {"compute": {2: 200}}, 20: {"ckpt": {0: 400}}})
    assert (verdicts[15]["cause"], verdicts[15]["culprit_rank"]) == ("compute", 2)
    assert (verdicts[20]["cause"], verdicts[20]["culprit_rank"]) == ("checkpoint", 0)
    assert verdicts[20]["phase"] == "checkpoint"
    assert verdicts[20]["excess_ms"] > 350


def test_warmup_steps_are_never_slow():
    verdicts = run_job(faults={2: {"compute": {0: 500}}})
    assert not verdicts[2]["slow"] and verdicts[2]["phase"] == "warmup"


def test_a_replayed_row_of_a_judged_step_is_returned_as_late_and_judged_once():
    state = windows.new_job_state()
    row = {"step": 1, "t0_ns": 0, "t1_ns": 10 * MS, "duration_ms": 10.0,
           "lanes_ms": {"compute": 10.0}, "arrival_ns": 5, "world_size": 1, "source": "hook"}
    state, verdicts, late = windows.aggregate(state, dict(row, rank=0), CFG, 0, {})
    assert [v["step"] for v in verdicts] == [1] and not late
    state, verdicts, late = windows.aggregate(state, dict(row, rank=0), CFG, 0, {})
    assert verdicts == [] and late == [dict(row, rank=0)]


def test_a_step_missing_a_rank_waits_for_the_grace_period_then_is_judged():
    state = windows.new_job_state()
    row = {"step": 1, "t0_ns": 0, "t1_ns": 10 * MS, "duration_ms": 10.0,
           "lanes_ms": {"compute": 10.0}, "arrival_ns": 5, "world_size": 2, "source": "hook"}
    pending_rows: dict = {}
    state, verdicts, _ = windows.aggregate(state, dict(row, rank=0), CFG, 0, pending_rows)
    assert verdicts == [] and list(pending_rows) == ["1/0"]
    state, verdicts, _ = windows.aggregate(state, {"tick": True}, CFG, windows.GRACE_NS - 1,
                                           pending_rows)
    assert verdicts == []
    state, verdicts, _ = windows.aggregate(state, {"tick": True}, CFG, windows.GRACE_NS,
                                           pending_rows)
    assert [(v["step"], v["rank_count"]) for v in verdicts] == [(1, 1)]
    assert pending_rows == {}, "judged rows must leave the row store"


def test_ranks_that_never_sent_a_row_stop_holding_steps_after_two():
    """A 4-rank job whose rank 0 alone prints its steps (read from stdout): steps 1 and 2 wait
    GRACE_NS for ranks 1-3, then those ranks, which sent no row, hold no step: step 3 is judged
    when rank 0's row comes (each step was judged GRACE_NS late)."""
    state, rows = windows.new_job_state(), {}
    row = {"t0_ns": 0, "t1_ns": 10 * MS, "duration_ms": 10.0, "lanes_ms": {}, "arrival_ns": 5,
           "world_size": 4, "source": "log", "rank": 0}
    for step in (1, 2):
        state, verdicts, _ = windows.aggregate(state, dict(row, step=step), CFG, 0, rows)
        assert verdicts == []
    state, verdicts, _ = windows.aggregate(state, {"tick": True}, CFG, windows.GRACE_NS, rows)
    assert [v["step"] for v in verdicts] == [1, 2]
    state, verdicts, _ = windows.aggregate(state, dict(row, step=3), CFG, windows.GRACE_NS, rows)
    assert [(v["step"], v["rank_count"]) for v in verdicts] == [(3, 1)]


def test_a_straggler_that_sent_rows_is_still_waited_for():
    """Ranks 0 and 1 print; rank 1 falls past GRACE_NS behind for two steps (a straggler): it
    sent rows before, so the next step still waits for it."""
    state, rows = windows.new_job_state(), {}
    row = {"t0_ns": 0, "t1_ns": 10 * MS, "duration_ms": 10.0, "lanes_ms": {}, "arrival_ns": 5,
           "world_size": 2, "source": "log"}
    for rank in (0, 1):
        state, verdicts, _ = windows.aggregate(state, dict(row, step=1, rank=rank), CFG, 0, rows)
    assert [v["step"] for v in verdicts] == [1]
    for step in (2, 3):
        state, _, _ = windows.aggregate(state, dict(row, step=step, rank=0), CFG, 0, rows)
    state, verdicts, _ = windows.aggregate(state, {"tick": True}, CFG, windows.GRACE_NS, rows)
    assert [(v["step"], v["rank_count"]) for v in verdicts] == [(2, 1), (3, 1)]
    state, verdicts, _ = windows.aggregate(state, dict(row, step=4, rank=0), CFG, windows.GRACE_NS, rows)
    assert verdicts == []
    state, verdicts, _ = windows.aggregate(state, dict(row, step=4, rank=1), CFG, windows.GRACE_NS, rows)
    assert [(v["step"], v["rank_count"]) for v in verdicts] == [(4, 2)]


def test_where_the_jobs_size_is_unknown_steps_wait_for_ranks_read_later():
    """Two ranks of a job whose size nobody said: rank 0's partition is read first, rank 1's a
    second later.  Judged as soon as every rank seen had sent it, each step was rank 0's
    alone; now the steps wait SETTLE_NS from the job's first row, and have both ranks."""
    state, rows = windows.new_job_state(), {}
    row = {"t0_ns": 0, "t1_ns": 10 * MS, "duration_ms": 10.0, "lanes_ms": {}, "arrival_ns": 5,
           "world_size": 0, "source": "log"}
    for step in (1, 2, 3):
        state, verdicts, _ = windows.aggregate(state, dict(row, step=step, rank=0), CFG, 0, rows)
        assert verdicts == []
    for step in (1, 2, 3):
        state, verdicts, late = windows.aggregate(state, dict(row, step=step, rank=1), CFG,
                                                  1_000 * MS, rows)
        assert verdicts == [] and late == []
    state, verdicts, _ = windows.aggregate(state, {"tick": True}, CFG, windows.SETTLE_NS, rows)
    assert [(v["step"], v["rank_count"]) for v in verdicts] == [(1, 2), (2, 2), (3, 2)]
    # settled: a later step is judged when the ranks seen sent it, with no wait
    for rank in (0, 1):
        state, verdicts, _ = windows.aggregate(state, dict(row, step=4, rank=rank), CFG,
                                               windows.SETTLE_NS, rows)
    assert [(v["step"], v["rank_count"]) for v in verdicts] == [(4, 2)]


def test_a_single_process_job_of_unknown_size_is_judged_once_settled():
    state, rows = windows.new_job_state(), {}
    row = {"t0_ns": 0, "t1_ns": 10 * MS, "duration_ms": 10.0, "lanes_ms": {}, "arrival_ns": 5,
           "world_size": 0, "source": "log", "rank": 0}
    state, verdicts, _ = windows.aggregate(state, dict(row, step=1), CFG, 0, rows)
    assert verdicts == []
    state, verdicts, _ = windows.aggregate(state, {"tick": True}, CFG, windows.SETTLE_NS, rows)
    assert [(v["step"], v["rank_count"]) for v in verdicts] == [(1, 1)]


def test_the_unplaced_rank_counts_for_no_rank_of_the_job_at_its_end():
    """A 2-rank job whose unlabelled lines went to rank -1: the rows of rank -1 and rank 0 are
    not two of the job's ranks, nor their ends the ends of two: the last step waits for rank
    1's row, and is judged with it (it was judged with rank -1's and rank 0's alone)."""
    state, rows = windows.new_job_state(), {}
    row = {"step": 16, "t0_ns": 0, "t1_ns": 10 * MS, "duration_ms": 10.0, "lanes_ms": {},
           "arrival_ns": 5, "world_size": 2, "source": "log"}
    for rank in (-1, 0):
        state, verdicts, _ = windows.aggregate(state, dict(row, rank=rank), CFG, 0, rows)
        assert verdicts == []
    for rank in (-1, 0):
        state, verdicts, _ = windows.aggregate(state, {"job_end": True, "rank": rank}, CFG, 0, rows)
        assert verdicts == []
    state, verdicts, _ = windows.aggregate(state, dict(row, rank=1), CFG, 0, rows)
    assert [(v["step"], v["rank_count"]) for v in verdicts] == [(16, 3)]


def test_correlate_closes_a_window_at_the_next_step_and_ignores_duplicates():
    state = windows.new_rank_state()
    p = ddp_step(1, {r: 0 for r in range(RANKS)})[0]
    state, rows = windows.correlate(state, envelope("step_spans", 0, p))
    assert rows == []
    p2 = dict(p, step=2, t0_ns=p["t1_ns"], t1_ns=p["t1_ns"] + 50 * MS, spans=[], buckets=[])
    state, rows = windows.correlate(state, envelope("step_spans", 0, p2))
    assert [r["step"] for r in rows] == [1] and rows[0]["source"] == "hook"
    state, rows = windows.correlate(state, envelope("step_spans", 0, p))
    assert rows == []
    state, rows = windows.correlate(state, envelope("job_end", 0, {"exit_code": 0,
                                                                    "world_size": 4}))
    assert [r["step"] for r in rows] == [2] and rows[0]["lanes_ms"]["idle"] == 50.0


def test_a_rank_that_ended_keeps_only_what_drops_replays_of_its_steps():
    state = windows.new_rank_state()
    t0 = {r: 0 for r in range(RANKS)}
    for step in range(1, 13):
        p = ddp_step(step, t0)[0]
        state, _ = windows.correlate(state, envelope("step_spans", 0, p))
        t0 = {r: p["t1_ns"] for r in range(RANKS)}
    assert len(state["lane_history"]["compute"]) > 0
    state, rows = windows.correlate(state, envelope("job_end", 0, {"exit_code": 0}))
    assert [r["step"] for r in rows] == [12]
    assert state == {"open": {}, "closed_through": 12, "hook_seen": True, "lane_history": {},
                     "drawn": None, "ended": True, "saved_ms": 0.0, "untimed_work": [],
                     "untimed_after": -1, "untimed_read_ns": 0, "untimed_read_at": -1}
    state, rows = windows.correlate(state, envelope("step_spans", 0, p))
    assert rows == [] and state["open"] == {}, "a replayed step after the end is dropped"


def test_stdout_progress_stands_in_only_when_the_hook_probe_is_absent():
    state = windows.new_rank_state()
    record = {"kind": "progress", "step": 5, "step_time_ms": 120.0, "rank": 0}
    state, _ = windows.correlate(state, envelope("progress", 0, {"record": record},
                                                 ts=10_000 * MS))
    state, rows = windows.correlate(state, envelope("job_end", 0, {"exit_code": 0,
                                                                    "world_size": 1}))
    assert [(r["step"], r["source"], r["duration_ms"]) for r in rows] == [(5, "log", 120.0)]
    hooked = windows.new_rank_state()
    hooked["hook_seen"] = True
    hooked, _ = windows.correlate(hooked, envelope("progress", 0, {"record": record}, ts=1))
    assert hooked["open"] == {}


def test_a_light_checkpoint_with_untimed_work_around_it_is_still_the_cause():
    """The culprit's time is spread over lanes (state_dict copies are not inside torch.save),
    and it saved a checkpoint in the window: the checkpoint is named, not 'unknown'."""
    verdicts = run_job(faults={20: {"ckpt": {0: 15}, "untimed": {0: 40}, "data": {0: 20},
                                    "compute": {0: 20}}})
    assert verdicts[20]["slow"]
    assert (verdicts[20]["cause"], verdicts[20]["culprit_rank"]) == ("checkpoint", 0)


def bar_progress(step: int, drawn_ms: int | None, rank: int = 0) -> dict:
    record = {"kind": "progress", "framework": "keras", "rank": rank, "step": step, "loss": 0.5}
    if drawn_ms is not None:
        record["drawn_ns"] = drawn_ms * MS
    return envelope("progress", rank, {"record": record, "stream": "stdout", "world_size": 1},
                    ts=(drawn_ms or 0) * MS + 999 * MS)


def test_a_bar_without_step_times_is_timed_by_when_its_steps_were_drawn():
    """Each step's window runs from when the bar first drew the step before to when it first
    drew this one (the log probe's read times), not from when the records arrived."""
    state, rows = windows.new_rank_state(), []
    for step, drawn_ms in ((1, 1000), (2, 1200), (3, 1400), (4, 2300), (5, 2500), (7, 2900),
                           (8, 3100), (9, None), (10, 3500)):
        state, emitted = windows.correlate(state, bar_progress(step, drawn_ms))
        rows += emitted
    state, emitted = windows.correlate(state, envelope("job_end", 0, {"exit_code": 0}))
    rows += emitted
    assert [(r["step"], r["duration_ms"], r["source"]) for r in rows] == [
        (2, 200.0, "log"), (3, 200.0, "log"), (4, 900.0, "log"), (5, 200.0, "log"),
        (7, 200.0, "log"), (8, 200.0, "log"), (10, 200.0, "log")]
    # step 1 has no step drawn before it; 7 follows a step never drawn (6): the mean of the
    # two; 9 was read from a file (no time), so it has no window, and 10 the mean since 8
    assert rows[2]["t0_ns"] == 1400 * MS and rows[2]["t1_ns"] == 2300 * MS
    assert rows[4]["t0_ns"] == 2700 * MS and rows[4]["t1_ns"] == 2900 * MS


def test_a_loop_that_prints_every_ten_steps_is_timed_by_the_mean_step_between_its_lines():
    """`step 10 loss ..`, `step 20 loss ..`, .. with no time, read live every 3 s, and 33 s
    for the ten steps to 90, which stalled 30 s: each line's step has the mean of its ten
    steps, and the stall's interval is judged slow."""
    state, job, pending, rows, verdicts = windows.new_rank_state(), windows.new_job_state(), {}, [], {}
    drawn = 0
    for step in range(10, 130, 10):
        drawn += 3000 + (30_000 if step == 90 else 0)
        state, emitted = windows.correlate(state, bar_progress(step, drawn))
        rows += emitted
    state, emitted = windows.correlate(state, envelope("job_end", 0, {"exit_code": 0}))
    rows += emitted
    assert [(r["step"], r["duration_ms"]) for r in rows] == [
        (s, 3300.0 if s == 90 else 300.0) for s in range(20, 130, 10)]
    for row in rows:
        job, out, _ = windows.aggregate(job, dict(row, rank=0), CFG, 0, pending)
        verdicts.update({v["step"]: v for v in out})
    job, out, _ = windows.aggregate(job, {"job_end": True, "rank": 0, "world_size": 1}, CFG, 0, pending)
    verdicts.update({v["step"]: v for v in out})
    assert [s for s, v in sorted(verdicts.items()) if v["slow"]] == [90]
    assert verdicts[90]["excess_ms"] == 3000.0 and verdicts[90]["cause"] == "unknown"


def test_steps_a_launcher_passed_on_together_make_no_windows():
    """srun passes a bar on 1024 bytes at a time: steps 2-3 arrive in one read, 4-6 in the
    next.  A step read with the one before it has no window of its own, and the step after
    such a batch neither: its window would run from the batch's read, which came after the
    batch's steps had been drawn, over several steps."""
    state, rows = windows.new_rank_state(), []
    for step, drawn_ms in ((1, 1000), (2, 1200), (3, 1200), (4, 1600), (5, 1600), (6, 1600),
                           (7, 2000), (8, 2200)):
        state, emitted = windows.correlate(state, bar_progress(step, drawn_ms))
        rows += emitted
    state, emitted = windows.correlate(state, envelope("job_end", 0, {"exit_code": 0}))
    rows += emitted
    assert [(r["step"], r["duration_ms"]) for r in rows] == [(2, 200.0), (8, 200.0)]


def test_printed_step_times_win_over_draw_times():
    msg = bar_progress(2, 1200)
    msg["p"]["record"]["step_time_ms"] = 150.0
    state = dict(windows.new_rank_state(), drawn=[1, 1000 * MS])
    window = windows.progress_as_window(msg, state)
    assert (window["t1_ns"] - window["t0_ns"], window["t1_ns"]) == (150 * MS, msg["ts_ns"])


def test_a_loops_step_0_with_its_own_time_is_a_step_and_warm_up():
    """MaxText and nanoGPT count from 0, and print the first step's time (its compilation):
    step 0 gets its window and its verdict, warm-up, never slow.  A bar's draw of step 0 is
    no step's time: step 1 still has none before it."""
    state, job, pending, verdicts = windows.new_rank_state(), windows.new_job_state(), {}, {}
    rows = []
    for step, ms, ts_ms in ((0, 30_000.0, 31_000), (1, 150.0, 31_150), (2, 160.0, 31_310)):
        msg = bar_progress(step, None)
        msg["p"]["record"]["step_time_ms"], msg["ts_ns"] = ms, ts_ms * MS
        state, emitted = windows.correlate(state, msg)
        rows += emitted
    state, emitted = windows.correlate(state, envelope("job_end", 0, {"exit_code": 0}))
    rows += emitted
    assert [(r["step"], r["duration_ms"]) for r in rows] == [(0, 30_000.0), (1, 150.0), (2, 160.0)]
    for row in rows + [{"job_end": True, "rank": 0, "world_size": 1}]:
        job, out, late = windows.aggregate(job, dict(row, rank=0), CFG, 0, pending)
        assert not late
        verdicts.update({v["step"]: v for v in out})
    assert sorted(verdicts) == [0, 1, 2] and verdicts[0]["phase"] == "warmup" and not verdicts[0]["slow"]

    drawn, rows = windows.new_rank_state(), []
    for step, drawn_ms in ((0, 1000), (1, 1200), (2, 1400)):
        drawn, emitted = windows.correlate(drawn, bar_progress(step, drawn_ms))
        rows += emitted
    drawn, emitted = windows.correlate(drawn, envelope("job_end", 0, {"exit_code": 0}))
    assert [(r["step"], r["duration_ms"]) for r in rows + emitted] == [(2, 200.0)]


def test_the_last_records_read_after_their_ranks_end_still_make_their_windows():
    """The job's end travels on another topic than its progress records and can be read
    first: the records after it still make their windows, each closed at once."""
    state, rows = windows.new_rank_state(), []
    for step in range(1, 30):
        state, emitted = windows.correlate(state, bar_progress(step, 1000 + 300 * step))
        rows += emitted
    state, emitted = windows.correlate(state, envelope("job_end", 0, {"exit_code": 0}))
    rows += emitted
    for step in (30, 31, 32):
        state, emitted = windows.correlate(state, bar_progress(step, 1000 + 300 * step))
        assert [r["step"] for r in emitted] == [step]
        rows += emitted
    assert [(r["step"], r["duration_ms"]) for r in rows] == [(s, 300.0) for s in range(2, 33)]
    state, emitted = windows.correlate(state, bar_progress(31, 1000 + 300 * 31))
    assert emitted == [], "a replayed record after the end is dropped"


def printed(record: dict, rank: int = 0, step: int | None = None) -> dict:
    """An event line's record; `step`: the step it ran after, where the line's parser knew it."""
    return envelope("progress", rank, {"record": {"rank": rank, "step": step, **record},
                                       "stream": "stdout", "world_size": 1})


def saved(ms: float | None = None, rank: int = 0) -> dict:
    """A checkpoint save, with the time the framework printed (torchtitan's `Finished saving
    the checkpoint in 0.46 seconds.`), or none (HF's `Saving model checkpoint to X`)."""
    record = {"kind": "checkpoint", "framework": "torchtitan", "action": "save", "phase": "end"}
    return printed(record if ms is None else dict(record, duration_ms=ms), rank)


EVALUATED = printed({"kind": "eval", "framework": "hf_trainer", "phase": "result", "loss": 2.0})


def judged_stdout_job(save_ms: float | None, extra_ms: int, printed_times: bool = False,
                      between: tuple = (), save: bool = True) -> dict:
    """Steps drawn every 300 ms; after step 10 a save of `save_ms` is printed (with no time
    where None; none at all where not `save`), then the messages `between`, and step 11 is
    drawn `extra_ms` late.  Returns step 11's verdict."""
    state, job, pending, verdicts = windows.new_rank_state(), windows.new_job_state(), {}, {}
    drawn = 1000
    for step in range(1, 16):
        drawn += 300 + (extra_ms if step == 11 else 0)
        msg = bar_progress(step, drawn)
        if printed_times:
            msg["p"]["record"]["step_time_ms"] = 300.0 + (extra_ms if step == 11 else 0)
        state, rows = windows.correlate(state, msg)
        if step == 10:
            for message in ((saved(save_ms),) if save else ()) + tuple(between):
                state, none = windows.correlate(state, message)
                assert none == []
        for row in rows:
            job, out, _ = windows.aggregate(job, dict(row, rank=0), CFG, 0, pending)
            verdicts.update({v["step"]: v for v in out})
    return verdicts[11]


def test_a_printed_save_is_the_checkpoint_lane_of_the_step_it_ran_in():
    """The save ran between step 10's line and step 11's: step 11's window holds it as its
    checkpoint lane, and a step slow by little more than the save is a checkpoint step."""
    v = judged_stdout_job(save_ms=900, extra_ms=1000)
    assert v["slow"] and v["cause"] == "checkpoint" and v["lanes_ms"]["checkpoint"] == 900


def test_a_small_save_in_a_slow_stdout_step_is_not_named_the_cause():
    """Most of step 11's excess is time the log does not explain (an evaluation, say): in
    stdout the save is shown in its lane but not named the cause, as it is from the hook
    probe, where the untimed rest is the save's own work."""
    v = judged_stdout_job(save_ms=200, extra_ms=2000)
    assert v["slow"] and v["cause"] == "unknown" and v["lanes_ms"]["checkpoint"] == 200


def test_a_printed_step_time_holds_no_save():
    """A step time the framework printed times its step alone: the save is outside it."""
    v = judged_stdout_job(save_ms=900, extra_ms=1000, printed_times=True)
    assert v["lanes_ms"]["checkpoint"] == 0 and v["cause"] == "unknown" and v["phase"] == "normal"


def test_a_slow_stdout_step_whose_window_held_only_an_untimed_save_is_a_checkpoint_step():
    """The log names a save between step 10's line and step 11's, and no time for it: the save
    is the likeliest use of step 11's excess, and the step is no normal step for the baseline.
    Its checkpoint lane stays 0: no time was measured."""
    v = judged_stdout_job(save_ms=None, extra_ms=2000)
    assert v["slow"] and v["cause"] == "checkpoint" and v["phase"] == "checkpoint"
    assert v["lanes_ms"]["checkpoint"] == 0


def test_a_step_that_held_an_evaluation_is_an_evaluation_step_out_of_the_baseline():
    """The log names an evaluation between step 10's line and step 11's: no lane times it, so
    the cause stays unknown, but the step is an evaluation's, and its time is kept out of the
    baseline of normal steps."""
    v = judged_stdout_job(save_ms=None, extra_ms=2000, between=(EVALUATED,), save=False)
    assert v["slow"] and v["cause"] == "unknown" and v["phase"] == "eval"
    row = {"rank": 0, "step": 20, "duration_ms": 2300.0, "lanes_ms": {"idle": 2300.0}, "arrival_ns": 0,
           "source": "log", "untimed_work": ["eval"]}
    history = dict(verdict.new_history(), durations=[300.0] * 10)
    _, after = verdict.judge(20, [row], history, CFG)
    assert after["durations"] == history["durations"]
    _, after = verdict.judge(20, [dict(row, untimed_work=[])], history, CFG)
    assert after["durations"] == history["durations"] + [2300.0]


def test_an_evaluation_step_is_judged_against_the_evaluations_before_it():
    """Against the normal steps until two evaluations are known; then an evaluation as long as
    those is not slow, and one twice as long is."""
    row = {"rank": 0, "duration_ms": 2300.0, "lanes_ms": {"idle": 2300.0}, "arrival_ns": 0,
           "source": "log", "untimed_work": ["eval"]}
    history = verdict.new_history()
    history["durations"] = [300.0] * 10
    judged = []
    for step, ms in ((20, 2300.0), (40, 2250.0), (60, 2350.0), (80, 4700.0)):
        v, history = verdict.judge(step, [dict(row, step=step, duration_ms=ms)], history, CFG)
        judged.append((step, v["phase"], v["slow"], v["baseline_ms"]))
    assert judged == [(20, "eval", True, 300.0), (40, "eval", True, 300.0),
                      (60, "eval", False, 2275.0), (80, "eval", True, 2300.0)]
    assert history["durations"] == [300.0] * 10


def test_an_evaluation_in_the_window_of_an_untimed_save_leaves_the_cause_unknown():
    v = judged_stdout_job(save_ms=None, extra_ms=2000, between=(EVALUATED,))
    assert v["slow"] and v["cause"] == "unknown" and v["phase"] == "checkpoint"


def test_a_save_that_printed_its_time_in_a_second_line_is_timed():
    """A save whose start and end are both printed, the end with its time (torchtitan,
    OLMo-core): timed, so the 1.8 s it does not explain stays unknown."""
    v = judged_stdout_job(save_ms=None, extra_ms=2000, between=(saved(200),))
    assert v["slow"] and v["cause"] == "unknown" and v["lanes_ms"]["checkpoint"] == 200


def test_a_printed_step_time_holds_no_untimed_save():
    v = judged_stdout_job(save_ms=None, extra_ms=1000, printed_times=True)
    assert v["slow"] and v["cause"] == "unknown" and v["phase"] == "normal"


def test_a_step_time_from_a_wall_clock_mean_holds_the_save_before_it():
    """ms-swift's step times come from its mean since training began: wall time, which holds
    the save printed between the two lines."""
    state, rows = windows.new_rank_state(), []
    for step, ms, ts in ((7, 11.7, 100), (8, 12.0, 112)):
        record = {"kind": "progress", "framework": "hf_trainer", "rank": 0, "step": step,
                  "step_time_ms": ms, "step_time_wall": True}
        state, _ = windows.correlate(state, envelope("progress", 0, {"record": record}, ts * MS))
    state, _ = windows.correlate(state, saved())
    record = {"kind": "progress", "framework": "hf_trainer", "rank": 0, "step": 9,
              "step_time_ms": 34.5, "step_time_wall": True}
    state, rows = windows.correlate(state, envelope("progress", 0, {"record": record}, 147 * MS))
    assert [r["step"] for r in rows] == [8] and "untimed_work" not in rows[0]
    state, rows = windows.correlate(state, envelope("job_end", 0, {"exit_code": 0}, 150 * MS))
    assert [(r["step"], r.get("untimed_work")) for r in rows] == [(9, ["checkpoint"])]


def test_a_row_sent_twice_counts_once_and_an_earlier_versions_state_carries_on():
    """A replayed row of a pending step is one rank, not two; and a state whose ranks an
    earlier version kept as lists (in a changelog written before an upgrade) goes on as it was:
    its pending step waits for the rank it lacks, then is judged with both."""
    row = {"step": 1, "t0_ns": 0, "t1_ns": 10 * MS, "duration_ms": 10.0, "lanes_ms": {},
           "arrival_ns": 5, "world_size": 2, "source": "hook"}
    state, rows = windows.new_job_state(), {}
    for _ in range(2):
        state, verdicts, _ = windows.aggregate(state, dict(row, rank=0), CFG, 0, rows)
        assert verdicts == []
    old = {"pending": {"1": {"first_ns": 0, "ranks": [0]}}, "judged_through": 0, "world_size": 2,
           "ended_ranks": [], "history": state["history"]}
    state, verdicts, _ = windows.aggregate(old, dict(row, rank=1), CFG, 0, rows)
    assert [(v["step"], v["rank_count"]) for v in verdicts] == [(1, 2)]


def test_a_save_and_an_evaluation_that_come_before_the_step_they_ran_after():
    """A bar on stderr and a logger on stdout come on two pipes: the epoch's evaluation and
    save, logged after step 20, arrived before step 20's record (seen under torchrun's `--tee`
    with SpeechBrain).  Their work is step 21's window, which held them, not step 20's."""
    state, rows = windows.new_rank_state(), []
    for msg in (bar_progress(18, 1000), bar_progress(19, 1200),
                printed(EVALUATED["p"]["record"], step=20), saved(), bar_progress(20, 1400),
                bar_progress(21, 2400), bar_progress(22, 2600)):
        if msg["p"]["record"]["kind"] == "checkpoint":
            msg["p"]["record"]["step"] = 20
        state, emitted = windows.correlate(state, msg)
        rows += emitted
    assert [(r["step"], r["duration_ms"], r.get("untimed_work")) for r in rows] == [
        (19, 200.0, None), (20, 200.0, None), (21, 1000.0, ["checkpoint", "eval"])]


def test_an_evaluation_with_no_step_goes_with_the_first_step_that_ended_after_it_was_read():
    """HF's Trainer with its bar on stderr and its log dicts on stdout: the evaluation's dict
    names no step, and step 20's record (held until the bar moved on) arrives after it, though
    step 20 ended before the evaluation began.  The evaluation is step 21's, as the times say."""
    state, rows = windows.new_rank_state(), []
    evaluated = dict(EVALUATED, ts_ns=1500 * MS)
    for msg in (bar_progress(18, 1000), bar_progress(19, 1200), evaluated, bar_progress(20, 1400),
                bar_progress(21, 2400), bar_progress(22, 2600)):
        state, emitted = windows.correlate(state, msg)
        rows += emitted
    assert [(r["step"], r["duration_ms"], r.get("untimed_work")) for r in rows] == [
        (19, 200.0, None), (20, 200.0, None), (21, 1000.0, ["eval"])]


def test_a_read_time_far_ahead_of_the_ranks_steps_holds_the_work_back_for_a_while_only():
    """An event read at a time no step's end reaches (another clock): the work goes with a
    window once the rank's steps are past the hold."""
    state, rows = windows.new_rank_state(), []
    msgs = [bar_progress(step, 1000 + 100 * step) for step in range(1, 30)]
    msgs.insert(3, dict(EVALUATED, ts_ns=10 ** 9 * MS))      # read after step 3's record
    for msg in msgs:
        state, emitted = windows.correlate(state, msg)
        rows += emitted
    held = [r["step"] for r in rows if r.get("untimed_work")]
    assert held == [3 + windows.UNTIMED_HOLD_STEPS + 1], held


def test_an_events_step_far_ahead_of_the_ranks_steps_holds_nothing_back():
    """An event whose step the rank's steps are far from reaching (a restart, another count)
    goes with the next window, as an event with no step does."""
    state, rows = windows.new_rank_state(), []
    for msg in (bar_progress(18, 1000), bar_progress(19, 1200),
                printed(EVALUATED["p"]["record"], step=5000), bar_progress(20, 1400)):
        state, emitted = windows.correlate(state, msg)
        rows += emitted
    state, emitted = windows.correlate(state, envelope("job_end", 0, {"exit_code": 0}))
    assert [(r["step"], r.get("untimed_work")) for r in rows + emitted] == [(19, None), (20, ["eval"])]


def nanogpt_rows(before_step: bool) -> dict:
    """llama2.c's log around step 500: every 10th iteration printed with its own wall-clock time
    from the iteration before, and at the top of iteration 500 an evaluation and a save, whose
    lines name step 500 (`step 500: train loss ..`, `saving checkpoint to out`).  Returns the
    closed windows by step."""
    state, rows = windows.new_rank_state(), {}
    flag = {"before_step": True} if before_step else {}

    def iteration(step: int, ms: float) -> dict:
        return printed({"kind": "progress", "framework": "nanogpt", "step_time_ms": ms,
                        "step_time_wall": True, "loss": 5.0}, step=step)

    messages = [iteration(480, 8000.0), iteration(490, 8060.8),
                printed({"kind": "eval", "framework": "nanogpt", "phase": "validation", "loss": 5.95,
                         **flag}, step=500),
                printed({"kind": "checkpoint", "framework": "nanogpt", "action": "save", "phase": "start",
                         **flag}, step=500),
                iteration(500, 870067.5), iteration(510, 8175.6), iteration(520, 7966.1)]
    for msg in messages:
        state, out = windows.correlate(state, msg)
        rows.update({row["step"]: row for row in out})
    return rows


def test_work_at_the_top_of_an_iteration_is_that_iterations():
    """nanoGPT and llama2.c evaluate and save before training the iteration their lines name,
    and time the iteration from the one before: the evaluation and the save are step 500's
    untimed work, not step 510's."""
    rows = nanogpt_rows(before_step=True)
    assert rows[500]["untimed_work"] == ["checkpoint", "eval"]
    assert not rows[510].get("untimed_work") and not rows[490].get("untimed_work")
    # read as having run after step 500 (every other framework's events), the work would be 510's
    rows = nanogpt_rows(before_step=False)
    assert rows[510]["untimed_work"] == ["checkpoint", "eval"] and not rows[500].get("untimed_work")
