"""Show where the stack's parts listen and whether they run."""
from __future__ import annotations

import json

from ridgescope.cli.common import add_stack_args, settings_from
from ridgescope.pipeline import stack


def register(parser) -> None:
    add_stack_args(parser)
    parser.add_argument("--format", choices=["table", "json"], default="table")


def run(args) -> int:
    info = stack.status(settings_from(args))
    if args.format == "json":
        print(json.dumps(info, indent=2))
    else:
        for key, value in info.items():
            print(f"{key:20} {value}")
    return 0 if info["worker_running"] else 3
