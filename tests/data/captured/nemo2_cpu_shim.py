# A CPU shim, installed as shim/sitecustomize.py, for running NeMo 2 (nemo.lightning + megatron-core) on a
# machine without CUDA. Active only when NEMO_CPU_SHIM=1 and this folder is on PYTHONPATH.
# It edits no installed file: it re-points torch.cuda / torch.distributed entry points at
# CPU / gloo equivalents, so that megatron-core's "device=torch.cuda.current_device()" etc. land on CPU.
import os

if os.environ.get("NEMO_CPU_SHIM") == "1":
    os.environ.setdefault("TORCHDYNAMO_DISABLE", "1")  # megatron jit_fuser -> eager
    import contextlib
    import functools
    import time

    import torch
    import torch.distributed as dist

    _CPU = torch.device("cpu")

    def _dev(d):
        if isinstance(d, bool):
            return d
        if isinstance(d, int):
            return _CPU
        if isinstance(d, str) and d.startswith("cuda"):
            return _CPU
        if isinstance(d, torch.device) and d.type == "cuda":
            return _CPU
        return d

    def _fix_args(args, kwargs):
        args = tuple(_dev(a) if isinstance(a, (str, int, torch.device)) else a for a in args)
        if "device" in kwargs:
            kwargs["device"] = _dev(kwargs["device"])
        return args, kwargs

    torch.Tensor.cuda = lambda self, *a, **k: self
    torch.nn.Module.cuda = lambda self, *a, **k: self
    torch.Tensor.pin_memory = lambda self, *a, **k: self
    _t_to, _m_to = torch.Tensor.to, torch.nn.Module.to

    def _tensor_to(self, *args, **kwargs):
        args, kwargs = _fix_args(args, kwargs)
        kwargs.pop("non_blocking", None)
        return _t_to(self, *args, **kwargs)

    def _module_to(self, *args, **kwargs):
        args, kwargs = _fix_args(args, kwargs)
        return _m_to(self, *args, **kwargs)

    torch.Tensor.to, torch.nn.Module.to = _tensor_to, _module_to

    def _factory(fn):
        @functools.wraps(fn)
        def w(*args, **kwargs):
            if "device" in kwargs:
                kwargs["device"] = _dev(kwargs["device"])
            kwargs.pop("pin_memory", None)
            return fn(*args, **kwargs)
        return w

    for _n in ("empty", "zeros", "ones", "full", "tensor", "arange", "rand", "randn", "randint",
               "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
               "as_tensor", "linspace", "eye", "empty_strided", "randperm"):
        setattr(torch, _n, _factory(getattr(torch, _n)))

    c = torch.cuda
    c.is_available = lambda: True
    c.device_count = lambda: 1
    c.current_device = lambda: 0
    c.set_device = lambda *a, **k: None
    c.synchronize = lambda *a, **k: None
    c.empty_cache = lambda *a, **k: None
    c.is_initialized = lambda: True
    c.get_device_name = lambda *a, **k: "cpu (NEMO_CPU_SHIM)"
    c.get_device_capability = lambda *a, **k: (9, 0)
    c.get_device_properties = lambda *a, **k: type("P", (), {"name": "cpu", "total_memory": 0,
                                                             "major": 9, "minor": 0,
                                                             "multi_processor_count": 1})()
    for _n in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved"):
        setattr(c, _n, lambda *a, **k: 0)
    c.reset_peak_memory_stats = lambda *a, **k: None
    c.reset_max_memory_allocated = lambda *a, **k: None
    c.memory_stats = lambda *a, **k: {}
    c.mem_get_info = lambda *a, **k: (0, 0)
    _gen = torch.Generator()
    c.default_generators = (_gen,)
    c.manual_seed = c.manual_seed_all = lambda seed: _gen.manual_seed(int(seed))
    c.get_rng_state = lambda *a, **k: _gen.get_state()
    c.set_rng_state = lambda s, *a, **k: _gen.set_state(s)
    c.get_rng_state_all = lambda *a, **k: [_gen.get_state()]
    c.set_rng_state_all = lambda s, *a, **k: _gen.set_state(s[0])
    c._lazy_call = lambda cb, *a, **k: cb()
    for _n in ("manual_seed", "manual_seed_all", "get_rng_state", "set_rng_state",
               "get_rng_state_all", "set_rng_state_all"):
        setattr(c.random, _n, getattr(c, _n))
    c.nvtx.range_push = lambda *a, **k: None
    c.nvtx.range_pop = lambda *a, **k: None

    class _Event:
        def __init__(self, *a, **k):
            self.t = None
        def record(self, *a, **k):
            self.t = time.perf_counter()
        def synchronize(self):
            pass
        def wait(self, *a, **k):
            pass
        def query(self):
            return True
        def elapsed_time(self, other):
            return (other.t - self.t) * 1000.0

    class _Stream:
        def __init__(self, *a, **k):
            pass
        def wait_stream(self, *a, **k):
            pass
        def synchronize(self):
            pass
        def wait_event(self, *a, **k):
            pass
        def record_event(self, *a, **k):
            e = _Event(); e.record(); return e

    c.Event, c.Stream = _Event, _Stream
    c.current_stream = c.default_stream = lambda *a, **k: _Stream()
    c.stream = lambda *a, **k: contextlib.nullcontext()
    c.device = lambda *a, **k: contextlib.nullcontext()
    c.is_current_stream_capturing = lambda: False
    torch.accelerator.current_accelerator = lambda *a, **k: None

    def _backend(b):
        return "gloo" if isinstance(b, str) and "nccl" in b else b

    _init_pg, _new_group = dist.init_process_group, dist.new_group

    def init_process_group(*args, **kwargs):
        if args:
            args = (_backend(args[0]),) + tuple(args[1:])
        if "backend" in kwargs:
            kwargs["backend"] = _backend(kwargs["backend"])
        kwargs.pop("device_id", None)
        return _init_pg(*args, **kwargs)

    def new_group(*args, **kwargs):
        if "backend" in kwargs:
            kwargs["backend"] = _backend(kwargs["backend"])
        kwargs.pop("pg_options", None)
        return _new_group(*args, **kwargs)

    dist.init_process_group, dist.new_group = init_process_group, new_group
