"""A loop of one's own on each rank, drawing tqdm's default bar, unlabelled, over each epoch's
batches and then one over its evaluation's (as tests/data/captured/tqdm_loop.py does): 2 epochs
of 8 steps of STEP_S, rank SLOW_RANK's step SLOW_STEP (counted across epochs) SLOW_S.

Run: torchrun --nproc-per-node 2 --tee 3 tqdm_loop_job.py
"""
import os
import time

from tqdm import tqdm

EPOCHS, STEPS_PER_EPOCH, STEP_S, SLOW_S, SLOW_STEP, SLOW_RANK = 2, 8, 0.3, 1.5, 12, 1

rank = int(os.environ["RANK"])
for epoch in range(EPOCHS):
    for batch in tqdm(range(STEPS_PER_EPOCH)):
        step = epoch * STEPS_PER_EPOCH + batch + 1
        time.sleep(SLOW_S if (rank, step) == (SLOW_RANK, SLOW_STEP) else STEP_S)
    for batch in tqdm(range(3)):
        time.sleep(0.02)
