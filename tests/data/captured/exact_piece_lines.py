"""Progress lines of exactly 1023, 1024, 1025 and 2048 bytes (newline not counted), and an
empty line after the 1024-byte one: the lengths at which srun's 1024-byte pieces begin.  Each
carries per-layer metrics (under the 64 pairs a line that parsers read), the last one's
decimals padded with zeros to the length.

Run: srun --label -n 2 python exact_piece_lines.py
"""
import os

rank = int(os.environ.get("RANK") or os.environ.get("SLURM_PROCID") or 0)
for step, length in enumerate((1023, 1024, 1025, 2048), start=1):
    head = f"step {step}/4 loss 2.30{rank} step_time_ms 300.{rank}"
    tail = f" tokens_per_s={1000 * step + rank}"
    metrics, i = "", 0
    while len(head) + len(metrics) + len(tail) + 100 < length:
        metrics += f" decoder/layers.{i:02d}/self_attention/grad_norm=0.{step:02d}{i:02d}"
        i += 1
    metrics += " last/grad_norm=0.5"
    line = head + metrics + "0" * (length - len(head) - len(metrics) - len(tail)) + tail
    assert len(line) == length
    print(line, flush=True)
    if length == 1024:
        print(flush=True)
