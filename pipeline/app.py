"""The Faust app: topics, tables, and the correlate → aggregate → sink agents.

Reads in the order of Faust's own examples: app, topics, tables, agents, timers.  The agents
are thin: each decodes, calls a pure function from ridgescope.pipeline.windows, and sends.
Every event is handled in its own try/except so a bad one goes to the dead-letter topic and
never stops the agent (an agent that raises leaves its message unacked and blocks shutdown).

Delivery is at-least-once with plain tables; the store dedups (ReplacingMergeTree).
"""
from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import MutableMapping

import faust
import msgpack
from faust.serializers import codecs

from ridgescope.pipeline import commits, query_api, sink_rows, windows
from ridgescope.pipeline.config import Settings
from ridgescope.pipeline.verdict import VerdictConfig
from ridgescope.schemas import envelope
from ridgescope.schemas.kinds import (ALERTS_TOPIC, DEAD_LETTER_TOPIC, RAW_TOPICS, RECORDS_TOPIC,
                                      STEP_RANK_TOPIC, STEPS_TOPIC)

log = logging.getLogger("ridgescope.pipeline")

class MsgpackCodec(codecs.Codec):
    """Table state as msgpack: Faust's JSON codec cost ~1 ms per state write (profiled).

    A changelog record that does not decode (written by an older version in another format,
    or damaged) reads as no state for its key, with a warning: Faust's recovery stops at the
    first record that raises, and the worker then waits for it forever (seen with a broker
    kept from an older version)."""

    def _dumps(self, obj) -> bytes:
        return msgpack.packb(obj, use_bin_type=True)

    def _loads(self, data: bytes):
        try:
            return msgpack.unpackb(data, raw=False, strict_map_key=False)
        except (ValueError, msgpack.UnpackException) as exc:
            log.warning("table state record of %d bytes does not decode (%s); its key starts "
                        "over", len(data), exc)
            return None


codecs.register("msgpack", MsgpackCodec())


class StateTable(faust.Table):
    """A plain table whose state travels as msgpack.  Faust derives a table's codec from its
    value type and fixes it when the changelog topic is made (right after __init__), so it is
    set here; setting it later makes recovery read msgpack as JSON."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.key_serializer, self.value_serializer = "json", "msgpack"

class KeyPrefix(MutableMapping):
    """One job's slice of a mapping, so pure functions can keep rows in it by short keys."""

    def __init__(self, mapping: MutableMapping, prefix: str):
        self.mapping, self.prefix = mapping, prefix

    def __getitem__(self, key):
        return self.mapping[self.prefix + key]

    def __setitem__(self, key, value):
        self.mapping[self.prefix + key] = value

    def __delitem__(self, key):
        del self.mapping[self.prefix + key]

    def __iter__(self):  # the aggregate only looks rows up by key; a scan would read all jobs
        raise TypeError("a key-prefixed view is not iterable")

    def __len__(self):
        raise TypeError("a key-prefixed view has no length")


_DELETED = object()


class BatchWrites(MutableMapping):
    """A table seen through one batch of events: reads go through, writes are held and each
    key is written once, with its net value, at the end of the batch.

    Faust sends a changelog record on every table write; per event, that was most of a
    worker's time.  ``flush`` writes to the partition the key's events came from, which is
    what Faust itself does for a write made while that event is current.
    """

    def __init__(self, table):
        self.table = table
        self.held: dict = {}
        self.partition: dict = {}
        self.current_partition = 0

    def __getitem__(self, key):
        value = self.held[key] if key in self.held else self.table[key]
        if value is _DELETED:
            raise KeyError(key)
        return value

    def __setitem__(self, key, value):
        self.held[key] = value
        self.partition[key] = self.current_partition

    def __delitem__(self, key):
        self[key]  # noqa: B018 - KeyError for a missing key, like a dict
        self.held[key] = _DELETED
        self.partition[key] = self.current_partition

    def __iter__(self):
        raise TypeError("a batch view is not iterable")

    def __len__(self):
        raise TypeError("a batch view has no length")

    async def flush(self) -> None:
        """Apply the held writes and hand their changelog records to the producer.

        Awaited here, before the batch's events are acked, so the offset commit (which
        flushes the producer first) cannot run ahead of them.  Faust's own ``send_changelog``
        queues them in a buffer that a commit flushes for at most 0.1 s a record; a worker
        killed after such a commit came back with state older than its committed input, and
        the steps in between were lost (seen in the crash test)."""
        table = self.table
        topic = table.changelog_topic
        for key, value in self.held.items():
            partition = self.partition[key]
            if value is _DELETED:
                if key in table.data:
                    del table.data[key]
                    await topic.send(key=key, value=None, partition=partition,
                                     key_serializer=table.key_serializer,
                                     value_serializer="raw")
            else:
                table.data[key] = value
                await topic.send(key=key, value=value, partition=partition,
                                 key_serializer=table.key_serializer,
                                 value_serializer=table.value_serializer)
        self.held.clear()
        self.partition.clear()


