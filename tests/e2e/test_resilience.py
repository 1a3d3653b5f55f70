"""Bad input and crashes: dead letters with reasons, and a killed worker that resumes cleanly."""
from __future__ import annotations

import asyncio
import threading
import time
import uuid

import msgpack
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from ridgescope.schemas import envelope

pytestmark = [pytest.mark.kafka, pytest.mark.slow]
MS = 1_000_000
BASE_NS = time.time_ns() - 3600 * 1_000 * MS
"""Recent, so the store's retention keeps the rows (old event times expire on insert)."""


def step_messages(job: str, steps: range, ranks: int = 2, step_ms: int = 100) -> list:
    """step_spans of a steady job: 20 ms input, 60 ms compute, 20 ms all-reduce per step."""
    out = []
    for step in steps:
        for rank in range(ranks):
            t0 = BASE_NS + (step - 1) * step_ms * MS
            t1 = t0 + step_ms * MS
            payload = {"step": step, "t0_ns": t0, "t1_ns": t1, "world_size": ranks,
                       "spans": [["data_wait", t0, t0 + 20 * MS], ["forward", t0 + 20 * MS,
                                                                   t0 + 40 * MS],
                                 ["backward", t0 + 40 * MS, t1]],
                       "buckets": [[0, t0 + 80 * MS, t1]]}
            out.append(("rs.raw.hook", f"{job}/{rank}", envelope.encode(
                envelope.make("step_spans", job, rank, "h", t1, step, payload))))
    return out


def job_end(job: str, ranks: int = 2) -> list:
    return [("rs.raw.hook", f"{job}/{r}", envelope.encode(envelope.make(
        "job_end", job, r, "h", time.time_ns(), 0, {"exit_code": 0, "world_size": ranks})))
        for r in range(ranks)]


def produce(bootstrap: str, messages: list, over_s: float = 0.0) -> None:
    """Produce ``messages`` in order; with ``over_s``, spread evenly over that many seconds,
    as a running job would."""
    async def go():
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
        await producer.start()
        try:
            for topic, key, value in messages:
                await producer.send_and_wait(topic, value, key=key.encode())
                if over_s:
                    await asyncio.sleep(over_s / len(messages))
        finally:
            await producer.stop()
    asyncio.run(go())


def dead_letters(bootstrap: str, key: bytes, want: int, timeout_s: float = 60) -> list[dict]:
    async def go():
        consumer = AIOKafkaConsumer("rs.dead_letter", bootstrap_servers=bootstrap,
                                    auto_offset_reset="earliest", enable_auto_commit=False,
                                    group_id=None)
        await consumer.start()
        found = []
        try:
            deadline = time.monotonic() + timeout_s
            while len(found) < want and time.monotonic() < deadline:
                batch = await consumer.getmany(timeout_ms=1000)
                for records in batch.values():
                    for record in records:
                        letter = msgpack.unpackb(record.value, raw=False)
                        if letter["key"] == key:
                            found.append(letter)
        finally:
            await consumer.stop()
        return found
    return asyncio.run(go())


def test_malformed_messages_go_to_the_dead_letter_topic_and_the_worker_keeps_going(
        kafka_stack):
    job = f"dlq-{uuid.uuid4().hex[:6]}"
    key = f"{job}/0"
    bad_payload = envelope.make("step_spans", job, 0, "h", 1, 1, {"step": 1})
    produce(kafka_stack.broker, [
        ("rs.raw.hook", key, b"\x00\x01 not an envelope"),
        ("rs.raw.hook", key, msgpack.packb(bad_payload)),
        *step_messages(job, range(1, 9), ranks=1), *job_end(job, ranks=1)])
    letters = dead_letters(kafka_stack.broker, key.encode(), want=2)
    reasons = sorted(letter["reason"] for letter in letters)
    assert len(reasons) == 2, reasons
    assert reasons[0].startswith("SchemaError: not msgpack") or "envelope" in reasons[0]
    assert "step_spans: payload field 't0_ns' is missing" in " ".join(reasons)
    assert {letter["topic"] for letter in letters} == {"rs.raw.hook"}
    assert b"not an envelope" in b"".join(letter["value"] for letter in letters)
    steps = kafka_stack.wait_for_steps(job, 8)
    assert [s["step"] for s in steps] == list(range(1, 9))


