"""A tiny MaxText pre-training run on the CPU, to capture what MaxText's
trainer (maxtext.trainers.pre_train.train) prints: `completed step: N,
seconds: ..., TFLOP/s/device: ..., Tokens/s/device: ..., total_weights: ...,
loss: ...` lines, `Starting eval after train step N` / `Completed eval step`
/ `Completed eval after train step N, loss=...` lines, and its config dump.

It is MaxText's own trainer, unchanged, except that one training step
(--slow_step, default 17) sleeps 0.5 s first, so that the log has one slow
step. All other arguments are passed to MaxText as they are (config file
first, then key=value overrides). Needs `pip install "maxtext[tpu]"` in a
Python >= 3.12 venv; set JAX_PLATFORMS=cpu.

Usage:
  JAX_PLATFORMS=cpu python maxtext_fit.py \
      <site-packages>/maxtext/configs/base.yml run_name=cap \
      base_output_directory=/tmp/cap-jax/out dataset_type=synthetic \
      hardware=cpu skip_jax_distributed_system=True steps=20 ... > OUT 2>&1
  MAXTEXT_SLOW_STEP=-1 python maxtext_fit.py ...  # no slow step
"""
import os
import time

from absl import app
from maxtext.trainers.pre_train import train

SLOW_STEP = int(os.environ.get("MAXTEXT_SLOW_STEP", "17"))
_orig_iteration = train.training_loop_iteration


def _iteration(jax_device_state, python_vars, immutable_data):
  if python_vars["step"] == SLOW_STEP:
    time.sleep(0.5)  # deliberately slow step
  return _orig_iteration(jax_device_state, python_vars, immutable_data)


train.training_loop_iteration = _iteration

if __name__ == "__main__":
  app.run(train.main)
