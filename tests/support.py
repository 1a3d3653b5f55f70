"""Helpers for tests that drive the real command line and a real stack."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ridgescope.pipeline import config, stack, tansu
from ridgescope.pipeline.verdict import VerdictConfig

REPO = Path(__file__).resolve().parents[1]

def cli(*args: str, check: bool = True, env: dict | None = None,
        timeout: float = 300) -> subprocess.CompletedProcess:
    """Run the real `ridgescope` command line.  One that outruns `timeout` fails with what it
    printed, its threads' stacks and the processes it left, and none of them outlives it."""
    cmd = [sys.executable, "-X", "faulthandler", "-m", "ridgescope.cli.main", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})}, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"ridgescope {' '.join(args)} still running after {timeout:.0f} s\n"
                             f"{hung_session_report(proc)}") from None
    if check and proc.returncode != 0:
        raise AssertionError(f"ridgescope {' '.join(args)} exited {proc.returncode}:\n"
                             f"{stdout}\n{stderr}")
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def hung_session_report(proc: subprocess.Popen) -> str:
    """The processes of a command's session, then the command's own threads' stacks (SIGABRT,
    which -X faulthandler prints), then the end of what it printed; the session is killed."""
    tree = subprocess.run(["ps", "-o", "pid,ppid,stat,etime,args", "-s", str(proc.pid)],
                          capture_output=True, text=True).stdout
    proc.send_signal(signal.SIGABRT)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    stdout, stderr = proc.communicate()
    return f"processes:\n{tree}\nstdout (end):\n{stdout[-4000:]}\nstderr (end):\n{stderr[-12000:]}"


@dataclass
class Stack:
    """A pipeline worker with its own data dir and store, against a given broker."""
    data_dir: Path
    broker: str
    web_port: int

    @property
    def flags(self) -> list[str]:
        return ["--data-dir", str(self.data_dir)]

    @property
    def settings(self) -> config.Settings:
        return config.load(data_dir=str(self.data_dir))

    def up(self) -> None:
        cli("up", *self.flags, "--broker", self.broker, "--web-port", str(self.web_port))

    def down(self) -> None:
        cli("down", *self.flags)

    def worker_pid(self) -> int:
        return stack.read_state(self.settings)["worker_pid"]

    def kill_worker(self) -> None:
        os.kill(self.worker_pid(), signal.SIGKILL)
        deadline = time.monotonic() + 10
        while stack.alive(self.worker_pid()) and time.monotonic() < deadline:
            time.sleep(0.1)

    def restart_worker(self) -> None:
        state = stack.read_state(self.settings)
        state["worker_pid"] = stack.start_worker(self.settings)
        stack.state_path(self.settings).write_text(json.dumps(state))

    def sql(self, query: str) -> list[dict]:
        return json.loads(cli("sql", *self.flags, "--format", "json", query).stdout)

    def steps(self, job: str) -> list[dict]:
        return json.loads(cli("steps", *self.flags, "--job", job, "--format", "json").stdout)

    def wait_for_rows(self, query: str, count: int, timeout_s: float = 60) -> list[dict]:
        """The rows of `query` once it gives `count` or more, or what it gives at `timeout_s`
        (the test's assertion then says what is missing)."""
        deadline, rows = time.monotonic() + timeout_s, []
        while time.monotonic() < deadline and len(rows) < count:
            rows = self.sql(query)
            time.sleep(0.5)
        return rows

    def wait_for_steps(self, job: str, count: int, timeout_s: float = 120) -> list[dict]:
        deadline = time.monotonic() + timeout_s
        steps: list[dict] = []
        while time.monotonic() < deadline:
            steps = self.steps(job)
            if len(steps) >= count:
                return steps
            time.sleep(1)
        raise AssertionError(f"only {len(steps)} of {count} steps of {job} after {timeout_s} s"
                             f"\n{self.why_steps_missing(job, steps)}")

    def why_steps_missing(self, job: str, steps: list[dict]) -> str:
        """What a test that waited in vain needs to tell a lost step from a slow pipeline:
        the steps judged, the rank rows and raw records the store holds, and the worker's
        warnings (dead letters among them)."""
        judged = sorted(s["step"] for s in steps)
        parts = [f"judged steps: {judged}"]
        for label, query in (
                ("step_rank rows (step, rank)",
                 f"SELECT step, rank FROM step_rank WHERE job = '{job}' ORDER BY step, rank"),
                ("raw records (kind, rank, count, last step)",
                 f"SELECT kind, rank, count() AS n, max(step) AS last FROM progress"
                 f" WHERE job = '{job}' GROUP BY kind, rank ORDER BY kind, rank")):
            try:
                parts.append(f"{label}: {[tuple(r.values()) for r in self.sql(query)]}")
            except AssertionError as exc:
                parts.append(f"{label}: query failed: {str(exc)[-300:]}")
        log = self.data_dir / "worker.log"
        noted = [line for line in log.read_text(errors="replace").splitlines()
                 if "WARN" in line or "ERROR" in line] if log.exists() else ["(no worker.log)"]
        parts.append("worker warnings (last 40):\n" + "\n".join(noted[-40:]))
        return "\n".join(parts)


def make_stack(tmp_path: Path, broker: str) -> Stack:
    s = Stack(tmp_path / "rs", broker, tansu.free_port())
    s.up()
    return s


# The spine's real job (ridgescope.cli.demo_job) with the faults the end-to-end tests expect.
SPINE_STEPS = 60
SPINE_NPROC = 4
SLOW_INPUT_RANK, SLOW_INPUT_STEPS = 1, range(20, 23)
STRAGGLER_RANK, STRAGGLER_STEP = 2, 40
HEAVY_CKPT_AFTER = 50  # saved after step 50: it lands in step 51's window
SPINE_FAULTS = {"RS_DEMO_STEPS": str(SPINE_STEPS), "RS_DEMO_SLOW_INPUT": "1:20-22",
                "RS_DEMO_STRAGGLER": "2:40", "RS_DEMO_CKPT_EVERY": "15",
                "RS_DEMO_HEAVY_CKPT": str(HEAVY_CKPT_AFTER)}


SPINE_STEP_LINE = re.compile(r"step (?P<step>\d+)/\d+ loss \S+ step_time_ms (?P<ms>[\d.]+)")


def printed_step_ms(stdout: str) -> dict[int, float]:
    """Each step of the spine's job, by its slowest rank's own clock: the `step_time_ms` it
    printed."""
    slowest: dict[int, float] = {}
    for m in SPINE_STEP_LINE.finditer(stdout):
        step, ms = int(m["step"]), float(m["ms"])
        slowest[step] = max(ms, slowest.get(step, 0.0))
    return slowest


def slow_by_the_jobs_clock(step: dict, printed: dict[int, float]) -> bool:
    """Was a step flagged slow as slow by the job's own printed time, over the step's baseline?
    The shared 2-core VM slows some steps of every run (4 ranks, a broker and the worker on two
    cores): such a step is slow, and flagging it is no false alarm."""
    return printed[step["step"]] > step["baseline_ms"] * (1 + VerdictConfig().rel_threshold)


def run_spine_job(stack: Stack, job: str, hooks: bool = True) -> subprocess.CompletedProcess:
    """torchrun the spine's 4-rank job under `ridgescope run` against ``stack``."""
    flags = [] if hooks else ["--no-hooks"]
    return cli("run", *stack.flags, "--job", job, *flags, "--", sys.executable, "-m",
               "torch.distributed.run", "--nproc-per-node", str(SPINE_NPROC), "--tee", "3",
               "-m", "ridgescope.cli.demo_job", env=SPINE_FAULTS, timeout=600)

