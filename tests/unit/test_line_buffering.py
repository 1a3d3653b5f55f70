"""`ridgescope run` makes a compiled job's C stdio line-buffered (probes/line_buffering.py): the
environment it builds, and a real C program's first line read from the pipe before its last
is printed."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ridgescope.probes.line_buffering import find_libstdbuf, line_buffered_c_stdio
from ridgescope.probes.runner import child_env

LIB = "/usr/libexec/coreutils/libstdbuf.so"

SLOW_PRINTER = r"""
#include <stdio.h>
#include <unistd.h>
int main(void) { printf("step 1/2 loss 2.0\n"); sleep(2); printf("step 2/2 loss 1.9\n"); return 0; }
"""


def test_the_library_is_preloaded_and_stdout_made_line_buffered():
    out = line_buffered_c_stdio({"PATH": "/bin"}, LIB)
    assert out["LD_PRELOAD"] == LIB and out["_STDBUF_O"] == "L"


def test_the_users_own_preloads_are_kept_and_ours_added_once():
    out = line_buffered_c_stdio({"LD_PRELOAD": "/opt/a.so:/opt/b.so"}, LIB)
    assert out["LD_PRELOAD"] == f"/opt/a.so /opt/b.so {LIB}"
    assert line_buffered_c_stdio(dict(out), LIB)["LD_PRELOAD"] == out["LD_PRELOAD"]


@pytest.mark.parametrize("environ", [{"RIDGESCOPE_LINE_BUFFER": "0"}, {"_STDBUF_O": "0"}])
def test_a_choice_of_the_users_is_left_alone(environ):
    assert line_buffered_c_stdio(dict(environ), LIB) == environ


def test_a_machine_without_the_library_leaves_the_environment_as_it_is():
    assert line_buffered_c_stdio({"PATH": "/bin"}, None) == {"PATH": "/bin"}


def test_the_library_is_found_beside_stdbuf_or_in_a_distributions_place(tmp_path, monkeypatch):
    prefix = tmp_path / "opt"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "libexec" / "coreutils").mkdir(parents=True)
    (prefix / "bin" / "stdbuf").write_text("#!/bin/sh\n")
    (prefix / "bin" / "stdbuf").chmod(0o755)
    distro = tmp_path / "distro"
    distro.mkdir()
    (distro / "libstdbuf.so").write_bytes(b"")
    monkeypatch.setenv("PATH", str(prefix / "bin"))
    assert find_libstdbuf(places=(str(distro),)) == str(distro / "libstdbuf.so")
    (prefix / "libexec" / "coreutils" / "libstdbuf.so").write_bytes(b"")
    assert find_libstdbuf(places=(str(distro),)) == str(prefix / "libexec" / "coreutils" / "libstdbuf.so")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert find_libstdbuf(places=(str(tmp_path / "nowhere"),)) is None


def first_read(program: Path, env: dict) -> tuple[bytes, bool]:
    """The program's first bytes read from its stdout pipe, and whether it still ran then."""
    proc = subprocess.Popen([str(program)], stdout=subprocess.PIPE, env=env)
    try:
        first = proc.stdout.read1(4096)
        return first, proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.skipif(find_libstdbuf() is None or shutil.which("cc") is None,
                    reason="needs coreutils' libstdbuf.so and a C compiler")
def test_a_compiled_programs_line_reaches_the_pipe_as_it_is_printed(tmp_path):
    source, program = tmp_path / "printer.c", tmp_path / "printer"
    source.write_text(SLOW_PRINTER)
    subprocess.run(["cc", "-o", str(program), str(source)], check=True, timeout=120)

    first, running = first_read(program, child_env("job", tmp_path / "s", hooks=False))
    assert first == b"step 1/2 loss 2.0\n" and running     # read during the program's sleep

    first, running = first_read(program, {"PATH": "/usr/bin:/bin"})
    assert first == b"step 1/2 loss 2.0\nstep 2/2 loss 1.9\n", "a pipe's stdio holds both to exit"
