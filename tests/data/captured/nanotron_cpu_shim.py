# CPU shim for running Hugging Face Nanotron 0.4's own training loop (run_train.py +
# nanotron.trainer.DistributedTrainer) on a machine without CUDA / NCCL / flash-attn.
# Loaded automatically by Python (sitecustomize) when this folder is on PYTHONPATH; active
# only when NT_CPU_SHIM=1. It edits no Nanotron file. Device part adapted from the
# Megatron-LM capture shim (`megatron_cpu_shim.py`).
#
# What it changes / supplies:
#  1. torch.cuda.* -> CPU: is_available()=True, device_count()=LOCAL_WORLD_SIZE, set_device /
#     synchronize / empty_cache no-ops, memory stats = 0, CUDA RNG = a separate CPU Generator,
#     Event timing via time.perf_counter; .cuda() no-op; device="cuda"/cuda:N/torch.device("cuda")
#     passed to tensor factories, Tensor.to, Module.to and torch.Generator -> CPU.
#  2. torch.distributed: backend "nccl" -> "gloo" (init_process_group / new_group); all_reduce runs
#     under torch.no_grad(), and ReduceOp.AVG (not native in gloo) is done as SUM then / group size.
#  3. A stand-in `flash_attn` package (only the names nanotron 0.4 imports):
#     - flash_attn_interface.flash_attn_varlen_func(q,k,v,cu_seqlens_q,cu_seqlens_k,max_seqlen_q,
#       max_seqlen_k,dropout_p,softmax_scale,causal,...): for every packed sequence i
#       (rows cu_seqlens[i]:cu_seqlens[i+1]) computes
#       softmax(q_i k_i^T * scale + causal_mask) v_i with
#       torch.nn.functional.scaled_dot_product_attention(is_causal=causal, scale=softmax_scale
#       or 1/sqrt(head_dim), dropout_p), per head, output [total_q, heads, head_dim], input dtype.
#     - layers.rotary.RotaryEmbedding(dim, base=10000, interleaved=...): rotary position embedding
#       (cos/sin of t * base^(-2j/dim), computed in fp32) applied to q and to k = kv[:,:,0]
#       (v untouched), interleaved (GPT-J pairs x[2j],x[2j+1]) or half-split (GPT-NeoX) layout;
#       positions start at seqlen_offset (0 in training).
#     - ops.triton.layer_norm.layer_norm_fn (stands in for the triton RMSNorm/LayerNorm kernel):
#       x = x + residual (if given); RMSNorm: x * rsqrt(mean(x^2, -1) + eps) * weight (fp32 math,
#       cast back to input dtype); LayerNorm: F.layer_norm; prenorm=True also returns x.
#       dropout_p is applied with F.dropout (0.0 in this config).
#     - bert_padding.unpad_input/pad_input (plain index_select/scatter) and
#       flash_attn_with_kvcache (raises: inference only, unused in training).
#  4. nanotron.models.llama.RotaryEmbedding.init_rotary_embeddings (inference-only rotary buffer)
#     is replaced after import by the same computation on the CPU minus its `device.type == "cuda"`
#     assert (no file edited).
#  5. Data path slow-down (own code, not Nanotron's): nanotron.dataloader.dummy_infinite_data_generator
#     is wrapped so that the generator sleeps NT_SLOW_SECONDS (0.5) before yielding its
#     NT_SLOW_BATCH-th (13th) micro-batch, i.e. inside step 13's next(dataloader) call (grad_accum=1).
import os

