"""Make a tiny character-level dataset for nanoGPT's train.py (no download).

What: writes <out_dir>/{train.bin,val.bin,meta.pkl} in the same format as
nanoGPT's data/shakespeare_char/prepare.py: uint16 token ids (one per
character), 90%/10% train/val split, and meta.pkl = {'vocab_size', 'itos',
'stoi'}.  The text is generated deterministically (seeded RNG) from a small
word list plus the 65-character Shakespeare-char alphabet, so vocab_size = 65.

How:  python nanogpt_tiny_data.py /tmp/cap-scripts/nanoGPT/data/tiny
"""
import os
import pickle
import random
import sys

import numpy as np

# the 65 characters of nanoGPT's shakespeare_char vocabulary
ALPHABET = "\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
WORDS = ("the king and queen of this fair land did speak to me of love war "
         "and honour my lord thou art a villain what say you good sir i pray "
         "thee hence away with him o heavy day by my troth").split()
NAMES = ["KING HENRY", "QUEEN MARGARET", "ROMEO", "JULIET", "FIRST CITIZEN"]


def make_text(n_chars, seed=1337):
    """Return roughly n_chars of play-like text that uses every ALPHABET char."""
    rng = random.Random(seed)
    parts = [ALPHABET]  # guarantee every character occurs at least once
    size = len(ALPHABET)
    while size < n_chars:
        speaker = rng.choice(NAMES)
        words = [rng.choice(WORDS) for _ in range(rng.randint(4, 14))]
        words[0] = words[0].capitalize()
        line = "%s:\n%s%s\n\n" % (speaker, " ".join(words), rng.choice(".,;!?:"))
        if rng.random() < 0.05:
            line = line.replace(" ", " 'tis & $3 - ", 1)
        parts.append(line)
        size += len(line)
    return "".join(parts)


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    text = make_text(120_000)
    chars = sorted(set(text))
    assert chars == sorted(ALPHABET), "unexpected characters"
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    ids = np.array([stoi[c] for c in text], dtype=np.uint16)
    n = len(ids)
    ids[: int(n * 0.9)].tofile(os.path.join(out_dir, "train.bin"))
    ids[int(n * 0.9):].tofile(os.path.join(out_dir, "val.bin"))
    with open(os.path.join(out_dir, "meta.pkl"), "wb") as f:
        pickle.dump({"vocab_size": len(chars), "itos": itos, "stoi": stoi}, f)
    print("chars=%d vocab_size=%d train=%d val=%d"
          % (n, len(chars), int(n * 0.9), n - int(n * 0.9)))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "data/tiny")
