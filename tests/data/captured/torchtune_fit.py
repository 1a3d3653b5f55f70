"""A tiny torchtune fine-tuning run on the CPU, to capture what its recipe prints.

torchtune's recipes (``tune run full_finetune_single_device`` and friends) draw a
tqdm bar whose description reads ``<epoch>|<global step>|Loss: <loss>`` and, with
``metric_logger: torchtune.training.metric_logging.StdoutLogger``, print one line
per optimizer step such as ``Step 3 | loss:6.19 lr:2e-05 tokens_per_second_per_gpu:812.3``.
This script builds everything such a run needs, all offline and tiny, so the real
output can be captured byte for byte and fed to a log parser's tests:

* a small Llama-3 style model (torchtune's own ``torchtune.models.llama3.llama3``
  builder: vocab 512, 4 layers, dim 512, 8 heads / 2 kv heads, 9.4M params, about
  0.2 s per optimizer step on 2 CPU cores) with random weights, converted with torchtune's
  ``convert_weights.tune_to_hf`` and saved as ``model.safetensors`` plus a
  ``config.json`` for ``FullModelHFCheckpointer`` (model_type LLAMA3);
* a tiktoken BPE file holding the 256 single bytes, and a ``special_tokens.json``
  (HF tokenizer.json layout, ``added_tokens`` only) that maps the 256 Llama-3
  special tokens to ids 256..511, for ``torchtune.models.llama3.llama3_tokenizer``;
* a 48-record Alpaca-style JSON file (instruction/input/output), read by
  ``torchtune.datasets.alpaca_dataset`` with ``source: json`` and ``data_files``;
  with batch_size 2 and gradient_accumulation_steps 2 that is 12 optimizer steps
  per epoch, 2 epochs;
* the recipe configs (yaml) next to this script.

One step is deliberately slow: the dataset component in the configs is
``torchtune_fit.slow_alpaca_dataset`` (defined below), which wraps
``alpaca_dataset`` and sleeps SLOW_SECONDS inside the SLOW_CALL-th ``__getitem__``
call of the process (0-based). With batch_size 2 and gradient accumulation 2 a step
consumes 4 items, so call 18 falls in global step 5 of epoch 1 (in the 2-rank
distributed run each rank has its own counter and consumes 2 items per step, so
there it is global step 10; that run uses batch_size 1, so it has 12 steps per epoch too). The
recipe has to import this module, so every ``tune run`` command is
run with ``PYTHONPATH=<this folder>``.

Setup used (venv reusing a Python 3.11 venv that already has torch 2.15.0):

    python3 -m venv venv && echo <torch venv>/lib/python3.11/site-packages \
        > venv/lib/python3.11/site-packages/base.pth
    venv/bin/pip install torchtune                      # 0.6.1 (latest); pulls torchao 0.18.0
    venv/bin/pip install --no-deps torchao==0.15.0      # see below

torchtune 0.6.1 does not import with torchao >= 0.16 ("cannot import name
'int4_weight_only' from 'torchao.quantization"; 0.18 also lacks torchao.dtypes.nf4tensor);
0.15.0 is the newest that works. It prints one "Skipping import of cpp extensions due to
incompatible torch version 2.15.0+cu132 for torchao version 0.15.0" line at every start (it
is in the logs, once per process).

Usage (from any folder; the venv must hold torchtune, torchao, datasets, tiktoken):

    venv/bin/python torchtune_fit.py            # build model/tokenizer/data/configs, print commands
    venv/bin/python torchtune_fit.py --capture  # also run the recipes and write the *.log files

Building takes a few seconds; each recipe run takes 12-25 s on 2 CPU cores.
The logs are written whole (stdout and stderr merged, exactly as printed), into this folder:
  torchtune-<ver>_full_finetune_single_device_pipe_cpu.log             ``> log 2>&1``, PYTHONUNBUFFERED unset
  torchtune-<ver>_full_finetune_single_device_pipe-unbuffered_cpu.log  same with PYTHONUNBUFFERED=1
  torchtune-<ver>_full_finetune_single_device_pty_cpu.log              ``script -qfec`` pty, 120x40
  torchtune-<ver>_lora_finetune_single_device_pipe_cpu.log             ``> log 2>&1``
  torchtune-<ver>_full_finetune_distributed_nproc2_pipe_cpu.log        ``--nproc_per_node 2``, gloo,
                                                                       patched recipe copy (see below)
With PYTHONUNBUFFERED unset, Python block-buffers stdout into a pipe, so the StdoutLogger
"Step N | ..." lines (stdout) are not interleaved with the tqdm bar (stderr) the way they are
on a terminal; the pipe-unbuffered log shows the interleaving a pipe gets with it set.
(torchrun starts its workers with ``python -u``, so the distributed log is interleaved
even with PYTHONUNBUFFERED unset.)
Each capture first deletes the run's output_dir and the datasets cache (HF_HOME=work/hf_home),
so every log shows the first-run "Generating train split" bar of Hugging Face datasets.
"""

