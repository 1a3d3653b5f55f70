"""The log probe reads a real pipe: a bar's steps come as the bar is drawn, not when its line ends."""
from __future__ import annotations

import io
import os
import queue
import time
from pathlib import Path

from ridgescope.probes import logprobe
from ridgescope.probes.logprobe import GUESS_WAIT_S, PipeFrameworks, StreamPump, cut_pending
from ridgescope.probes.print_order import HOLD_S, HOLD_STEPS
from ridgescope.probes.ranks import LocalRanks


def test_cut_pending_keeps_a_last_cr_back():
    assert cut_pending(b"a\nb\rc\rd") == (b"a\n", b"b\rc\r", b"d")
    assert cut_pending(b"line\r") == (b"", b"", b"line\r")       # a \n may follow: CRLF
    assert cut_pending(b"x\r\ny") == (b"x\r\n", b"", b"y")


def test_a_bars_steps_come_before_its_line_ends():
    """Keras' bar for a 300-step epoch into a pipe: each step's record comes once the bar has
    moved on past it (its next redraw is complete), while the epoch's line is still open; the
    job's bytes pass through unchanged."""
    read_fd, write_fd = os.pipe()
    records: queue.Queue = queue.Queue()
    out = io.BytesIO()
    pump = StreamPump(read_fd, out, "stdout", lambda rank, payload, ts: records.put((rank, payload)), 7).start()
    sent = b"Epoch 1/1\n"
    os.write(write_fd, sent)
    for n in range(1, 5):
        redraw = ("\b" * 40 + f"\r{n}/300 \u2501\u2501\u2501 0s 5ms/step - loss: 0.{60 - n}").encode()
        os.write(write_fd, redraw)
        sent += redraw
    steps = [records.get(timeout=20) for _ in range(2)]
    assert [(rank, p["stream"], p["record"]["step"], p["record"]["loss"]) for rank, p in steps] == [
        (7, "stdout", 1, 0.59), (7, "stdout", 2, 0.58)]
    assert records.empty()              # step 3 is drawn, but its redraw may not be complete
    os.write(write_fd, b"\n")
    os.close(write_fd)
    pump.join(20)
    assert [p["record"]["step"] for _, p in [records.get(timeout=5) for _ in range(2)]] == [3, 4]
    assert out.getvalue() == sent + b"\n"
    assert (pump.lines, pump.framework) == (2, "keras")


def test_a_bars_steps_carry_when_the_bar_drew_them():
    """A bar that prints no step time: each step's record says when the bar first drew that
    step (the time of the read that brought its redraw), not when the next redraw came and
    showed it complete.  Each redraw is written once the one before has been read."""
    read_fd, write_fd = os.pipe()
    records: queue.Queue = queue.Queue()
    out = io.BytesIO()
    pump = StreamPump(read_fd, out, "stdout", lambda rank, payload, ts: records.put(payload), 0).start()
    os.write(write_fd, b"Epoch 1/1\n")
    sent, written, seen = b"Epoch 1/1\n", [], []
    for n in range(1, 6):
        redraw = ("\b" * 40 + f"\r{n}/5 \u2501\u2501\u2501 0s 5ms/step - loss: 0.{60 - n}").encode()
        written.append(time.time_ns())
        os.write(write_fd, redraw)
        sent += redraw
        while out.getvalue() != sent:     # the probe has read it
            time.sleep(0.001)
        seen.append(time.time_ns())
    os.write(write_fd, b"\n")
    os.close(write_fd)
    pump.join(20)
    steps = [records.get(timeout=5)["record"] for _ in range(5)]
    assert [r["step"] for r in steps] == [1, 2, 3, 4, 5]
    for record, wrote, read in zip(steps, written, seen):
        assert wrote <= record["drawn_ns"] <= read


