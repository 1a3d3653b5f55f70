"""Make a tiny random ImageFolder dataset: /tmp/cap-vis/data/{train,val}/{a,b}/*.jpg"""
import os, numpy as np
from PIL import Image
rng = np.random.default_rng(0)
root = "/tmp/cap-vis/data"
for split, n in (("train", 16), ("val", 4)):
    for cls in ("a", "b"):
        d = os.path.join(root, split, cls); os.makedirs(d, exist_ok=True)
        for i in range(n):
            arr = rng.integers(0, 256, size=(256, 256, 3), dtype=np.uint8)
            Image.fromarray(arr).save(os.path.join(d, f"{cls}_{i:03d}.jpg"), quality=90)
print("done")
