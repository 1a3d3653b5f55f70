"""Bring the embedded stack up, run a real 4-rank PyTorch job with faults, show the findings."""
from __future__ import annotations

import os
import subprocess
import sys
import time

from ridgescope.cli import cmd_steps
from ridgescope.cli.common import StoreError, add_stack_args, fail, print_table, settings_from
from ridgescope.pipeline import stack

FAULTS = {"RS_DEMO_SLOW_INPUT": "1:20-22", "RS_DEMO_STRAGGLER": "2:40",
          "RS_DEMO_CKPT_EVERY": "15", "RS_DEMO_HEAVY_CKPT": "50"}


def register(parser) -> None:
    add_stack_args(parser)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--nproc", type=int, default=4)
    parser.add_argument("--job", help="job name (default: demo-<time>)")


def say(message: str) -> None:
    print(message, flush=True)


def job_command(nproc: int) -> list[str]:
    return [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc),
            "--tee", "3", "-m", "ridgescope.cli.demo_job"]


def run_job(args, job: str) -> int:
    """Run the job under `ridgescope run`, showing one progress line every 10 steps."""
    cmd = [sys.executable, "-m", "ridgescope.cli.main", "run", "--job", job]
    if args.data_dir:
        cmd += ["--data-dir", args.data_dir]
    cmd += ["--tag", "demo=1", "--", *job_command(args.nproc)]
    env = dict(os.environ, RS_DEMO_STEPS=str(args.steps), **FAULTS)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            text=True, errors="replace")
    for line in proc.stdout:
        if line.startswith("[default0]:step ") and line.split()[1].split("/")[0].endswith("0"):
            say(f"      rank 0 at {line.split()[1]}")
        elif line.startswith("[ridgescope]") or "Error" in line:
            say(f"      {line.rstrip()}")
    return proc.wait()


def wait_for_steps(args, job: str, steps: int, timeout_s: float = 90.0) -> list[dict]:
    deadline = time.monotonic() + timeout_s
    found: list[dict] = []
    while time.monotonic() < deadline:
        found = cmd_steps.fetch_steps(args, job)
        if len(found) >= steps:
            break
        time.sleep(0.5)
    return found


def run(args) -> int:
    started = time.monotonic()
    job = args.job or f"demo-{time.strftime('%Y%m%d-%H%M%S')}"
    say("[1/4] Starting the embedded stack: Tansu broker, Faust worker, chDB store")
    try:
        stack.up(settings_from(args), log=lambda m: say(f"      {m}"))
    except (RuntimeError, TimeoutError, FileNotFoundError) as exc:
        return fail(str(exc))
    say(f"[2/4] Running job {job!r}: torchrun --nproc-per-node {args.nproc}, DDP on CPU (gloo), "
        f"{args.steps} steps, under `ridgescope run`")
    say("      injected: slow DataLoader on rank 1 (steps 20-22), compute straggler on rank 2 "
        "(step 40), checkpoints every 15 steps, one heavy checkpoint after step 50")
    code = run_job(args, job)
    if code != 0:
        return fail(f"the demo job exited with code {code}")
    say("[3/4] Waiting for the pipeline to judge every step")
    try:
        steps = wait_for_steps(args, job, args.steps)
    except StoreError as exc:
        return fail(str(exc))
    say(f"      {len(steps)} steps judged, {args.nproc} ranks each")
    slow = [s for s in steps if s["slow"]]
    say(f"[4/4] What RidgeScope found: {len(slow)} slow steps")
    print_table(["step", "ms", "baseline", "excess", "cause", "culprit rank"],
                [[s["step"], s["duration_ms"], s["baseline_ms"], s["excess_ms"], s["cause"],
                  s["culprit_rank"]] for s in slow])
    if slow:
        worst = max(slow, key=lambda s: s["excess_ms"])
        say(f"\nNext: ridgescope explain --job {job} --step {worst['step']}")
    say(f"      ridgescope steps --job {job}   |   ridgescope down (stops the stack)")
    say(f"Done in {time.monotonic() - started:.0f} s.")
    return 0
