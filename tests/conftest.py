"""Shared fixtures: real brokers (Apache Kafka KRaft, Tansu) and a real pipeline stack."""
from __future__ import annotations

import socket
import subprocess

import pytest
from support import REPO, make_stack

from ridgescope.pipeline import tansu


def free_port_pair() -> int:
    """A port whose next one is free too: the broker listens on both (its controller on the
    second), and exits, saying nothing, where either is taken."""
    while True:
        port = tansu.free_port()
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port + 1))
                return port
            except OSError:
                continue


@pytest.fixture(scope="session")
def kafka_bootstrap(tmp_path_factory) -> str:
    """A single-node Apache Kafka broker in KRaft mode, started by the repo's script.  A port
    found free may be taken before the broker binds it: then it starts again on others."""
    script = REPO / "scripts" / "kafka-test-broker"
    for _ in range(3):
        work = tmp_path_factory.mktemp("kafka")
        out = subprocess.run([str(script), "start", str(work), str(free_port_pair())], capture_output=True,
                             text=True, timeout=600)
        if out.returncode == 0:
            break
    else:
        raise RuntimeError(f"kafka-test-broker failed 3 times; the last:\n{out.stdout}\n{out.stderr}")
    yield out.stdout.strip().splitlines()[-1]
    subprocess.run([str(script), "stop", str(work)], timeout=60)


@pytest.fixture(scope="session")
def tansu_bootstrap(tmp_path_factory) -> str:
    work = tmp_path_factory.mktemp("tansu")
    port = tansu.free_port()
    proc = tansu.start(port, work / "tansu.log")
    yield f"127.0.0.1:{port}"
    proc.terminate()
    proc.wait(10)


@pytest.fixture
def kafka_stack(tmp_path, kafka_bootstrap):
    s = make_stack(tmp_path, kafka_bootstrap)
    yield s
    s.down()


@pytest.fixture
def tansu_stack(tmp_path, tansu_bootstrap):
    s = make_stack(tmp_path, tansu_bootstrap)
    yield s
    s.down()
