"""The framework hook probe for PyTorch: per-step phase spans, with no change to the job's code.

Armed by the bootstrap when ``torch`` is imported.  It records, in wall-clock ns:
- step boundaries from the global optimizer step hooks (the first optimizer is the step clock);
- DataLoader wait (``_BaseDataLoaderIter.__next__``), and evaluation loops: a loader drained
  with no backward between its batches (``StepRecorder.batch_fetched``);
- forward (``DistributedDataParallel.forward``) and backward (``torch.autograd.backward``);
- DDP all-reduce per bucket, ready and done, through a comm hook that wraps the default one or
  the user's own (DDP accepts one comm hook per model, so ours chains theirs);
- optimizer time, and checkpoint saves (``torch.save``, ``torch.distributed.checkpoint``).
At each step end it sends one ``step_spans`` summary.  Wrappers only stamp times.
"""
from __future__ import annotations

import functools
import os
import sys
import threading
import time

from ridgescope.probes import env
from ridgescope.probes.base import Probe

_now = time.time_ns
DCP_MODULE = "torch.distributed.checkpoint"


class StepRecorder:
    """Collects one rank's spans for the step in progress and emits them at its end."""

    def __init__(self, emit, world_size_fn):
        self.emit = emit
        self.world_size_fn = world_size_fn
        self.step = 0
        self.t0: int | None = None
        self.spans: list = []
        self.buckets: list = []
        self.backwards = 0
        """Backward calls so far: a loader whose batches come with none between them is no
        training loop's."""
        self.gpu = None
        """The CUDA trace tier, when armed: it adds GPU busy spans to each summary, which is
        then sent one step late (when the GPU work of the step has been delivered)."""
        self._held: dict | None = None
        self._lock = threading.Lock()

    def span(self, phase: str, start: int, end: int) -> None:
        if self.t0 is None:
            self.t0 = start
        self.spans.append([phase, start, end])
        if phase == "backward":
            self.backwards += 1

    def batch_fetched(self, loader_iter, start: int, end: int, drained: bool) -> None:
        """Note one `__next__` of a DataLoader iterator (`drained`: it raised StopIteration).
        An iterator that runs to its end with no backward between its batches is an
        evaluation's loop (HF Trainer's, Lightning's validation, `model.eval()` loops): it
        adds an `evaluation` span from the first of those batches to its end, which no lane
        charges (the loop's own input and compute are in theirs) and which makes the step an
        evaluation step.  A training loop has a backward between its batches; a loader a step
        takes one batch from is never drained within it."""
        run = getattr(loader_iter, "__ridgescope_run__", None)      # [first fetch, backwards then]
        if run is None or run[1] != self.backwards:
            run = [start, self.backwards]
            try:
                loader_iter.__ridgescope_run__ = run
            except AttributeError:  # an iterator that takes no attribute: no evaluation seen
                return
        if drained and run[0] < start:
            self.span("evaluation", run[0], end)

    def bucket(self, index: int, ready: int, done: int) -> None:
        self.buckets.append([index, ready, done])

    def end_step(self, t1: int) -> None:
        with self._lock:
            spans, buckets = self.spans, self.buckets
            self.spans, self.buckets = [], []
            t0 = self.t0 if self.t0 is not None else t1
            self.t0 = t1
            self.step += 1
            step = self.step
        payload = {"step": step, "t0_ns": t0, "t1_ns": t1, "spans": spans, "buckets": buckets,
                   "world_size": self.world_size_fn(), "source": "torch"}
        if self.gpu is None:
            self.emit("step_spans", payload, t1)
            return
        held, self._held = self._held, payload
        if held is not None:
            self._emit_with_gpu(held)

    def _emit_with_gpu(self, payload: dict) -> None:
        try:
            payload = self.gpu.attach(payload)
        except Exception:  # noqa: BLE001 - the hook tier's summary goes out regardless
            pass
        self.emit("step_spans", payload, payload["t1_ns"])

    def flush_held(self) -> None:
        """Send the summary held back for the GPU tier (at exit)."""
        held, self._held = self._held, None
        if held is not None and self.gpu is not None:
            self._emit_with_gpu(held)


