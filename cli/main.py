"""`ridgescope` command line: one module per subcommand, each with register() and run()."""
from __future__ import annotations

import argparse
import importlib
import os
import sys

# Subcommand name -> module under ridgescope.cli that defines register(sub) and run(args).
COMMANDS = {
    "up": "cmd_up",
    "down": "cmd_down",
    "status": "cmd_status",
    "run": "cmd_run",
    "steps": "cmd_steps",
    "explain": "cmd_explain",
    "alerts": "cmd_alerts",
    "sql": "cmd_sql",
    "demo": "cmd_demo",
    "jobs": "cmd_jobs",
    "trend": "cmd_trend",
    "compare": "cmd_compare",
    "parse": "cmd_parse",
    "ingest": "cmd_ingest",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ridgescope",
        description="Explain every slow step of a distributed training job.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(f"ridgescope.cli.{module_name}")
        module.register(sub.add_parser(name, help=(module.__doc__ or "").strip().splitlines()[0]))
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    module = importlib.import_module(f"ridgescope.cli.{COMMANDS[args.command]}")
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader of our output left (`ridgescope parse LOG | head`): quiet, as other tools are;
        # stdout goes to /dev/null so that the interpreter's last flush does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
