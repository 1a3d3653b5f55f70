"""Stop the local stack; a worker that does not stop in time is killed."""
from __future__ import annotations

from ridgescope.cli.common import add_stack_args, settings_from
from ridgescope.pipeline import stack


def register(parser) -> None:
    add_stack_args(parser)


def run(args) -> int:
    stack.down(settings_from(args), log=lambda m: print(f"ridgescope down: {m}", flush=True))
    return 0