def test_lines_without_a_step_time_carry_when_they_were_read():
    """A loop that prints `step N loss X` and no time, one line per step through a real pipe:
    each record says when its line was read; a record with a step time of its own, and the
    lines read at the stream's end (not live), say nothing of the kind."""
    read_fd, write_fd = os.pipe()
    records: queue.Queue = queue.Queue()
    pump = StreamPump(read_fd, io.BytesIO(), "stdout", lambda rank, payload, ts: records.put(payload), 0).start()
    stamps = []
    for step, line in enumerate([b"step 1/3 loss 2.5\n", b"step 2/3 loss 2.4\n",
                                 b"step 3/3 loss 2.3 step_time_ms 150.0\n"], start=1):
        before = time.time_ns()
        os.write(write_fd, line)
        record = records.get(timeout=20)["record"]
        assert record["step"] == step
        stamps.append(record.get("drawn_ns"))
        if step < 3:
            assert before <= record["drawn_ns"] <= time.time_ns()
    assert stamps[0] < stamps[1] and stamps[2] is None
    os.write(write_fd, b"step 4/4 loss 2.2")       # no newline: read when the stream ends
    os.close(write_fd)
    pump.join(20)
    last = records.get(timeout=5)["record"]
    assert last["step"] == 4 and "drawn_ns" not in last


def test_a_torchrun_prefix_no_command_line_told_is_guessed_from_the_head():
    """torchrun started by a script (`run -- bash train.sh`): the run process cannot read
    `--role trainer` off the command line; the stream's first lines are held back until the
    prefix is guessed from them, then read with it, each with the time it was read."""
    read_fd, write_fd = os.pipe()
    records: queue.Queue = queue.Queue()
    out = io.BytesIO()
    pump = StreamPump(read_fd, out, "stdout", lambda rank, payload, ts: records.put((rank, payload)), 0).start()
    wrote, sent = [], b""
    for step in range(1, 21):
        wrote.append(time.time_ns())
        lines = b"".join(f"[trainer{r}]:step {step}/20 loss 2.{r}\n".encode() for r in (0, 1))
        os.write(write_fd, lines)
        sent += lines
        while out.getvalue() != sent:     # the probe has read it
            time.sleep(0.001)
    os.close(write_fd)
    pump.join(20)
    got = [records.get(timeout=5) for _ in range(40)]
    assert pump.guessed == "[${role_name}${local_rank}]:"
    assert sorted((rank, p["record"]["step"]) for rank, p in got) == [(r, s) for r in (0, 1) for s in range(1, 21)]
    first = next(p["record"] for rank, p in got if p["record"]["step"] == 1)
    assert wrote[0] <= first["drawn_ns"] <= wrote[1]        # when it was read, not when the head was


def test_a_head_with_no_prefix_is_held_no_longer_than_a_moment():
    """Two lines, then the job goes quiet (loading a model, say): they are read within
    GUESS_WAIT_S, without waiting for more lines."""
    read_fd, write_fd = os.pipe()
    records: queue.Queue = queue.Queue()
    pump = StreamPump(read_fd, io.BytesIO(), "stdout", lambda rank, payload, ts: records.put(payload), 0).start()
    os.write(write_fd, b"step 1/9 loss 2.5 step_time_ms 100.0\nstep 2/9 loss 2.4 step_time_ms 100.0\n")
    got = [records.get(timeout=10)["record"]["step"] for _ in range(2)]
    assert got == [1, 2] and pump.guessed == ""
    os.close(write_fd)
    pump.join(20)


def test_every_ranks_unlabelled_steps_go_to_ranks_of_their_print_order():
    """The real log of two ranks that both print `step N/16` through torchrun with no `--tee`,
    into the probe of a 2-rank job (default rank -1): once step 1 is printed twice, the Kth
    print of each step is rank K's, and says so, step 1's first print too (held back until the
    second came); the launcher's own lines stay the job's."""
    got = pumped_records((CAPTURED / "torch-2.15_torchrun-unlabelled_every-rank-prints_2rank.log").read_bytes())
    steps = [(rank, p["record"]["step"], p["record"]["step_time_ms"], p["record"].get("rank_from_print_order"))
             for rank, p in got if p["record"]["kind"] == "progress"]
    assert steps[0] == (0, 1, 50.2, True)
    assert [(rank, ms) for rank, step, ms, _ in steps if step == 10] == [(0, 50.2), (1, 500.2)]
    assert all(flag for _, _, _, flag in steps)
    for rank in (0, 1):
        assert sorted(step for r, step, _, _ in steps if r == rank) == list(range(1, 17))


