"""Parsers that turn training stdout into step records (progress, timing, checkpoint, eval,
restart, error, nccl_init, nccl_coll).  One `Dispatcher` per stream."""
from .dispatcher import PARSERS, Dispatcher
from .prefix import split_rank_prefix

__all__ = ["Dispatcher", "PARSERS", "split_rank_prefix"]
