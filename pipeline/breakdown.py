"""One rank's step: from the hook probe's spans to its lane breakdown (pure functions)."""
from __future__ import annotations

from ridgescope.pipeline import lanes

PHASE_LANE = {
    "data_wait": "input",
    "h2d": "transfer",
    "forward": "compute",
    "backward": "compute",
    "optimizer": "compute",
    "checkpoint": "checkpoint",
    "allreduce": "communication",
    # From the CUDA trace tier: the device's own busy intervals.
    "gpu_compute": "compute",
    "gpu_h2d": "transfer",
    "gpu_comm": "communication",
}
"""Where each phase the hook probe records is charged."""

GPU_PHASES = {"gpu_compute", "gpu_h2d", "gpu_comm"}
GPU_LANES = {"compute", "transfer", "communication"}
"""When a step carries GPU intervals, these lanes come from them alone: compute from kernel busy
time, transfer from H2D copies no kernel overlaps, communication from NCCL kernels no compute
overlaps (the partition's priority does the "no overlap" part).  The host-side stamps of those
lanes (forward/backward/optimizer, buckets) would charge CPU dispatch time as GPU work."""

NS_PER_MS = 1_000_000


def lane_intervals(spans: list, buckets: list) -> dict[str, list[lanes.Interval]]:
    """Group the probe's phase spans and DDP buckets into lane intervals.

    DDP finishes its all-reduce inside ``backward()``, so a backward span ends only when the
    last bucket is done.  Its compute part ends when the last bucket became ready; the rest is
    charged to communication through the bucket intervals.
    """
    last_ready = max((b[1] for b in buckets), default=None)
    out: dict[str, list[lanes.Interval]] = {lane: [] for lane in lanes.PRIORITY}
    gpu = any(span[0] in GPU_PHASES for span in spans)
    for phase, start, end in spans:
        lane = PHASE_LANE.get(phase)
        if lane is None:
            continue
        if gpu and lane in GPU_LANES and phase not in GPU_PHASES:
            continue
        if phase == "backward" and last_ready is not None and start <= last_ready < end:
            end = last_ready
        out[lane].append((start, end))
    if not gpu:
        out["communication"].extend((ready, done) for _, ready, done in buckets)
        out["compute"].extend(implied_forward(spans))
    return out


def implied_forward(spans: list) -> list[lanes.Interval]:
    """Forward time when the probe could not time it (a model without DDP): from the batch's
    arrival to the call of backward() is the forward pass and the loss, on the host."""
    if any(phase == "forward" for phase, _, _ in spans):
        return []
    backward = min((start for phase, start, _ in spans if phase == "backward"), default=None)
    if backward is None:
        return []
    batch = max((end for phase, _, end in spans if phase == "data_wait" and end <= backward),
                default=None)
    return [] if batch is None else [(batch, backward)]


def arrival_ns(spans: list, buckets: list, t1_ns: int) -> int:
    """When this rank was ready for the step's last collective (its last bucket ready).

    Without buckets (one rank, or no DDP) the step end stands in.
    """
    return max((b[1] for b in buckets), default=t1_ns)


def rank_lanes_ns(payload: dict) -> dict[str, int]:
    """Lane charges in ns for one rank's step window; they sum to the window."""
    window = (payload["t0_ns"], payload["t1_ns"])
    return lanes.partition(window, lane_intervals(payload["spans"], payload["buckets"]))


def to_ms(charges: dict[str, int]) -> dict[str, float]:
    return {lane: round(ns / NS_PER_MS, 3) for lane, ns in charges.items()}
