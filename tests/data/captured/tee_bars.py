"""Each rank draws its own tqdm bar at the same time, behind torchrun's `--tee`: the launcher's
tail thread passes each rank's unfinished bar line on as it reads it, so the ranks' redraws
interleave on one line of the launcher's stderr.  Rank 1 is slower, and its step 5 slowest.

Run: torchrun --nproc-per-node 2 --tee 3 tee_bars.py
"""
import os
import sys
import time

from tqdm import tqdm

rank = int(os.environ["RANK"])
bar = tqdm(range(1, 11), desc="Training", file=sys.stderr, mininterval=0, ascii=True, ncols=90)
for step in bar:
    time.sleep(0.25 + 0.1 * rank + (0.6 if rank == 1 and step == 5 else 0.0))
    bar.set_postfix(loss=f"{2.5 - step / 10 - rank / 100:.3f}")
bar.close()
print(f"rank {rank} done", flush=True)
