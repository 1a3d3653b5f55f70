"""Offset commits that never pass an event the agents did not process, and delivery in
offset order.

Faust (0.15) counts events as done that no agent handled:
- the events its streams skip around a rebalance (fetched under the old generation, or
  arriving while flow control is off for table recovery): it acks them;
- offsets the fetcher jumped over: after the seek that ends a rebalance, records fetched
  before it can still arrive, and Faust marks the offsets between as a "gap", meant for
  compacted or transactional topics, and commits over it (such a late record is also
  delivered ahead of the ones it jumped over);
- with either, it commits the first unbroken run of acked offsets even when that run does
  not start at the committed position.
A worker killed after such a commit came back without those events: the crash test lost
steps that the aggregate had judged and the sink had never stored.

Here none of them counts as done, and a commit must start exactly at the committed
position.  When a record arrives past the next expected offset, it is dropped and the
partition is read again from that offset, so the agents see each partition in order (the
aggregate judges steps in order).  A partition whose commit is still held back after a
while is read again from its committed offset.  At least once: the agents and the store
drop the duplicates.

A lost event is seen from the one after it.  The last events of a partition have none after
them: where the broker holds events past the committed position and the commits have not moved
for a while, the partition is read again from there too (CI lost the last record and the end
of an ingested rank that way, once in a run: its last steps were never judged; the cause of
that loss is told below, and fixed at its source).

In order up to the consumer is not yet in order at the agent: Faust can lose an event
between the two without acking it.  The commit holds there and the event is read again, but
by then the correlate agent's state had passed its step and dropped it as a duplicate: a
rank's step lost for good.  `InOrder` makes an agent take each partition's events in offset
order, so that a lost one is read again before any after it is used.

The loss itself, traced event by event: table recovery resumes flow control when it starts
reading the changelogs, the stream partitions are resumed and sought while it stays on, and
recovery then resumes it again; every resume empties the stream queues.  An event delivered
in between (a worker's first after it starts or rebalances) was dropped from its queue
unseen.  `KeepQueuedOnResume` empties them only when flow was off.
"""
from __future__ import annotations

import bisect
import logging
import time
from collections import defaultdict

import faust
from faust.transport.drivers import aiokafka as aiokafka_driver
from faust.types.tuples import ack_lock
from mode.utils.futures import notify
from mode.utils.objects import cached_property
from mode.utils.queues import FlowControlEvent

log = logging.getLogger("ridgescope.pipeline")
REREAD_AFTER_S = 5.0
"""How long a partition's commit may wait on an event at its committed position before the
partition is read again from there: longer than a batch takes, shorter than a user waits."""
RESYNC_CHECK_S = 3.0
"""A partition read again takes records only from the offset it awaits.  Records past it that
still come this long after the seek may have been fetched before it (they can take seconds to
pass a busy stream), or the broker no longer holds the awaited one: the broker is asked.
Where retention deleted it, reading goes on from the first offset the broker holds."""
TAIL_CHECK_S = 2.0
"""How often the broker is asked where each partition ends (one ListOffsets request)."""
RESYNC_GIVE_UP_S = 30.0
"""An awaited offset that the broker holds but never sends (a topic someone compacted): after
this long, reading goes on from what comes.  Going on after RESYNC_CHECK_S alone lost events
that were merely slow."""


class _ReadOffsets(defaultdict):
    """Faust's per-partition "last delivered offset", which it also uses to drop records
    older than a seek.  While a partition is being read again, the records dropped on the
    way must not move it, or the one awaited would be dropped as old."""

    def __init__(self, resyncing: dict):
        super().__init__(lambda: None)
        self.resyncing = resyncing

    def __setitem__(self, tp, offset) -> None:
        if tp not in self.resyncing or offset == self.resyncing[tp]:
            super().__setitem__(tp, offset)


