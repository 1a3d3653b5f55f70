"""Tiny synthetic text-recognition dataset in PaddleOCR SimpleDataSet format.
Writes /tmp/po/data/{train,eval}/*.png, /tmp/po/data/train.txt, /tmp/po/data/eval.txt
(lines: "<relative path>\t<label>") and /tmp/po/dict.txt (one char per line)."""
import os, random
from PIL import Image, ImageDraw, ImageFont

ROOT = "/tmp/po"
CHARS = "0123456789abcdefghij"
random.seed(1234)
try:
    FONT = ImageFont.load_default(size=22)
except TypeError:  # very old Pillow
    FONT = ImageFont.load_default()

def render(text, path):
    img = Image.new("RGB", (100, 32), (255, 255, 255))
    d = ImageDraw.Draw(img)
    x = random.randint(2, 10)
    y = random.randint(1, 5)
    d.text((x, y), text, fill=(random.randint(0, 60),) * 3, font=FONT)
    img.save(path)

os.makedirs(ROOT + "/data/train", exist_ok=True)
os.makedirs(ROOT + "/data/eval", exist_ok=True)
with open(ROOT + "/dict.txt", "w") as f:
    f.write("\n".join(CHARS) + "\n")
for split, n in (("train", 64), ("eval", 16)):
    lines = []
    for i in range(n):
        text = "".join(random.choice(CHARS) for _ in range(random.randint(3, 6)))
        rel = "%s/%03d.png" % (split, i)
        render(text, os.path.join(ROOT, "data", rel))
        lines.append("%s\t%s" % (rel, text))
    with open(ROOT + "/data/%s.txt" % split, "w") as f:
        f.write("\n".join(lines) + "\n")
print("wrote", ROOT)
