"""A training loop that prints its step and loss as each step ends, and no time (as a JAX or
hand-written loop often does): `step N/T loss X`, flushed, 200 ms a step, step 12 900 ms.

`--every N`: a line every N steps only (a loop that logs every log interval), 48 steps, and
step 30 stalls 2 s.  `--save-after N`: no slow step; after step N the loop says it saves a
checkpoint, with no time, and the save takes 1.5 s.  `--no-flush`: plain `print`s, as most
loops write them.  `--slow-rank R`: under torchrun, only rank R's step is slow."""
import os
import sys
import time


def option(name: str) -> int:
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else 0


every, save_after = option("--every") or 1, option("--save-after")
flush = "--no-flush" not in sys.argv
STEPS, SLOW_STEP, SLOW_S = (24, 12, 0.9) if every == 1 else (48, 30, 2.0)
if save_after or ("--slow-rank" in sys.argv and option("--slow-rank") != int(os.environ.get("RANK", "0"))):
    SLOW_STEP = 0

for step in range(1, STEPS + 1):
    time.sleep(SLOW_S if step == SLOW_STEP else 0.2)
    if step % every == 0:
        print(f"step {step}/{STEPS} loss {2.5 - step / 100:.4f}", flush=flush)
    if step == save_after:
        print(f"Saving checkpoint to /tmp/untimed-loop/step-{step}", flush=flush)
        time.sleep(1.5)
sys.exit(0)