class SafeCommitConsumer(aiokafka_driver.Consumer):
    """Faust's Kafka consumer with the rules above."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._held_since: dict = {}
        self._resyncing: dict = {}      # partition -> the offset that must come next
        self._resync_check_at: dict = {}
        self._resync_until: dict = {}
        self._read_offset = _ReadOffsets(self._resyncing)
        self.gone_on_from: dict = {}    # partition -> the offset reading went on from
        self._stuck_since: dict = {}    # partition -> (committed offset, since when unmoved)
        self._tail_check_at = 0.0
        self._deliver, self.callback = self.callback, self._deliver_in_order

    async def _deliver_in_order(self, message) -> None:
        tp = message.tp
        expected = self._resyncing.get(tp)
        if expected is not None and message.offset > expected \
                and time.monotonic() >= self._resync_check_at[tp]:
            expected = await self._still_awaited(tp, expected, message.offset)
        if expected is not None:
            if message.offset != expected:
                return      # fetched before the seek back: it comes again, in order
            del self._resyncing[tp]
        await self._deliver(message)

    async def _still_awaited(self, tp, expected: int, offset: int) -> int | None:
        """The offset a partition read again awaits, where a later one came past
        RESYNC_CHECK_S: the broker's first where retention deleted the awaited one, None (go
        on from ``offset``) past RESYNC_GIVE_UP_S, else the same one."""
        now = time.monotonic()
        self._resync_check_at[tp] = now + RESYNC_CHECK_S
        try:
            earliest = (await self.earliest_offsets(tp)).get(tp)
        except Exception as exc:  # noqa: BLE001 - unanswered: wait on, ask again later
            log.warning("the broker did not say where %s[%d] begins: %s", tp.topic,
                        tp.partition, exc)
            earliest = None
        if earliest is not None and earliest > expected:
            log.warning("offsets %d-%d of %s[%d] were deleted before they were read; going on "
                        "from %d", expected, earliest - 1, tp.topic, tp.partition, earliest)
            self._resyncing[tp] = self.gone_on_from[tp] = earliest
            return earliest
        if now < self._resync_until[tp]:
            return expected
        log.warning("offset %d of %s[%d] never came back; going on from %d",
                    expected, tp.topic, tp.partition, offset)
        del self._resyncing[tp]
        self.gone_on_from[tp] = offset
        return None

    async def _seek(self, partition, offset: int) -> None:
        """Seek on the consumer's own thread.  Faust's seeks from the app's thread, where
        aiokafka's fetcher may be handing out records on the other: its seek drops the
        partition's fetched records, which the fetcher's loop had listed a moment before, and
        the worker crashed on that (`KeyError: TopicPartition(...)` in `fetched_records`, as a
        worker started and seeked each partition it had never committed)."""
        await self._thread.call_thread(self._thread.seek, partition, offset)

    async def read_again(self, tp, offset: int) -> bool:
        """Read ``tp`` again from ``offset`` (the records after it are dropped until it
        comes); False where it is being read again from there already, or is not ours."""
        if self._resyncing.get(tp) == offset or tp not in self.assignment():
            return False
        await self._read_again(tp, offset)
        return True

    async def _read_again(self, tp, offset: int) -> None:
        self._resyncing[tp] = offset
        now = time.monotonic()
        self._resync_check_at[tp] = now + RESYNC_CHECK_S
        self._resync_until[tp] = now + RESYNC_GIVE_UP_S
        await self.seek(tp, offset)

    def ack(self, message) -> bool:
        app = self.app
        if message.generation_id == app.consumer_generation_id \
                and app.flow_control.is_active():
            return super().ack(message)
        with ack_lock:   # released, so a rebalance waiting for in-flight events goes on
            if message.acked:
                return False
            message.acked = True
            self._unacked_messages.discard(message)
            notify(self._waiting_for_ack)
        return False

    def _new_offset(self, tp):
        acked = self._acked[tp]
        committed = self._committed_offset[tp]
        if committed is not None and acked:
            acked.sort()
            stale = bisect.bisect_left(acked, committed)   # from before the last seek
            if stale:
                self._acked_index[tp].difference_update(acked[:stale])
                del acked[:stale]
            if acked and acked[0] != committed:
                self._held_since.setdefault(tp, time.monotonic())
                return None     # an event at the committed position is not done yet
        self._held_since.pop(tp, None)
        return super()._new_offset(tp)

    async def _add_gap(self, tp, offset_from: int, offset_to: int) -> None:
        """Our topics are neither compacted nor transactional: every offset is an event, and
        one the fetcher jumped over was not delivered.  Read the partition again from it."""
        if tp not in self._resyncing:
            await self._read_again(tp, offset_from)

    async def commit(self, *args, **kwargs) -> bool:
        committed = await super().commit(*args, **kwargs)
        await self._reread_held_partitions()
        await self._reread_stuck_tails()
        return committed

    async def _reread_stuck_tails(self) -> None:
        now = time.monotonic()
        if now < self._tail_check_at or not self.app.flow_control.is_active():
            return
        self._tail_check_at = now + TAIL_CHECK_S
        streamed = self.app.topics.acks_enabled_for
        ours = [tp for tp in self.assignment() if streamed(tp.topic) and tp not in self._resyncing]
        if not ours:
            return
        try:
            ends = await self.highwaters(*ours)
        except Exception:  # noqa: BLE001 - unanswered: ask again at the next check
            return
        for tp in stuck_tails(self._committed_offset, ends, self._stuck_since, now):
            offset = self._committed_offset[tp]
            log.warning("reading %s[%d] again from offset %d: the broker holds events up to %d "
                        "and none past %d was done in %.0f s", tp.topic, tp.partition, offset,
                        ends[tp] - 1, offset - 1, REREAD_AFTER_S)
            await self._read_again(tp, offset)

    async def _reread_held_partitions(self) -> None:
        now, assigned = time.monotonic(), self.assignment()
        for tp, since in list(self._held_since.items()):
            if now - since < REREAD_AFTER_S:
                continue
            del self._held_since[tp]
            offset = self._committed_offset[tp]
            if tp in assigned and offset is not None and tp not in self._resyncing:
                log.warning("reading %s[%d] again from offset %d: events there were never "
                            "delivered to the agents", tp.topic, tp.partition, offset)
                await self._read_again(tp, offset)

    async def perform_seek(self) -> None:
        """Seek to the committed offsets.  A never-committed partition is read from its first
        offset the broker holds (the app resets to the earliest), and its first commit has to
        start there.  Not from the consumer's position: records the fetcher handed out before
        this seek have moved it on (a worker that starts as a job's first event arrives), and
        the gate then took that event as one already done (the crash test lost a rank's first
        step).  Faust then takes the committed offset as the last one delivered, so a late
        record just past it would not count as a jump: mark the one before instead."""
        self._resyncing.clear()
        await super().perform_seek()
        streamed = self.app.topics.acks_enabled_for
        # table changelogs are read by recovery, never committed
        ours = [tp for tp in self.assignment() if streamed(tp.topic)]
        never_committed = [tp for tp in ours if self._committed_offset[tp] is None]
        if never_committed:
            first = await self.earliest_offsets(*never_committed)
            for tp in never_committed:
                start = first.get(tp) or 0
                await self.seek(tp, start)
                self._committed_offset[tp] = start
        for tp in ours:
            committed = self._committed_offset[tp]
            if committed > 0:
                self._read_offset[tp] = committed - 1


def stuck_tails(committed: dict, ends: dict, since: dict, now: float) -> list:
    """The partitions to read again from their committed offset: the broker holds events past
    it (``ends``: the offset after each partition's last), and it has not moved for
    REREAD_AFTER_S (``since``, kept here: partition -> (offset, when first seen there))."""
    stuck = []
    for tp, end in ends.items():
        offset = committed.get(tp)
        if offset is None or end is None or end <= offset:
            since.pop(tp, None)
            continue
        seen = since.get(tp)
        if seen is None or seen[0] != offset:
            since[tp] = (offset, now)
        elif now - seen[1] >= REREAD_AFTER_S:
            del since[tp]
            stuck.append(tp)
    return stuck


def in_order(due: int | None, offset: int, gone_on_from: int | None = None
             ) -> tuple[bool, int | None, int | None]:
    """Whether an agent takes the event at ``offset`` of a partition whose next event due is
    ``due`` (None: not known, take any), as (take it, the next due, the offset to read the
    partition again from or None).  An event past the one due is not taken: the one due
    never reached the agent, so the partition is read again from it.  One before it was taken
    already.  ``gone_on_from`` is where the consumer went on when an offset never came."""
    if due is None or offset == due or offset == gone_on_from:
        return True, offset + 1, None
    return False, due, due if offset > due else None


class InOrder:
    """One agent's gate (see `in_order`), due from where this generation's reading began:
    the committed offset the consumer sought to."""

    def __init__(self, app: faust.App):
        self.app = app
        self.next_due: dict = {}    # partition -> (generation, next offset due)

    async def admit(self, message) -> bool:
        consumer, tp = self.app.consumer, message.tp
        generation, due = self.next_due.get(tp, (None, None))
        if generation != message.generation_id:
            due = consumer._committed_offset.get(tp)
        gone_on_from = consumer.gone_on_from.get(tp)
        take, due, again = in_order(due, message.offset, gone_on_from)
        self.next_due[tp] = (message.generation_id, due)
        if take and message.offset == gone_on_from:
            del consumer.gone_on_from[tp]     # taken: a later reading of it is in order again
        if again is not None and await consumer.read_again(tp, again):
            log.warning("offset %d of %s[%d] never reached the agent, %d did: reading the "
                        "partition again from %d", again, tp.topic, tp.partition,
                        message.offset, again)
        return take


class SafeCommitTransport(aiokafka_driver.Transport):
    Consumer = SafeCommitConsumer


class KeepQueuedOnResume(FlowControlEvent):
    """Flow control whose resume empties the stream queues only when flow was off (their
    events then belong to a generation that ended).  A resume while flow is on leaves the
    events delivered since in place."""

    def resume(self) -> None:
        if not self.is_active():
            super().resume()


class App(faust.App):
    """faust.App whose stream consumer commits with SafeCommitConsumer, and whose flow
    control keeps queued events on a resume while flow is on."""

    def _new_transport(self):
        return SafeCommitTransport(self.conf.broker_consumer, self)

    @cached_property
    def flow_control(self) -> FlowControlEvent:
        return KeepQueuedOnResume(loop=self.loop)
