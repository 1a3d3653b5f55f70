"""The worker's offset commits never pass an event its agents did not process.

Faust acks events its streams skip around a rebalance and commits the first unbroken run of
acked offsets wherever it starts; SafeCommitConsumer (ridgescope.pipeline.commits) refuses
both.  Driven on the real consumer object of the worker's app, with no broker."""
from __future__ import annotations

import asyncio

import pytest
from faust.transport.drivers.aiokafka import Consumer as FaustConsumer
from faust.types import TP, Message
from mode.utils.queues import FlowControlEvent

from ridgescope.pipeline import commits
from ridgescope.pipeline.app import build_app
from ridgescope.pipeline.config import Settings

TOPIC = "rs.raw.hook"
TP0 = TP(TOPIC, 0)


@pytest.fixture
def consumer():
    app = build_app(Settings(broker="127.0.0.1:9"))   # never started: no broker needed
    app.topics._acking_topics.add(TOPIC)
    app.flow_control.resume()
    app.consumer_generation_id = 3
    consumer = app.consumer
    consumer._committed_offset[TP0] = 10
    return consumer


def message(offset: int, generation: int = 3) -> Message:
    return Message(topic=TOPIC, partition=0, offset=offset, timestamp=0.0, timestamp_type=0,
                   headers=None, key=b"k", value=b"v", checksum=None, tp=TP0,
                   generation_id=generation)


def test_an_event_skipped_under_the_old_generation_holds_the_commit_back(consumer):
    skipped = message(10, generation=2)
    assert consumer.ack(skipped) is False
    assert skipped.acked    # released: a rebalance waiting for in-flight events goes on
    for offset in range(11, 15):
        consumer.ack(message(offset))
    assert consumer._new_offset(TP0) is None
    # Faust's own rule commits past the hole:
    assert FaustConsumer._new_offset(consumer, TP0) == 15

    consumer._acked[TP0][:] = list(range(11, 15))
    consumer._acked_index[TP0].update(range(11, 15))
    consumer.ack(message(10))     # fetched again after the seek, and processed
    assert consumer._new_offset(TP0) == 15


def test_an_event_acked_while_flow_control_is_off_is_not_counted(consumer):
    consumer.app.flow_control.suspend()
    assert consumer.ack(message(10)) is False
    consumer.app.flow_control.resume()
    consumer.ack(message(11))
    assert consumer._new_offset(TP0) is None


def test_a_resume_while_flow_is_on_keeps_the_events_queued():
    """Table recovery resumes flow as it starts and again as it ends, and the stream
    partitions are read in between: an event delivered then stays in its stream's queue."""
    app = build_app(Settings(broker="127.0.0.1:9"))
    queue = app.FlowControlQueue(maxsize=10, clear_on_resume=True)   # as a channel's
    app.flow_control.resume()
    queue.put_nowait("the first event after recovery")
    app.flow_control.resume()
    assert queue.qsize() == 1
    FlowControlEvent.resume(app.flow_control)    # Faust's own: the event is gone unseen
    assert queue.qsize() == 0

    queue.put_nowait("an event of the generation a rebalance ends")
    app.flow_control.suspend()
    app.flow_control.resume()
    assert queue.qsize() == 0 and app.flow_control.is_active()


def test_an_unbroken_run_from_the_committed_position_commits(consumer):
    for offset in (12, 10, 11):
        assert consumer.ack(message(offset)) is True
    assert consumer._new_offset(TP0) == 13


def test_offsets_from_before_a_seek_are_dropped_not_waited_for(consumer):
    for offset in (10, 11):
        consumer.ack(message(offset))
    consumer._committed_offset[TP0] = 20     # another worker committed further meanwhile
    consumer.ack(message(20))
    assert consumer._new_offset(TP0) == 21
    assert consumer._acked[TP0] == []


@pytest.fixture
def seeks(consumer, monkeypatch):
    """The seeks the consumer asks for (it has no broker here), with Faust's own effect on
    its read offset."""
    asked = []

    async def seek(tp, offset):
        asked.append((tp, offset))
        consumer._read_offset[tp] = offset
    monkeypatch.setattr(consumer, "seek", seek)
    monkeypatch.setattr(consumer, "assignment", lambda: {TP0})
    return asked


