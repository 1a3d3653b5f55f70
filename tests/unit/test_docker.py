"""The production compose stack: checked with what runs here (no Docker engine)."""
from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import yaml

from ridgescope.pipeline.config import Settings
from ridgescope.probes import env

DOCKER = Path(__file__).resolve().parents[2] / "docker"


def test_compose_services_and_worker_settings_are_consistent():
    compose = yaml.safe_load((DOCKER / "docker-compose.yml").read_text())
    assert set(compose["services"]) == {"kafka", "clickhouse", "worker", "grafana"}
    worker_env = compose["services"]["worker"]["environment"]
    known = {env.BROKER, env.STORE, env.DATA_DIR, env.WEB_PORT}
    assert set(worker_env) <= known, set(worker_env) - known
    # The store DSN must be one the worker accepts.
    Settings(store=worker_env[env.STORE].replace("${CLICKHOUSE_PASSWORD:-ridgescope}", "pw"),
             broker=worker_env[env.BROKER]).validate()


def test_dockerfile_copies_only_paths_that_exist():
    """Each `COPY` from the build context names a path of the repository (a `COPY --from` copies
    from an earlier stage)."""
    copies = [line.split()[1:-1] for line in (DOCKER / "Dockerfile").read_text().splitlines()
              if line.startswith("COPY ") and not line.startswith("COPY --from=")]
    assert any("setup.py" in sources for sources in copies)     # the compiled parsers' build
    for sources in copies:
        for source in sources:
            assert (DOCKER.parent / source).exists(), source


def test_dockerfile_pins_the_mypy_that_the_tests_build_with():
    """The image compiles the parsers with the mypy that `test_compiled.py` checks them with."""
    test_extra = tomllib.loads((DOCKER.parent / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    (pin,) = [d for d in test_extra if d.startswith("mypy")]
    assert f'"{pin}"' in (DOCKER / "Dockerfile").read_text()


def test_compose_file_parses_with_docker_compose_when_installed():
    tool = shutil.which("docker-compose")
    if tool is None:
        result = subprocess.run(["docker", "compose", "version"], capture_output=True)
        if result.returncode != 0:
            return  # neither compose front end here; the YAML checks above still ran
        cmd = ["docker", "compose", "config", "-q"]
    else:
        cmd = [tool, "config", "-q"]
    result = subprocess.run(cmd, cwd=DOCKER, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