if os.environ.get("NT_CPU_SHIM") == "1":
    os.environ.setdefault("TORCHDYNAMO_DISABLE", "1")
    import contextlib
    import functools
    import importlib.abc
    import importlib.machinery
    import math
    import sys
    import time
    import types

    import torch
    import torch.distributed as dist
    import torch.nn.functional as F

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

    class _CPUGenerator(torch.Generator):
        # torch.Generator(device="cuda") -> CPU generator (still an instance of torch.Generator)
        def __new__(cls, device="cpu"):
            return super().__new__(cls, device=_map_dev(device) if device is not None else "cpu")

        def __init__(self, device="cpu"):
            pass

    torch.Generator = _CPUGenerator

    # --- torch.cuda API: report devices and make its calls CPU no-ops ----------------
    cuda = torch.cuda
    _ndev = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    cuda.is_available = lambda: True
    cuda.device_count = lambda: _ndev
    cuda.current_device = lambda: int(os.environ.get("LOCAL_RANK", "0"))
    cuda.set_device = lambda *a, **k: None
    cuda.synchronize = lambda *a, **k: None
    cuda.empty_cache = lambda *a, **k: None
    cuda.is_initialized = lambda: True
    cuda.get_device_name = lambda *a, **k: "cpu (NT_CPU_SHIM)"
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
            e = _Event()
            e.record()
            return e

    cuda.is_current_stream_capturing = lambda: False
    torch.accelerator.current_accelerator = lambda *a, **k: None
    cuda.Stream = _Stream
    cuda.Event = _Event
    cuda.current_stream = lambda *a, **k: _Stream()
    cuda.default_stream = lambda *a, **k: _Stream()
    cuda.stream = lambda *a, **k: contextlib.nullcontext()
    cuda.device = lambda *a, **k: contextlib.nullcontext()

    # --- torch.distributed: NCCL requests become gloo ---------------------------------
    def _map_backend(b):
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

    # gloo has no native ReduceOp.AVG: torch emulates it with an in-place divide after the
    # collective, which autograd refuses on leaf parameters (nanotron all-reduces its freshly
    # initialised nn.Parameters with AVG across DP). Do SUM, then divide by the group size,
    # all under torch.no_grad() (c10d collectives are not autograd ops anyway).
    _orig_all_reduce = dist.all_reduce

    def _all_reduce(tensor, op=dist.ReduceOp.SUM, group=None, async_op=False):
        with torch.no_grad():
            if op == dist.ReduceOp.AVG:
                work = _orig_all_reduce(tensor, op=dist.ReduceOp.SUM, group=group, async_op=async_op)
                if work is not None:
                    work.wait()
                tensor.div_(dist.get_world_size(group))
                return work
            return _orig_all_reduce(tensor, op=op, group=group, async_op=async_op)

    dist.all_reduce = _all_reduce

    # --- stand-in flash_attn package ----------------------------------------------------
    def _mod(name, **attrs):
        m = types.ModuleType(name)
        m.__file__ = __file__
        m.__path__ = []  # make it a package so submodules import
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m

    def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                               dropout_p=0.0, softmax_scale=None, causal=False, return_attn_probs=False,
                               **kwargs):
        assert not return_attn_probs, "CPU stand-in does not return attention probabilities"
        scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(q.shape[-1])
        n_rep = q.shape[1] // k.shape[1]  # GQA/MQA: repeat kv heads
        outs = []
        cq, ck = cu_seqlens_q.tolist(), cu_seqlens_k.tolist()
        for i in range(len(cq) - 1):
            qi = q[cq[i]:cq[i + 1]].transpose(0, 1)  # [h, Lq, d]
            ki = k[ck[i]:ck[i + 1]].transpose(0, 1)
            vi = v[ck[i]:ck[i + 1]].transpose(0, 1)
            if n_rep > 1:
                ki = ki.repeat_interleave(n_rep, dim=0)
                vi = vi.repeat_interleave(n_rep, dim=0)
            oi = F.scaled_dot_product_attention(qi, ki, vi, dropout_p=dropout_p, is_causal=causal, scale=scale)
            outs.append(oi.transpose(0, 1))
        return torch.cat(outs, dim=0)

    def flash_attn_with_kvcache(*a, **k):
        raise NotImplementedError("flash_attn_with_kvcache: inference path, not provided by the CPU shim")

    def unpad_input(hidden_states, attention_mask):
        seqlens = attention_mask.sum(dim=-1, dtype=torch.int32)
        indices = torch.nonzero(attention_mask.flatten(), as_tuple=False).flatten()
        max_seqlen = int(seqlens.max().item())
        cu_seqlens = F.pad(torch.cumsum(seqlens, dim=0, dtype=torch.int32), (1, 0))
        flat = hidden_states.reshape(-1, *hidden_states.shape[2:])
        return flat.index_select(0, indices), indices, cu_seqlens, max_seqlen

    def pad_input(hidden_states, indices, batch, seqlen):
        out = torch.zeros(batch * seqlen, *hidden_states.shape[1:], dtype=hidden_states.dtype,
                          device=hidden_states.device)
        out[indices] = hidden_states
        return out.view(batch, seqlen, *hidden_states.shape[1:])

    def _rotate(x, cos, sin, interleaved):
        # x: [b, s, h, d]; cos/sin: [s, d/2] fp32
        xf = x.float()
        c = cos[None, :, None, :]
        s_ = sin[None, :, None, :]
        if interleaved:
            x0, x1 = xf[..., 0::2], xf[..., 1::2]
            out = torch.stack((x0 * c - x1 * s_, x0 * s_ + x1 * c), dim=-1).flatten(-2)
        else:
            half = xf.shape[-1] // 2
            x0, x1 = xf[..., :half], xf[..., half:]
            out = torch.cat((x0 * c - x1 * s_, x0 * s_ + x1 * c), dim=-1)
        return out.to(x.dtype)

    class RotaryEmbedding(torch.nn.Module):
        def __init__(self, dim, base=10000.0, interleaved=False, scale_base=None, pos_idx_in_fp32=True,
                     device=None):
            super().__init__()
            assert scale_base is None, "CPU stand-in: xPos scale_base not supported"
            self.dim, self.base, self.interleaved = dim, float(base), interleaved

        def _cos_sin(self, seqlen, offset):
            inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2, dtype=torch.float32) / self.dim))
            t = torch.arange(offset, offset + seqlen, dtype=torch.float32)
            freqs = torch.outer(t, inv_freq)
            return torch.cos(freqs), torch.sin(freqs)

        def forward(self, qkv, kv=None, seqlen_offset=0, max_seqlen=None):
            if not isinstance(seqlen_offset, int):
                raise NotImplementedError("CPU stand-in: tensor seqlen_offset not supported")
            seqlen = qkv.shape[1]
            cos, sin = self._cos_sin(seqlen, seqlen_offset)
            if kv is None:  # qkv: [b, s, 3, h, d]
                q = _rotate(qkv[:, :, 0], cos, sin, self.interleaved)
                k = _rotate(qkv[:, :, 1], cos, sin, self.interleaved)
                return torch.stack((q, k, qkv[:, :, 2]), dim=2)
            q = _rotate(qkv, cos, sin, self.interleaved)  # q: [b, s, h, d]
            k = _rotate(kv[:, :, 0], cos, sin, self.interleaved)  # kv: [b, s, 2, h, d]
            return q, torch.stack((k, kv[:, :, 1]), dim=2)

    def layer_norm_fn(x, weight, bias, residual=None, eps=1e-6, dropout_p=0.0, prenorm=False,
                      residual_in_fp32=False, is_rms_norm=False, return_dropout_mask=False, **kwargs):
        assert not return_dropout_mask, "CPU stand-in: return_dropout_mask not supported"
        in_dtype = x.dtype
        if dropout_p > 0.0:
            x = F.dropout(x, p=dropout_p)
        if residual is not None:
            x = x + residual
        res_out = x.float() if residual_in_fp32 else x
        xf = x.float()
        if is_rms_norm:
            y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * weight.float()
            if bias is not None:
                y = y + bias.float()
        else:
            y = F.layer_norm(xf, (xf.shape[-1],), weight.float(), None if bias is None else bias.float(), eps)
        y = y.to(in_dtype)
        return (y, res_out) if prenorm else y

    _mod("flash_attn", __version__="2.5.0+cpushim")
    _mod("flash_attn.bert_padding", unpad_input=unpad_input, pad_input=pad_input)
    _mod("flash_attn.flash_attn_interface", flash_attn_varlen_func=flash_attn_varlen_func,
         flash_attn_with_kvcache=flash_attn_with_kvcache)
    _mod("flash_attn.layers")
    _mod("flash_attn.layers.rotary", RotaryEmbedding=RotaryEmbedding)
    _mod("flash_attn.ops")
    _mod("flash_attn.ops.triton")
    _mod("flash_attn.ops.triton.layer_norm", layer_norm_fn=layer_norm_fn)
    sys.modules["flash_attn"].bert_padding = sys.modules["flash_attn.bert_padding"]
    sys.modules["flash_attn"].flash_attn_varlen_func = flash_attn_varlen_func
    sys.modules["flash_attn"].flash_attn_with_kvcache = flash_attn_with_kvcache

    # --- slow step in the data path: wrap nanotron.dataloader.dummy_infinite_data_generator ---
    _SLOW_BATCH = int(os.environ.get("NT_SLOW_BATCH", "13"))
    _SLOW_SECONDS = float(os.environ.get("NT_SLOW_SECONDS", "0.5"))

    def _wrap_dummy(orig):
        @functools.wraps(orig)
        def wrapped(*args, **kwargs):
            gen_fn = orig(*args, **kwargs)

            def data_generator():
                for i, batch in enumerate(gen_fn(), start=1):
                    if i == _SLOW_BATCH:
                        time.sleep(_SLOW_SECONDS)
                    yield batch

            return data_generator

        return wrapped

    def _patch_dataloader(module):
        module.dummy_infinite_data_generator = _wrap_dummy(module.dummy_infinite_data_generator)

    def _patch_llama(module):
        # nanotron.models.llama.RotaryEmbedding.init_rotary_embeddings asserts its buffer is on
        # "cuda". Same computation (freqs_cis = view_as_real(polar(1, t * theta^(-2j/dim)))),
        # on the CPU, without that assert. This buffer feeds only the inference (kv-cache) path;
        # training uses flash_attn's RotaryEmbedding (the stand-in above).
        RE = module.RotaryEmbedding

        def init_rotary_embeddings(self):
            if self._initialized_buffer is True:
                return
            self.register_buffer(
                "freqs_cis", torch.empty(self.end, self.dim // 2, 2, dtype=torch.float), persistent=False
            )
            freqs = 1.0 / (self.theta ** (torch.arange(0, self.dim, 2, dtype=torch.float)[: (self.dim // 2)] / self.dim))
            t = torch.arange(self.end)
            freqs = torch.outer(t, freqs).float()
            self.freqs_cis.copy_(torch.view_as_real(torch.polar(torch.ones_like(freqs), freqs)))
            self._initialized_buffer = True

        RE.init_rotary_embeddings = init_rotary_embeddings

    _POST_IMPORT = {"nanotron.dataloader": _patch_dataloader, "nanotron.models.llama": _patch_llama}

    class _PostImport(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path, target=None):
            patch = _POST_IMPORT.get(fullname)
            if patch is None:
                return None
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is None or spec.loader is None:
                return None
            orig_exec = spec.loader.exec_module

            def exec_module(module):
                orig_exec(module)
                patch(module)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _PostImport())
