"""A tiny LitGPT pretraining run on the CPU, to capture what its loop prints: litgpt.pretrain.setup() (LitGPT's
own setup/main/fit, torch.compile included) on a 2-layer, n_embd=32 pythia-style model (block_size 64, vocab 128),
fed by a DataModule of random token ids (no tokenizer, no download), precision "32-true", one CPU device,
CSV logger, torch.set_num_threads(1), log_interval=1, eval every 4 optimizer steps, checkpoint every 8 optimizer
steps, 20 optimizer steps, 64 training samples (so "Epoch" advances), litgpt's default AdamW (lr 1e-3), 4 warmup steps.

One training iteration is made slow on purpose: the loss call of training iteration SLOW_ITER (see MODES) sleeps
0.5 s. It is done by wrapping `litgpt.pretrain.chunked_cross_entropy`, which fit() calls right after the model's
forward inside the timed part of an iteration (the model itself is torch.compile'd, so a sleep inside it would
only cause a graph break).

Modes:
  accum    global_batch_size=8, micro_batch_size=4 -> 2 micro-batch iterations per optimizer step, 40 iterations;
           iteration 24 (the last micro-batch, i.e. the "(step)" iteration, of optimizer step 12) sleeps 0.5 s.
  accumhid same as accum, but iteration 23 (the first, accumulating micro-batch of step 12) sleeps instead: with
           accumulation only the step's last iteration gets a progress line, and its "iter time" covers that one
           iteration only, so this slowness shows in no printed per-step number (only in the final
           "| - Training Time" total; "remaining time" is whole seconds and stays 0:00:00 there).
  noaccum  global_batch_size=micro_batch_size=4 -> every iteration is an optimizer step, 20 iterations;
           iteration/step 12 sleeps 0.5 s.

Usage (with litgpt installed):
  python litgpt_fit.py accum   > litgpt-0.5.13_pretrain_accum_cpu.log 2>&1
  python litgpt_fit.py accumhid > litgpt-0.5.13_pretrain_accumhid_cpu.log 2>&1
  python litgpt_fit.py noaccum > litgpt-0.5.13_pretrain_noaccum_cpu.log 2>&1
Checkpoints and the CSV metrics go to out/<mode>/ (a relative path, so the checkpoint lines show no absolute path);
torch.compile's cache goes to ./inductor-cache (delete it first to get the cold-compile first iteration again).
"""

import os
import shutil
import sys
import time
from pathlib import Path

# keep torch.compile's (inductor) on-disk cache next to this script instead of the shared /tmp/torchinductor_<user>
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(Path(__file__).resolve().parent / "inductor-cache"))

import torch
from torch.utils.data import DataLoader

import litgpt.pretrain as pretrain
from litgpt.args import EvalArgs, TrainArgs
from litgpt.data import DataModule
from litgpt.model import Config

BLOCK = 64
VOCAB = 128
STEPS = 20
MODES = {  # mode: (global_batch_size, micro_batch_size, SLOW_ITER)
    "accum": (8, 4, 24),
    "accumhid": (8, 4, 23),
    "noaccum": (4, 4, 12),
}


class RandomTokens(DataModule):
    """Random token ids, BLOCK+1 long per sample (pretrain slices inputs [:BLOCK] and targets [1:BLOCK+1])."""

    def __init__(self, n_train: int = 64, n_val: int = 8, seed: int = 0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.train_data = torch.randint(0, VOCAB, (n_train, BLOCK + 1), generator=g)
        self.val_data = torch.randint(0, VOCAB, (n_val, BLOCK + 1), generator=g)
        self.batch_size = 1

    def connect(self, tokenizer=None, batch_size: int = 1, max_seq_length=None, **kwargs) -> None:
        self.batch_size = batch_size

    def _loader(self, data, shuffle):
        # a (N, BLOCK+1) tensor works as a map-style dataset: batches are (B, BLOCK+1) tensors, as in LitGPT's
        # own data modules (and nothing unpicklable: fabric.save() pickles the train dataloader into the checkpoint)
        return DataLoader(data, batch_size=self.batch_size, shuffle=shuffle)

    def train_dataloader(self):
        return self._loader(self.train_data, True)

    def val_dataloader(self):
        return self._loader(self.val_data, False)


def install_slow_iter(slow_iter: int) -> None:
    """Make training iteration `slow_iter` sleep 0.5 s inside its timed region (forward + loss + backward)."""
    orig = pretrain.chunked_cross_entropy
    calls = {"n": 0}

    def slow_loss(logits, targets, *args, **kwargs):
        # count only real training calls: not the meta-device FLOP measurement, not validation (no_grad)
        if logits.device.type != "meta" and torch.is_grad_enabled():
            calls["n"] += 1
            if calls["n"] == slow_iter:
                time.sleep(0.5)
        return orig(logits, targets, *args, **kwargs)

    pretrain.chunked_cross_entropy = slow_loss


def main(mode: str) -> None:
    global_bs, micro_bs, slow_iter = MODES[mode]
    accum = global_bs // micro_bs
    out_dir = Path("out") / mode
    shutil.rmtree(out_dir, ignore_errors=True)
    install_slow_iter(slow_iter)
    torch.set_num_threads(1)  # 2-core shared box: one intra-op thread keeps per-iteration times steadier
    config = Config.from_name(
        "pythia-14m", block_size=BLOCK, n_layer=2, n_embd=32, n_head=2,
        vocab_size=VOCAB, padded_vocab_size=VOCAB,
    )
    config.name = "tiny-pythia"  # from_name() takes the name as its first argument, so rename afterwards
    # save_checkpoint() re-parses sys.argv with jsonargparse as if this were `litgpt pretrain <model_name> ...`
    # (to write hyperparameters.yaml); give it a command line that parser accepts.
    sys.argv = [sys.argv[0], "pythia-14m"]
    pretrain.setup(
        model_name="pythia-14m",
        model_config=config,
        out_dir=out_dir,
        precision="32-true",
        data=RandomTokens(),
        train=TrainArgs(
            save_interval=8,
            log_interval=1,
            global_batch_size=global_bs,
            micro_batch_size=micro_bs,
            max_tokens=STEPS * accum * micro_bs * BLOCK,
            max_norm=1.0,
            min_lr=4e-5,
            lr_warmup_steps=4,
            tie_embeddings=False,
        ),
        eval=EvalArgs(interval=4, max_iters=2),
        optimizer="AdamW",
        devices=1,
        logger_name="csv",
        seed=42,
    )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "accum")
