"""The seven questions of `ridgescope explain`, answered with numbers (pure functions).

Inputs are plain rows from the store: the step's verdict, its per-rank rows, and each rank's
median lanes over the job's normal steps.
"""
from __future__ import annotations


def _worst(ranks: list[dict], key) -> dict:
    return max(ranks, key=key)


def _over(row: dict, base: dict, lane: str) -> float:
    return row[f"{lane}_ms"] - base.get(lane, 0.0)


def answers(step: dict, ranks: list[dict], baselines: dict[int, dict],
            write_mb: dict[int, float]) -> list[tuple[str, str]]:
    """(question, answer) pairs for one step.

    ``baselines[rank]`` maps lane → median ms on normal steps; ``write_mb[rank]`` is the data
    the rank's processes wrote around the step (host probe), when known.
    """
    if not ranks:
        return [("Data", "no per-rank rows for this step")]
    base = lambda r: baselines.get(r["rank"], {})  # noqa: E731
    out = []
    hooked = any(r["source"] == "hook" for r in ranks)
    if not hooked:
        out.append(("Probes", "only stdout saw this step: its time cannot be split into lanes"))

    r = _worst(ranks, lambda r: _over(r, base(r), "input"))
    out.append(("1. Was the next batch ready?",
                f"rank {r['rank']} waited {r['input_ms']:.1f} ms for its batch "
                f"({_over(r, base(r), 'input'):+.1f} ms vs its usual "
                f"{base(r).get('input', 0.0):.1f} ms); median of all ranks "
                f"{_median([x['input_ms'] for x in ranks]):.1f} ms"))

    r = _worst(ranks, lambda r: r["transfer_ms"])
    out.append(("2. Did the host-to-device copy overlap with compute?",
                f"exposed transfer at most {r['transfer_ms']:.1f} ms (rank {r['rank']})"
                if r["transfer_ms"] > 0 else "no exposed host-to-device copy was recorded"))

    r = _worst(ranks, lambda r: _over(r, base(r), "compute"))
    out.append(("3. Were forward and backward kernels continuously available?",
                f"rank {r['rank']} computed {r['compute_ms']:.1f} ms "
                f"({_over(r, base(r), 'compute'):+.1f} ms vs its usual "
                f"{base(r).get('compute', 0.0):.1f} ms); idle on that rank "
                f"{r['idle_ms']:.1f} ms"))

    first = min(x["arrival_ns"] for x in ranks)
    order = sorted(ranks, key=lambda x: x["arrival_ns"])
    spread = ", ".join(f"rank {x['rank']} +{(x['arrival_ns'] - first) / 1e6:.1f}" for x in order)
    out.append(("4. When did each gradient bucket become ready?",
                f"last bucket ready, relative to the first rank (ms): {spread}"))

    last = order[-1]
    out.append(("5. Did all ranks arrive together?",
                f"no: rank {last['rank']} arrived last, {step['skew_ms']:.1f} ms after the median"
                if step["skew_ms"] > 1.0 else
                f"yes: arrival skew {step['skew_ms']:.1f} ms"))

    waits = sum(x["comm_wait_ms"] for x in ranks) / len(ranks)
    running = sum(x["communication_ms"] - x["comm_wait_ms"] for x in ranks) / len(ranks)
    out.append(("6. How much communication remained after backward?",
                f"exposed communication per rank: {running:.1f} ms running, {waits:.1f} ms "
                f"waiting for the last rank (mean of {len(ranks)} ranks)"))

    r = _worst(ranks, lambda r: r["checkpoint_ms"])
    if r["checkpoint_ms"] > 0:
        written = write_mb.get(r["rank"])
        extra = f", {written:.0f} MB written by its processes" if written else ""
        peak = f"rank {r['rank']} spent {r['checkpoint_ms']:.1f} ms saving a checkpoint{extra}"
    else:
        peak = "no checkpoint was saved in this step"
    out.append(("7. Did the optimizer or a checkpoint create the peak?", peak))
    return out


def headline(step: dict) -> str:
    if not step["slow"]:
        return (f"step {step['step']}: {step['duration_ms']:.1f} ms, baseline "
                f"{step['baseline_ms']:.1f} ms: not slow ({step['phase']})")
    return (f"step {step['step']}: {step['duration_ms']:.1f} ms, {step['excess_ms']:.1f} ms over "
            f"the {step['baseline_ms']:.1f} ms baseline. Cause: {step['cause']}, culprit rank "
            f"{step['culprit_rank']} (confidence {step['confidence']:.1f})")


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
