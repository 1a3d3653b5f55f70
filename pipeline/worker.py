"""Entry point of one pipeline worker process: open the store, migrate, run the Faust app.

Started by `ridgescope up` (python -m ridgescope.pipeline.worker); scale out by starting more
workers against the same broker and a server store.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import sys

import faust

from ridgescope.pipeline import config
from ridgescope.pipeline.app import build_app
from ridgescope.pipeline.topics import ensure_topics
from ridgescope.sql.store import Store


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ridgescope-worker")
    parser.add_argument("--data-dir")
    parser.add_argument("--broker")
    parser.add_argument("--store")
    parser.add_argument("--web-port", type=int)
    parser.add_argument("--loglevel", default="WARNING")
    args = parser.parse_args(argv)
    settings = config.load(data_dir=args.data_dir, broker=args.broker, store=args.store,
                           web_port=args.web_port)
    if not settings.broker:
        print("ridgescope worker: no broker configured", file=sys.stderr)
        return 2
    store = Store(settings.store_dsn)
    applied = store.migrate()
    if applied:
        print(f"ridgescope worker: applied migrations {', '.join(applied)}", flush=True)
    asyncio.run(ensure_topics(settings.broker, settings.partitions))
    app = build_app(settings, store=store)
    logging.getLogger("faust").setLevel(args.loglevel)
    worker = faust.Worker(app, loglevel=args.loglevel, quiet=True)
    worker.execute_from_commandline()
    return 0


if __name__ == "__main__":
    sys.exit(main())
