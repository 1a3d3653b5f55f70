"""Shared fixtures: real brokers (Apache Kafka KRaft, Tansu) and a real pipeline stack."""
from __future__ import annotations

import subprocess

import pytest
from support import REPO, make_stack

from ridgescope.pipeline import tansu


@pytest.fixture(scope="session")
def kafka_bootstrap(tmp_path_factory) -> str:
    """A single-node Apache Kafka broker in KRaft mode, started by the repo's script."""
    work = tmp_path_factory.mktemp("kafka")
    port = tansu.free_port()
    script = REPO / "scripts" / "kafka-test-broker"
    out = subprocess.run([str(script), "start", str(work), str(port)], capture_output=True,
                         text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"kafka-test-broker failed:\n{out.stdout}\n{out.stderr}")
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
