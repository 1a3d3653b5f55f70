"""Run a command with the probes attached: `ridgescope run --job NAME -- CMD...`."""
from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

from ridgescope.cli.common import add_stack_args, settings_from
from ridgescope.parsers import FORMATS
from ridgescope.probes import env, runner
from ridgescope.probes.output_files import MPIRUN_RANK_FILE, NamedFiles, mpirun_output_files


def register(parser) -> None:
    add_stack_args(parser)
    parser.add_argument("--job", help="job name (default: the command's name and the time)")
    parser.add_argument("--tag", action="append", default=[], metavar="KEY=VALUE",
                        help="a tag stored with the job; repeatable")
    parser.add_argument("--no-hooks", action="store_true",
                        help="keep the hook probe out of the job: stdout and host probes only")
    parser.add_argument("--log-file", action="append", default=[], metavar="GLOB",
                        help="a log file the job writes apart from its output (a glob, '**' too): "
                             "read as it grows, from where it ended when the job started; repeatable")
    parser.add_argument("--rank-in-path", default=None, metavar="REGEX",
                        help="with --log-file: the rank in a file's path, the regex's first group "
                             r"(e.g. 'rank(\d+)')")
    parser.add_argument("--log-format", choices=sorted(FORMATS), default=None,
                        help="read the job's output with this parser instead of auto-detection "
                             "(tqdm: a loop whose bar has no label)")
    parser.add_argument("cmd", nargs="+", metavar="-- CMD", help="the command to run")


def parse_tags(pairs: list[str]) -> dict[str, str]:
    tags = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--tag wants KEY=VALUE, got {pair!r}")
        tags[key] = value
    return tags


def run(args) -> int:
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    try:
        tags = parse_tags(args.tag)
        settings = settings_from(args)
        rank_in_path = re.compile(args.rank_in_path) if args.rank_in_path else None
        if rank_in_path is not None and rank_in_path.groups < 1:
            raise ValueError(f"--rank-in-path {args.rank_in_path!r} has no group for the rank")
    except (ValueError, re.error) as exc:
        print(f"ridgescope run: {exc}", file=sys.stderr)
        return 2
    job = args.job or f"{Path(cmd[0]).name}-{time.strftime('%Y%m%d-%H%M%S')}"
    patterns, rank_in_paths = list(args.log_file), [rank_in_path] if rank_in_path else []
    mpirun_files = mpirun_output_files(cmd) if os.environ.get(env.READ_FILES) != "0" else []
    if mpirun_files:
        patterns += mpirun_files
        rank_in_paths.append(MPIRUN_RANK_FILE)
    log_files = NamedFiles(patterns, rank_in_paths) if patterns else None
    result = runner.run(cmd, job, settings.broker or None, Path(settings.data_dir),
                        hooks=not args.no_hooks, tags=tags, log_files=log_files,
                        log_format=args.log_format)
    stats = result.stats
    report = (f"[ridgescope] job {job}: {result.events} probe events, {result.log_lines} log "
              f"lines ({result.garbage_lines} unparsable); delivered {stats.delivered}")
    if stats.undelivered:
        report += (f"; NOT delivered: {stats.undelivered} ({stats.spooled} spooled for the "
                   f"next run, {stats.dropped} dropped): {stats.last_error}")
    for note in result.notes:
        report += f"; {note}"
    print(report, file=sys.stderr, flush=True)
    code = result.exit_code
    return 128 - code if code < 0 else code
