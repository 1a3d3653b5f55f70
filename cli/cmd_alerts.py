"""Slow-step alerts: the stored ones, or (--follow) each new one as it happens."""
from __future__ import annotations

import asyncio
import json

from ridgescope.cli.common import (StoreError, add_stack_args, fail, literal, print_table, query,
                                   settings_from)
from ridgescope.schemas import envelope
from ridgescope.schemas.kinds import ALERTS_TOPIC


def register(parser) -> None:
    add_stack_args(parser)
    parser.add_argument("--job")
    parser.add_argument("--follow", action="store_true", help="wait for new alerts")
    parser.add_argument("--format", choices=["table", "json"], default="table")
    parser.add_argument("--max", type=int, default=0,
                        help="with --follow: stop after this many alerts (0: never)")


def run(args) -> int:
    if args.follow:
        return asyncio.run(follow(args))
    where = f"WHERE job = {literal(args.job)}" if args.job else ""
    try:
        columns, rows = query(args, f"""SELECT job, step, cause, culprit_rank, excess_ms, message
            FROM alerts FINAL {where} ORDER BY job, step""")
    except StoreError as exc:
        return fail(str(exc))
    if args.format == "json":
        print(json.dumps([dict(zip(columns, r)) for r in rows]))
    else:
        print_table(columns, rows)
    return 0


async def follow(args) -> int:
    from aiokafka import AIOKafkaConsumer
    settings = settings_from(args)
    if not settings.broker:
        return fail("no broker configured; start the stack with `ridgescope up`")
    consumer = AIOKafkaConsumer(ALERTS_TOPIC, bootstrap_servers=settings.broker,
                                auto_offset_reset="latest", enable_auto_commit=False)
    await consumer.start()
    seen = 0
    try:
        async for message in consumer:
            try:
                alert = envelope.decode(message.value)
            except envelope.SchemaError:
                continue
            if args.job and alert["job"] != args.job:
                continue
            p = alert["p"]
            if args.format == "json":
                print(json.dumps({"job": alert["job"], **p}), flush=True)
            else:
                print(f"{alert['job']}  {p['message']}", flush=True)
            seen += 1
            if args.max and seen >= args.max:
                return 0
    finally:
        await consumer.stop()
    return 0