def test_msrun_joins_workers_timings_go_to_ranks_of_their_print_order_live():
    """msrun --join's real stream (two MindSpore workers, unlabelled) into the probe of a 2-rank
    job: each worker's TimeMonitor record of an epoch is a rank of its own, as its steps are;
    before, both were the job's, the second over the first."""
    got = pumped_records((CAPTURED / "mindspore-2.10.0_msrun-2-workers_join_stdout_cpu.log").read_bytes())
    timings = [(rank, p["record"]["step"], p["record"]["mean_step_time_ms"], p["record"].get("rank_from_print_order"))
               for rank, p in got if p["record"]["kind"] == "timing"]
    assert timings == [(0, 6, 528.725, True), (1, 6, 56.041, True), (0, 12, 85.975, True), (1, 12, 86.438, True)]
    assert sorted((rank, p["record"]["step"]) for rank, p in got if p["record"]["kind"] == "progress") == [
        (rank, step) for rank in (0, 1) for step in range(1, 13)]


def max_restarts_live() -> list:
    """`torchrun --max-restarts 1`, no `--tee`, its pipes read apart as `ridgescope run` reads
    them (a job of two ranks, default rank -1): the first run's steps on stdout, then stderr's
    tracebacks and the agent's word that worker 1 failed, then the second run's steps.
    (rank, stream, kind, step, error) of each record."""
    name = "torch-2.15_torchrun-max-restarts-1_worker1-raises-at-5_two-pipes_{}.log"
    out, err = ((CAPTURED / name.format(stream)).read_bytes() for stream in ("stdout", "stderr"))
    second = out.index(b"step 1/10", out.index(b"step 5/10"))
    got: queue.Queue = queue.Queue()
    pipes, pumps = PipeFrameworks(), {}
    for stream in ("stdout", "stderr"):
        read_fd, write_fd = os.pipe()
        pumps[stream] = (StreamPump(read_fd, io.BytesIO(), stream, lambda rank, p, ts: got.put((rank, p)), -1,
                                    pipes=pipes).start(), write_fd)
    os.write(pumps["stdout"][1], out[:second])
    records = [got.get(timeout=20) for _ in range(9)]          # the first run's 9 prints
    os.write(pumps["stderr"][1], err)
    deadline = time.monotonic() + 20
    while not pipes.agent_failures and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(pipes.agent_failures) == 1
    os.write(pumps["stdout"][1], out[second:])
    for pump, write_fd in pumps.values():
        os.close(write_fd)
        pump.join(20)
    while not got.empty():
        records.append(got.get())
    return [(rank, p["stream"], p["record"]["kind"], p["record"].get("step"), p["record"].get("error"))
            for rank, p in records]


def test_a_restart_the_agent_tells_on_stderr_begins_stdouts_print_order_again():
    """The second run's prints of steps 1-5 are ranks 0 and 1 again, after a restart record on
    stdout; before, stdout's probe took them for ranks 2 and 3."""
    on_stdout = [(rank, kind, step) for rank, stream, kind, step, _ in max_restarts_live() if stream == "stdout"]
    assert sorted({rank for rank, kind, _ in on_stdout if kind == "progress"}) == [0, 1]
    restart = on_stdout.index(next(r for r in on_stdout if r[1] == "restart"))
    assert on_stdout[restart][2] == 0 and restart == 9
    assert sorted((rank, step) for rank, _, step in on_stdout[restart + 1:]) == [
        (rank, step) for rank in (0, 1) for step in range(1, 11)]


def test_the_errors_on_stderr_take_their_ranks_steps_from_stdout():
    """Each rank's traceback, logged on stderr, is of the step its rank last printed on stdout
    (rank 1 raised in step 5 before it printed it: step 4); the agent's word, naming no rank,
    of the furthest step.  Before, stderr's errors named no step (stderr prints none)."""
    errors = [(rank, step, error) for rank, stream, kind, step, error in max_restarts_live() if kind == "error"]
    assert errors == [(1, 4, "traceback"), (0, 5, "traceback"), (-1, 5, "child_failed")]


