"""The compiled build of the parsers (setup.py, `RIDGESCOPE_USE_MYPYC=1`) reads exactly what the
pure-Python parsers read.

mypyc checks the declared types at run time, where Python does not: a value of another type
than its annotation says would raise inside the compiled build only, and the dispatcher would
count the line as garbage.  So the test builds the wheel as a release would, and compares the
records and stats of both builds on the corpus, the captured logs and generated garbage."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import ridgescope.parsers

ROOT = Path(__file__).resolve().parents[2]
DUMP = Path(__file__).with_name("dump_records.py")

pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def compiled_site(tmp_path_factory) -> Path:
    """A folder holding the compiled wheel's files, built from a copy of the sources."""
    tmp = tmp_path_factory.mktemp("mypyc")
    src = tmp / "src"
    package_dirs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for folder in sorted({d.split("/")[0] for d in package_dirs.values()}):
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, src / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "-w", str(tmp / "dist"), str(src)],
                   cwd=src, env={**os.environ, "RIDGESCOPE_USE_MYPYC": "1"}, check=True)
    (wheel,) = (tmp / "dist").glob("ridgescope-*.whl")
    site = tmp / "site"
    with zipfile.ZipFile(wheel) as zf:
        assert any(n.startswith("ridgescope/parsers/dispatcher.") and n.endswith(".so") for n in zf.namelist())
        zf.extractall(site)
    return site


def dump(tmp_path: Path, build: str, site: Path | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    out = tmp_path / f"{build}.json"
    subprocess.run([sys.executable, str(DUMP), build, str(out)], cwd=tmp_path, env=env, check=True)
    return json.loads(out.read_text())


def test_the_parsers_pass_mypy():
    """mypyc compiles only what mypy accepts: said here at once, not at the end of a build."""
    files = sorted(str(p) for p in (ROOT / "parsers").glob("*.py"))
    run = subprocess.run([sys.executable, "-m", "mypy", "--ignore-missing-imports", "--no-incremental", *files],
                         cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout


def test_the_tests_run_the_pure_parsers():
    assert not ridgescope.parsers.COMPILED


def test_compiled_parsers_read_what_the_pure_ones_read(compiled_site, tmp_path):
    pure = dump(tmp_path, "pure")
    compiled = dump(tmp_path, "compiled", compiled_site)
    assert sorted(compiled) == sorted(pure)
    assert sum(len(v["feed"]) for v in pure.values()) > 15000      # the corpus gave its records
    for name in pure:
        assert compiled[name] == pure[name], name