import argparse
import base64
import json
import shutil
import subprocess
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / "work"
MODEL_DIR = WORK / "tiny_llama3"
DATA_FILE = WORK / "tiny_alpaca.json"
VENV_BIN = HERE / "venv" / "bin"

VOCAB_SIZE = 512  # 256 byte tokens + 256 llama3 special tokens
NUM_LAYERS = 4
NUM_HEADS = 8
NUM_KV_HEADS = 2
EMBED_DIM = 512
INTERMEDIATE_DIM = 1024
MAX_SEQ_LEN = 128
N_RECORDS = 48

SLOW_CALL = 18  # 0-based count of __getitem__ calls in this process
SLOW_SECONDS = 4.0


# ---------------------------------------------------------------- dataset component
class _SlowOnce:
    """Map-style dataset wrapper that sleeps once, in its SLOW_CALL-th __getitem__."""

    def __init__(self, ds, slow_call: int, seconds: float):
        self._ds = ds
        self._slow_call = slow_call
        self._seconds = seconds
        self._calls = 0
        self.packed = getattr(ds, "packed", False)

    def __len__(self):
        return len(self._ds)

    def __getitem__(self, index):
        if self._calls == self._slow_call:
            time.sleep(self._seconds)
        self._calls += 1
        return self._ds[index]


def slow_alpaca_dataset(tokenizer, *, slow_call: int = SLOW_CALL,
                        slow_seconds: float = SLOW_SECONDS, **kwargs):
    """``torchtune.datasets.alpaca_dataset`` that is slow once (see module docstring)."""
    from torchtune.datasets import alpaca_dataset

    return _SlowOnce(alpaca_dataset(tokenizer, **kwargs), slow_call, slow_seconds)


# ---------------------------------------------------------------- builders
def build_tokenizer():
    from torchtune.models.llama3._tokenizer import LLAMA3_SPECIAL_TOKENS

    # tiktoken BPE file: "<base64 of token bytes> <rank>" per line; single bytes only
    with open(WORK / "tokenizer.model", "w") as f:
        for b in range(256):
            f.write(f"{base64.b64encode(bytes([b])).decode()} {b}\n")
    names = sorted(LLAMA3_SPECIAL_TOKENS, key=LLAMA3_SPECIAL_TOKENS.get)
    added = [{"id": 256 + i, "content": n, "special": True} for i, n in enumerate(names)]
    assert 256 + len(added) == VOCAB_SIZE
    (WORK / "special_tokens.json").write_text(json.dumps({"added_tokens": added}, indent=1))


def build_model():
    import torch
    from safetensors.torch import save_file
    from torchtune.models import convert_weights
    from torchtune.models.llama3 import llama3

    torch.manual_seed(0)
    model = llama3(vocab_size=VOCAB_SIZE, num_layers=NUM_LAYERS, num_heads=NUM_HEADS,
                   num_kv_heads=NUM_KV_HEADS, embed_dim=EMBED_DIM, max_seq_len=MAX_SEQ_LEN,
                   intermediate_dim=INTERMEDIATE_DIM)
    sd = convert_weights.tune_to_hf(model.state_dict(), num_heads=NUM_HEADS,
                                    num_kv_heads=NUM_KV_HEADS, dim=EMBED_DIM)
    sd = {k: v.contiguous() for k, v in sd.items()}
    MODEL_DIR.mkdir(parents=True, exist_ok=True)
    save_file(sd, str(MODEL_DIR / "model.safetensors"), metadata={"format": "pt"})
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "vocab_size": VOCAB_SIZE, "hidden_size": EMBED_DIM,
        "intermediate_size": INTERMEDIATE_DIM, "num_hidden_layers": NUM_LAYERS,
        "num_attention_heads": NUM_HEADS, "num_key_value_heads": NUM_KV_HEADS,
        "max_position_embeddings": MAX_SEQ_LEN, "rms_norm_eps": 1e-5,
        "rope_theta": 500000.0, "tie_word_embeddings": False, "torch_dtype": "float32",
        "bos_token_id": 256, "eos_token_id": 257,
    }
    (MODEL_DIR / "config.json").write_text(json.dumps(config, indent=2))
    return sum(p.numel() for p in model.parameters())