def test_a_record_past_the_next_offset_is_dropped_and_the_partition_read_again(
        consumer, seeks, monkeypatch):
    delivered = []

    async def deliver(msg):
        delivered.append(msg.offset)
    monkeypatch.setattr(consumer, "_deliver", deliver)

    async def drain(offsets):     # what Faust's fetch loop does with each record
        for offset in offsets:
            last = consumer._read_offset[TP0]
            if last is not None and offset < last:
                continue          # older than a seek: Faust drops it
            if last is not None and offset - last > 1:
                await consumer._add_gap(TP0, last + 1, offset)
            await consumer.callback(message(offset))
            consumer._read_offset[TP0] = offset

    consumer._read_offset[TP0] = 9
    asyncio.run(drain([10, 11, 15, 16, 12, 13, 14, 15, 16]))
    assert seeks == [(TP0, 12)]
    assert delivered == [10, 11, 12, 13, 14, 15, 16]
    consumer.ack(message(10))
    asyncio.run(consumer._add_gap(TP0, 11, 20))   # a jump is never counted as done
    consumer.ack(message(21))
    assert consumer._new_offset(TP0) == 11
    assert consumer._new_offset(TP0) is None


def test_a_partition_held_back_too_long_is_read_again_from_its_committed_offset(
        consumer, seeks):
    consumer.ack(message(12))
    assert consumer._new_offset(TP0) is None
    asyncio.run(consumer._reread_held_partitions())
    assert seeks == []                               # a batch may still be on its way
    consumer._held_since[TP0] -= commits.REREAD_AFTER_S
    asyncio.run(consumer._reread_held_partitions())
    assert seeks == [(TP0, 10)]
    assert consumer._resyncing == {TP0: 10}


def test_a_partitions_last_events_never_done_are_read_again(consumer, seeks, monkeypatch):
    """The broker holds offsets 10-11 (an ingested rank's last record and its end), the
    committed position stays at 10, and no later event comes to show that they were lost
    between the consumer and the agent: after REREAD_AFTER_S unmoved, the partition is read
    again from 10.  (CI lost an ingested job's last steps this way.)"""
    async def highwaters(*tps):
        return {tp: 12 for tp in tps}
    monkeypatch.setattr(consumer, "highwaters", highwaters)
    asyncio.run(consumer._reread_stuck_tails())
    assert seeks == []                               # the events may still be on their way
    consumer._stuck_since[TP0] = (10, consumer._stuck_since[TP0][1] - commits.REREAD_AFTER_S)
    consumer._tail_check_at = 0.0
    asyncio.run(consumer._reread_stuck_tails())
    assert seeks == [(TP0, 10)] and consumer._resyncing == {TP0: 10}


def test_a_tail_is_stuck_only_while_the_committed_offset_does_not_move():
    since: dict = {}
    assert commits.stuck_tails({TP0: 10}, {TP0: 12}, since, 0.0) == []
    assert commits.stuck_tails({TP0: 11}, {TP0: 12}, since, 4.0) == []       # it moved: anew
    assert commits.stuck_tails({TP0: 11}, {TP0: 12}, since, 4.0 + commits.REREAD_AFTER_S) == [TP0]
    assert commits.stuck_tails({TP0: 12}, {TP0: 12}, since, 100.0) == [] and since == {}  # all done
    assert commits.stuck_tails({TP0: None}, {TP0: 12}, since, 200.0) == []   # not read yet


def test_a_never_committed_partition_is_read_from_its_first_offset(consumer, seeks, monkeypatch):
    """A worker that starts as a job's first event arrives: the fetcher had handed out offset 0
    of a partition nobody committed (its position is 1) before the rebalance's seek.  Reading
    must start at 0, or the gate takes 0 as done and the rank's first step is lost (the crash
    test's step 1 lacked rank 0)."""
    TP1 = TP(TOPIC, 1)
    monkeypatch.setattr(consumer, "assignment", lambda: {TP0, TP1})

    async def seek_to_committed():
        return {TP0: 10, TP1: None}

    async def position(tp):
        return 1

    async def earliest_offsets(*tps):
        return {tp: 0 for tp in tps}
    monkeypatch.setattr(consumer, "seek_to_committed", seek_to_committed)
    monkeypatch.setattr(consumer, "position", position)
    monkeypatch.setattr(consumer, "earliest_offsets", earliest_offsets)
    asyncio.run(consumer.perform_seek())
    assert seeks == [(TP1, 0)]
    assert consumer._committed_offset[TP1] == 0 and consumer._committed_offset[TP0] == 10
    gate = commits.InOrder(consumer.app)
    first = Message(topic=TOPIC, partition=1, offset=0, timestamp=0.0, timestamp_type=0,
                    headers=None, key=b"k", value=b"v", checksum=None, tp=TP1, generation_id=3)
    assert asyncio.run(gate.admit(first)) is True


