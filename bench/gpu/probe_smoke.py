"""The GPU-specific paths of the probes driven directly on a GPU (no Kafka, no store): the NVML/GPM
sampler for 2.5 s of bf16 matmuls, then the CUPTI tier over a small conv loop, with the cost of
ingesting its real activity records.  Output of one H200 run: h200-smoke-run2.txt."""
import json, os, time, traceback
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "avail", torch.cuda.is_available(), flush=True)
out = {}
# --- NVML / GPM through the probe
try:
    from ridgescope.probes import gpu
    sent = []
    probe = gpu.GpuProbe(os.getpid(), lambda rank, payload, ts: sent.append((rank, payload)),
                         interval_s=0.1, say=lambda m: print("gpu probe:", m, flush=True))
    assert probe.open(), "probe did not open"
    for d in probe.nvml.devices:
        print("device", d.uuid, "gpm", d.gpm, flush=True)
    probe.start()
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    t = time.time()
    while time.time() - t < 2.5:
        for _ in range(20):
            b = a @ a
        torch.cuda.synchronize()
    probe.stop()
    print("gpu_samples", len(sent), flush=True)
    if sent:
        rank, payload = sent[-1]
        print("last sample rank", rank, json.dumps(payload, default=str)[:3000], flush=True)
    out["gpu_samples"] = len(sent)
except Exception:
    traceback.print_exc()
# --- CUPTI tier
try:
    from cupti import cupti
    from ridgescope.probes import cuda_trace
    emitted = []
    tier = cuda_trace.CuptiTier(cupti, emit=lambda k, p, ts: emitted.append((k, p)),
                                flush_period_s=cuda_trace.FLUSH_PERIOD_S)
    cost = []
    orig = tier._buffer_completed
    def timed(acts):
        t = time.perf_counter_ns(); orig(acts); spent = time.perf_counter_ns() - t
        n = len(acts)
        if not cost:
            t = time.perf_counter_ns(); _ = [(r.kind, r.start, r.end) for r in acts]
            a1 = time.perf_counter_ns() - t
            t = time.perf_counter_ns(); _ = [getattr(r, "name", None) for r in acts]
            a2 = time.perf_counter_ns() - t
            print("first buffer", n, "records; kind/start/end ns/rec", a1 / max(n, 1),
                  "name ns/rec", a2 / max(n, 1), "types", sorted({type(r).__name__ for r in acts}), flush=True)
        cost.append((spent, n))
    tier._buffer_completed = timed
    print("arm", tier.arm(), tier.stepped_aside, flush=True)
    x = torch.randn(64, 3, 64, 64).pin_memory()
    xp = torch.randn(64, 3, 64, 64)
    conv = torch.nn.Conv2d(3, 64, 3, padding=1).cuda()
    torch.cuda.synchronize()
    windows = []
    opt = torch.optim.AdamW(conv.parameters(), lr=1e-3)
    for step in range(40):
        y = conv(x.to("cuda", non_blocking=True)); y.sum().backward(); opt.step(); opt.zero_grad()
    torch.cuda.synchronize(); time.sleep(0.1)
    for step in range(6):
        t0 = time.time_ns()
        xg = x.to("cuda", non_blocking=True)
        xg2 = xp.to("cuda")
        for _ in range(30):
            y = conv(xg)
        y.sum().item()
        torch.cuda.synchronize()
        t1 = time.time_ns()
        windows.append((t0, t1))
    time.sleep(0.2)
    for i, (t0, t1) in enumerate(windows):
        w = tier.collect(t0, t1)
        print("window", i, "ms", (t1 - t0) / 1e6, "busy_ms", {k: v / 1e6 for k, v in w["busy_ns"].items()},
              "spans", len(w["spans"]), "counters", w["counters"], "dropped", w["dropped"], flush=True)
    total_ns = sum(c for c, _ in cost); total_n = sum(n for _, n in cost)
    print("ingest", len(cost), "buffers", total_n, "records", total_ns / max(total_n, 1), "ns/record",
          "attach median us", sorted(tier.attach_cost_ns)[len(tier.attach_cost_ns) // 2] / 1e3 if tier.attach_cost_ns else None, flush=True)
    print("records", tier.records, "offset_ns", tier.offset_ns, "sync_flushes", tier.sync_flushes, flush=True)
    tier.close()
except Exception:
    traceback.print_exc()
