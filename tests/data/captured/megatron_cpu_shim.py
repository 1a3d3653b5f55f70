# CPU shim for running Megatron-LM's training loop on a machine without CUDA.
# Loaded automatically by Python (sitecustomize) when this folder is on PYTHONPATH;
# active only when MG_CPU_SHIM=1.  It edits no Megatron file: it only re-points
# torch.cuda / torch.distributed entry points at CPU / gloo equivalents.
import os

if os.environ.get("MG_CPU_SHIM") == "1":
    # torch.compile (Megatron's jit_fuser) would probe the real CUDA runtime; run eager.
    os.environ.setdefault("TORCHDYNAMO_DISABLE", "1")
    import contextlib
    import functools
    import time

    import torch
    import torch.distributed as dist

    _CPU = torch.device("cpu")

    def _map_dev(d):
        if d is None:
            return d
        if isinstance(d, int) and not isinstance(d, bool):
            return _CPU
        if isinstance(d, str) and d.startswith("cuda"):
            return _CPU
        if isinstance(d, torch.device) and d.type == "cuda":
            return _CPU
        return d

    # --- device placement: everything that asks for CUDA gets the CPU ---------------
    torch.Tensor.cuda = lambda self, *a, **k: self
    torch.nn.Module.cuda = lambda self, *a, **k: self
    _orig_tensor_to = torch.Tensor.to

    def _tensor_to(self, *args, **kwargs):
        args = tuple(_map_dev(a) if isinstance(a, (str, int, torch.device)) and not isinstance(a, bool) else a
                     for a in args)
        if "device" in kwargs:
            kwargs["device"] = _map_dev(kwargs["device"])
        kwargs.pop("non_blocking", None)
        return _orig_tensor_to(self, *args, **kwargs)

    torch.Tensor.to = _tensor_to
    _orig_module_to = torch.nn.Module.to

    def _module_to(self, *args, **kwargs):
        args = tuple(_map_dev(a) if isinstance(a, (str, int, torch.device)) and not isinstance(a, bool) else a
                     for a in args)
        if "device" in kwargs:
            kwargs["device"] = _map_dev(kwargs["device"])
        return _orig_module_to(self, *args, **kwargs)

    torch.nn.Module.to = _module_to

    def _wrap_factory(fn):
        @functools.wraps(fn)
        def w(*args, **kwargs):
            if "device" in kwargs:
                kwargs["device"] = _map_dev(kwargs["device"])
            kwargs.pop("pin_memory", None)
            return fn(*args, **kwargs)
        return w

    for _name in ("empty", "zeros", "ones", "full", "tensor", "arange", "rand", "randn",
                  "randint", "empty_like", "zeros_like", "ones_like", "full_like",
                  "rand_like", "randn_like", "as_tensor", "linspace", "eye", "empty_strided"):
        setattr(torch, _name, _wrap_factory(getattr(torch, _name)))
    torch.Tensor.pin_memory = lambda self, *a, **k: self

    # --- torch.cuda API: report one device and make its calls CPU no-ops ------------
    cuda = torch.cuda
    cuda.is_available = lambda: True
    cuda.device_count = lambda: 1
    cuda.current_device = lambda: 0
    cuda.set_device = lambda *a, **k: None
    cuda.synchronize = lambda *a, **k: None
    cuda.empty_cache = lambda *a, **k: None
    cuda.is_initialized = lambda: True
    cuda.get_device_name = lambda *a, **k: "cpu (MG_CPU_SHIM)"
    cuda.get_device_capability = lambda *a, **k: (9, 0)
    cuda.memory_allocated = lambda *a, **k: 0
    cuda.max_memory_allocated = lambda *a, **k: 0
    cuda.memory_reserved = lambda *a, **k: 0
    cuda.max_memory_reserved = lambda *a, **k: 0
    cuda.reset_peak_memory_stats = lambda *a, **k: None
    cuda.memory_stats = lambda *a, **k: {
        "allocated_bytes.all.current": 0, "allocated_bytes.all.peak": 0,
        "reserved_bytes.all.current": 0, "reserved_bytes.all.peak": 0,
        "num_alloc_retries": 0, "num_ooms": 0,
        "allocation.all.current": 0, "allocation.all.peak": 0,
    }
    cuda.mem_get_info = lambda *a, **k: (0, 0)
    # a separate CPU generator stands in for the device generator
    _gen = torch.Generator()
    cuda.default_generators = (_gen,)
    cuda.manual_seed = lambda seed: _gen.manual_seed(int(seed))
    cuda.manual_seed_all = lambda seed: _gen.manual_seed(int(seed))
    cuda.get_rng_state = lambda *a, **k: _gen.get_state()
    cuda.set_rng_state = lambda state, *a, **k: _gen.set_state(state)
    cuda.get_rng_state_all = lambda *a, **k: [_gen.get_state()]
    cuda.set_rng_state_all = lambda states, *a, **k: _gen.set_state(states[0])
    cuda._lazy_call = lambda cb, *a, **k: cb()
    for _n in ("manual_seed", "manual_seed_all", "get_rng_state", "set_rng_state",
               "get_rng_state_all", "set_rng_state_all"):
        setattr(cuda.random, _n, getattr(cuda, _n))
    cuda.nvtx.range_push = lambda *a, **k: None
    cuda.nvtx.range_pop = lambda *a, **k: None

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
            return _Event()

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

    cuda.is_current_stream_capturing = lambda: False
    # torch.optim asks torch.accelerator (not torch.cuda) about graph capture: no accelerator.
    torch.accelerator.current_accelerator = lambda *a, **k: None
    cuda.Stream = _Stream
    cuda.Event = _Event
    cuda.current_stream = lambda *a, **k: _Stream()
    cuda.default_stream = lambda *a, **k: _Stream()
    cuda.stream = lambda *a, **k: contextlib.nullcontext()
    cuda.device = lambda *a, **k: contextlib.nullcontext()

    # --- torch.distributed: NCCL requests become gloo ---------------------------------
    def _map_backend(b):
        if b is None:
            return b
        if isinstance(b, str) and "nccl" in b:
            return "gloo"
        return b

    _orig_init_pg = dist.init_process_group

    def _init_pg(*args, **kwargs):
        if args:
            args = (_map_backend(args[0]),) + tuple(args[1:])
        if "backend" in kwargs:
            kwargs["backend"] = _map_backend(kwargs["backend"])
        kwargs.pop("device_id", None)
        return _orig_init_pg(*args, **kwargs)

    dist.init_process_group = _init_pg
    _orig_new_group = dist.new_group

    def _new_group(*args, **kwargs):
        if "backend" in kwargs:
            kwargs["backend"] = _map_backend(kwargs["backend"])
        kwargs.pop("pg_options", None)
        return _orig_new_group(*args, **kwargs)

    dist.new_group = _new_group

    # Megatron's straggler detector (`--log-straggler`) reads the GPU's counters, which a CPU
    # lacks: they read 0 (its `MnPwr/Rnk: 0.00W/0 ...`); its timings are the CPU's own.
    for _counter in ("temperature", "power_draw", "utilization", "clock_rate"):
        setattr(torch.cuda, _counter, lambda *a, **k: 0)
