"""Tiny synthetic COCO dataset: /tmp/cap-vis/coco/{train2017,val2017,annotations} (8 train, 4 val, 2 classes)."""
import os, json, numpy as np, cv2
rng = np.random.default_rng(0)
root = "/tmp/cap-vis/coco"
for split, n in (("train2017", 8), ("val2017", 4)):
    os.makedirs(os.path.join(root, split), exist_ok=True)
    images, anns = [], []
    for i in range(n):
        w, h = 200, 160
        img = rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)
        fn = f"{i:012d}.jpg"
        for k in range(2):
            x, y = int(rng.integers(0, w - 60)), int(rng.integers(0, h - 60))
            bw, bh = int(rng.integers(20, 60)), int(rng.integers(20, 60))
            cv2.rectangle(img, (x, y), (x + bw, y + bh), (255, 0, 0) if k == 0 else (0, 255, 0), -1)
            anns.append({"id": len(anns) + 1, "image_id": i + 1, "category_id": k + 1,
                         "bbox": [x, y, bw, bh], "area": bw * bh, "iscrowd": 0})
        cv2.imwrite(os.path.join(root, split, fn), img)
        images.append({"id": i + 1, "file_name": fn, "width": w, "height": h})
    os.makedirs(os.path.join(root, "annotations"), exist_ok=True)
    json.dump({"images": images, "annotations": anns,
               "categories": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]},
              open(os.path.join(root, "annotations", f"instances_{split}.json"), "w"))
print("done")
