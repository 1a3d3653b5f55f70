"""The build's one option: `RIDGESCOPE_USE_MYPYC=1` also compiles the log parsers to C with mypyc.

The parsers stay pure Python, the one source; a wheel built with the option carries each
parser module twice, and Python imports the compiled one (an extension module wins over
the .py beside it).  The compiled build reads the same records 1.2-1.7x faster (see
bench/parsers/results.md); without the option the package is the pure-Python one.  Needs
mypy (the `test` extra pins it) and a C compiler in the build environment:

    RIDGESCOPE_USE_MYPYC=1 pip wheel --no-deps --no-build-isolation -w dist .

Everything else is declared in pyproject.toml; docker/Dockerfile builds the image's wheel so.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from setuptools import setup

STAGE = Path("build", "mypyc-src")


def compiled_parsers() -> list:
    if os.environ.get("RIDGESCOPE_USE_MYPYC") != "1":
        return []
    from mypyc.build import mypycify

    # mypyc names a module by its path, and the source folder `parsers/` installs as
    # `ridgescope.parsers`: compile a copy laid out under its installed name.
    package = STAGE / "ridgescope" / "parsers"
    shutil.rmtree(STAGE, ignore_errors=True)
    shutil.copytree("parsers", package, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    (STAGE / "ridgescope" / "__init__.py").touch()   # the build's package root, not installed
    modules = sorted(str(p) for p in package.glob("*.py"))
    return mypycify(modules + ["--ignore-missing-imports"], opt_level="3")


setup(ext_modules=compiled_parsers())
