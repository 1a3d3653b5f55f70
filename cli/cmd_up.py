"""Start the local stack: broker (embedded Tansu unless --broker), pipeline worker, store."""
from __future__ import annotations

from ridgescope.cli.common import add_stack_args, fail, settings_from
from ridgescope.pipeline import stack


def register(parser) -> None:
    add_stack_args(parser)


def run(args) -> int:
    try:
        stack.up(settings_from(args), log=lambda m: print(f"ridgescope up: {m}", flush=True))
    except (RuntimeError, TimeoutError, FileNotFoundError, ValueError) as exc:
        return fail(str(exc))
    return 0