def _timed(recorder: StepRecorder, phase: str, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        start = _now()
        try:
            return fn(*args, **kwargs)
        finally:
            recorder.span(phase, start, _now())
    wrapper.__ridgescope_original__ = fn
    return wrapper


def _timed_batches(recorder: StepRecorder, fn):
    """A DataLoader iterator's `__next__`: its wait, as `_timed`, and its batch noted."""
    @functools.wraps(fn)
    def wrapper(loader_iter, *args, **kwargs):
        start, drained = _now(), False
        try:
            return fn(loader_iter, *args, **kwargs)
        except StopIteration:
            drained = True
            raise
        finally:
            end = _now()
            recorder.span("data_wait", start, end)
            try:
                recorder.batch_fetched(loader_iter, start, end, drained)
            except Exception:  # noqa: BLE001 - never in the job's way
                pass
    wrapper.__ridgescope_original__ = fn
    return wrapper


def _timed_comm_hook(recorder: StepRecorder, hook):
    def comm_hook(state, bucket):
        ready = _now()
        index = bucket.index()
        future = hook(state, bucket)

        def done(fut):
            recorder.bucket(index, ready, _now())
            return fut.value()
        return future.then(done)
    return comm_hook


class TorchHookProbe(Probe):
    name = "torch"

    def __init__(self) -> None:
        super().__init__()
        self._patches: list[tuple[object, str, object]] = []
        self._hook_handles: list = []
        self.recorder: StepRecorder | None = None

    def _patch(self, owner, attr: str, replacement) -> None:
        self._patches.append((owner, attr, getattr(owner, attr)))
        setattr(owner, attr, replacement)

    def _instrument(self, emit=None, **_) -> None:
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        from torch.optim.optimizer import (register_optimizer_step_post_hook,
                                           register_optimizer_step_pre_hook)
        from torch.utils.data import dataloader

        def world_size() -> int:
            if dist.is_available() and dist.is_initialized():
                return dist.get_world_size()
            return int(os.environ.get("WORLD_SIZE") or os.environ.get(env.TASK_WORLD) or "1")

        rec = self.recorder = StepRecorder(emit, world_size)
        iter_cls = dataloader._BaseDataLoaderIter
        self._patch(iter_cls, "__next__", _timed_batches(rec, iter_cls.__next__))
        self._patch(torch.autograd, "backward", _timed(rec, "backward", torch.autograd.backward))
        self._patch(torch, "save", _timed(rec, "checkpoint", torch.save))
        if DCP_MODULE in sys.modules:  # else preload patches it when the job imports it
            self.patch_dcp()
        self._patch_ddp(rec, DDP)

        clock = {"optimizer": None, "start": 0}

        def pre_hook(optimizer, args, kwargs):
            if clock["optimizer"] is None:
                clock["optimizer"] = id(optimizer)
            clock["start"] = _now()

        def post_hook(optimizer, args, kwargs):
            end = _now()
            rec.span("optimizer", clock["start"], end)
            if id(optimizer) == clock["optimizer"]:
                rec.end_step(end)

        self._hook_handles = [register_optimizer_step_pre_hook(pre_hook),
                              register_optimizer_step_post_hook(post_hook)]

    def patch_dcp(self) -> None:
        """Time torch.distributed.checkpoint saves.  Called once that module is imported:
        importing it ourselves would add seconds to every job's start."""
        dcp = sys.modules.get(DCP_MODULE)
        if dcp is None or self.recorder is None:
            return
        for name in ("save", "async_save"):
            if hasattr(dcp, name):
                self._patch(dcp, name, _timed(self.recorder, "checkpoint", getattr(dcp, name)))

    def _patch_ddp(self, rec: StepRecorder, DDP) -> None:
        from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
        original_register = DDP.register_comm_hook
        original_forward = DDP.forward

        def register_comm_hook(self_ddp, state, hook):
            self_ddp.__ridgescope_comm_hook__ = True
            return original_register(self_ddp, state, _timed_comm_hook(rec, hook))

        def forward(self_ddp, *args, **kwargs):
            if not getattr(self_ddp, "__ridgescope_comm_hook__", False):
                self_ddp.__ridgescope_comm_hook__ = True
                try:
                    original_register(self_ddp, None, _timed_comm_hook(rec, allreduce_hook))
                except Exception:  # noqa: BLE001 - e.g. a hook set through another path
                    pass
            start = _now()
            try:
                return original_forward(self_ddp, *args, **kwargs)
            finally:
                rec.span("forward", start, _now())

        self._patch(DDP, "register_comm_hook", register_comm_hook)
        self._patch(DDP, "forward", forward)

    def _uninstrument(self) -> None:
        for owner, attr, original in reversed(self._patches):
            setattr(owner, attr, original)
        self._patches.clear()
        for handle in self._hook_handles:
            handle.remove()
        self._hook_handles.clear()
