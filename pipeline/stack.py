"""Start, stop and inspect the local stack: broker (embedded Tansu unless given), worker, store.

The stack's state (pids, ports) lives in <data_dir>/stack.json, and its resolved settings in
<data_dir>/config.json, so every later command finds it.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from ridgescope.pipeline import config, tansu
from ridgescope.probes import env
from ridgescope.pipeline.config import Settings

WORKER_READY_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 15.0


def state_path(settings: Settings) -> Path:
    return Path(settings.data_dir) / "stack.json"


def read_state(settings: Settings) -> dict:
    path = state_path(settings)
    return json.loads(path.read_text()) if path.exists() else {}


def alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child of ours counts as gone
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True


def worker_status(port: int, timeout_s: float = 2.0) -> dict | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=timeout_s) as r:
            return json.loads(r.read())
    except Exception:  # noqa: BLE001 - not answering is an answer
        return None


def port_taken(port: int) -> str | None:
    """Who holds the worker's query API port on this host, if anyone does: another stack's
    worker (its status answered there, and a new worker's readiness was read off it while the
    new one had died on the port), or some other program."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
            return None
        except OSError:
            pass
    status = worker_status(port)
    if status:
        return (f"the worker of another stack (pid {status.get('pid', '?')}, broker "
                f"{status.get('broker', '?')})")
    return "another program"


def start_worker(settings: Settings, log=print) -> int:
    data_dir = Path(settings.data_dir)
    log_file = open(data_dir / "worker.log", "ab")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ridgescope.pipeline.worker", "--data-dir", str(data_dir)],
        stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        start_new_session=True)
    deadline = time.monotonic() + WORKER_READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the worker exited with code {proc.returncode}; "
                               f"see {data_dir / 'worker.log'}")
        status = worker_status(settings.web_port, 1.0)
        if status and status.get("pid") == proc.pid and status.get("assigned_partitions", 0) > 0:
            return proc.pid
        time.sleep(0.3)
    proc.kill()
    raise TimeoutError(f"the worker was not ready after {WORKER_READY_TIMEOUT_S:.0f} s; "
                       f"see {data_dir / 'worker.log'}")


def reachable(bootstrap: str, timeout_s: float = 5.0) -> bool:
    """Does one of the bootstrap servers (``host:port[,host:port...]``) accept a connection?"""
    for server in bootstrap.split(","):
        host, _, port = server.strip().rpartition(":")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
            return True
        except (OSError, ValueError):
            continue
    return False


def up(settings: Settings, log=print) -> dict:
    """Bring the stack up (idempotent) and return its state."""
    data_dir = Path(settings.data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    state = read_state(settings)
    answering = (worker_status(settings.web_port) or {}).get("pid")
    if alive(state.get("worker_pid")) and answering == state["worker_pid"]:
        log(f"already up: broker {state['broker']}, worker pid {state['worker_pid']}")
        return state
    holder = port_taken(settings.web_port)
    if holder is not None:      # before a broker is started that nothing would stop
        raise RuntimeError(f"port {settings.web_port}, the worker's query API, is taken by {holder}: "
                           f"stop it (`ridgescope down` with that stack's --data-dir), or give this "
                           f"stack another port (--web-port or {env.WEB_PORT})")
    if settings.broker and not alive(state.get("broker_pid")) and state.get("embedded_broker"):
        settings.broker = ""  # the embedded broker we started before is gone: start anew
    embedded_broker = not settings.broker
    broker_pid = None
    if embedded_broker:
        port = tansu.free_port()
        proc = tansu.start(port, data_dir / "broker.log")
        broker_pid, settings.broker = proc.pid, f"127.0.0.1:{port}"
        log(f"broker: Tansu (embedded, in memory) on {settings.broker}")
    else:
        log(f"broker: {settings.broker}")
        if not reachable(settings.broker):
            raise RuntimeError(
                f"nothing answers at the broker {settings.broker}; start it, or drop it (from "
                f"--broker, RIDGESCOPE_BROKER or \"broker\" in {settings.config_file}) to use "
                "the embedded one")
    config.save(settings)
    log(f"store: {settings.store_dsn}")
    log("worker: starting the Faust pipeline worker ...")
    worker_pid = start_worker(settings, log)
    state = {"broker": settings.broker, "embedded_broker": embedded_broker,
             "broker_pid": broker_pid, "worker_pid": worker_pid, "store": settings.store_dsn,
             "web_port": settings.web_port, "started_ns": time.time_ns()}
    state_path(settings).write_text(json.dumps(state, indent=2) + "\n")
    log(f"worker: pid {worker_pid}, query API on http://127.0.0.1:{settings.web_port}")
    return state


def stop_pid(pid: int | None, timeout_s: float = STOP_TIMEOUT_S) -> str:
    """SIGTERM, then SIGKILL after ``timeout_s``: a stop never hangs."""
    if not alive(pid):
        return "not running"
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not alive(pid):
            return "stopped"
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    return "killed after timeout"


def down(settings: Settings, log=print) -> None:
    state = read_state(settings)
    if not state:
        log("nothing to stop")
        return
    log(f"worker: {stop_pid(state.get('worker_pid'))}")
    if state.get("embedded_broker"):
        log(f"broker: {stop_pid(state.get('broker_pid'))}")
        config.forget_broker(settings, state.get("broker", ""))
    state_path(settings).unlink(missing_ok=True)


def status(settings: Settings) -> dict:
    state = read_state(settings)
    worker = worker_status(settings.web_port) if alive(state.get("worker_pid")) else None
    return {
        "data_dir": settings.data_dir,
        "broker": settings.broker or None,
        "broker_running": (alive(state.get("broker_pid")) if state.get("embedded_broker")
                           else None),
        "worker_pid": state.get("worker_pid"),
        "worker_running": worker is not None,
        "assigned_partitions": (worker or {}).get("assigned_partitions", 0),
        "store": settings.store_dsn,
        "query_api": f"http://127.0.0.1:{settings.web_port}" if worker else None,
    }