def build_data():
    topics = ["rivers", "bread", "prime numbers", "owls", "bicycles", "glaciers",
              "tea", "chess", "volcanoes", "bees", "lighthouses", "compilers"]
    recs = []
    for i in range(N_RECORDS):
        t = topics[i % len(topics)]
        if i % 3 == 0:
            recs.append({"instruction": f"Give one short fact about {t}.", "input": "",
                         "output": f"Fact {i}: {t} are more interesting than they look."})
        elif i % 3 == 1:
            recs.append({"instruction": "Summarize the text in five words.",
                         "input": f"Record {i} talks at length about {t} and why people like them.",
                         "output": f"People like {t} a lot."})
        else:
            recs.append({"instruction": f"Write a title for a note about {t}.", "input": "",
                         "output": f"Notes on {t}, part {i}"})
    DATA_FILE.write_text(json.dumps(recs, indent=1))


# ---------------------------------------------------------------- configs
def common_cfg(output_dir: Path) -> str:
    return f"""\
output_dir: {output_dir}

tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: {WORK}/tokenizer.model
  special_tokens_path: {WORK}/special_tokens.json
  max_seq_len: {MAX_SEQ_LEN}

dataset:
  _component_: torchtune_fit.slow_alpaca_dataset   # alpaca_dataset, slow once (see torchtune_fit.py)
  source: json
  data_files: {DATA_FILE}
  split: train
  packed: False
seed: 42
shuffle: True

checkpointer:
  _component_: torchtune.training.FullModelHFCheckpointer
  checkpoint_dir: {MODEL_DIR}
  checkpoint_files: [model.safetensors]
  recipe_checkpoint: null
  output_dir: ${{output_dir}}
  model_type: LLAMA3
resume_from_checkpoint: False

batch_size: 2
epochs: 2
max_steps_per_epoch: null
gradient_accumulation_steps: 2
clip_grad_norm: null
compile: False
loss:
  _component_: torchtune.modules.loss.CEWithChunkedOutputLoss

device: cpu
dtype: fp32
enable_activation_checkpointing: False
enable_activation_offloading: False

metric_logger:
  _component_: torchtune.training.metric_logging.StdoutLogger
log_every_n_steps: 1
log_peak_memory_stats: False

profiler:
  _component_: torchtune.training.setup_torch_profiler
  enabled: False
"""


def model_cfg(lora: bool) -> str:
    """The model's section: llama3's builder, or its LoRA one with the adapters' settings."""
    if lora:
        head = """\
  _component_: torchtune.models.llama3.lora_llama3
  lora_attn_modules: ['q_proj', 'v_proj', 'output_proj']
  apply_lora_to_mlp: True
  apply_lora_to_output: False
  lora_rank: 8
  lora_alpha: 16
  lora_dropout: 0.0
"""
    else:
        head = "  _component_: torchtune.models.llama3.llama3\n"
    return f"""\
model:
{head}  vocab_size: {VOCAB_SIZE}
  num_layers: {NUM_LAYERS}
  num_heads: {NUM_HEADS}
  num_kv_heads: {NUM_KV_HEADS}
  embed_dim: {EMBED_DIM}
  intermediate_dim: {INTERMEDIATE_DIM}
  max_seq_len: {MAX_SEQ_LEN}
"""


CONFIGS = {
    # name: (recipe, yaml text builder)
    "full": ("full_finetune_single_device", lambda: model_cfg(False) + common_cfg(WORK / "out_full") + """\
optimizer:
  _component_: torch.optim.AdamW
  lr: 2e-5
  fused: False
optimizer_in_bwd: False
"""),
    "lora": ("lora_finetune_single_device", lambda: model_cfg(True) + common_cfg(WORK / "out_lora") + """\
save_adapter_weights_only: False
optimizer:
  _component_: torch.optim.AdamW
  lr: 3e-4
  weight_decay: 0.01
  fused: False
lr_scheduler:
  _component_: torchtune.training.lr_schedulers.get_cosine_schedule_with_warmup
  num_warmup_steps: 4
"""),
    # 2 ranks share the 48 records: batch_size 1 x grad-accum 2 x 2 ranks = 4 per step -> 12 steps
    "dist": ("full_finetune_distributed", lambda: (model_cfg(False) + common_cfg(WORK / "out_dist")
                                                   .replace("batch_size: 2", "batch_size: 1") + """\
optimizer:
  _component_: torch.optim.AdamW
  lr: 2e-5
  fused: False
optimizer_in_bwd: False
fsdp_cpu_offload: False
"""))
}