def stored_rows(stack, query: str, want: int, timeout_s: float = 60) -> list[dict]:
    """The query's `n` once it reaches `want` (or its last answer at the time-out)."""
    deadline = time.monotonic() + timeout_s
    rows = stack.sql(query)
    while rows[0]["n"] < want and time.monotonic() < deadline:
        time.sleep(1)
        rows = stack.sql(query)
    return rows


def test_a_killed_or_restarted_worker_recovers_its_tables_with_no_duplicate_steps(kafka_stack):
    """The job keeps producing while its worker is SIGKILLed twice and restarted, so events
    arrive during each rebalance and table recovery; then a clean `down` and `up`.  Nothing
    may be lost or duplicated, and the baseline must survive every restart."""
    job = f"crash-{uuid.uuid4().hex[:6]}"
    producing = threading.Thread(target=produce, args=(
        kafka_stack.broker, step_messages(job, range(1, 121)), 30))
    producing.start()
    for delay in (6, 10):
        time.sleep(delay)
        kafka_stack.kill_worker()
        kafka_stack.restart_worker()
    producing.join()
    kafka_stack.wait_for_steps(job, 119)  # step 120 stays open until step 121 arrives

    kafka_stack.down()
    kafka_stack.up()
    produce(kafka_stack.broker, step_messages(job, range(121, 136)) + job_end(job))
    steps = kafka_stack.wait_for_steps(job, 135)

    assert [s["step"] for s in steps] == list(range(1, 136))
    counts = kafka_stack.sql(f"SELECT count() AS n, uniqExact(step) AS u FROM steps FINAL "
                             f"WHERE job = '{job}'")
    assert counts == [{"n": 135, "u": 135}]
    # A step judged before a rank's row came (a worker down past the grace period) stores that
    # row when it comes, through the sink's next batch of records: after the step, not with it.
    rows = stored_rows(kafka_stack, f"SELECT count() AS n FROM step_rank FINAL WHERE job = '{job}'", 270)
    assert rows == [{"n": 270}], "steps without both ranks' rows: " + str(kafka_stack.sql(
        f"SELECT step, groupArray(rank) AS ranks FROM step_rank FINAL WHERE job = '{job}' "
        f"GROUP BY step HAVING count() != 2"))
    # The baseline carried over every restart: no step after warm-up lost its history.
    assert all(s["baseline_ms"] == pytest.approx(100.0) for s in steps if s["step"] > 8)
    assert not any(s["slow"] for s in steps)


def test_status_and_alerts_follow_show_a_slow_step_as_it_happens(kafka_stack):
    import json
    import subprocess
    import sys

    from support import cli
    status = json.loads(cli("status", *kafka_stack.flags, "--format", "json").stdout)
    assert status["worker_running"] and status["broker"] == kafka_stack.broker
    assert status["assigned_partitions"] > 0

    job = f"follow-{uuid.uuid4().hex[:6]}"
    follower = subprocess.Popen(
        [sys.executable, "-m", "ridgescope.cli.main", "alerts", *kafka_stack.flags, "--follow",
         "--job", job, "--max", "1", "--format", "json"], stdout=subprocess.PIPE, text=True)
    time.sleep(5)  # the follower starts at the latest offset
    messages = step_messages(job, range(1, 13))
    slow = step_messages(job, range(13, 14), step_ms=400)
    produce(kafka_stack.broker, messages + slow + step_messages(job, range(14, 16))
            + job_end(job))
    try:
        out, _ = follower.communicate(timeout=90)
    finally:
        follower.kill()
    alert = json.loads(out.splitlines()[0])
    assert alert["job"] == job and alert["step"] == 13
    assert alert["excess_ms"] == pytest.approx(300, abs=1)
    assert "step 13 took 400 ms" in alert["message"]