@pytest.fixture
def resync(consumer, seeks, monkeypatch):
    """A partition read again from 12 (the broker holds offsets from ``first[0]``), and the
    offsets the consumer then delivers."""
    delivered, first = [], [0]

    async def deliver(msg):
        delivered.append(msg.offset)

    async def earliest_offsets(*tps):
        return {tp: first[0] for tp in tps}
    monkeypatch.setattr(consumer, "_deliver", deliver)
    monkeypatch.setattr(consumer, "earliest_offsets", earliest_offsets)
    asyncio.run(consumer._read_again(TP0, 12))
    return delivered, first


def test_records_past_the_awaited_offset_wait_while_the_broker_holds_it(consumer, resync):
    """Records fetched before the seek can take seconds to pass a busy stream: going on from
    them after a wait alone lost the awaited events (the gate then took them as gone)."""
    delivered, _ = resync
    consumer._resync_check_at[TP0] -= commits.RESYNC_CHECK_S
    asyncio.run(consumer.callback(message(14)))
    assert delivered == [] and consumer._resyncing == {TP0: 12}
    asyncio.run(consumer.callback(message(12)))
    assert delivered == [12] and consumer._resyncing == {}


def test_offsets_that_retention_deleted_are_gone_on_from(consumer, resync):
    delivered, first = resync
    first[0] = 13
    consumer._resync_check_at[TP0] -= commits.RESYNC_CHECK_S
    asyncio.run(consumer.callback(message(14)))       # fetched before the seek: 13 is due
    assert delivered == [] and consumer._resyncing == {TP0: 13}
    asyncio.run(consumer.callback(message(13)))
    assert delivered == [13] and consumer.gone_on_from == {TP0: 13}


def test_an_offset_that_never_comes_back_does_not_stall_the_partition(consumer, resync):
    """A compacted topic: the broker holds offsets from 0, but 12 never comes."""
    delivered, _ = resync
    asyncio.run(consumer.callback(message(14)))
    assert delivered == []
    consumer._resync_check_at[TP0] -= commits.RESYNC_GIVE_UP_S
    consumer._resync_until[TP0] -= commits.RESYNC_GIVE_UP_S
    asyncio.run(consumer.callback(message(14)))
    assert delivered == [14] and consumer._resyncing == {}
    assert consumer.gone_on_from == {TP0: 14}


def test_the_agent_takes_a_partition_in_offset_order(consumer, seeks):
    """Faust lost offset 12 between the consumer and the agent (it reached the stream, never
    the agent, and was never acked): 13 must wait for it, or the correlate agent's state
    passes 12's step and drops it as a duplicate when it is read again."""
    gate = commits.InOrder(consumer.app)

    def admit(offset: int, generation: int = 3) -> bool:
        return asyncio.run(gate.admit(message(offset, generation)))

    assert [admit(o) for o in (10, 11, 13, 14)] == [True, True, False, False]
    assert seeks == [(TP0, 12)]                       # once, not for every later event
    assert [admit(o) for o in (12, 13, 11, 14)] == [True, True, False, True]
    consumer._committed_offset[TP0] = 13              # a rebalance: reading starts again there
    assert [admit(o, generation=4) for o in (13, 14)] == [True, True]


def test_the_gate_starts_at_the_committed_offset_and_follows_a_give_up(consumer, seeks):
    gate = commits.InOrder(consumer.app)
    assert asyncio.run(gate.admit(message(11))) is False      # 10, where reading began, is due
    assert seeks == [(TP0, 10)]
    consumer.gone_on_from[TP0] = 14                           # 10 never came back (deleted)
    assert asyncio.run(gate.admit(message(14))) is True
    assert asyncio.run(gate.admit(message(15))) is True
    assert consumer.gone_on_from == {}                        # taken once, then in order


@pytest.mark.parametrize("due, offset, gone_on_from, expected", [
    (None, 7, None, (True, 8, None)),
    (7, 7, None, (True, 8, None)),
    (7, 9, None, (False, 7, 7)),
    (7, 5, None, (False, 7, None)),
    (7, 9, 9, (True, 10, None)),
])
def test_in_order(due, offset, gone_on_from, expected):
    assert commits.in_order(due, offset, gone_on_from) == expected
