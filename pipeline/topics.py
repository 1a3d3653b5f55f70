"""Create the pipeline's topics up front, with the partition count the tables expect.

Faust creates only its internal topics (changelogs).  Brokers that auto-create topics do it
with their default partition count, which would break the co-partitioning of tables and
their source topics, so the worker declares every topic itself before it starts.
"""
from __future__ import annotations

import asyncio

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError

from ridgescope.schemas.kinds import (ALERTS_TOPIC, DEAD_LETTER_TOPIC, RAW_TOPICS, RECORDS_TOPIC,
                                      STEP_RANK_TOPIC, STEPS_TOPIC)

ALL_TOPICS = (*RAW_TOPICS, STEP_RANK_TOPIC, STEPS_TOPIC, ALERTS_TOPIC, RECORDS_TOPIC,
              DEAD_LETTER_TOPIC)


async def ensure_topics(bootstrap: str, partitions: int, timeout_s: float = 60.0) -> list[str]:
    """Create the missing topics; returns the names created.  Retries until the broker answers."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
        try:
            await admin.start()
            existing = set(await admin.list_topics())
            missing = [t for t in ALL_TOPICS if t not in existing]
            if missing:
                try:
                    await admin.create_topics([NewTopic(t, partitions, 1) for t in missing])
                except TopicAlreadyExistsError:
                    pass
            return missing
        except Exception:  # noqa: BLE001 - broker still starting: retry until the deadline
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.5)
        finally:
            await admin.close()
