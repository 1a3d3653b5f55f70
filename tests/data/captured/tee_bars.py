"""Each rank draws its own tqdm bar at the same time, behind a launcher that passes each rank's
output on as it reads it: the ranks' redraws interleave.  Rank 1 is slower, and its step 5
slowest.

Run: torchrun --nproc-per-node 2 --tee 3 tee_bars.py (its tail turns each `\r` into a newline:
each redraw is a line, often in two parts), or mpirun --tag-output -np 2 python tee_bars.py
(which keeps the `\r`: both ranks' redraws run on one line, each behind its prefix), or
srun --label -n 2 python tee_bars.py (which passes each rank's line on 1024 bytes at a time).
"""
import os
import sys
import time

from tqdm import tqdm

# torchrun's, mpirun's or srun's
rank = int(os.environ.get("RANK") or os.environ.get("OMPI_COMM_WORLD_RANK") or os.environ["SLURM_PROCID"])
bar = tqdm(range(1, 11), desc="Training", file=sys.stderr, mininterval=0, ascii=True, ncols=90)
for step in bar:
    time.sleep(0.25 + 0.1 * rank + (0.6 if rank == 1 and step == 5 else 0.0))
    bar.set_postfix(loss=f"{2.5 - step / 10 - rank / 100:.3f}")
bar.close()
print(f"rank {rank} done", flush=True)