AGENT_BATCH = 1000
AGENT_BATCH_SECONDS = 0.05
"""Correlate and aggregate take events in small batches so each state is written once."""
SINK_BATCH_ROWS = 5000
SINK_BATCH_SECONDS = 0.5
RECORD_KINDS = {"progress", "host_sample", "gpu_sample", "job_start", "job_end"}


def build_app(settings: Settings, store=None, verdict_cfg: VerdictConfig | None = None,
              app_id: str = "ridgescope") -> faust.App:
    """Create the app.  ``store`` is a ridgescope.sql.store.Store owned by this process."""
    cfg = verdict_cfg or VerdictConfig()
    app = commits.App(
        app_id,
        broker=f"kafka://{settings.broker}",
        store="memory://",
        topic_partitions=settings.partitions,
        topic_replication_factor=1,
        key_serializer="raw",
        value_serializer="raw",
        web_port=settings.web_port,
        web_bind="127.0.0.1",
        web_host="127.0.0.1",
        # Short group timings: a single-node stack should be ready in seconds, not 30.
        broker_session_timeout=10.0,
        broker_heartbeat_interval=1.0,
        broker_rebalance_timeout=20.0,
        broker_commit_interval=1.0,
        # On a rebalance, let the agents finish their batch before tables recover: an agent
        # still writing while recovery replays the changelog had its newer state overwritten
        # with older records (steps lost in the crash test).  The agents never leave an
        # event unacked (errors go to the dead-letter topic), so the wait ends.
        stream_wait_empty=True,
        consumer_auto_offset_reset="earliest",
        producer_linger_ms=5,
        Table=StateTable,
    )

    # --- topics -----------------------------------------------------------------------------
    def topic(*names: str):
        return app.topic(*names, key_type=bytes, value_type=bytes,
                         key_serializer="raw", value_serializer="raw",
                         partitions=settings.partitions)

    raw_topic = topic(*RAW_TOPICS)
    step_rank_topic = topic(STEP_RANK_TOPIC)
    steps_topic = topic(STEPS_TOPIC)
    alerts_topic = topic(ALERTS_TOPIC)
    records_topic = topic(RECORDS_TOPIC)
    dead_letter_topic = topic(DEAD_LETTER_TOPIC)
    sink_topic = topic(STEPS_TOPIC, ALERTS_TOPIC, RECORDS_TOPIC)

    # --- tables -----------------------------------------------------------------------------
    rank_windows = app.Table("rank_windows", default=None, partitions=settings.partitions)
    job_steps = app.Table("job_steps", default=None, partitions=settings.partitions)
    step_rows = app.Table("step_rows", default=None, partitions=settings.partitions)

    async def dead_letter(event, reason: str) -> None:
        message = event.message
        log.warning("dead letter from %s[%s]@%s: %s", message.topic, message.partition,
                    message.offset, reason)
        await dead_letter_topic.send(key=event.key, value=msgpack.packb({
            "reason": reason, "topic": message.topic, "partition": message.partition,
            "offset": message.offset, "key": event.key, "value": event.value,
            "ts_ns": time.time_ns()}, use_bin_type=True))

    async def send(target, job: str, msg: dict) -> None:
        await target.send(key=job.encode(), value=envelope.encode(msg))

    # --- agents -----------------------------------------------------------------------------
    @app.agent(raw_topic, name="correlate")
    async def correlate(stream):
        """Per job/rank: close step windows and compute each rank's lane breakdown."""
        states, in_order = BatchWrites(rank_windows), commits.InOrder(app)
        async for batch in stream.take_events(AGENT_BATCH, within=AGENT_BATCH_SECONDS):
            for event in batch:
                if not await in_order.admit(event.message):
                    continue
                states.current_partition = event.message.partition
                try:
                    msg = envelope.decode(event.value)
                    key = f"{msg['job']}/{msg['rank']}"
                    if msg["kind"] in RECORD_KINDS:
                        await records_topic.send(key=msg["job"].encode(), value=event.value)
                    state = states.get(key) or windows.new_rank_state()
                    state, rows = windows.correlate(state, msg)
                    states[key] = state
                    for row in rows:
                        await send(step_rank_topic, msg["job"], envelope.make(
                            "step_rank", msg["job"], msg["rank"], msg["host"], row["t1_ns"],
                            msg["seq"], row))
                    if msg["kind"] == "job_end":
                        await step_rank_topic.send(key=msg["job"].encode(), value=msgpack.packb(
                            {"job_end": True, "job": msg["job"], "rank": msg["rank"],
                             "world_size": msg["p"]["world_size"]}))
                except Exception as exc:  # noqa: BLE001 - one bad event must not stop the agent
                    await dead_letter(event, f"{type(exc).__name__}: {exc}")
            await states.flush()

    @app.agent(step_rank_topic, name="aggregate")
    async def aggregate(stream):
        """Per job: join the ranks of each step, judge it, and emit steps and alerts."""
        jobs, rows = BatchWrites(job_steps), BatchWrites(step_rows)
        in_order = commits.InOrder(app)
        async for batch in stream.take_events(AGENT_BATCH, within=AGENT_BATCH_SECONDS):
            for event in batch:
                if not await in_order.admit(event.message):
                    continue
                jobs.current_partition = rows.current_partition = event.message.partition
                try:
                    await aggregate_one(event, jobs, rows)
                except Exception as exc:  # noqa: BLE001
                    await dead_letter(event, f"{type(exc).__name__}: {exc}")
            await jobs.flush()
            await rows.flush()

    async def aggregate_one(event, jobs: BatchWrites, rows: BatchWrites) -> None:
        raw = msgpack.unpackb(event.value, raw=False)
        if isinstance(raw, dict) and (raw.get("job_end") or raw.get("tick")):
            job, row, host = raw["job"], raw, ""
        else:
            msg = envelope.decode(event.value)
            job, host = msg["job"], msg["host"]
            row = dict(msg["p"], rank=msg["rank"], host=host)
        state = jobs.get(job) or windows.new_job_state()
        now = time.time_ns()
        state, verdicts, late = windows.aggregate(state, row, cfg, now,
                                                  KeyPrefix(rows, f"{job}/"))
        jobs[job] = state
        for late_row in late:
            await send(records_topic, job, envelope.make(
                "step_rank", job, late_row["rank"], late_row.get("host", host),
                late_row["t1_ns"], 0, late_row))
        for result in verdicts:
            await send(steps_topic, job, envelope.make(
                "step", job, result["culprit_rank"], host, now, result["step"], result))
            if result["slow"]:
                await send(alerts_topic, job, envelope.make(
                    "alert", job, result["culprit_rank"], host, now, result["step"],
                    sink_rows.alert_payload(result)))

    if store is not None:
        @app.agent(sink_topic, name="sink")
        async def sink(stream):
            """Batched inserts into ClickHouse; a replayed batch is deduplicated by the store."""
            loop = asyncio.get_running_loop()
            async for batch in stream.take_events(SINK_BATCH_ROWS, within=SINK_BATCH_SECONDS):
                tables: dict[str, list] = {}
                offsets: dict[tuple[str, int], tuple[int, int]] = {}
                digest = hashlib.blake2b(digest_size=8)
                for event in batch:
                    tp = (event.message.topic, event.message.partition)
                    first, _ = offsets.get(tp, (event.message.offset, 0))
                    offsets[tp] = (first, event.message.offset)
                    digest.update(event.value)
                    try:
                        sink_rows.add(tables, envelope.decode(event.value))
                    except Exception as exc:  # noqa: BLE001
                        await dead_letter(event, f"sink: {type(exc).__name__}: {exc}")
                for table, rows in tables.items():
                    try:
                        await loop.run_in_executor(
                            None, store.insert, table, rows, sink_rows.COLUMNS[table],
                            sink_rows.dedup_token(table, offsets, digest.hexdigest()))
                    except Exception as exc:  # noqa: BLE001 - keep the rows, keep going
                        log.error("insert into %s failed: %s", table, exc)
                        for event in batch:
                            await dead_letter(event, f"sink insert into {table}: {exc}")

        query_api.register(app, store)
    # --- timers -----------------------------------------------------------------------------
    @app.timer(interval=2.0)
    async def tick_pending_jobs():
        """Wake the aggregate agent for jobs with steps waiting on a rank that never came."""
        for job, state in list(job_steps.items()):
            if state and state.get("pending"):
                await step_rank_topic.send(key=job.encode(), value=msgpack.packb(
                    {"tick": True, "job": job}))

    query_api.register_status(app)
    return app
