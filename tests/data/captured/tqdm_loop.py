"""A training loop of one's own that draws tqdm's default bar, with no label, over each epoch's
batches, then one over its evaluation's: 2 epochs of 6 steps of ~0.15 s (step 4 of the second
epoch takes 0.6 s), each followed by 3 evaluation batches."""
import time

from tqdm import tqdm

for epoch in range(2):
    for step in tqdm(range(6)):
        time.sleep(0.6 if (epoch, step) == (1, 3) else 0.15)
    for batch in tqdm(range(3)):
        time.sleep(0.02)
print("done")