def test_one_printing_ranks_first_steps_are_held_no_longer_than_a_few_steps():
    """Rank 0 alone prints, into the probe of a 2-rank job: its first steps are held while no
    step is printed twice, then go out in order as the job's unplaced rank's, none marked a
    print order; held no longer than HOLD_STEPS steps, before the job ends."""
    read_fd, write_fd = os.pipe()
    records: queue.Queue = queue.Queue()
    pump = StreamPump(read_fd, io.BytesIO(), "stdout", lambda rank, payload, ts: records.put((rank, payload)), -1).start()
    lines = b"".join(b"step %d/99 loss 2.5 step_time_ms 100.0\n" % step for step in range(1, HOLD_STEPS + 3))
    os.write(write_fd, lines)
    got = [records.get(timeout=10) for _ in range(HOLD_STEPS + 2)]
    assert [(rank, p["record"]["step"]) for rank, p in got] == [(-1, step) for step in range(1, HOLD_STEPS + 3)]
    assert not any(p["record"].get("rank_from_print_order") for _, p in got)
    os.close(write_fd)
    pump.join(20)


def test_a_first_step_then_a_quiet_job_is_sent_within_a_moment():
    """One step printed, then a long pause (an evaluation, say): it goes out within HOLD_S,
    not when the next step or the end comes."""
    read_fd, write_fd = os.pipe()
    records: queue.Queue = queue.Queue()
    pump = StreamPump(read_fd, io.BytesIO(), "stdout", lambda rank, payload, ts: records.put((rank, payload)), -1).start()
    os.write(write_fd, b"step 1/9 loss 2.5 step_time_ms 100.0\n")
    rank, payload = records.get(timeout=HOLD_S + 8)
    assert (rank, payload["record"]["step"]) == (-1, 1)
    os.close(write_fd)
    pump.join(20)


def pumped_records(log: bytes, default_rank: int = -1, *launcher) -> list:
    """(rank, payload) of each record of `log` written whole into a probe's stdout pipe."""
    read_fd, write_fd = os.pipe()
    got: list = []
    pump = StreamPump(read_fd, io.BytesIO(), "stdout", lambda rank, payload, ts: got.append((rank, payload)),
                      default_rank, *launcher).start()
    os.write(write_fd, log)
    os.close(write_fd)
    pump.join(20)
    return got


def pumped(log: bytes, default_rank: int, *launcher) -> list:
    return [(rank, p["record"]["step"], p["record"]["step_time_ms"])
            for rank, p in pumped_records(log, default_rank, *launcher) if p["record"]["kind"] == "progress"]


def test_a_second_nodes_unlabelled_prints_are_its_own_ranks():
    """Node 1 of two (its workers' RANK - LOCAL_RANK is 2), torchrun with no `--tee`, both
    workers printing: the Kth print of a step is local rank K's, the job's rank 2 + K, not rank
    K of node 0.  No more ranks than the node's workers: told it runs one, nothing spreads."""
    log = (Path(__file__).resolve().parents[1] / "data" / "captured"
           / "torch-2.15_torchrun-unlabelled_node-rank-1-of-2_2x2rank.log").read_bytes()
    steps = pumped(log, -1, LocalRanks(lambda: 2, multi_node=True), 2)
    assert [(rank, ms) for rank, step, ms in steps if step == 10] == [(2, 50.1), (3, 500.1)]
    assert {rank for rank, _, _ in steps[1:]} == {2, 3}
    assert {rank for rank, _, _ in pumped(log, -1, LocalRanks(lambda: 2, multi_node=True), 1)} == {-1}


def test_two_workers_prints_run_into_one_line_are_both_kept():
    """A real node's stdout (torchrun without `--tee`, PYTHONUNBUFFERED=1, a busy machine) in
    which six steps' two prints ran into one line, their newlines after them: each print is a
    rank's step, so every step has both ranks (before, the line was one record and one rank's
    step was lost at each of them)."""
    log = (Path(__file__).resolve().parents[1] / "data" / "captured"
           / "torch-2.15_torchrun-unlabelled_prints-glued-in-one-line_2x2rank.log").read_bytes()
    assert log.count(b"50.2step ") + log.count(b"50.1step ") >= 6
    read_fd, write_fd = os.pipe()
    got: list = []
    pump = StreamPump(read_fd, io.BytesIO(), "stdout", lambda rank, payload, ts: got.append((rank, payload)),
                      -1, LocalRanks(lambda: 0, multi_node=True), 2).start()
    os.write(write_fd, log)
    os.close(write_fd)
    pump.join(20)
    for step in range(1, 17):
        assert sorted(rank for rank, p in got if p["record"]["step"] == step) == [0, 1], step
    assert pump.glued == 6      # `ridgescope run` says so in its report


