"""Makes one training batch of a Megatron-LM run slow, to capture how its log shows it.

Imported by the capture's entry script before `pretrain` runs: it wraps the train data
iterator Megatron builds, so that fetching the batch of iteration $MG_SLOW_ITER (13 unless set)
sleeps $MG_SLOW_SECONDS (0.5) s, inside `forward_step`'s `batch-generator` timer: on every
rank, or on rank $MG_SLOW_RANK alone where it is set."""
import os
import time

import torch

import megatron.training.training as mtt
from megatron.training import get_args

SLOW_ITER = int(os.environ.get("MG_SLOW_ITER", "13"))
SLOW_SECONDS = float(os.environ.get("MG_SLOW_SECONDS", "0.5"))
SLOW_RANK = int(os.environ["MG_SLOW_RANK"]) if "MG_SLOW_RANK" in os.environ else None


class SlowOnceIterator:
    """Wraps the train data iterator; the fetch for iteration SLOW_ITER sleeps."""

    def __init__(self, inner):
        self.inner = inner
        self.slept = False

    def __iter__(self):
        return self

    def __next__(self):
        # args.curr_iteration holds the number of completed iterations, so the batch
        # for the iteration printed as N is fetched while curr_iteration == N - 1.
        if not self.slept and getattr(get_args(), "curr_iteration", -1) == SLOW_ITER - 1 and (
                SLOW_RANK is None or torch.distributed.get_rank() == SLOW_RANK):
            self.slept = True
            time.sleep(SLOW_SECONDS)
        return next(self.inner)


_orig_build_iters = mtt.build_train_valid_test_data_iterators


def _build_iters_with_slow_train(*a, **k):
    train_it, valid_it, test_it = _orig_build_iters(*a, **k)
    if train_it is not None:
        # Megatron returns it wrapped in a RerunDataIterator (which it asserts on);
        # wrap the iterator inside that.
        if hasattr(train_it, "iterable"):
            train_it.iterable = SlowOnceIterator(train_it.iterable)
        else:
            train_it = SlowOnceIterator(train_it)
    return train_it, valid_it, test_it


mtt.build_train_valid_test_data_iterators = _build_iters_with_slow_train
