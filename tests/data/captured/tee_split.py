"""Lines that reach torchrun's `--tee` in two writes, as `print` makes them under
PYTHONUNBUFFERED=1 (the text, then the newline, in two system calls) or a block-buffered
stream at its buffer's end.  The pause between the writes stands for the moment the launcher's
tail thread reads the file in between; here it is long enough to happen on every run.

Run: torchrun --nproc-per-node 3 --tee 3 tee_split.py, mpirun --tag-output -np 3 python tee_split.py,
or srun -u --label -n 3 python tee_split.py
"""
import os
import sys
import time

# torchrun's, mpirun's or srun's
rank = int(os.environ.get("RANK") or os.environ.get("OMPI_COMM_WORLD_RANK") or os.environ["SLURM_PROCID"])


def line(step: int) -> str:
    return f"step {step}/4 loss 2.30{rank} step_time_ms 300.{rank}"


def in_two_writes(first: str, second: str) -> None:
    sys.stdout.write(first)
    sys.stdout.flush()
    time.sleep(0.35)
    sys.stdout.write(second)
    sys.stdout.flush()


for step in range(1, 5):
    time.sleep(0.6 if step == 4 and rank != 2 else 0.3)
    if step == 2 and rank == 0:      # the text, then its newline: another rank's line between
        in_two_writes(line(step), "\n")
    elif step == 3 and rank == 1:    # cut inside the text
        in_two_writes(line(step)[:11], line(step)[11:] + "\n")
    elif step == 4 and rank == 2:    # the text, then its newline, with nothing between
        in_two_writes(line(step), "\n")
    else:
        print(line(step), flush=True)
