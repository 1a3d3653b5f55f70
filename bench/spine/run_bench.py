"""Spine benchmarks: hook-probe overhead, worker throughput, step-end → store/alert latency.

Usage: python bench/spine/run_bench.py [--broker HOST:PORT]   (default: an embedded Tansu)
Writes bench/spine/results.json; the numbers are copied into bench/spine/results.md by hand
with the machine and date.  Nothing here asserts a time.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aiokafka import AIOKafkaProducer

from ridgescope.pipeline import config, stack, tansu
from ridgescope.pipeline.query_client import open_store
from ridgescope.schemas import envelope

HERE = Path(__file__).parent
# RS_DEMO_DEVICE_MS 0: the bare CPU step the recorded numbers were measured on.
CLEAN = {"RS_DEMO_SLOW_INPUT": "9:0", "RS_DEMO_STRAGGLER": "9:0", "RS_DEMO_CKPT_EVERY": "1000",
         "RS_DEMO_HEAVY_CKPT": "0", "RS_DEMO_DEVICE_MS": "0"}
STEP_LINE = re.compile(r"step (\d+)/\d+ loss \S+ step_time_ms (\d+(?:\.\d+)?)")


def job_cmd(nproc: int) -> list[str]:
    return [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc),
            "--tee", "3", "-m", "ridgescope.cli.demo_job"]


def median_step_ms(output: str, skip: int = 5) -> float:
    times = [float(m.group(2)) for m in STEP_LINE.finditer(output) if int(m.group(1)) > skip]
    return statistics.median(times)


def overhead(data_dir: Path, steps: int, rounds: int) -> dict:
    """Median step time of the same clean job: plain, under `ridgescope run` (hooks on), and
    under `ridgescope run` with no broker reachable (buffer, spool, report)."""
    env = dict(os.environ, RS_DEMO_STEPS=str(steps), **CLEAN)
    runs: dict[str, list[float]] = {"plain": [], "probed": [], "probed_no_broker": []}
    wrap = [sys.executable, "-m", "ridgescope.cli.main", "run", "--data-dir", str(data_dir)]
    for i in range(rounds):
        for name, prefix in (("plain", []), ("probed", [*wrap, "--job", f"bench-ovh-{i}", "--"]),
                             ("probed_no_broker", [*wrap, "--broker", "127.0.0.1:1", "--job",
                                                  f"bench-ovh-nb-{i}", "--"])):
            out = subprocess.run([*prefix, *job_cmd(4)], capture_output=True, text=True,
                                 env=env).stdout
            runs[name].append(median_step_ms(out))
    plain = statistics.median(runs["plain"])
    return {**{f"{k}_median_step_ms": v for k, v in runs.items()},
            "overhead_pct": round(100 * (statistics.median(runs["probed"]) / plain - 1), 2),
            "overhead_no_broker_pct": round(
                100 * (statistics.median(runs["probed_no_broker"]) / plain - 1), 2)}


def throughput(settings: config.Settings, messages: int) -> dict:
    """Synthetic step_spans from 8 ranks; time until the worker stored every step."""
    ranks = 8
    steps = messages // ranks
    job = f"bench-throughput-{int(time.time())}"
    base = time.time_ns()

    def payload(step: int, rank: int) -> bytes:
        t0 = base + (step - 1) * 100_000_000
        p = {"step": step, "t0_ns": t0, "t1_ns": t0 + 100_000_000, "world_size": ranks,
             "spans": [["data_wait", t0, t0 + 10_000_000], ["forward", t0 + 10_000_000,
                                                            t0 + 40_000_000],
                       ["backward", t0 + 40_000_000, t0 + 95_000_000],
                       ["optimizer", t0 + 95_000_000, t0 + 100_000_000]],
             "buckets": [[i, t0 + 60_000_000 + i * 5_000_000, t0 + 94_000_000]
                         for i in range(4)]}
        return envelope.encode(envelope.make("step_spans", job, rank, "h", t0, step, p))

    encoded = [(f"{job}/{r}".encode(), payload(s, r))
               for s in range(1, steps + 1) for r in range(ranks)]

    async def send():
        producer = AIOKafkaProducer(bootstrap_servers=settings.broker, linger_ms=5)
        await producer.start()
        try:
            futures = [await producer.send("rs.raw.hook", value, key=key)
                       for key, value in encoded]
            await asyncio.gather(*futures)
        finally:
            await producer.stop()

    store = open_store(settings)
    started = time.monotonic()
    asyncio.run(send())
    sent = time.monotonic() - started
    while True:
        n = store.query(f"SELECT count() FROM steps FINAL WHERE job = '{job}'")[1][0][0]
        if n >= steps - 1:  # the last step stays open until the job ends
            break
        time.sleep(0.2)
    elapsed = time.monotonic() - started
    return {"messages": len(encoded), "send_s": round(sent, 2), "stored_s": round(elapsed, 2),
            "events_per_s": round(len(encoded) / elapsed)}


def latency(settings: config.Settings, data_dir: Path, steps: int) -> dict:
    """Live job with faults: step end (max t1 over ranks) → steps row insert, → alert insert."""
    job = f"bench-latency-{int(time.time())}"
    env = dict(os.environ, RS_DEMO_STEPS=str(steps), RS_DEMO_DEVICE_MS="0")
    subprocess.run([sys.executable, "-m", "ridgescope.cli.main", "run", "--data-dir",
                    str(data_dir), "--job", job, "--", *job_cmd(4)], capture_output=True,
                   env=env)
    store = open_store(settings)
    time.sleep(3)
    rows = store.query(f"""
        SELECT (s.inserted_ns - r.t1) / 1e6 AS to_row_ms,
               (a.inserted_ns - r.t1) / 1e6 AS to_alert_ms, s.slow
        FROM (SELECT step, inserted_ns, slow FROM steps FINAL WHERE job = '{job}') AS s
        INNER JOIN (SELECT step, max(t1_ns) AS t1 FROM step_rank FINAL WHERE job = '{job}'
                    GROUP BY step) AS r ON s.step = r.step
        LEFT JOIN (SELECT step, inserted_ns FROM alerts FINAL WHERE job = '{job}') AS a
               ON s.step = a.step
        WHERE s.step < {steps}""")[1]
    to_row = sorted(r[0] for r in rows)
    to_alert = sorted(r[1] for r in rows if r[2])
    pick = lambda xs, q: round(xs[min(len(xs) - 1, int(q * len(xs)))], 1)  # noqa: E731
    return {"steps": len(rows), "to_row_ms_p50": pick(to_row, 0.5),
            "to_row_ms_p95": pick(to_row, 0.95), "to_alert_ms": [round(x, 1) for x in to_alert]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--broker")
    parser.add_argument("--messages", type=int, default=16_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="rs-bench-"))
    settings = config.load(data_dir=str(data_dir), broker=args.broker,
                           web_port=tansu.free_port())
    stack.up(settings)
    settings = config.load(data_dir=str(data_dir))
    try:
        results = {"machine": f"{os.cpu_count()} cores", "date": time.strftime("%Y-%m-%d"),
                   "broker": "kafka " + args.broker if args.broker else "tansu (embedded)",
                   "latency": latency(settings, data_dir, 60),
                   "throughput": throughput(settings, args.messages),
                   "overhead": overhead(data_dir, 80, args.rounds)}
    finally:
        stack.down(settings)
    (HERE / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
