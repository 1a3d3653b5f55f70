"""`ridgescope run`: start a command with the probes attached, and publish what they see.

The command's output passes through unchanged and its exit code is returned, whatever happens
to the broker.  The in-job hook probe reaches this process through the relay socket; the log
and host probes run here.  At the end it reports what it could not deliver.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ridgescope.probes import env
from ridgescope.probes import gpu as gpu_probe_mod
from ridgescope.probes.host import HostProbe
from ridgescope.probes.line_buffering import find_libstdbuf, line_buffered_c_stdio
from ridgescope.probes.logprobe import PipeFrameworks, StreamPump
from ridgescope.probes.output_files import POLL_S, Discard, NamedFiles, OutputFiles, TorchrunConsole
from ridgescope.probes.publisher import Publisher, PublishStats
from ridgescope.probes.ranks import (Learnt, LocalRanks, base_from_cmd, base_from_workers, labelling_option,
                                     nnodes, nproc_per_node, read_late_ms, task_of_launcher, tasks_from_cmd,
                                     tee_prefix_from_cmd, world_from_workers)
from ridgescope.probes.relay import Relay
from ridgescope.probes.step_streams import StepStreams
from ridgescope.schemas import envelope
from ridgescope.schemas.kinds import TOPIC_FOR_KIND

BOOTSTRAP_DIR = Path(__file__).parent / "bootstrap"


@dataclass
class RunResult:
    exit_code: int
    stats: PublishStats
    events: int = 0
    log_lines: int = 0
    garbage_lines: int = 0
    ranks: set = field(default_factory=set)
    notes: list = field(default_factory=list)
    """One-line remarks of the node probes (for example: no GPU, so the GPU probe is off)."""


def world_size_from_cmd(cmd: list[str], environ: dict[str, str] | None = None) -> int:
    """World size when the launcher's arguments say it (torchrun's, or srun's or mpirun's tasks
    where its program is no torchrun), else 0 (unknown)."""
    return ((nproc_per_node(cmd) or 0) * (nnodes(cmd) or 1)
            or tasks_from_cmd(cmd, environ if environ is not None else dict(os.environ)) or 0)


SCHEDULER_VARS = ("SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_JOB_NAME", "SLURM_ARRAY_JOB_ID",
                  "TORCHELASTIC_RUN_ID", "KUBERNETES_POD_NAME", "HOSTNAME", "PBS_JOBID",
                  "LSB_JOBID")


def scheduler_ids() -> dict[str, str]:
    """The scheduler context this job runs in (Slurm, torchrun, Kubernetes, PBS, LSF)."""
    return {name: os.environ[name] for name in SCHEDULER_VARS if os.environ.get(name)}


def child_env(job: str, socket_path: Path, hooks: bool,
              task: tuple[int, int] | None = None) -> dict[str, str]:
    child = dict(os.environ)
    python_path = [str(BOOTSTRAP_DIR)]
    if child.get("PYTHONPATH"):
        python_path.append(child["PYTHONPATH"])
    child["PYTHONPATH"] = os.pathsep.join(python_path)
    child[env.JOB] = job
    child[env.SOCKET] = str(socket_path)
    # Ray folds its workers' lines that differ only in their numbers into one
    # (`[repeated 8x across cluster]`): most steps' lines, and a straggler's, never reach stdout
    child.setdefault("RAY_DEDUP_LOGS", "0")
    if not hooks:
        child[env.HOOKS] = "0"
    if task is not None:
        child[env.TASK_RANK], child[env.TASK_WORLD] = str(task[0]), str(task[1])
    return line_buffered_c_stdio(child, find_libstdbuf())


def run(cmd: list[str], job: str, broker: str | None, data_dir: Path, *, hooks: bool = True,
        tags: dict | None = None, host_interval_s: float = 1.0,
        log_files: NamedFiles | None = None, log_format: str | None = None) -> RunResult:
    """`log_files`: the job's own log files to read as well (`--log-file`), their sizes taken
    before the job starts; `log_format`: the parser every stream is read with (`--log-format`),
    where auto-detection is not wanted."""
    host = socket.gethostname()
    run_dir = data_dir / "run"
    # one `ridgescope run` per rank, under srun or mpirun: the task is the rank of its lines
    task = task_of_launcher(cmd, dict(os.environ))
    spool = f"{host}-task{task[0]}.spool" if task else f"{host}.spool"   # one per run process
    publisher = Publisher(broker, spool_path=data_dir / "spool" / spool).start()
    seq = iter(range(1, 1 << 62))
    ranks_seen: set[int] = set()

    def publish(kind: str, rank: int, payload: dict, ts_ns: int, topic: str | None = None) -> None:
        ranks_seen.add(rank)
        data = envelope.encode(envelope.make(kind, job, rank, host, ts_ns, next(seq), payload))
        publisher.publish(topic or TOPIC_FOR_KIND[kind], f"{job}/{rank}".encode(), data)

    world = world_size_from_cmd(cmd) or (task[1] if task else 0)
    started = time.time_ns()
    context = {"cmd": cmd, "tags": tags or {}, "hosts": [host], "scheduler": scheduler_ids()}
    publish("job_start", -1, {"world_size": world, **context}, started)
    gpu_probe = None

    spanned: set[int] = set()
    """The ranks whose hook sent step spans: their windows come from the hook, not the log."""

    def forward(topic, key, value, msg) -> None:
        publisher.publish(topic, key, value)
        if msg is None or msg.get("kind") != "step_spans":
            return
        spanned.add(int(msg["rank"]))      # the relay read it as an int
        if gpu_probe is not None:
            try:  # step boundaries: the GPU probe summarises per step window
                p = msg["p"]
                gpu_probe.on_step(int(msg["rank"]), int(p["step"]), int(p["t0_ns"]),
                                  int(p["t1_ns"]))
            except Exception:  # noqa: BLE001
                pass

    relay = Relay(run_dir / f"{os.getpid()}.sock", forward).start()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=child_env(job, relay.path, hooks, task))
    except OSError as exc:
        relay.close()
        print(f"ridgescope run: cannot start {cmd[0]!r}: {exc}", file=sys.stderr)
        publisher.close(0.5)
        return RunResult(127, publisher.stats)
    default_rank = task[0] if task else 0 if world <= 1 else -1
    seen_procs: dict[int, dict] = {}
    # The world size lets the aggregate wait for every rank's stdout record of a step; where
    # the command line does not tell it (a script that starts torchrun), the workers' do.
    world_size = Learnt(lambda: world_from_workers(gpu_probe_mod.job_processes(proc.pid, seen_procs)))
    # a rank's steps printed on both pipes are timed from one (step_streams.py)
    step_streams = StepStreams()
    # the windows that read times bound are that much less certain (windows.progress_as_window)
    late = {"read_late_ms": ms} if (ms := read_late_ms(cmd, dict(os.environ))) else {}

    def log_events(read_late: dict):
        """What publishes a log record, read that late (`read_late_ms`) or as it came."""
        return lambda rank, payload, ts: publish(
            "progress", rank, {**step_streams.mark(rank, payload),
                               "world_size": world or world_size.get() or 0, **read_late}, ts)

    log_event = log_events(late)
    # torchrun's `--tee` prefixes name local ranks: the job's, on a node past the first, come
    # from the workers' environment
    local_ranks = LocalRanks(
        lambda: base_from_workers(gpu_probe_mod.job_processes(proc.pid, seen_procs)),
        fallback=base_from_cmd(cmd), multi_node=(nnodes(cmd) or 1) > 1)
    # a task's one process prints each step once: no print order to spread (print_order.py);
    # every task of an srun or mpirun prints to its one stream (the world its options gave)
    launcher = (local_ranks, 1 if task else nproc_per_node(cmd) or world or None,
                tee_prefix_from_cmd(cmd, dict(os.environ), host))
    pipes = PipeFrameworks()    # a framework shown on one pipe reads the other (HF's bar)
    pumps = [StreamPump(proc.stdout.fileno(), sys.stdout.buffer, "stdout", log_event,
                        default_rank, *launcher, pipes=pipes, log_format=log_format).start(),
             StreamPump(proc.stderr.fileno(), sys.stderr.buffer, "stderr", log_event,
                        default_rank, *launcher, pipes=pipes, log_format=log_format).start()]
    files = None
    read_outputs = os.environ.get(env.READ_FILES) != "0"
    if read_outputs or log_files is not None:
        # output the job sends to files (torchrun's `--redirects`, a script's `> train.log`),
        # and the log files `--log-file` names
        file_event = log_events({"read_late_ms": max(late.get("read_late_ms", 0), int(POLL_S * 1000))})
        writers: dict[int, PipeFrameworks] = {}

        def file_pump(read_fd: int, stream: str, writer: dict) -> StreamPump:
            """A file of one worker is its rank's; one that several write is read as a pipe."""
            rank = writer.get("rank", -1)
            if rank >= 0:
                return StreamPump(read_fd, Discard(), stream, file_event, rank,
                                  pipes=writers.setdefault(rank, PipeFrameworks()),
                                  log_format=log_format).start()
            return StreamPump(read_fd, Discard(), stream, file_event, default_rank, *launcher,
                              pipes=writers.setdefault(-1, PipeFrameworks()),
                              log_format=log_format).start()

        files = OutputFiles(
            (lambda: gpu_probe_mod.job_processes(proc.pid, seen_procs)) if read_outputs else (lambda: []),
            file_pump, TorchrunConsole(cmd, dict(os.environ)), log_files).start()
    host_probe = HostProbe(proc.pid, lambda rank, payload, ts: publish(
        "host_sample", rank, payload, ts), interval_s=host_interval_s).start()
    notes: list[str] = []

    def note(message: str) -> None:
        notes.append(message)
        if os.environ.get(env.DEBUG) == "1":
            print(f"[ridgescope] {message}", file=sys.stderr, flush=True)

    try:
        gpu_probe = gpu_probe_mod.from_env(proc.pid, lambda rank, payload, ts: publish(
            "gpu_sample", rank, payload, ts), say=note)
        if gpu_probe is not None and gpu_probe.start().nvml is None:
            gpu_probe = None  # no GPU: it said so in a note and stays off
    except Exception:  # noqa: BLE001 - the GPU probe never stands in the job's way
        gpu_probe = None
    previous = {sig: signal.signal(sig, lambda s, f: proc.send_signal(s))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        exit_code = proc.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    for pump in pumps:
        pump.join()
    if files is not None:
        files.stop()
        if files.tailed:
            paths = sorted(tailed.path for tailed in files.tailed)
            note(f"read {len(paths)} file(s) the job sent its output to, as they grew: "
                 f"{', '.join(paths[:4])}{' ...' if len(paths) > 4 else ''}")
        if files.errors:
            note(f"{files.errors} file(s) the job writes to could not be read")
        pumps += [tailed.pump for tailed in files.tailed]
    for pump in pumps:
        if pump.guessed:
            note(f"{pump.stream}: its lines begin with another launcher's prefix than torchrun's [defaultN]: "
                 f"read as --prefix-template '{pump.guessed}'")
        if pump.glued:
            note(f"{pump.stream}: {pump.glued} lines held prints of several ranks run together "
                 f"(cut apart; {labelling_option(cmd)} keeps them apart)")
    drawn = max((p.unlabelled_bar_steps for p in pumps), default=0)
    if drawn and not spanned and not any(p.progress_records for p in pumps):
        from ridgescope.parsers import UNLABELLED_BAR     # (a pump had a Dispatcher: they load)
        note(UNLABELLED_BAR.format(drawn=drawn))
    if local_ranks.unplaced:
        note(f"{local_ranks.unplaced} log records of torchrun's local ranks stored as rank -1: "
             f"neither the workers' RANK/LOCAL_RANK nor --node-rank told this node's ranks")
    host_probe.stop()
    relay.drain()
    if gpu_probe is not None:
        try:
            gpu_probe.stop()
        except Exception:  # noqa: BLE001
            pass
    relay.close()
    ranks = (ranks_seen | relay.ranks) - {-1} or {max(default_rank, 0)}
    end_world = max(world or world_size.get() or 0, len(ranks))
    framework = next((p.framework for p in pumps if p.framework), "pytorch" if relay.received
                     else "")
    # records no line placed (rank -1: unlabelled lines of a job of several ranks) open windows
    # too: their last closes with an end of its own, or the job's last step is never judged
    for rank in sorted(ranks | (ranks_seen & {-1})):
        # behind the records the rank's windows come from, on their topic and key, so that it
        # is read after them: the hook's spans, or, where the hook sent none, the log's records
        topic = TOPIC_FOR_KIND["step_spans" if rank in spanned else "progress"]
        publish("job_end", rank, {"exit_code": exit_code, "world_size": end_world, **context,
                                  "framework": framework, "started_ns": started}, time.time_ns(),
                topic)
    stats = publisher.close(5.0 if broker else 0.0)
    return RunResult(exit_code, stats, events=relay.received,
                     log_lines=sum(p.lines for p in pumps),
                     garbage_lines=sum(p.garbage for p in pumps), ranks=ranks, notes=notes)
