"""Make a tiny synthetic COCO-format dataset: 128x128 PNGs with coloured
rectangles, 2 classes (red, blue). 16 train / 8 val images. Deterministic."""
import json, os, random
from PIL import Image, ImageDraw

ROOT = '/tmp/md/data'
CLASSES = [(1, 'red', (220, 30, 30)), (2, 'blue', (30, 30, 220))]


def make(split, n, seed):
    rng = random.Random(seed)
    os.makedirs(f'{ROOT}/{split}', exist_ok=True)
    images, anns = [], []
    aid = 1
    for i in range(n):
        W = H = 128
        img = Image.new('RGB', (W, H), (rng.randint(200, 255),) * 3)
        d = ImageDraw.Draw(img)
        fn = f'{i:03d}.png'
        images.append(dict(id=i + 1, file_name=fn, width=W, height=H))
        for _ in range(rng.randint(1, 3)):
            cid, _name, col = rng.choice(CLASSES)
            w, h = rng.randint(20, 56), rng.randint(20, 56)
            x, y = rng.randint(0, W - w - 1), rng.randint(0, H - h - 1)
            d.rectangle([x, y, x + w - 1, y + h - 1], fill=col)
            anns.append(dict(id=aid, image_id=i + 1, category_id=cid,
                             bbox=[x, y, w, h], area=w * h, iscrowd=0))
            aid += 1
        img.save(f'{ROOT}/{split}/{fn}')
    coco = dict(images=images, annotations=anns,
                categories=[dict(id=c, name=n) for c, n, _ in CLASSES])
    with open(f'{ROOT}/{split}.json', 'w') as f:
        json.dump(coco, f)
    print(split, len(images), 'images', len(anns), 'boxes')


make('train', 16, 0)
make('val', 8, 1)
