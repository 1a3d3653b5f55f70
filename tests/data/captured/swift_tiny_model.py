"""Build a tiny local Qwen2 model + tokenizer and a small chat dataset (no hub access).

Run:  /tmp/cap-swift/venv/bin/python swift_tiny_model.py
Writes:
  /tmp/cap-swift/tiny-model/   Qwen2ForCausalLM (hidden 64, 2 layers, 4 heads), random init,
                               plus a byte-level BPE tokenizer trained here with ChatML specials
  /tmp/cap-swift/data/train.jsonl  64 rows of {"messages": [...]}
"""
import json
import os
import random

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

ROOT = '/tmp/cap-swift'
MODEL_DIR = f'{ROOT}/tiny-model'
DATA_DIR = f'{ROOT}/data'
os.makedirs(MODEL_DIR, exist_ok=True)
os.makedirs(DATA_DIR, exist_ok=True)
random.seed(0)

# --- dataset: simple arithmetic / colour Q&A, 64 rows ------------------------------
colours = ['red', 'green', 'blue', 'yellow', 'purple', 'orange', 'black', 'white']
rows = []
for i in range(64):
    if i % 2 == 0:
        a, b = random.randint(1, 50), random.randint(1, 50)
        q, r = f'What is {a} plus {b}?', f'{a} plus {b} is {a + b}.'
    else:
        c = random.choice(colours)
        q, r = f'Name a thing that is {c}.', f'A {c} thing is a {c} ball, number {i}.'
    rows.append({'messages': [{'role': 'system', 'content': 'You are a helpful assistant.'},
                              {'role': 'user', 'content': q},
                              {'role': 'assistant', 'content': r}]})
with open(f'{DATA_DIR}/train.jsonl', 'w') as f:
    for r in rows:
        f.write(json.dumps(r) + '\n')

# --- tokenizer: byte-level BPE trained on the dataset text ------------------------
specials = ['<|endoftext|>', '<|im_start|>', '<|im_end|>']
corpus = [m['content'] for r in rows for m in r['messages']] * 4
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(vocab_size=512, special_tokens=specials,
                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
tok.train_from_iterator(corpus, trainer)
chat_template = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content']"
                 " + '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}"
                 "{{ '<|im_start|>assistant\n' }}{% endif %}")
hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token='<|im_end|>', pad_token='<|endoftext|>',
                                 additional_special_tokens=['<|im_start|>', '<|im_end|>'])
hf_tok.chat_template = chat_template
hf_tok.save_pretrained(MODEL_DIR)

# --- model ------------------------------------------------------------------------
cfg = Qwen2Config(vocab_size=len(hf_tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                  tie_word_embeddings=True, bos_token_id=None,
                  eos_token_id=hf_tok.convert_tokens_to_ids('<|im_end|>'),
                  pad_token_id=hf_tok.pad_token_id, torch_dtype='float32')
model = Qwen2ForCausalLM(cfg)
model.save_pretrained(MODEL_DIR)
print('vocab', len(hf_tok), 'params', sum(p.numel() for p in model.parameters()))
print(open(f'{MODEL_DIR}/config.json').read())
