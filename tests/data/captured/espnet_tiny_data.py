"""A tiny ASR data set in ESPnet2's Kaldi-style layout (wav.scp, text, shape files, a character
token list): 24 utterances of one second of noise at 16 kHz, each with a few random letters."""
import random
import sys
from pathlib import Path

import numpy as np
import soundfile

out = Path(sys.argv[1])
rng = random.Random(0)
letters = "abcdefgh"
for part, n in (("train", 16), ("valid", 8)):
    d = out / part
    d.mkdir(parents=True, exist_ok=True)
    (d / "wav").mkdir(exist_ok=True)
    scp, text, speech_shape, text_shape = [], [], [], []
    for i in range(n):
        utt = f"{part}_{i:03d}"
        wav = d / "wav" / f"{utt}.wav"
        soundfile.write(wav, np.random.default_rng(i).standard_normal(16000).astype("float32") * 0.1, 16000)
        words = "".join(rng.choice(letters) for _ in range(rng.randint(3, 8)))
        scp.append(f"{utt} {wav}")
        text.append(f"{utt} {words}")
        speech_shape.append(f"{utt} 16000")
        text_shape.append(f"{utt} {len(words)}")
    (d / "wav.scp").write_text("\n".join(scp) + "\n")
    (d / "text").write_text("\n".join(text) + "\n")
    (d / "speech_shape").write_text("\n".join(speech_shape) + "\n")
    (d / "text_shape").write_text("\n".join(text_shape) + "\n")
(out / "tokens.txt").write_text("\n".join(["<blank>", "<unk>", *letters, "<sos/eos>"]) + "\n")
