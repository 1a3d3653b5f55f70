"""Ad-hoc read-only SQL against the store, with a row limit and a timeout."""
from __future__ import annotations

import json

from ridgescope.cli.common import StoreError, add_stack_args, fail, print_table, query


def register(parser) -> None:
    add_stack_args(parser)
    parser.add_argument("query", metavar="SQL")
    parser.add_argument("--format", choices=["table", "json"], default="table")
    parser.add_argument("--max-rows", type=int, default=10_000)
    parser.add_argument("--timeout", type=int, default=30, help="seconds")


def run(args) -> int:
    try:
        columns, rows = query(args, args.query, read_only=True, max_rows=args.max_rows,
                              timeout_s=args.timeout)
    except StoreError as exc:
        return fail(str(exc))
    if args.format == "json":
        print(json.dumps([dict(zip(columns, r)) for r in rows], default=str))
    else:
        print_table(columns, rows)
    return 0
