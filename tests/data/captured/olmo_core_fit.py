"""A tiny OLMo-core Trainer run on the CPU, to capture what its console logger prints.

It runs OLMo-core's own ``TrainerConfig(...).build(...).fit()`` (default callbacks: console
logger, speed monitor, garbage collector, plus a checkpointer and an LM evaluator) on a
llama-like ``TransformerConfig`` (d_model 64, 2 layers, 4 heads, vocab 512), over random
uint16 token files written here (a NumpyFSLDataset for training, a NumpyPaddedFSLDataset for
eval), under torchrun with a gloo process group. No downloads, no tokenizer.

- 20 steps, 4 instances x 64 tokens per step, metrics_collect_interval=1 so the console
  logger prints a ``[step=N/20,epoch=E,eta=...]`` record with metrics every step.
- Step SLOW_STEP (default 7) is made slow: the model's forward sleeps SLOW_SECONDS (0.5 s) in
  that training step (shows in throughput/device/BPS, TPS).
- Step SLOW_LOAD_STEP (default 13) has a slow batch load: the data loader sleeps SLOW_SECONDS
  before yielding that batch (shows in throughput/device/data loading (s) and (%); with
  OLMO_BATCH_LOAD_WARN_SECONDS=0.25 the speed monitor also warns "Slow batch load: step=13 ...").
- LM eval (eval/lm/...) every 10 steps; checkpoint every 8 steps (plus the final one).

Usage (1 or 2 processes; output is plain-text logging when stdout is not a TTY, or rich
logging with OLMO_RICH_LOGGING=1):

    OLMO_BATCH_LOAD_WARN_SECONDS=0.25 torchrun --nproc-per-node 1 olmo_core_fit.py WORKDIR > OUT.log 2>&1
    OLMO_BATCH_LOAD_WARN_SECONDS=0.25 torchrun --nproc-per-node 2 olmo_core_fit.py WORKDIR > OUT.log 2>&1
    OLMO_BATCH_LOAD_WARN_SECONDS=0.25 OLMO_RICH_LOGGING=1 torchrun --nproc-per-node 1 olmo_core_fit.py WORKDIR > OUT.log 2>&1
"""

import os
import sys
import time

import numpy as np
import torch

from olmo_core.data import (
    NumpyDataLoaderConfig,
    NumpyFSLDatasetConfig,
    NumpyPaddedFSLDatasetConfig,
    TokenizerConfig,
)
from olmo_core.nn.transformer import TransformerConfig
from olmo_core.optim import AdamWConfig, CosWithWarmup
from olmo_core.train import (
    Duration,
    TrainerConfig,
    prepare_training_environment,
    teardown_training_environment,
)
from olmo_core.train.callbacks import CheckpointerCallback, LMEvaluatorCallbackConfig
from olmo_core.train.train_module import TransformerTrainModuleConfig
from olmo_core.distributed.utils import barrier, get_rank
from olmo_core.utils import seed_all

SEQ_LEN, VOCAB, STEPS = 64, 512, 20
SLOW_STEP = int(os.environ.get("SLOW_STEP", "7"))
SLOW_LOAD_STEP = int(os.environ.get("SLOW_LOAD_STEP", "13"))
SLOW_SECONDS = float(os.environ.get("SLOW_SECONDS", "0.5"))


def write_tokens(path: str, n: int, seed: int):
    rng = np.random.default_rng(seed)
    toks = rng.integers(2, VOCAB, size=n, dtype=np.uint16)
    toks[rng.integers(0, n, size=n // 48)] = 0  # EOS (doc boundaries) every ~48 tokens
    mm = np.memmap(path, dtype=np.uint16, mode="w+", shape=(n,))
    mm[:] = toks
    mm.flush()


def main(work: str):
    prepare_training_environment(backend="gloo", seed=1234)
    train_path, eval_path = f"{work}/train.npy", f"{work}/eval.npy"
    if get_rank() == 0:
        os.makedirs(work, exist_ok=True)
        write_tokens(train_path, 40_000, 0)
        write_tokens(eval_path, 2_000, 1)
    barrier()

    tok = TokenizerConfig(vocab_size=VOCAB, eos_token_id=0, pad_token_id=1)
    model_cfg = TransformerConfig.llama_like(
        d_model=64, vocab_size=VOCAB, n_layers=2, n_heads=4, hidden_size_multiple_of=64
    )
    dataset_cfg = NumpyFSLDatasetConfig(
        paths=[train_path], sequence_length=SEQ_LEN, tokenizer=tok, work_dir=f"{work}/dataset-cache"
    )
    loader_cfg = NumpyDataLoaderConfig(global_batch_size=4 * SEQ_LEN, seed=0, num_workers=0)
    tm_cfg = TransformerTrainModuleConfig(
        rank_microbatch_size=2 * SEQ_LEN,  # tokens; 2 microbatches per step on 1 rank
        max_sequence_length=SEQ_LEN,
        optim=AdamWConfig(lr=1e-3),
        max_grad_norm=1.0,
        scheduler=CosWithWarmup(warmup_steps=4),
    )
    trainer_cfg = (
        TrainerConfig(
            save_folder=f"{work}/ckpt",
            save_overwrite=True,
            max_duration=Duration.steps(STEPS),
            metrics_collect_interval=1,
            cancel_check_interval=5,
        )
        .with_callback("checkpointer", CheckpointerCallback(save_interval=8, save_async=False))
        .with_callback(
            "lm_evaluator",
            LMEvaluatorCallbackConfig(
                eval_dataset=NumpyPaddedFSLDatasetConfig(
                    paths=[eval_path],
                    metadata=[{"label": "random-val"}],
                    sequence_length=SEQ_LEN,
                    tokenizer=tok,
                    work_dir=f"{work}/dataset-cache",
                ),
                eval_interval=10,
                log_interval=2,
            ),
        )
    )

    seed_all(1234)
    model = model_cfg.build(init_device="cpu")
    train_module = tm_cfg.build(model)
    dataset = dataset_cfg.build()
    data_loader = loader_cfg.build(dataset, dp_process_group=train_module.dp_process_group)
    trainer = trainer_cfg.build(train_module, data_loader)

    # Make one training step slow: sleep inside the model's forward during step SLOW_STEP.
    def slow_hook(module, args):
        if module.training and trainer.global_step == SLOW_STEP and not getattr(slow_hook, "done", False):
            slow_hook.done = True
            time.sleep(SLOW_SECONDS)

    model.register_forward_pre_hook(slow_hook)

    # Make one batch load slow: sleep before the data loader yields batch SLOW_LOAD_STEP.
    orig_iter_batches = data_loader._iter_batches

    def slow_iter_batches():
        for i, batch in enumerate(orig_iter_batches(), start=1):
            if i == SLOW_LOAD_STEP:
                time.sleep(SLOW_SECONDS)
            yield batch

    data_loader._iter_batches = slow_iter_batches

    trainer.fit()
    teardown_training_environment()


if __name__ == "__main__":
    main(sys.argv[1])
