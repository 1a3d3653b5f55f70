"""Build a tiny local Qwen2 model + byte-level BPE tokenizer and a toy SFT parquet dataset.

Outputs:
  /tmp/cap-verl/tiny-model/        (Qwen2ForCausalLM, hidden 64, 2 layers, 4 heads, random init)
  /tmp/cap-verl/data/train.parquet (column `messages`, as verl's MultiTurnSFTDataset expects)
  /tmp/cap-verl/data/val.parquet
No downloads: tokenizer is trained here on synthetic text.
"""

import os
import random

import pandas as pd
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

ROOT = "/tmp/cap-verl"
MODEL_DIR = f"{ROOT}/tiny-model"
DATA_DIR = f"{ROOT}/data"
os.makedirs(MODEL_DIR, exist_ok=True)
os.makedirs(DATA_DIR, exist_ok=True)

random.seed(0)

# Synthetic arithmetic Q/A conversations.
def make_conv():
    a, b = random.randint(0, 99), random.randint(0, 99)
    return [
        {"role": "user", "content": f"What is {a} plus {b}?"},
        {"role": "assistant", "content": f"{a} plus {b} is {a + b}."},
    ]

train = [make_conv() for _ in range(320)]
val = [make_conv() for _ in range(32)]

# --- tokenizer: tiny byte-level BPE with Qwen-style special tokens ---
specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
corpus = [m["content"] for conv in train for m in conv] + ["system user assistant You are a helpful assistant."]
tok.train_from_iterator(
    corpus,
    trainers.BpeTrainer(vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()),
)

chat_template = (
    "{% if messages[0]['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
hf_tok = PreTrainedTokenizerFast(
    tokenizer_object=tok,
    eos_token="<|im_end|>",
    pad_token="<|endoftext|>",
    additional_special_tokens=["<|im_start|>"],
)
hf_tok.chat_template = chat_template
hf_tok.save_pretrained(MODEL_DIR)

# --- tiny Qwen2 model ---
cfg = Qwen2Config(
    vocab_size=len(hf_tok),
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=512,
    tie_word_embeddings=True,
    bos_token_id=hf_tok.convert_tokens_to_ids("<|endoftext|>"),
    eos_token_id=hf_tok.eos_token_id,
    pad_token_id=hf_tok.pad_token_id,
)
Qwen2ForCausalLM(cfg).save_pretrained(MODEL_DIR)

pd.DataFrame({"messages": train}).to_parquet(f"{DATA_DIR}/train.parquet")
pd.DataFrame({"messages": val}).to_parquet(f"{DATA_DIR}/val.parquet")
print("vocab", len(hf_tok), "example:", hf_tok.apply_chat_template(train[0], tokenize=False))
