"""Make a tiny ImageFolder dataset of random RGB JPEGs for the capture runs.

What: /tmp/cap-refs/data/{train,val}/{a,b}/NNN.jpg, 16 images of 64x64 per class
and split (32 train, 32 val images in all), deterministic (seeded) noise.
How:  /tmp/cap-refs/venv/bin/python refs_dataset.py [ROOT]
"""
import os
import random
import sys

from PIL import Image

root = sys.argv[1] if len(sys.argv) > 1 else "/tmp/cap-refs/data"
rng = random.Random(0)
for split in ("train", "val"):
    for cls in ("a", "b"):
        d = os.path.join(root, split, cls)
        os.makedirs(d, exist_ok=True)
        for i in range(16):
            # random bytes -> 64x64 RGB noise image
            img = Image.frombytes("RGB", (64, 64), bytes(rng.getrandbits(8) for _ in range(64 * 64 * 3)))
            img.save(os.path.join(d, f"{i:03d}.jpg"), quality=90)
print("wrote", root)
