"""Build tiny local stand-ins for torchtitan's test assets (no downloads).

Creates, under <root>/tests/assets/ (root = argv[1], default /tmp/cap-titan/run):
  * c4_test/data.json  - JSON-lines file with {"text": ...} records, made from
    the docstrings of Python standard-library modules (real English text).
    `datasets.load_dataset("tests/assets/c4_test", split="train")` reads it,
    exactly as torchtitan's "c4_test" DatasetConfig does.
  * tokenizer/tokenizer.json + tokenizer_config.json - a byte-level BPE
    tokenizer trained with the `tokenizers` library on that text, vocab 2000
    (< the llama3 debugmodel's vocab_size 2048), with the special tokens
    <|begin_of_text|> / <|end_of_text|> named as bos/eos in the config.

Usage: venv/bin/python torchtitan_assets.py [/tmp/cap-titan/run]
"""

import importlib
import json
import os
import sys
import warnings

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

root = sys.argv[1] if len(sys.argv) > 1 else "/tmp/cap-titan/run"
data_dir = os.path.join(root, "tests/assets/c4_test")
tok_dir = os.path.join(root, "tests/assets/tokenizer")
os.makedirs(data_dir, exist_ok=True)
os.makedirs(tok_dir, exist_ok=True)

# --- dataset: one record per stdlib docstring (module, classes, functions) ---
texts = []
warnings.simplefilter("ignore")
for name in sorted(n for n in sys.stdlib_module_names if not n.startswith("_")):
    if name in ("antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo"):
        continue
    try:
        mod = importlib.import_module(name)
    except BaseException:
        continue
    if not (getattr(mod, "__file__", "") or "").startswith(os.path.dirname(os.__file__)):
        continue  # standard library only
    for obj in [mod] + [getattr(mod, a, None) for a in sorted(dir(mod))]:
        doc = getattr(obj, "__doc__", None)
        if isinstance(doc, str) and len(doc) > 200:
            texts.append(doc.strip())
texts = list(dict.fromkeys(texts))  # dedupe, keep order
with open(os.path.join(data_dir, "data.json"), "w") as f:
    for t in texts:
        f.write(json.dumps({"text": t}) + "\n")
print(f"wrote {len(texts)} records, {sum(map(len, texts))} chars to {data_dir}/data.json")

# --- tokenizer: byte-level BPE, vocab 2000 incl. 2 special tokens ---
specials = ["<|begin_of_text|>", "<|end_of_text|>"]
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(
    vocab_size=2000,
    special_tokens=specials,
    initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    show_progress=False,
)
tok.train_from_iterator(texts, trainer=trainer)
tok.save(os.path.join(tok_dir, "tokenizer.json"))
cfg = {
    "added_tokens_decoder": {
        str(tok.token_to_id(s)): {"content": s, "lstrip": False, "normalized": False,
                                  "rstrip": False, "single_word": False, "special": True}
        for s in specials
    },
    "bos_token": specials[0],
    "eos_token": specials[1],
    "clean_up_tokenization_spaces": True,
    "model_max_length": 131072,
    "tokenizer_class": "PreTrainedTokenizerFast",
}
with open(os.path.join(tok_dir, "tokenizer_config.json"), "w") as f:
    json.dump(cfg, f, indent=2)
print(f"tokenizer vocab {tok.get_vocab_size()} saved to {tok_dir}")
