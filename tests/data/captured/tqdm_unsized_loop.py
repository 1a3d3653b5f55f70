"""A training loop of one's own over an iterable with no length (a streaming dataset's loader),
so that tqdm's bar knows no total: `train: 3it [00:00,  6.65it/s, loss=1.8]`.  2 epochs of 5
steps of ~0.15 s (step 3 of the second epoch takes 0.6 s), the loss set after each step, then an
unlabelled bar over 3 evaluation batches, also with no length."""
import time

from tqdm import tqdm


def batches(n):
    yield from range(n)


for epoch in range(2):
    bar = tqdm(batches(5), desc="train")
    for step in bar:
        time.sleep(0.6 if (epoch, step) == (1, 2) else 0.15)
        bar.set_postfix(loss=round(2.0 - (epoch * 5 + step) / 10, 2))
    for batch in tqdm(batches(3)):
        time.sleep(0.02)
print("done")
