"""The seven questions of `ridgescope explain`, answered with numbers (pure functions).

Inputs are plain rows from the store: the step's verdict, its per-rank rows, and each rank's
median lanes over the job's normal steps.
"""
from __future__ import annotations

from ridgescope.schemas.kinds import LANES


def _worst(ranks: list[dict], key) -> dict:
    return max(ranks, key=key)


def _over(row: dict, base: dict, lane: str) -> float:
    return row[f"{lane}_ms"] - base.get(lane, 0.0)


LAUNCH_BOUND_SM_ACTIVE = 50.0
"""GPM SM activity (%) under which a step's "compute" is mostly the GPU waiting on launches."""
LAUNCH_BOUND_BUSY = 0.6
"""Kernel busy time / compute lane under which the stream had gaps between kernels."""


def gpu_evidence(metrics: dict) -> list[str]:
    """What the GPU counters of one rank's step add to its verdict (empty when nothing)."""
    out = []
    sm = metrics.get("gpm.sm_active.mean")
    util = metrics.get("util_gpu.mean")
    if sm is not None and sm < LAUNCH_BOUND_SM_ACTIVE and (util is None or util > 50.0):
        out.append(f"SM activity only {sm:.0f}% while kernels ran ({util or 0:.0f}% "
                   "utilisation): small kernels, likely launch-bound")
    busy = metrics.get("cupti.compute_busy_ms")
    lane = metrics.get("compute_ms")
    if busy is not None and lane and busy / lane < LAUNCH_BOUND_BUSY:
        out.append(f"kernels kept the GPU busy {busy:.1f} of {lane:.1f} ms")
    flags = [name[len("clock_event."):] for name, value in metrics.items()
             if name.startswith("clock_event.") and name != "clock_event.gpu_idle"
             and value >= 0.2]
    if flags:
        out.append("clocks held back by " + ", ".join(sorted(flags)))
    if metrics.get("xid_count"):
        out.append(f"XID {metrics.get('xid.max', 0):.0f} reported by the driver")
    if metrics.get("gpu_lost"):
        out.append("the GPU fell off the bus")
    dropped = metrics.get("cupti.dropped")
    if dropped:
        out.append(f"{dropped:.0f} CUDA trace records were dropped")
    return out


_NOT_PRINTED = "not measured: the log printed no {timer} timer"
"""A stdout-only step's answer for a lane the framework never timed: its 0 ms is no measurement."""


