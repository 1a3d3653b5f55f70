"""Tiny Llama-style pretraining through Megatron-Bridge's own training loop, on CPU.

megatron.bridge.training.pretrain.pretrain(ConfigContainer, forward_step) with the recipe
base `megatron.bridge.recipes.common._pretrain_common()` (the template every Bridge
pretrain recipe, e.g. llama32_1b_pretrain_config, starts from) and a tiny
`LlamaModelProvider`; only sizes and CPU-incompatible switches are overridden.

The forward step is Bridge's `megatron.bridge.training.gpt_step.forward_step`, called with
the train data iterator wrapped (our code): the fetch for training iteration $MB_SLOW_ITER
(default 13) sleeps $MB_SLOW_SECONDS (default 0.5) s, inside Bridge's `batch-generator` timer.
"""
import os
import sys
import time

import torch

from megatron.bridge.models.gpt_provider import local_layer_spec
from megatron.bridge.models.llama.llama_provider import LlamaModelProvider
from megatron.bridge.recipes.common import _pretrain_common
from megatron.bridge.training.gpt_step import forward_step as bridge_forward_step
from megatron.bridge.training.pretrain import pretrain

SLOW_ITER = int(os.environ.get("MB_SLOW_ITER", "13"))
SLOW_SECONDS = float(os.environ.get("MB_SLOW_SECONDS", "0.5"))
TRAIN_ITERS = int(os.environ.get("MB_TRAIN_ITERS", "24"))
SAVE_DIR = os.environ.get("MB_SAVE", "/tmp/bx/ckpt")
GBS = int(os.environ.get("MB_GBS", "2"))


class _SlowOnce:
    """Iterator wrapper: the next() for the slow iteration sleeps first."""

    def __init__(self, it):
        self.it = it

    def __iter__(self):
        return self

    def __next__(self):
        time.sleep(SLOW_SECONDS)
        return next(self.it)


_slept = [False]


def forward_step(state, data_iterator, model, return_schedule_plan=False):
    # train_state.step is the number of finished iterations: step == SLOW_ITER-1 during SLOW_ITER
    if (not _slept[0] and model.training and data_iterator is not None
            and state.train_state.step == SLOW_ITER - 1):
        _slept[0] = True
        data_iterator = _SlowOnce(data_iterator)
    return bridge_forward_step(state, data_iterator, model, return_schedule_plan)


def build_config():
    cfg = _pretrain_common()

    cfg.model = LlamaModelProvider(
        num_layers=2,
        hidden_size=64,
        ffn_hidden_size=256,
        num_attention_heads=4,
        seq_length=64,
        vocab_size=128,
        make_vocab_size_divisible_by=128,
        # CPU: Megatron "local" layers (no Transformer Engine), no fused kernels
        transformer_layer_spec=local_layer_spec,
        transformer_impl="local",
        use_cpu_initialization=True,
        gradient_accumulation_fusion=False,
        bias_activation_fusion=False,
        masked_softmax_fusion=False,
        persist_layer_norm=False,
        bias_dropout_fusion=False,
        apply_rope_fusion=False,
        cross_entropy_loss_fusion=False,
        attention_dropout=0.0,
        hidden_dropout=0.0,
        bf16=False,
        fp16=False,
        params_dtype=torch.float32,
        pipeline_dtype=None,
        tensor_model_parallel_size=1,
        pipeline_model_parallel_size=1,
        context_parallel_size=1,
        sequence_parallel=False,
    )
    cfg.mixed_precision = None  # fp32 on CPU (recipe default is bf16_mixed)

    cfg.tokenizer.tokenizer_type = "NullTokenizer"
    cfg.tokenizer.tokenizer_model = None
    cfg.tokenizer.vocab_size = 128

    cfg.dataset.blend = None  # mock data
    cfg.dataset.seq_length = 64
    cfg.dataset.num_workers = 0

    cfg.train.train_iters = TRAIN_ITERS
    cfg.train.micro_batch_size = 2
    cfg.train.global_batch_size = GBS
    cfg.train.eval_interval = 10
    cfg.train.eval_iters = 2
    cfg.train.manual_gc = False

    cfg.optimizer.lr = 1e-3
    cfg.optimizer.min_lr = 1e-4
    cfg.optimizer.clip_grad = 0.0
    cfg.optimizer.use_distributed_optimizer = False
    cfg.optimizer.bf16 = False  # recipe's adam config is bf16
    cfg.optimizer.fp16 = False
    cfg.scheduler.lr_warmup_iters = 2

    cfg.ddp.use_distributed_optimizer = False
    cfg.ddp.overlap_grad_reduce = False
    cfg.ddp.overlap_param_gather = False
    cfg.ddp.average_in_collective = False  # gloo has no ReduceOp.AVG
    cfg.ddp.data_parallel_sharding_strategy = "no_shard"

    cfg.logger.log_interval = 1
    cfg.logger.log_throughput = True
    cfg.logger.timing_log_level = 2
    cfg.logger.tensorboard_dir = "/tmp/bx/tb"
    # The recipe default (True) makes Bridge 0.3.1 write the timers to TensorBoard with
    # reset=True *before* timers.log(), so no timer block would ever reach stdout.
    cfg.logger.log_timers_to_tensorboard = False

    cfg.checkpoint.save = SAVE_DIR
    cfg.checkpoint.load = None
    cfg.checkpoint.save_interval = 10

    cfg.dist.distributed_backend = "gloo"
    cfg.rng.seed = 1234
    return cfg


if __name__ == "__main__":
    # Megatron-Bridge 0.3.1 sets logger levels (LoggerConfig.logging_level=INFO) but installs no
    # handler, so records sent through `logging` -- notably megatron.core's Timers.log() timer
    # block -- are dropped unless the launching script configures one.  MB_LOGGING=info (default)
    # does the plain stdlib thing; MB_LOGGING=none leaves logging unconfigured.
    if os.environ.get("MB_LOGGING", "info") == "info":
        import logging
        logging.basicConfig(level=logging.INFO)
    pretrain(build_config(), forward_step)