def test_a_first_step_after_a_quiet_head_is_still_held_for_its_second_print():
    """The launcher's chatter, then nothing for longer than the head is held (a model
    loading), then both ranks print: the head's wait ran out while no record was held, and
    step 1's first print is still held until its second comes, so it is rank 0's, not the
    unplaced rank's."""
    read_fd, write_fd = os.pipe()
    records: queue.Queue = queue.Queue()
    pump = StreamPump(read_fd, io.BytesIO(), "stdout", lambda rank, payload, ts: records.put((rank, payload)), -1).start()
    os.write(write_fd, b"Setting OMP_NUM_THREADS environment variable for each process to be 1\n")
    time.sleep(GUESS_WAIT_S + 0.5)
    os.write(write_fd, b"step 1/9 loss 2.5 step_time_ms 100.0\n")
    time.sleep(0.2)
    os.write(write_fd, b"step 1/9 loss 2.5 step_time_ms 100.0\n")
    got = [records.get(timeout=10) for _ in range(2)]
    assert sorted(rank for rank, _ in got) == [0, 1]
    os.close(write_fd)
    pump.join(20)


CAPTURED = Path(__file__).resolve().parents[1] / "data" / "captured"
HF_TWO_PIPES = "transformers-5.24.0_trainer_tqdm_two-pipes_{}.log"


NCCL_INFO = Path(__file__).resolve().parents[1] / "data" / "corpus" / "megatron" / \
    "megatron-deepspeed_gpt3-125M_tokendrop_8gpu_timers_nccl-info.log"


def nccl_init_lines() -> bytes:
    """A real NCCL_DEBUG=INFO job's first rank's `Init COMPLETE` lines, one a communicator."""
    lines = NCCL_INFO.read_bytes().splitlines(keepends=True)
    return b"".join(line for line in lines if line.startswith(b"azwus2f200000C6:58799:") and b"Init COMPLETE" in line)


def two_pipes(pipes, stdout_head: bytes = b"") -> list:
    """HF's Trainer, its pipes read apart as `ridgescope run` reads them: stdout's log dicts
    first (the Trainer printed its first at step 2), then stderr's bar.  `stdout_head`: what
    the job printed on stdout before the Trainer's first line."""
    got: queue.Queue = queue.Queue()
    pumps = {}
    for stream in ("stdout", "stderr"):
        read_fd, write_fd = os.pipe()
        pump = StreamPump(read_fd, io.BytesIO(), stream, lambda rank, payload, ts: got.put(payload), 0,
                          pipes=pipes).start()
        pumps[stream] = (pump, write_fd)
    for stream in ("stdout", "stderr"):
        pump, write_fd = pumps[stream]
        os.write(write_fd, (stdout_head if stream == "stdout" else b"")
                 + (CAPTURED / HF_TWO_PIPES.format(stream)).read_bytes())
        if stream == "stdout":
            first = got.get(timeout=20)
            while first["record"]["kind"] == "nccl_init":
                first = got.get(timeout=20)
            assert (first["stream"], first["record"]["framework"]) == ("stdout", "hf_trainer")
        os.close(write_fd)
        pump.join(20)
    records = []
    while not got.empty():
        records.append(got.get())
    return [(p["record"]["step"], p["record"].get("total_steps")) for p in records
            if p["stream"] == "stderr" and p["record"]["kind"] == "progress"]


def test_a_bar_on_stderr_is_read_as_the_framework_stdout_showed():
    """Alone, the Trainer's bar names no framework, and an unlabelled bar is no training loop's
    (with the hooks off, no step of the job was judged); read as HF's, its steps come, and its
    evaluation bars (`0/2`) give none."""
    assert two_pipes(None) == []
    assert two_pipes(PipeFrameworks()) == [(n, 16) for n in (2, 4, 5, 6, 8, 10, 12, 14, 15, 16)]


def test_nccls_init_lines_before_the_trainers_name_no_framework():
    """NCCL_DEBUG=INFO prints the communicator's init on stdout before the Trainer's first
    dict: NCCL's records named the pipe's framework `nccl` (the job's, in its end record), and
    the bar on stderr, read as no framework's, gave no step.  NCCL is no training framework."""
    head = nccl_init_lines()
    assert head.count(b"\n") == 5
    pipes = PipeFrameworks()
    assert two_pipes(pipes, head) == [(n, 16) for n in (2, 4, 5, 6, 8, 10, 12, 14, 15, 16)]
    assert set(pipes.shown) == {"hf_trainer"}


