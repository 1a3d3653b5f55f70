"""Ad-hoc read-only SQL against the store, with a row limit and a timeout; or a query of the
library (`sql/queries/`) by name, its parameters given as `--param name=value`."""
from __future__ import annotations

import json

from ridgescope.cli.common import StoreError, add_stack_args, fail, print_table, query
from ridgescope.sql import library


def register(parser) -> None:
    add_stack_args(parser)
    parser.add_argument("query", metavar="SQL", nargs="?")
    parser.add_argument("--query", dest="named", metavar="NAME",
                        help="run the library's query NAME instead (see --list)")
    parser.add_argument("--param", action="append", metavar="NAME=VALUE", default=[],
                        help="a parameter of the library's query (repeatable; a Map or Array as JSON)")
    parser.add_argument("--list", action="store_true", help="list the library's queries and their parameters")
    parser.add_argument("--format", choices=["table", "json"], default="table")
    parser.add_argument("--max-rows", type=int, default=10_000)
    parser.add_argument("--timeout", type=int, default=30, help="seconds")


def _library_sql(args) -> str:
    values: dict = {}
    for item in args.param:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise library.LibraryError(f"--param {item!r}: expected NAME=VALUE")
        values[name] = json.loads(value) if value[:1] in ("{", "[") else value     # a Map's or an Array's
    if args.named not in library.names():
        raise library.LibraryError(f"no query {args.named!r} in the library; known: {', '.join(library.names())}")
    return library.render(args.named, **values)


def _listing() -> str:
    out = []
    for name, q in sorted(library.all_queries().items()):
        params = " ".join(f"{p.name}=" + (f"[{p.default}]" if not p.required else p.name.upper())
                          for p in q.params.values())
        out.append(f"{name} {params}".rstrip() + f"\n    {q.question}")
    return "\n".join(out)


def run(args) -> int:
    if args.list:
        print(_listing())
        return 0
    if (args.query is None) == (args.named is None):
        return fail("give either SQL or --query NAME")
    if args.param and args.named is None:
        return fail("--param goes with --query NAME")
    try:
        sql = args.query if args.named is None else _library_sql(args)
        columns, rows = query(args, sql, read_only=True, max_rows=args.max_rows, timeout_s=args.timeout)
    except (StoreError, library.LibraryError) as exc:
        return fail(str(exc))
    if args.format == "json":
        print(json.dumps([dict(zip(columns, r)) for r in rows], default=str))
    else:
        print_table(columns, rows)
    return 0
