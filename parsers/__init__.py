"""Parsers that turn training stdout into step records (progress, timing, checkpoint, eval,
restart, error, nccl_init, nccl_coll).  One `Dispatcher` per stream."""
from . import base as _base
from .dispatcher import FORMATS, PARSERS, UNLABELLED_BAR, Dispatcher
from .prefix import split_rank_prefix

COMPILED = not _base.__file__.endswith(".py")
"""Whether these parsers run compiled by mypyc (a wheel built so, see setup.py) or as Python."""

__all__ = ["COMPILED", "Dispatcher", "FORMATS", "PARSERS", "UNLABELLED_BAR", "split_rank_prefix"]