def pipes_in_order(name: str, order: tuple) -> list:
    """(stream, step, timed by the other pipe's bar) of the progress records of a run's two pipe
    captures, read by two pumps that share one `PipeFrameworks`, each pipe written whole in `order`."""
    got: queue.Queue = queue.Queue()
    pipes, pumps = PipeFrameworks(), {}
    for stream in order:
        read_fd, write_fd = os.pipe()
        pump = StreamPump(read_fd, io.BytesIO(), stream, lambda rank, payload, ts: got.put(payload), 0,
                          pipes=pipes).start()
        pumps[stream] = (pump, write_fd)
    for stream in order:
        pump, write_fd = pumps[stream]
        os.write(write_fd, (CAPTURED / name.format(stream)).read_bytes())
        os.close(write_fd)
        pump.join(20)
    records = []
    while not got.empty():
        records.append(got.get())
    return [(p["stream"], p["record"]["step"], p["record"].get("timed_by_bar", False)) for p in records
            if p["record"]["kind"] == "progress" and not p["record"].get("summary")]


def test_the_banner_on_stderr_names_the_steps_of_the_dicts_on_stdout():
    """`disable_tqdm=True`: the Trainer logs its banner on stderr and prints its dicts on stdout;
    read as `ridgescope run` reads them, the banner read on one pipe gives the other's steps."""
    got = pipes_in_order("transformers-4.57.3_trainer_disable-tqdm_log-level-info_accum3_two-pipes_{}.log",
                         ("stderr", "stdout"))
    assert got == [("stdout", step, False) for step in (2, 4, 6, 8, 10, 12)]


def test_with_a_bar_on_the_other_pipe_the_dicts_carry_their_steps_values_untimed():
    """The bar's redraws on stderr time the steps; the dicts on stdout, numbered from their epochs,
    carry their steps' losses, each marked as timed by the bar (so it makes no window of its own,
    `step_streams.py`)."""
    got = pipes_in_order("transformers-4.57.3_trainer_tqdm_log-level-info_two-pipes_{}.log", ("stderr", "stdout"))
    assert [(step, by_bar) for stream, step, by_bar in got if stream == "stderr"] == [
        (step, False) for step in (2, 4, 5, 6, 8, 10, 12, 14, 15, 16)]     # as drawn
    assert [(step, by_bar) for stream, step, by_bar in got if stream == "stdout"] == [
        (step, True) for step in range(2, 17, 2)]


def test_a_banner_held_with_its_pipes_head_numbers_the_dicts_read_meanwhile(monkeypatch):
    """Each pipe's first lines are held (up to 1 s, here until its end) while a launcher's prefix
    is guessed from them.  A toy run prints its first dicts on stdout within that second of the
    banner on stderr: the banner is noted as it comes, so those dicts are numbered too."""
    monkeypatch.setattr(logprobe, "GUESS_WAIT_S", 60.0)
    name = "transformers-4.57.3_trainer_disable-tqdm_log-level-info_accum3_two-pipes_{}.log"
    got: queue.Queue = queue.Queue()
    pipes, pumps = PipeFrameworks(), {}
    for stream in ("stderr", "stdout"):
        read_fd, write_fd = os.pipe()
        pumps[stream] = (StreamPump(read_fd, io.BytesIO(), stream, lambda rank, payload, ts: got.put(payload), 0,
                                    pipes=pipes).start(), write_fd)
    (err, err_fd), (out, out_fd) = pumps["stderr"], pumps["stdout"]
    os.write(err_fd, (CAPTURED / name.format("stderr")).read_bytes())
    deadline = time.monotonic() + 10
    while pipes.training_banner.seen.get("total_steps") is None and time.monotonic() < deadline:
        time.sleep(0.01)
    os.write(out_fd, (CAPTURED / name.format("stdout")).read_bytes())
    os.close(out_fd)
    out.join(20)
    assert err._head is not None        # stderr's lines are still held
    records = []
    while not got.empty():
        records.append(got.get())
    assert [r["record"]["step"] for r in records if r["record"]["kind"] == "progress"
            and not r["record"].get("summary")] == [2, 4, 6, 8, 10, 12]
    os.close(err_fd)
    err.join(20)
