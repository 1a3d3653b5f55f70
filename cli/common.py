"""Helpers shared by the subcommands: stack flags, settings, SQL literals, output."""
from __future__ import annotations

import argparse
import json
import sys

from ridgescope.pipeline import config
from ridgescope.pipeline.query_client import open_store
from ridgescope.sql.store import StoreError


def add_stack_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", help="where the stack keeps its state (RIDGESCOPE_DATA_DIR)")
    parser.add_argument("--broker", help="Kafka bootstrap host:port (RIDGESCOPE_BROKER)")
    parser.add_argument("--store", help="chdb:///path or http(s)://... (RIDGESCOPE_STORE)")
    parser.add_argument("--web-port", type=int, help="port of the worker's query API")


def settings_from(args: argparse.Namespace) -> config.Settings:
    return config.load(data_dir=args.data_dir, broker=args.broker, store=args.store,
                       web_port=args.web_port)


def literal(value: str) -> str:
    """A ClickHouse string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def query(args: argparse.Namespace, sql: str, **kwargs) -> tuple[list[str], list[tuple]]:
    return open_store(settings_from(args)).query(sql, **kwargs)


def print_table(columns: list[str], rows: list, out=None) -> None:
    out = out or sys.stdout
    cells = [[_fmt(v) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    out.write("  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip() + "\n")
    for row in cells:
        out.write("  ".join(v.rjust(w) if _numeric(v) else v.ljust(w)
                            for v, w in zip(row, widths)).rstrip() + "\n")


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.1f}"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def _numeric(text: str) -> bool:
    return text.replace(".", "", 1).lstrip("-").isdigit()


def fail(message: str, code: int = 1) -> int:
    print(f"ridgescope: {message}", file=sys.stderr)
    return code


__all__ = ["add_stack_args", "settings_from", "literal", "query", "print_table", "fail",
           "StoreError"]