def answers(step: dict, ranks: list[dict], baselines: dict[int, dict],
            write_mb: dict[int, float], gpu: dict[int, dict] | None = None
            ) -> list[tuple[str, str]]:
    """(question, answer) pairs for one step.

    ``baselines[rank]`` maps lane → median ms on normal steps; ``write_mb[rank]`` is the data
    the rank's processes wrote around the step (host probe), when known; ``gpu[rank]`` the
    GPU metrics of the rank's step (NVML/GPM summary and CUDA trace counters), when known.
    """
    gpu = gpu or {}
    if not ranks:
        return [("Data", "no per-rank rows for this step")]
    base = lambda r: baselines.get(r["rank"], {})  # noqa: E731
    out = []
    hooked = any(r["source"] == "hook" for r in ranks)
    if not hooked:
        timed = any(r[f"{lane}_ms"] > 0 for r in ranks for lane in LANES)
        probes = ("only stdout saw this step: its lanes are the timers the framework printed" if timed
                  else "only stdout saw this step: its time cannot be split into lanes")
        culprit = step.get("culprit_rank", 0)
        if step.get("slow") and (culprit < 0 or culprit not in {r["rank"] for r in ranks}):
            # no culprit known, or one a framework's report named (`verdict._held_up_by_the_unseen`)
            probes += (f"; {len(ranks)} rank(s) printed it, so a rank named below is one that "
                       "printed, not necessarily the one whose time it was")
        if step.get("phase") == "eval":
            probes += "; the log shows an evaluation ran in this step, which it did not time"
        out.append(("Probes", probes))
    elif step.get("phase") == "eval":
        out.append(("Probes", "an evaluation loop ran in this step: its batches' wait and its "
                              "compute are in the lanes below, not the training step's own"))

    # the lanes measured: all of them under the hook; from stdout, those the framework times
    measured = {lane for lane in LANES if hooked or any(
        r[f"{lane}_ms"] > 0 or base(r).get(lane, 0.0) > 0 for r in ranks)}

    r = _worst(ranks, lambda r: _over(r, base(r), "input"))
    out.append(("1. Was the next batch ready?",
                f"rank {r['rank']} waited {r['input_ms']:.1f} ms for its batch "
                f"({_over(r, base(r), 'input'):+.1f} ms vs its usual "
                f"{base(r).get('input', 0.0):.1f} ms); median of all ranks "
                f"{_median([x['input_ms'] for x in ranks]):.1f} ms"
                if "input" in measured else _NOT_PRINTED.format(timer="data-loading")))

    r = _worst(ranks, lambda r: r["transfer_ms"])
    if r["transfer_ms"] > 0:
        copied = f"exposed transfer at most {r['transfer_ms']:.1f} ms (rank {r['rank']})"
    elif "transfer" in measured:
        copied = "no exposed host-to-device copy was recorded"
    else:
        copied = _NOT_PRINTED.format(timer="host-to-device copy")
    out.append(("2. Did the host-to-device copy overlap with compute?", copied))

    r = _worst(ranks, lambda r: _over(r, base(r), "compute") if "compute" in measured else r["idle_ms"])
    computed = (f"rank {r['rank']} computed {r['compute_ms']:.1f} ms "
                f"({_over(r, base(r), 'compute'):+.1f} ms vs its usual "
                f"{base(r).get('compute', 0.0):.1f} ms); idle on that rank {r['idle_ms']:.1f} ms"
                if "compute" in measured else
                _NOT_PRINTED.format(timer="compute") + f" (rank {r['rank']}'s {r['idle_ms']:.1f} ms "
                "are not split)")
    out.append(("3. Were forward and backward kernels continuously available?",
                computed + "".join(f"; {line}" for line in gpu_evidence(
                    dict(gpu.get(r["rank"], {}), compute_ms=r["compute_ms"])))))

    first = min(x["arrival_ns"] for x in ranks)
    order = sorted(ranks, key=lambda x: x["arrival_ns"])
    spread = ", ".join(f"rank {x['rank']} +{(x['arrival_ns'] - first) / 1e6:.1f}" for x in order)
    out.append(("4. When did each gradient bucket become ready?",
                f"last bucket ready, relative to the first rank (ms): {spread}" if hooked else
                "not measured: only the hook probe sees gradient buckets"))

    last = order[-1]
    if not hooked and len(ranks) == 1:
        arrived = f"cannot tell: only rank {last['rank']} printed this step"
    elif step["skew_ms"] > 1.0:
        arrived = f"no: rank {last['rank']} arrived last, {step['skew_ms']:.1f} ms after the median"
    else:
        arrived = f"yes: arrival skew {step['skew_ms']:.1f} ms"
    if not hooked and len(ranks) > 1:
        arrived += " (from when each rank printed the step)"
    out.append(("5. Did all ranks arrive together?", arrived))

    waits = sum(x["comm_wait_ms"] for x in ranks) / len(ranks)
    running = sum(x["communication_ms"] - x["comm_wait_ms"] for x in ranks) / len(ranks)
    out.append(("6. How much communication remained after backward?",
                f"exposed communication per rank: {running:.1f} ms running, {waits:.1f} ms "
                f"waiting for the last rank (mean of {len(ranks)} ranks)"
                if "communication" in measured else _NOT_PRINTED.format(timer="communication")))

    r = _worst(ranks, lambda r: r["checkpoint_ms"])
    if r["checkpoint_ms"] > 0:
        written = write_mb.get(r["rank"])
        extra = f", {written:.0f} MB written by its processes" if written else ""
        peak = f"rank {r['rank']} spent {r['checkpoint_ms']:.1f} ms saving a checkpoint{extra}"
    elif step.get("phase") == "checkpoint":    # the log named a save and printed no time
        peak = "a checkpoint was saved in this step; the log printed no time for it"
    else:
        peak = "no checkpoint was saved in this step"
    out.append(("7. Did the optimizer or a checkpoint create the peak?", peak))
    return out


def headline(step: dict) -> str:
    if not step["slow"]:
        return (f"step {step['step']}: {step['duration_ms']:.1f} ms, baseline "
                f"{step['baseline_ms']:.1f} ms: not slow ({step['phase']})")
    culprit = (f"culprit rank {step['culprit_rank']}" if step["culprit_rank"] >= 0 else
               "no culprit rank known (stdout does not show which rank held the step up: only "
               "some ranks printed it, its lines do not say whose they are, or every rank's "
               "step was as long)")
    return (f"step {step['step']}: {step['duration_ms']:.1f} ms, {step['excess_ms']:.1f} ms over "
            f"the {step['baseline_ms']:.1f} ms baseline. Cause: {step['cause']}, {culprit} "
            f"(confidence {step['confidence']:.1f})")


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
