"""TRL's SFTTrainer on a tiny Qwen2 (random weights) on the CPU: 24 steps, logging every step,
an evaluation and a checkpoint save at steps 10 and 20.  Each step begins with a 0.1 s sleep
(so that tqdm, which redraws at most every 0.1 s, draws every step), step 13 with 0.6 s.

Run (the venv of `swift_sft.sh`: trl 0.29.1, transformers 5.19.0; the model `swift_tiny_model.py`
builds):  /tmp/cap-swift/venv/bin/python trl_sft_fit.py > OUT.log 2>&1
"""
import time

from datasets import Dataset
from transformers import AutoTokenizer, AutoModelForCausalLM, TrainerCallback
from trl import SFTConfig, SFTTrainer

MODEL = "/tmp/cap-swift/tiny-model"
tok = AutoTokenizer.from_pretrained(MODEL)
model = AutoModelForCausalLM.from_pretrained(MODEL)
texts = [f"The number {i} comes after {i - 1} and before {i + 1}." for i in range(200)]
train = Dataset.from_dict({"text": texts[:192]})
evald = Dataset.from_dict({"text": texts[192:]})

class Sleep(TrainerCallback):
    def on_step_begin(self, args, state, control, **kwargs):
        time.sleep(0.6 if state.global_step + 1 == 13 else 0.1)


cfg = SFTConfig(output_dir="/tmp/cap-trl/out", max_steps=24, per_device_train_batch_size=8,
                logging_steps=1, eval_strategy="steps", eval_steps=10, save_strategy="steps",
                save_steps=10, report_to=[], max_length=32, use_cpu=True, seed=0,
                per_device_eval_batch_size=8, dataloader_num_workers=0)
trainer = SFTTrainer(model=model, args=cfg, train_dataset=train, eval_dataset=evald, processing_class=tok,
                     callbacks=[Sleep()])
trainer.train()
