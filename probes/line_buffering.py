"""A compiled job's stdout, line by line: coreutils' `libstdbuf`, preloaded into the job.

C stdio block-buffers stdout into a pipe, 4 KiB at a time: a C or C++ trainer's `printf`s
(llm.c's `step 5/74: train loss ...`) reached the log probe in blocks, a short job's all at its
exit, and steps timed by when their line was read were timed by the buffer.  `stdbuf -oL` fixes
that from outside the program, by preloading this library with `_STDBUF_O=L`; `ridgescope run`
does the same for every process of the job.  Python's own stdout is the bootstrap's
(bootstrap/sitecustomize.py); a program that sets its own buffering keeps it.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from ridgescope.probes import env

LIBRARY = "libstdbuf.so"
PLACES = ("/usr/libexec/coreutils", "/usr/lib/coreutils", "/usr/lib64/coreutils",
          "/usr/lib/x86_64-linux-gnu/coreutils", "/usr/lib/aarch64-linux-gnu/coreutils",
          "/usr/local/libexec/coreutils")
"""Where distributions install it (coreutils' pkglibexecdir): Debian and Ubuntu, RHEL, Arch."""


def find_libstdbuf(places: tuple[str, ...] = PLACES) -> str | None:
    """The library beside the `stdbuf` on PATH (its prefix's libexec), else a distribution's."""
    stdbuf = shutil.which("stdbuf")
    prefix = [str(Path(stdbuf).resolve().parent.parent / "libexec" / "coreutils")] if stdbuf else []
    for place in (*prefix, *places):
        path = Path(place) / LIBRARY
        if path.is_file():
            return str(path)
    return None


def line_buffered_c_stdio(environ: dict[str, str], library: str | None) -> dict[str, str]:
    """`environ` with the library preloaded and C stdout line-buffered, unless the user turned
    it off (RIDGESCOPE_LINE_BUFFER=0), chose a buffering of their own (`stdbuf` in the command
    sets _STDBUF_O), or the machine has no library."""
    if library is None or environ.get(env.LINE_BUFFER) == "0" or "_STDBUF_O" in environ:
        return environ
    preloaded = environ.get("LD_PRELOAD", "").replace(":", " ").split()
    if library not in preloaded:
        environ["LD_PRELOAD"] = " ".join([*preloaded, library])
    environ["_STDBUF_O"] = "L"
    return environ
