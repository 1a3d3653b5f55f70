"""Concrete values extracted from the real logs in tests/data/corpus (sources in SOURCES.tsv)."""
from __future__ import annotations

import csv

from pytest import approx

from .conftest import CORPUS


def by_step(recs, kind="progress", framework=None, key="step_time_ms"):
    return {r["step"]: r for r in recs if r["kind"] == kind and (framework is None or r["framework"] == framework)
            and (key is None or key in r)}


def errors(recs, error):
    return [r for r in recs if r["kind"] == "error" and r["error"] == error]


def test_every_corpus_log_is_listed_and_covered():
    rows = list(csv.DictReader(open(CORPUS / "SOURCES.tsv", encoding="utf-8"), delimiter="\t"))
    listed = {r["path"] for r in rows}
    on_disk = {str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*.log")}
    assert listed == on_disk
    assert all(r["source_url"].startswith("https://github.com/") for r in rows)
    tested = set(TESTED)
    assert on_disk <= tested, on_disk - tested


TESTED = []


def covers(path):
    def deco(fn):
        TESTED.append(path)
        return fn
    return deco


# ------------------------------------------------------------------ Megatron
@covers("megatron/megatron-deepspeed_gpt3-125M_tokendrop_8gpu_timers_nccl-info.log")
def test_megatron_ds_tokendrop(parse_log):
    recs = parse_log("megatron/megatron-deepspeed_gpt3-125M_tokendrop_8gpu_timers_nccl-info.log")
    prog = by_step(recs, framework="megatron")
    assert len(prog) == 213
    assert prog[10]["step_time_ms"] == 849.6            # slow first logged iteration
    assert prog[10]["loss"] == approx(10.69056)
    assert prog[10]["total_steps"] == 1716613
    assert prog[20]["step_time_ms"] == 473.2
    assert prog[20]["lr"] == approx(1.121e-06)
    assert prog[20]["consumed_tokens"] == 10485760
    assert max(r["step_time_ms"] for s, r in prog.items() if s > 10) > 1200   # the later spikes
    timing = by_step(recs, kind="timing", framework="megatron", key="timers_ms")
    t = timing[10]
    assert t["timers_ms"]["batch-generator"] == 42.49
    assert t["lanes_ms"]["input"] == 42.49
    assert t["lanes_ms"]["compute"] == approx(340.72 + 176.25 + 313.71)
    assert t["lanes_ms"]["communication"] == approx(0.01)
    ck = [r for r in recs if r["kind"] == "checkpoint" and r.get("duration_ms")]
    assert ck and ck[0]["action"] == "load" and ck[0]["duration_ms"] == 1738.10
    inits = [r for r in recs if r["kind"] == "nccl_init" and r["nranks"] == 8]
    assert {r["comm_rank"] for r in inits} == set(range(8))
    assert len(inits) == 16                      # two 8-rank communicators
    assert inits[0]["version"] == "2.10.3" and inits[0]["channels"] == 24
    ev = [r for r in recs if r["kind"] == "eval"]
    assert ev[0]["step"] == 100 and ev[0]["loss"] == approx(9.082616)


@covers("megatron/megatron-deepspeed_gpt3-125M_random-ltd_8gpu_interleaved.log")
def test_megatron_ds_random_ltd_glued_lines(parse_log):
    recs = parse_log("megatron/megatron-deepspeed_gpt3-125M_random-ltd_8gpu_interleaved.log")
    prog = by_step(recs, framework="megatron")
    assert len(prog) == 60
    assert prog[10]["step_time_ms"] == 810.1 and prog[10]["reserve_length"] == 256
    assert prog[20]["loss"] == approx(10.74999)
    # '... setup: 6671.13' glued with no newline still yields the load-checkpoint timing
    assert any(r["kind"] == "checkpoint" and r.get("duration_ms") == 1675.24 for r in recs)
    assert len(by_step(recs, kind="timing", framework="megatron", key="lanes_ms")) == 60


@covers("megatron/bigscience_megatron-gpt2_16node-64gpu_tp4-pp16_slurm_timers.log")
def test_megatron_bigscience_pipeline_timers(parse_log):
    recs = parse_log("megatron/bigscience_megatron-gpt2_16node-64gpu_tp4-pp16_slurm_timers.log")
    prog = by_step(recs, framework="megatron")
    assert sorted(prog) == list(range(10, 100, 10))
    assert prog[10]["step_time_ms"] == 5837.9             # slow first iteration
    assert prog[10]["skipped_iterations"] == 10
    assert prog[20]["step_time_ms"] == 2711.1 and prog[20]["loss"] == approx(12.49319)
    assert prog[30]["grad_norm"] == approx(9.804)
    t = by_step(recs, kind="timing", key="lanes_ms")[10]
    assert t["timers_ms"]["forward-recv"] == 2365.31
    assert t["timers_ms"]["backward-embedding-all-reduce"] == 2398.39
    # communication dominates: p2p recv/send + all-reduces
    assert t["lanes_ms"]["communication"] == approx(2365.31 + 63.98 + 152.47 + 24.39 + 2398.39)
    assert t["lanes_ms"]["communication"] > t["lanes_ms"]["compute"]
    assert t["lanes_ms"]["input"] == 3.05
    # the run was cancelled after iteration 90: Slurm's step, then its job, on the first node
    cancels = [r for r in recs if r["kind"] == "error" and r["error"] == "cancelled"]
    assert [(r["slurm_step"], r["host"], r["at"], r.get("reason"), r["rank"], r["step"]) for r in cancels] == [
        ("1809577.0", "r6i5n1", "2021-05-23T08:46:02", None, None, 90),
        ("1809577", "r6i5n1", "2021-05-23T08:46:02", None, None, 90)]


# ------------------------------------------------------------------ NCCL
@covers("nccl/megatron-deepspeed_8gpu_azure-ib_nccl-debug-info.log")
def test_nccl_azure_init(parse_log):
    recs = parse_log("nccl/megatron-deepspeed_8gpu_azure-ib_nccl-debug-info.log")
    inits = [r for r in recs if r["kind"] == "nccl_init"]
    world = [r for r in inits if r["nranks"] == 8]
    assert {r["comm_rank"] for r in world} == set(range(8))
    r5 = next(r for r in world if r["comm_rank"] == 5)
    assert r5["device"] == 5 and r5["bus_id"] == "c00000" and r5["host"] == "azwus2f200000DQ"
    assert r5["version"] == "2.10.3" and r5["channels"] == 24 and "P2P" in r5["transports"]
    prog = by_step(recs, framework="megatron")
    assert len(prog) == 47 and prog[10]["step_time_ms"] == 1001.5


@covers("nccl/bigscience_megatron-gpt2_16node-64gpu_nccl-debug-info_slurm.log")
def test_nccl_bigscience_multinode(parse_log):
    recs = parse_log("nccl/bigscience_megatron-gpt2_16node-64gpu_nccl-debug-info_slurm.log")
    world = [r for r in recs if r["kind"] == "nccl_init" and r["nranks"] == 64]
    assert {r["comm_rank"] for r in world} == set(range(64))
    assert len({r["host"] for r in world}) == 16
    r5 = next(r for r in world if r["comm_rank"] == 5)
    assert r5["host"] == "r7i1n3" and r5["device"] == 1 and r5["version"] == "2.7.8"
    assert "NET" in r5["transports"]
    prog = by_step(recs, framework="megatron")
    assert prog[1]["step_time_ms"] == 150891.7
    # and ended at its time limit
    cancels = [r for r in recs if r["kind"] == "error" and r["error"] == "cancelled"]
    assert [(r["slurm_step"], r["reason"], r["at"]) for r in cancels] == [
        ("1999618", "time limit", "2021-05-27T21:52:36"), ("1999618.0", "time limit", "2021-05-27T21:52:36")]


@covers("nccl/nccl-tests_allreduce_2xA100-nvlink_debug-all_coll.log")
def test_nccl_coll_lines(parse_log):
    recs = parse_log("nccl/nccl-tests_allreduce_2xA100-nvlink_debug-all_coll.log")
    coll = [r for r in recs if r["kind"] == "nccl_coll"]
    assert len(coll) == 990
    c0 = coll[0]
    assert (c0["op"], c0["opCount"], c0["count"], c0["datatype"], c0["nranks"]) == ("AllReduce", 0, 2097152, "float32", 2)
    assert c0["comm"] == "0x55b6aa64a990" and c0["reduce_op"] == "sum"
    comms = {r["comm"] for r in coll}
    assert len(comms) == 2                       # two communicators in one process
    assert {r["opCount"] for r in coll} == {0}   # nccl-tests: a fresh op count per call/comm here
    assert {r["device"] for r in coll} == {0, 1}
    assert all(r["op"] == "AllReduce" for r in coll)
    # a collective's rank is its communicator's (one thread calls for both devices: the line's
    # `[N]` is no rank); a line that nccl-tests' table row runs into (`... -1mew0:64904:..`)
    # names no host that joined a communicator, and gets none
    placed = {(r["comm"], r["rank"]) for r in coll if r["host"] == "mew0"}
    assert placed == {("0x55b6aa64a990", 0), ("0x55b6aa754530", 1)}
    assert {r["rank"] for r in coll if r["host"] != "mew0"} == {None}
    # NCCL 2.27: `ncclCommInitRankConfig comm ... - Init COMPLETE`, then `Init timings - ...`
    inits = [r for r in recs if r["kind"] == "nccl_init" and "phase" not in r]
    assert sorted((r["comm_rank"], r["device"], r["comm"]) for r in inits) == [
        (0, 0, "0x55b6aa64a990"), (1, 1, "0x55b6aa754530")]
    assert {(r["version"], r["comm_id"]) for r in inits} == {("2.27.7", "0x54fe282d32a87d85")}
    timings = [r for r in recs if r.get("phase") == "timings"]
    assert [(r["comm_rank"], r["init_s"], r["init_phases_s"]["kernels"]) for r in timings] == [
        (1, 0.67, 0.57), (0, 0.67, 0.57)]


@covers("nccl/raddet_2gpu_nccl-init_interleaved.log")
def test_nccl_torn_lines(parse_log, parse_stats):
    recs = parse_log("nccl/raddet_2gpu_nccl-init_interleaved.log")
    inits = sorted((r["comm_rank"], r["nranks"], r["device"]) for r in recs if r["kind"] == "nccl_init")
    assert inits == [(0, 2, 0), (1, 2, 1)]
    assert parse_stats("nccl/raddet_2gpu_nccl-init_interleaved.log")["lines"] == 17


@covers("nccl/torchtitan_qwen3-14b_8xgpu_watchdog-timeout-allgather_childfailed.log")
def test_nccl_watchdog_timeout(parse_log):
    recs = parse_log("nccl/torchtitan_qwen3-14b_8xgpu_watchdog-timeout-allgather_childfailed.log")
    to = errors(recs, "nccl_timeout")
    assert len(to) == 1                          # repeated in the terminate message: still one event
    t = to[0]
    assert t["rank"] == 0 and t["seq"] == 3 and t["op"] == "_ALLGATHER_BASE"
    assert t["timeout_ms"] == 300000 and t["ran_ms"] == 300051
    assert not [r for r in recs if r["kind"] == "progress"]      # hung before step 1
    tb = errors(recs, "traceback")
    assert len(tb) == 1 and tb[0]["exception"].endswith("ChildFailedError")
    assert errors(recs, "child_failed")[0]["exitcode"] == -6
    # rank 0 aborted on the watchdog's exception: the crash says what it was
    abort = next(r for r in errors(recs, "crash") if r.get("exception") == "c10::DistBackendError")
    assert abort["rank"] == 0 and "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3" in abort["what"]
    # the dump signal on the rank that timed out: it had enqueued collective 3 and completed 2
    (dump,) = errors(recs, "nccl_dump")
    assert (dump["rank"], dump["timed_out_rank"], dump["last_enqueued"], dump["last_completed"]) == (0, 0, 3, 2)
    # torchrun's report: rank 1 ended first (SIGABRT), then the other seven
    (report,) = [r for r in errors(recs, "child_failed") if r.get("launcher") == "torchrun"]
    assert (report["rank"], report["signal"], report["at"]) == (1, "SIGABRT", "2026-05-20_06:32:05")
    assert report["failed_ranks"] == list(range(8)) and report["host"] == "devgpu020.snb3.facebook.com"


# ------------------------------------------------------------------ DeepSpeed
@covers("deepspeed/dschat_step1_sft_opt-1.3b_16proc.log")
def test_deepspeed_sft_throughput(parse_log):
    recs = parse_log("deepspeed/dschat_step1_sft_opt-1.3b_16proc.log")
    tp = by_step(recs, key="samples_per_s")
    assert tp[10]["samples_per_s"] == approx(171.97903593624417)
    assert tp[10]["mem_gb"] == 3.96 and tp[10]["max_mem_gb"] == 22.95 and tp[10]["epoch"] == 0
    steps = by_step(recs, key="skipped_steps")
    assert steps[10]["skipped_steps"] == 6 and steps[10]["lr"] == approx(9.649992967150629e-06)
    assert steps[10]["rank"] == 0
    ppl = [r for r in recs if r["kind"] == "eval" and "ppl" in r]
    assert ppl[0]["ppl"] == approx(4998.29638671875) and len(ppl) == 17     # epochs 0..16


@covers("deepspeed/dschat_step1_sft_opt-1.3b_16proc.log")
def test_deepspeed_zero_overflows_are_the_steps_it_skipped(parse_log):
    """Each `OVERFLOW! Rank 0 Skipping step` is one skipped step: at every `step=N, skipped=K`
    line, K is the overflows read before it (139 by the log's end).  While the hysteresis lasts
    the scale stays."""
    recs = parse_log("deepspeed/dschat_step1_sft_opt-1.3b_16proc.log")
    seen, checked = 0, 0
    for r in recs:
        if r.get("error") == "loss_scale_overflow":
            seen += 1
        elif r.get("skipped_steps") is not None:
            assert r["skipped_steps"] == seen, r
            checked += 1
    assert seen == 139 and checked == 736
    first, second = errors(recs, "loss_scale_overflow")[:2]
    assert (first["rank"], first["severity"], first["loss_scale"], first["new_loss_scale"]) == (0, "warning", 65536, 65536)
    assert (first["hysteresis"], first["hysteresis_left"]) == (2, 1)
    assert (second["loss_scale"], second["new_loss_scale"]) == (65536, 32768)


@covers("deepspeed/dschat_step2_dpo_opt-350m_8gpu_rankprefix.log")
def test_deepspeed_dpo_latency_lines(parse_log):
    recs = parse_log("deepspeed/dschat_step2_dpo_opt-350m_8gpu_rankprefix.log")
    lat = [r for r in recs if r.get("step_inferred")]
    # 4708 micro-batches ("Total Micro Batches 4708"), two an optimizer step (the printed config's
    # gradient_accumulation_steps): one record a step, timed by both (0.27 s + 0.49 s)
    assert len(lat) == 2354 and [r["step"] for r in lat] == list(range(1, 2355))
    assert lat[0]["step_time_ms"] == 760.0 and lat[0]["micro_batches"] == 2
    assert lat[0]["samples_per_s"] == approx((7.28 * 0.27 + 4.06 * 0.49) / 0.76, abs=1e-6)
    assert lat[0]["tflops"] == approx((1.02 * 0.27 + 0.57 * 0.49) / 0.76, abs=1e-6)
    # DeepSpeed's own throughput line for global step 10 comes before that step's record
    steps = [r["step"] for r in recs if r["kind"] == "progress" and r["rank"] is None]
    assert steps == sorted(steps)
    # rank-prefixed torch warnings from all 8 ranks are attributed, never crash
    assert {r["step"] for r in recs if r.get("skipped_steps") is not None} >= {0}


@covers("deepspeed/dschat_step2_reward_opt-350m_16proc.log")
def test_deepspeed_reward(parse_log):
    recs = parse_log("deepspeed/dschat_step2_reward_opt-350m_16proc.log")
    tp = by_step(recs, key="samples_per_s")
    assert tp[10]["samples_per_s"] == approx(265.4349789974132) and tp[10]["max_mem_gb"] == 12.81
    ev = [r for r in recs if r["kind"] == "eval" and "accuracy" in r]
    assert ev and ev[0]["chosen_score"] == approx(2.8115079402923584) and ev[0]["accuracy"] == approx(0.4924241304397583)
    # the fused fp16 optimizer: each of the 16 ranks prints `Grad overflow on iteration N` and its
    # new scale; rank 0's `Overflow detected. Skipping step.` after them is the same overflow
    overflows = errors(recs, "loss_scale_overflow")
    assert len(overflows) == 16 * 20 and len({r["iteration"] for r in overflows}) == 20
    assert (overflows[0]["iteration"], overflows[0]["loss_scale"], overflows[0]["new_loss_scale"]) == (0, 65536, 32768)
    skipped = [r["skipped_steps"] for r in recs if r.get("skipped_steps") is not None]
    assert skipped[-1] == 20


@covers("deepspeed/dschat_step3_rlhf_opt-1.3b_16proc.log")
def test_deepspeed_rlhf_breakdown(parse_log):
    recs = parse_log("deepspeed/dschat_step3_rlhf_opt-1.3b_16proc.log")
    t = by_step(recs, kind="timing")
    assert t[1]["step_time_ms"] == 7990.0
    assert t[1]["timers_ms"]["generate_time"] == 5260.0 and t[1]["timers_ms"]["training_time"] == 2520.0
    assert t[2]["step_time_ms"] == 3730.0
    p = by_step(recs, key="loss")
    assert p[1]["loss"] == approx(0.2099609375) and p[1]["losses"]["cri_loss"] == approx(0.12042236328125)
    assert "ppo_ep" not in p[1]["losses"]      # the PPO epoch is no loss


@covers("deepspeed/dse_vit-cifar_random-ltd_1gpu_imagenet-style-steps.log")
def test_deepspeed_vit_imagenet_meters(parse_log):
    recs = parse_log("deepspeed/dse_vit-cifar_random-ltd_1gpu_imagenet-style-steps.log")
    meters = {r["step"]: r for r in recs if r.get("iters_per_epoch") == 391}
    assert meters[1]["step_time_ms"] == 4268.0 and meters[1]["loss"] == approx(3.436)
    assert len(meters) == 14
    tp = by_step(recs, key="samples_per_s")
    assert tp[200]["samples_per_s"] == approx(82.74966845933933) and tp[200]["max_mem_gb"] == 7.0


@covers("deepspeed/dschat_llama7b_16proc_crash-at-eval_sigkill.log")
def test_deepspeed_crash_tracebacks(parse_log):
    recs = parse_log("deepspeed/dschat_llama7b_16proc_crash-at-eval_sigkill.log")
    tb = errors(recs, "traceback")
    assert len(tb) == 16                                   # 16 interleaved tracebacks, one event each
    assert all(r["exception"] == "RuntimeError" for r in tb)
    assert {r["message"].split("devices, ")[1].split(" and")[0] for r in tb} == {f"cuda:{i}" for i in range(16)}
    assert len(errors(recs, "killed")) == 16
    assert not [r for r in recs if r["kind"] == "checkpoint"]   # shard-loading bars are not checkpoints
    assert [r["step"] for r in recs if r["kind"] == "progress"] == [0]


# ------------------------------------------------------------------ HF Trainer
@covers("hf_trainer/ezpz_hf-trainer_llama3.2-1b_aurora-xpu_24rank_fsdp.log")
def test_hf_trainer_bar_and_dicts(parse_log):
    recs = parse_log("hf_trainer/ezpz_hf-trainer_llama3.2-1b_aurora-xpu_24rank_fsdp.log")
    prog = {r["step"]: r for r in recs if r["kind"] == "progress" and r["step"] is not None}
    assert sorted(prog) == list(range(1, 12)) + list(range(96, 101))   # steps 12-95 clipped in source
    assert prog[1]["loss"] == 2.5586 and prog[1]["it_per_s"] == approx(1 / 27.20, rel=1e-3)  # slow first step
    assert prog[2]["loss"] == 2.8427 and prog[2]["grad_norm"] == approx(30.46836280822754)
    assert prog[100]["loss"] == 2.3369 and prog[100]["total_steps"] == 100
    assert prog[100]["tokens_per_s"] == approx(50512.468)
    # one record per step, not per redraw
    assert len([r for r in recs if r["kind"] == "progress" and r["step"] == 1]) == 1
    ck = [r for r in recs if r["kind"] == "checkpoint"]
    assert ck[0]["path"] == "outputs/ezpz.hf_trainer/2025-12-31-131106/checkpoint-100" and ck[0]["step"] == 100
    summary = [r for r in recs if r.get("summary")]
    assert summary[0]["duration_ms"] == approx(425429.5)


@covers("hf_trainer/bigscience_hf-trainer-deepspeed-zero3_gpt2_16node_slurm_cr-progress.log")
def test_hf_trainer_carriage_return_bars(parse_log):
    recs = parse_log("hf_trainer/bigscience_hf-trainer-deepspeed-zero3_gpt2_16node_slurm_cr-progress.log")
    bars = [r for r in recs if r["framework"] == "hf_trainer" and r["kind"] == "progress" and not r.get("summary")]
    # 16 ranks x 4 steps, unprefixed; each \r-joined line yields steps 1..4 once
    assert len(bars) == 64
    assert [r["step"] for r in bars[:4]] == [1, 2, 3, 4]
    assert bars[0]["it_per_s"] == approx(1 / 225.28, rel=1e-3) and bars[0]["total_steps"] == 4
    assert all(r["it_per_s"] < 1 / 200 for r in bars)          # ~220 s/it steps
    summ = [r for r in recs if r.get("summary")]
    assert len(summ) == 16 and summ[0]["duration_ms"] == approx(871787.0)
    assert any(r["kind"] == "checkpoint" and r["path"] == "output_dir" for r in recs)


# ------------------------------------------------------------------ Lightning / NeMo
@covers("lightning/nemo-ptl_qwen3-30b-moe_16xB200_gke_progress-bar.log")
def test_lightning_nemo_bar_and_dll(parse_log):
    recs = parse_log("lightning/nemo-ptl_qwen3-30b-moe_16xB200_gke_progress-bar.log")
    prog = by_step(recs)
    assert sorted(prog) == list(range(1, 21))                 # one per step despite double redraws
    assert prog[1]["step_time_ms"] == approx(22710.954189, abs=1e-3)
    assert prog[1]["loss"] == approx(12.339681625366211) and prog[1]["total_steps"] == 20
    assert prog[11]["step_time_ms"] == approx(3926.726389, abs=1e-3)
    assert max(prog.values(), key=lambda r: r["step_time_ms"])["step"] == 1


@covers("torchtitan_nemo_nanogpt_etc/nemo_qwen3-30b-moe_32xB200_gke_ptl-progress_dllogger.log")
def test_nemo_dllogger(parse_log):
    recs = parse_log("torchtitan_nemo_nanogpt_etc/nemo_qwen3-30b-moe_32xB200_gke_ptl-progress_dllogger.log")
    prog = by_step(recs)
    assert sorted(prog) == list(range(1, 21))
    assert prog[1]["step_time_ms"] == approx(20485.144138, abs=1e-3)          # slow first step
    assert prog[11]["step_time_ms"] == approx(2019.874763, abs=1e-3)
    assert prog[1]["framework"] == "nemo" and prog[1]["timers_ms"]["train_backward"] == approx(0.041723, abs=1e-5)


# ------------------------------------------------------------------ torchtitan
@covers("torchtitan_nemo_nanogpt_etc/torchtitan_qwen3-14b_8xgpu_rank0_slow-step10_ansi.log")
def test_torchtitan_ansi_slow_last_step(parse_log):
    recs = parse_log("torchtitan_nemo_nanogpt_etc/torchtitan_qwen3-14b_8xgpu_rank0_slow-step10_ansi.log")
    prog = by_step(recs, key="tokens_per_s_per_gpu")
    assert sorted(prog) == list(range(1, 11))
    assert all(r["rank"] == 0 and r["total_steps"] == 10 for r in prog.values())
    assert prog[2]["loss"] == approx(10.8611) and prog[2]["tokens_per_s_per_gpu"] == 6893 and prog[2]["tflops"] == 580.79
    assert prog[2]["mem_gb"] == 173.16 and prog[2]["mem_pct"] == 97.09
    assert "mfu" not in prog[2]                                  # 'mfu: N/A'
    assert prog[10]["tokens_per_s_per_gpu"] == 560               # the outlier step
    retries = errors(recs, "cuda_alloc_retry")
    assert retries[-1]["retries"] == 10


@covers("torchtitan_nemo_nanogpt_etc/torchtitan_qwen3-14b_8xgpu_nccl-warn_oom_childfailed.log")
def test_torchtitan_oom(parse_log):
    recs = parse_log("torchtitan_nemo_nanogpt_etc/torchtitan_qwen3-14b_8xgpu_nccl-warn_oom_childfailed.log")
    oom = errors(recs, "cuda_oom")
    assert sorted(r["gpu"] for r in oom) == [4, 5, 6, 7]
    assert oom[0]["tried_gb"] == approx(170 / 1024)
    warn = errors(recs, "nccl_warn")
    assert warn[0]["rank"] == 0 and "Address already in use" in warn[0]["message"]
    assert errors(recs, "child_failed")[0]["exitcode"] == 1
    # each OOM is its rank's (torchrun's report names the rank of each traceback), rank 4's first
    assert sorted((r["rank"], r["gpu"]) for r in oom) == [(4, 4), (5, 5), (6, 6), (7, 7)]
    (report,) = [r for r in errors(recs, "child_failed") if r.get("launcher") == "torchrun"]
    assert (report["rank"], report["exitcode"], report["failed_ranks"]) == (4, 1, list(range(8)))
    assert report["exception"].startswith("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 170.00 MiB.")


# ------------------------------------------------------------------ nanoGPT & co
@covers("torchtitan_nemo_nanogpt_etc/modded-nanogpt_2025-10-24_NorMuon_8xH100.log")
def test_modded_nanogpt_straggler(parse_log):
    recs = parse_log("torchtitan_nemo_nanogpt_etc/modded-nanogpt_2025-10-24_NorMuon_8xH100.log")
    prog = by_step(recs, key=None)
    assert len(prog) == 2315 and prog[1]["total_steps"] == 2315
    assert prog[511]["step_time_ms"] == 870.0                   # the straggler step
    assert prog[510]["train_time_ms"] == 30646.0
    slowest = max((r for r in prog.values() if r["step"] > 20 and "step_time_ms" in r),
                  key=lambda r: r["step_time_ms"])
    assert slowest["step"] == 511
    val = [r for r in recs if r["kind"] == "eval"]
    assert val[0]["step"] == 0 and val[0]["loss"] == 10.8258 and len(val) == 11


@covers("torchtitan_nemo_nanogpt_etc/modded-nanogpt_2024-11-14_QuantizedFP4_8xH100.log")
def test_modded_nanogpt_timer_reset_and_stall(parse_log):
    recs = parse_log("torchtitan_nemo_nanogpt_etc/modded-nanogpt_2024-11-14_QuantizedFP4_8xH100.log")
    prog = by_step(recs, key=None)
    assert prog[1]["loss"] == 10.8259
    assert "step_time_ms" not in prog[11]                       # timer reset after warm-up: no fake delta
    assert prog[21]["step_time_ms"] == 2818.0                   # 2.8 s stall
    assert prog[22]["step_time_ms"] == 388.0


@covers("torchtitan_nemo_nanogpt_etc/fairseq_gpt2-small-lm_4gpu_json-train_inner_nan-detector_SHORT.log")
def test_fairseq_json(parse_log):
    recs = parse_log("torchtitan_nemo_nanogpt_etc/fairseq_gpt2-small-lm_4gpu_json-train_inner_nan-detector_SHORT.log")
    prog = by_step(recs, key="loss")
    assert sorted(prog) == [25, 2100, 2425, 2575]
    assert prog[2100]["loss"] == 8.725 and prog[2100]["tokens_per_s"] == 20594.8 and prog[2100]["grad_norm"] == 1.317
    assert prog[2425]["loss_scale"] == 2.0
    nan = errors(recs, "nan_inf")
    assert len(nan) == 1 and nan[0]["step"] == 2575


# ------------------------------------------------------------------ multi-rank prefixed
@covers("multirank_prefixed/mlperf-v0.7_nvidia_gnmt_2node-16gpu_slurm_rank0-prefix.log")
def test_mlperf_gnmt_srun_prefix(parse_log):
    recs = parse_log("multirank_prefixed/mlperf-v0.7_nvidia_gnmt_2node-16gpu_slurm_rank0-prefix.log")
    prog = by_step(recs)
    assert all(r["rank"] == 0 for r in prog.values())
    assert prog[11]["step_time_ms"] == 75.0 and prog[11]["tokens_per_s"] == 232016
    assert prog[11]["loss"] == approx(9.6103) and prog[11]["lanes_ms"]["input"] == approx(0.0949, abs=1e-4)
    assert prog[1]["step_time_ms"] == 387.0                       # slow first iteration
    assert prog[1292]["epoch"] == 1
    # each epoch's evaluation, begun once (MLPerf's logger says so, bare, rank 0's alone; then
    # its first TEST batch line), with the BLEU it reached, after the step the ranks had reached
    starts = [(r["step"], r["framework"]) for r in recs if r["kind"] == "eval" and r["phase"] == "start"]
    assert starts[:3] == [(1291, "mlperf"), (2582, "mlperf"), (3873, "mlperf")]
    assert len(starts) == len({step for step, _ in starts}) == 5
    results = [r for r in recs if r["kind"] == "eval" and r["framework"] == "mlperf" and r["phase"] == "result"]
    assert [(r["step"], r["epoch_num"], r["metrics"]["accuracy"]) for r in results[:2]] == [
        (1291, 1, 0.1949), (2582, 2, 0.2189)]
    assert results[0]["log_time_s"] == 1593112761.379
    (end,) = [r for r in recs if r["kind"] == "eval" and r["phase"] == "end"]
    assert (end["step"], end["status"]) == (6455, "success")        # the BLEU target reached


@covers("multirank_prefixed/mlperf-v0.7_nvidia_bert_32node-512gpu_srun-labelled.log")
def test_mlperf_bert_dicts(parse_log, parse_stats):
    recs = parse_log("multirank_prefixed/mlperf-v0.7_nvidia_bert_32node-512gpu_srun-labelled.log")
    prog = by_step(recs, key="samples_per_s")
    assert prog[1]["rank"] == 0 and prog[1]["loss"] == approx(6.30078125)
    assert prog[1]["samples_per_s"] == approx(1684.2148183014438)
    assert prog[2]["log_time_s"] == 1593108597.2240496            # the dict's 'timestamp'
    assert "timestamp" not in prog[2]["metrics"] and prog[2]["metrics"]["global_steps"] == 0
    assert len(prog) == 661
    evals = [r for r in recs if r["kind"] == "eval" and r["framework"] == "mlperf"]
    assert (evals[0]["rank"], evals[0]["step"], evals[0]["metrics"]["accuracy"]) == (0, 334, 0.6965751647949219)
    assert parse_stats("multirank_prefixed/mlperf-v0.7_nvidia_bert_32node-512gpu_srun-labelled.log")["garbage"] == 0


@covers("multirank_prefixed/mlperf-v0.7_nvidia_resnet-mxnet_2node_Node-prefix.log")
def test_mlperf_resnet_mxnet(parse_log):
    recs = parse_log("multirank_prefixed/mlperf-v0.7_nvidia_resnet-mxnet_2node_Node-prefix.log")
    prog = [r for r in recs if r["framework"] == "mxnet"]
    assert len(prog) == 779
    first = prog[0]
    assert (first["rank"], first["epoch"], first["step"], first["samples_per_s"]) == (0, 0, 20, 31830.13)
    assert prog[1]["samples_per_s"] == 33920.09
    # MXNet counts batches from 0 in each epoch; the step runs on (epoch 0 printed up to 380)
    second = next(r for r in prog if r["epoch"] == 1)
    assert (second["iter_in_epoch"], second["step"], second["step_inferred"]) == (20, 400, True)
    assert [r["step"] for r in prog] == sorted({r["step"] for r in prog})     # unique, rising
    evals = [(r["step"], r["phase"], r.get("epoch_num")) for r in recs if r["framework"] == "mlperf"]
    assert evals[:3] == [(380, "start", 1), (380, "result", 1), (1900, "start", 5)]
    assert evals[-1] == (prog[-1]["step"], "end", None)


# ------------------------------------------------------------------ other frameworks
@covers("other_frameworks/mlperf-v0.7_dellemc_maskrcnn_8gpu.log")
def test_maskrcnn_generic(parse_log):
    recs = parse_log("other_frameworks/mlperf-v0.7_dellemc_maskrcnn_8gpu.log")
    prog = by_step(recs)
    assert len(prog) == 1285
    assert prog[20]["step_time_ms"] == approx(294.6) and prog[20]["loss"] == 2.0931
    assert prog[20]["lr"] == 0.002 and prog[20]["lanes_ms"]["input"] == approx(2.5)
    assert prog[20]["mem_gb"] == approx(7905 / 1024)
    assert any(r["kind"] == "checkpoint" and r["path"] == "/coco/models/R-50.pkl" for r in recs)


@covers("other_frameworks/ezpz_vit_aurora-xpu_multirank.log")
def test_ezpz_vit_key_value(parse_log):
    recs = parse_log("other_frameworks/ezpz_vit_aurora-xpu_multirank.log")
    prog = by_step(recs)
    assert len(prog) == 91
    assert prog[10]["step_time_ms"] == approx(744.444) and prog[10]["loss"] == approx(7.111572)
    assert prog[10]["lanes_ms"]["input"] == approx(3.141)
    assert prog[11]["metrics"]["dt/max"] == approx(0.771187)       # cross-rank spread
    assert "examples/vit" not in prog[11]["metrics"]      # the logger's `[examples/vit:445:train_fn]`
