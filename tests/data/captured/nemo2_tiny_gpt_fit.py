# A NeMo 2 driver script: tiny GPT, mock data, nemo.lightning
# Trainer + MegatronStrategy + NeMoLogger/ModelCheckpoint + AutoResume, NeMo's ProgressPrinter
# and TimingCallback. Run on CPU with nemo2_cpu_shim.py as ./shim/sitecustomize.py (NEMO_CPU_SHIM=1).
import argparse
import os

import torch
from megatron.core.distributed import DistributedDataParallelConfig
from megatron.core.optimizer import OptimizerConfig

import nemo.lightning as nl
from nemo.collections import llm
from nemo.collections.common.tokenizers.null_tokenizer import NullTokenizer
from nemo.collections.llm.gpt.model.base import local_layer_spec
from nemo.lightning.io import track_io
from nemo.lightning.pytorch.callbacks.progress_printer import ProgressPrinter
from nemo.lightning.pytorch.optim import CosineAnnealingScheduler, MegatronOptimizerModule
from nemo.utils.exp_manager import TimingCallback

from nemo2_slow_data import SlowAtSample

p = argparse.ArgumentParser()
p.add_argument("--max-steps", type=int, default=24)
p.add_argument("--log-dir", default="/tmp/cap-nemo/runs/nemo2")
p.add_argument("--name", default="tiny_gpt")
p.add_argument("--slow-step", type=int, default=13)
p.add_argument("--devices", type=int, default=int(os.environ.get("WORLD_SIZE", "1")))
p.add_argument("--no-ckpt", action="store_true", help="no checkpointing (2-rank CPU run hangs in dist-ckpt save)")
p.add_argument("--progress", choices=["printer", "bar"], default="printer")
p.add_argument("--megatron-log-level", type=int, default=0,
               help="MegatronStrategy's timers: at 1 or 2, a (min, max) timer block after each printer line")
args = p.parse_args()

MBS = 2
GBS = MBS * args.devices
SEQ = 64


class SlowMockDataModule(llm.MockDataModule):
    def setup(self, stage: str = "") -> None:
        super().setup(stage)
        # NeMo 2.7.3's MockDataModule.setup passes create_attention_mask positionally into the
        # dataset's `seed` slot, so without Transformer Engine no attention mask is produced and
        # gpt_forward_step asserts. Rebuild the datasets with the keyword (our code, no upstream edit).
        from nemo.collections.llm.gpt.data.mock import _MockGPTDataset
        for attr, name, n in (("_train_ds", "train", self.num_train_samples),
                              ("_validation_ds", "valid", self.num_val_samples),
                              ("_test_ds", "test", self.num_test_samples)):
            setattr(self, attr, _MockGPTDataset(self.tokenizer, name, n, self.seq_length,
                                                create_attention_mask=True))
        # NeMo prints steps 0-based ("iteration N/.." and "global_step: N"); the step labelled N reads
        # samples N*GBS + rank*MBS ... (MegatronPretrainingSampler), so --slow-step 13 makes the line
        # "iteration 13/23 | ... | global_step: 13" slow (the 14th batch fetched).
        rank = int(os.environ.get("RANK", "0"))
        self._train_ds = SlowAtSample(self._train_ds, args.slow_step * GBS + rank * MBS, 0.5)


def main():
    tokenizer = track_io(NullTokenizer)(vocab_size=127)  # vocab 128 with EOD
    config = llm.GPTConfig(
        num_layers=2, hidden_size=64, ffn_hidden_size=256, num_attention_heads=4, seq_length=SEQ,
        init_method_std=0.02, hidden_dropout=0.0, attention_dropout=0.0, make_vocab_size_divisible_by=128,
        transformer_layer_spec=local_layer_spec, bias_activation_fusion=False, bias_dropout_fusion=False,
        masked_softmax_fusion=False, apply_rope_fusion=False, gradient_accumulation_fusion=False,
        cross_entropy_loss_fusion=False, persist_layer_norm=False, use_cpu_initialization=True,
        bf16=False, fp16=False, params_dtype=torch.float32,
    )
    model = llm.GPTModel(config, tokenizer=tokenizer)
    data = SlowMockDataModule(
        seq_length=SEQ, tokenizer=tokenizer, micro_batch_size=MBS, global_batch_size=GBS,
        num_train_samples=2000, num_val_samples=200, num_test_samples=200, num_workers=0, pin_memory=False,
    )
    strategy = nl.MegatronStrategy(
        tensor_model_parallel_size=1, pipeline_model_parallel_size=1,
        ddp=DistributedDataParallelConfig(grad_reduce_in_fp32=False, overlap_grad_reduce=False,
                                          overlap_param_gather=False, use_distributed_optimizer=False),
        ckpt_async_save=False, ckpt_parallel_save=False, ckpt_parallel_load=False,
        ckpt_load_directly_on_device=False, process_group_backend="gloo",
        # "printer": NeMo swaps Lightning's TQDM bar for ProgressPrinter (also passed explicitly below);
        # "bar": replace_progress_bar=False makes NeMo swap it for MegatronProgressBar (a tqdm bar).
        replace_progress_bar=(args.progress == "printer"),
        megatron_log_level=args.megatron_log_level,
    )
    callbacks = [TimingCallback()]
    if args.progress == "printer":
        callbacks.append(ProgressPrinter(log_interval=1))
    trainer = nl.Trainer(
        accelerator="cpu", devices=args.devices, num_nodes=1, strategy=strategy,
        max_steps=args.max_steps, val_check_interval=10, limit_val_batches=2, num_sanity_val_steps=0,
        log_every_n_steps=1, callbacks=callbacks, enable_progress_bar=True,
        plugins=nl.MegatronMixedPrecision(precision="32"),
        enable_checkpointing=not args.no_ckpt,
    )
    ckpt = nl.ModelCheckpoint(every_n_train_steps=10, save_last=True, save_top_k=-1,
                              monitor="reduced_train_loss", save_optim_on_train_end=True)
    logger = nl.NeMoLogger(name=args.name, log_dir=args.log_dir, ckpt=None if args.no_ckpt else ckpt, use_datetime_version=False,
                           tensorboard=None, wandb=None)
    resume = nl.AutoResume(resume_if_exists=True, resume_ignore_no_checkpoint=True)
    optim = MegatronOptimizerModule(
        config=OptimizerConfig(optimizer="adam", lr=1e-3, weight_decay=0.01, bf16=False, fp16=False,
                               use_distributed_optimizer=False, clip_grad=0.0),
        lr_scheduler=CosineAnnealingScheduler(warmup_steps=2, constant_steps=0, max_steps=40, min_lr=1e-4),
    )
    llm.train(model=model, data=data, trainer=trainer, log=logger, resume=resume, optim=optim, tokenizer="data")


if __name__ == "__main__":  # checkpoint writer uses a spawned helper process
    main()