# full_finetune_distributed in torchtune 0.6.1 cannot run on the CPU as shipped: it calls
# training.get_memory_stats() on rank 0 unconditionally (-> "ValueError: Logging memory stats
# is not supported on CPU devices") and training.cleanup_before_training(), which calls
# torch.cpu.empty_cache() (-> "AttributeError: module 'torch.cpu' has no attribute
# 'empty_cache'"). Workaround: a copy of the installed recipe with those two calls guarded
# for device cpu; nothing else in it is changed.
DIST_RECIPE_PATCHES = [
    ("""        if self._is_rank_zero:
            memory_stats = training.get_memory_stats(device=self._device)""",
     """        if self._is_rank_zero and self._device.type != "cpu":  # CPU patch
            memory_stats = training.get_memory_stats(device=self._device)"""),
    ("""        training.cleanup_before_training()""",
     """        if self._device.type != "cpu":  # CPU patch
            training.cleanup_before_training()"""),
]
DIST_RECIPE_COPY = HERE / "full_finetune_distributed_cpu.py"


def write_patched_dist_recipe():
    import importlib.util

    # torchtune's wheel installs its recipes as site-packages/recipes/ (not importable)
    site = Path(importlib.util.find_spec("torchtune").origin).parent.parent
    src = (site / "recipes" / "full_finetune_distributed.py").read_text()
    for old, new in DIST_RECIPE_PATCHES:
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    DIST_RECIPE_COPY.write_text(src)


def yaml_path(name: str) -> Path:
    return HERE / f"tiny_{name}.yaml"


def command(name: str, env: str = "", unbuffered: bool = False) -> str:
    """The shell command for one run. HF_HOME keeps the datasets cache under WORK.

    PYTHONUNBUFFERED is removed from the environment (Python's default: stdout to a pipe
    or file is block-buffered, stderr is not) unless ``unbuffered``, which sets it to 1.
    """
    recipe = CONFIGS[name][0]
    nproc = ""
    if name == "dist":
        nproc, recipe = "--nproc_per_node 2 ", DIST_RECIPE_COPY.name
    buf = "PYTHONUNBUFFERED=1 " if unbuffered else "-u PYTHONUNBUFFERED "
    return (f"cd {HERE} && env {buf}{env}HF_HOME={WORK}/hf_home PYTHONPATH={HERE} "
            f"{VENV_BIN}/tune run {nproc}{recipe} --config {yaml_path(name)}")


def log_name(name: str, how: str) -> Path:
    import torchtune

    ver = torchtune.__version__.split("+")[0]
    recipe = CONFIGS[name][0] + ("_nproc2" if name == "dist" else "")
    return HERE / f"torchtune-{ver}_{recipe}_{how}_cpu.log"


def run_capture(name: str, how: str) -> Path:
    out = log_name(name, how)
    shutil.rmtree(WORK / f"out_{name}", ignore_errors=True)
    # empty datasets cache: every log shows the first-run "Generating train split" bar
    shutil.rmtree(WORK / "hf_home", ignore_errors=True)
    if how in ("pipe", "pipe-unbuffered"):
        shell = f"{command(name, unbuffered=how == 'pipe-unbuffered')} > {out} 2>&1"
    else:  # pseudo-terminal, 120 columns; script's own copy to our stdout is dropped
        inner = f"stty cols 120 rows 40; {command(name, env='COLUMNS=120 LINES=40 ')}"
        shell = f"script -qfec {sh_quote(inner)} {out} > /dev/null"
    print(f"$ {shell}", flush=True)
    t0 = time.time()
    rc = subprocess.call(shell, shell=True, stdin=None if how == "pty" else subprocess.DEVNULL)
    print(f"  -> rc={rc} in {time.time() - t0:.1f}s, {out.stat().st_size} bytes", flush=True)
    return out


def sh_quote(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--capture", nargs="*", metavar="NAME:HOW",
                    help="run and capture, NAME in full/lora/dist, HOW in pipe/pipe-unbuffered/pty; "
                         "default: full:pipe full:pipe-unbuffered full:pty lora:pipe dist:pipe")
    args = ap.parse_args()

    WORK.mkdir(parents=True, exist_ok=True)
    build_tokenizer()
    n_params = build_model()
    build_data()
    write_patched_dist_recipe()
    for name, (_, text) in CONFIGS.items():
        yaml_path(name).write_text(f"# {CONFIGS[name][0]} on a tiny llama3, CPU; written by torchtune_fit.py\n" + text())
    print(f"built {MODEL_DIR} ({n_params} params), {WORK}/tokenizer.model, {DATA_FILE} "
          f"({N_RECORDS} records)")
    for name in CONFIGS:
        print(f"[{name}] {command(name)} > LOG 2>&1")

    if args.capture is not None:
        todo = args.capture or ["full:pipe", "full:pipe-unbuffered", "full:pty",
                                "lora:pipe", "dist:pipe"]
        for item in todo:
            name, how = item.split(":")
            run_capture(name, how)


if __name__ == "__main__":
    main()
