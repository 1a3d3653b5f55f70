"""Property tests: arbitrary text and bytes never raise, and every line finishes.

A pattern that backtracks catastrophically would hang on the generated or pathological lines;
the module's pytest time-out (far above what the tests take) turns such a hang into a failure
instead of a stuck run.  Long lines' regex calls carry their own time-out, counted as garbage."""
from __future__ import annotations

import os
import re

import msgpack
import pytest
import regex
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ridgescope.parsers import FORMATS, PARSERS, Dispatcher
from ridgescope.parsers.base import TIMEOUT
from ridgescope.parsers.events import EventParser
from ridgescope.parsers.nccl import NcclParser
from ridgescope.parsers.prefix import split_rank_prefix
from ridgescope.parsers.srun import PIECE
from ridgescope.probes.logprobe import cut_pending

pytestmark = pytest.mark.timeout(300)
EXAMPLES = int(os.environ.get("RIDGESCOPE_FUZZ_EXAMPLES", "2000"))
"""Examples per property: 2,000 (~17 s for the module on one core); set the variable higher for a
longer hunt (20,000 ran clean in 3 min).  At 60, shapes that a parser raised on went unfound."""
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Fragments of real progress lines, so that generated text reaches the deep paths of each parser.
FRAGMENTS = [
    " iteration ", "/", " | ", "elapsed time per iteration (ms): ", "lm loss: ", "time (ms) | ",
    "forward-compute: ", "step:", "step ", "loss:", " loss ", "tps: ", "memory: ", "GiB(", "%)", "mfu: ",
    "{'loss': ", "'epoch': ", "}", "%|", "| ", "it/s]", "s/it]", "[00:01<00:02, ", "Epoch 0: ",
    "v_num=1, train_loss=", "DLL 2025-01-01 00:00:00.1 - ", " : ", "[Rank 0] step=", ", skipped=", ", lr=[",
    "RunningAvgSamplesPerSec=", "NCCL INFO ", "comm 0x1 rank ", " nranks ", " cudaDev ", "busId ",
    " - Init COMPLETE", "AllReduce: opCount ", " count ", " datatype ", " [nranks=", "Traceback (most recent call last):",
    "  File ", "RuntimeError: ", "CUDA out of memory. Tried to allocate ", "Watchdog caught collective operation timeout: ",
    "RESOURCE_EXHAUSTED: Out of memory while trying to allocate ", " bytes.", "OOM when allocating tensor", "NCCL error in: ",
    "srun: error: ", ": tasks ", ": Exited with exit code ", "*** STEP ", " CANCELLED AT ", " DUE TO ", " ***",
    "Detected 1 oom_kill event in StepId=", "noticed that process rank ", " exited on signal ", "exited with non-zero status",
    "  Process name: [[", "  Exit code: ", "{\"message\": \"", "{\"msg\": \"", "\"}",
    "WorkNCCL(SeqNum=", "saving checkpoint at iteration ", " to /x", "Resuming from step ", "[batch=", "Train ",
    "[rank3]:", "3: ", "[1,2]<stdout>:", "[default0]:", "[default12]:", "\r", "\x1b[31m", "\t", "=", ":", "1", "12", "3.5", "1e-3", "nan", "(", ")",
    "[", "]", ",", " ", "ms", "s", "train_time:", "iter ", "Latency: ", "|E2E latency=", "epoch: 0|step: ",
    "Epoch: [0][", "Speed: ", "| train_inner | {", "\"loss\": \"1.0\"",
    "'step': 5", "'rank': ", "'kind': ", "'eval_step': ", "'eval_loss': ", ", ", "epoch 2: {",
    "{'loss': 2.5,\n", " 'step': 3,\n", "  'x'],\n", " 'lr': array(0.1, dtype=float32)}", "epoch 0: perplexity: ",
    " eval_loss: ", "1.50s/batch", "3batch [", "% 3/4 [", "  Num examples = 66\n", "  Num Epochs = 2\n",
    "accumulation) = 12\n", "  Gradient Accumulation steps = 3\n", "  Total optimization steps = 12\n",
    " | Num Epochs = 1 | Total steps = 30\n", "Data Parallel GPUs = 1 | Total batch size (2 x 4 x 1) = 8\n",
    "'epoch': '0.3529'}", "'epoch': 0.35294117647058826}", "{'bleu': ", "{'rouge1': ", "Evaluation metrics: {",
    # formats and prefixes added later: Megatron-LM's dated lines and timer blocks, NeMo 2.0, MaxText,
    # launchers' node prefixes: torchx's (learnt from its logger), kubectl's, pdsh's, SkyPilot's
    "torchx 2026-12-06 13:54:31 INFO     Waiting for the app to finish...\n", "crash/1 [1]:", "\x1b[32mcrash/0\x1b[0m ",
    "\rcrash/0 ", "[pod/llama-worker-2/pytorch] ", "WORLD INFO DICT: {'algo-1': [0, 1], 'algo-2': [2, 3]}\n", "algo-2: ",
    "(worker1, rank=1, pid=2379, ip=10.0.0.3) ", "llama-worker-1 pytorch ", "ml llama-master-0 pytorch ",
    "+ llama-worker-3 \u203a pytorch\n", "\x1b[96mllama-worker-1\x1b[0m \x1b[36mpytorch\x1b[0m ",
    "crash-x095-crash-1-0 crash-1 ", "sft-node-0-1-x7kbp node ", "[1,2][vm:13222]<stdout>: ",
    "[prterun-vm-13357@1,2]<stdout>: ", "[2] ", "failed (exitcode: 1) local_rank: 1 (pid: 1455) of binary: ",
    "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n", "=   RANK 6 PID 24 RUNNING AT node9\n",
    "=   KILLED BY SIGNAL: 9 (Killed)\n", "prterun noticed that process rank 1 with PID 1 on node vm exited on\n",
    "signal 9 (Killed).\n", "\u25b6 Starting validation at step 5...\n", "\U0001f4ca Validation Results:\n",
    "    \u2022 Accuracy: 0.45\n", "    \u2022 Total validation time: 32.10s\n",
    # CLU, NCCL 2.19+, Ray, DeepSpeed's config and checkpoint lines, printed tensors, Unix times
    " [2024-10-16 04:23:00] iteration ", "(min, max) time across ranks (ms):", "max time across ranks (ms):",
    "    forward-backward ....: (", "validation loss at iteration ", " on test set | ", "Training epoch 0, iteration ",
    "global_step: ", "completed step: ", ", seconds: ", "logging_writer.py:35] [", "ncclCommInitRank comm 0x1 rank ",
    "Init timings - ncclCommInitRank: rank ", " total ", "(RayTrainWorker pid=", ", ip=10.0.0.1) ",
    "- (ip=10.0.0.1, pid=", ") world_rank=", "Setting up process group for: env:// [rank=", " [repeated 3x across cluster]",
    "]   gradient_accumulation_steps .. ", "Checkpoint global_step", " is about to be saved!", " is ready now!",
    "checkpoint save for ", "tensor(", "np.float64(", "'timestamp': 1593108597.2", "Node[0] Epoch[", "] Batch [",
    # Lightning's RichProgressBar
    "Epoch 1/9  ", "\u2501\u2501\u2501\u257a\u2501", " 8/8 ", "0:00:01 \u2022 -:--:-- ", "8.13it/s ", "train_loss: ",
    "\x1b[2K\x1b[1A",
    # torch's excepthook and --log-line-prefix-template prefixes, DeepSpeed's breakdown, HF 5's resume
    "[rank1]: ", "[3]:", "[Rank 0] time (ms) | fwd: ", " | bwd_allreduce: ", "_microstep: ",
    "Resuming training from checkpoint with epoch ", " and global step ", "'loss': '1.06'",
    "Steps:  10%|", "Iteration: ", " 16.15it/s, lr=0.01, step_loss=0.972]",
    "gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 5000ms for recv operation to complete",
    # Keras: its bar (3 and tf.keras 2), verbose=2, ModelCheckpoint
    "Epoch 2/5", " 7/16 ", "\u2501\u2501\u2501\u2501", " 0s 88ms/step", " - accuracy: ", " - val_loss: ",
    "\x08\x08\x08\r", "[=====>......]", " - ETA: 1:05", "/Unknown", "us/step", " - 4s/epoch",
    "Epoch 1: val_loss improved from None to 0.68, saving model to /c/best.keras", "finished saving model to ",
    # srun's label around torchrun's prefix, and a line of exactly one srun piece
    "1: [default2]:", "  0: [default0]:", "0: " + "x" * 1024,
    # Composer's other headers and its evaluation, DeepSpeed's pipeline line, a unit in brackets
    "[epoch=2][batch=1/8]:", "[token=12288/100000]:", "\t Train time/batch: ", "[Eval batch=2/2] Eval on eval data:",
    "\t Eval metrics/eval/CrossEntropy: ", "steps: 7 loss: ", " iter time (s): ", " samples/sec: ", "time (ms): ",
    "throughput (tokens/s): ", "[trainer1]:", "vm:2: ",
    # MMEngine and timm
    "Epoch(train) [2][ 3/8]  ", "Iter(train) [ 9/16]  ", "Epoch(val) [1][4/4]    ", "data_time: ", "memory: ",
    "Train: 2 [  50/1251 (  4%)]  ", "Test: [ 389/389]  ", "Loss: 6.9 (6.92)  ", "Time: 0.412s, 1242.72/s  ",
    "Acc@1: ",
    # crashes
    "Segmentation fault", " (core dumped)", "Fatal Python error: ", "terminate called after throwing an instance of '",
    # LitGPT, OLMo, Nanotron, units after a space, scaled numbers
    "Epoch 1 | iter 40 step 5 | loss train: ", " | iter time: ", " ms (step)", "iter 4800: val loss ",
    ", val time: ", " (optimizer.step)", "[step=10/100,epoch=0]", ",eta=0h03m]", "    train/CE loss=",
    "    throughput/device/BPS=", "    eval/c4/CrossEntropyLoss=", "Running evaluation for '",
    "[INFO|DP=0|PP=0|TP=0|ip-1]: iteration: ", " / 1000 | ", "11.5K", "85.8G", " sec", "step-time ",
    # verl
    "(TaskRunner pid=7) ", "step:3 - ", "actor/pg_loss:", " - timing_s/step:", " - val-core/a/acc/mean@1:",
    # NeMo RL
    "========================= Step 2/3 =========================", "  \u2022 Loss: ", "  \u2022 Total step time: ",
    "  \u2022 policy_training: 25.05s (37.6%)", "    \u2022 Validation loss: ", "\u23f1\ufe0f  Timing:",
    # slime
    "step 3: {'train/loss': ", " - perf 3: {'perf/train_wait_time': ", "'perf/step_time': ",
    # MiniMind
    "Epoch:[1/2](", "100/44160), loss: ", "Epoch:[0/19](0/24681) loss:8.863 ", "epoch_Time:372.0min:",
    # PyTorch/XLA, a rank tag, a step's evaluation values
    "| Training Device=xla:0/3 Epoch=1 Step=280 Loss=0.01022 Rate=1769.73 ", "[rank 7] Step: 12    | ",
    "[Rank 0] step: ", "Step 00200 | Validation bpb: ", "-100.0% bf16 MFU",
    # open_clip
    "Train Epoch: 0 [  6464/109468 (3%)] ", "Data (t): 0.158 ", "Batch (t): 0.559, 36.0876/s, 4.5/s/gpu ",
    "Logit Scale: 99.995 ", "Contrastive_loss: 0.97884 (1.023) ", "Eval Epoch: 1 ", "clip_val_loss: 0.0076\t",
    # MindFormers
    "{ Epoch:[  1/  2], ", "step:[    2/   19], ", "loss: 10.633, ", "loss:[9.673/9.981], ", "per_step_time: 1752ms, ",
    "overflow cond: False, ", "global_norm: [1.508834]", "global_norm [1 31049]", "train_throughput_per_npu: 170.738T",
    # DeepSpeed's Flops Profiler
    "Profile Summary at step 6:", "fwd latency:     781.54 us", "iter latency:   5.77 ms ",
    "FLOPS per GPU = 3 * fwd flops per GPU / iter latency:   2.33 MFLOPS", "samples/second:  1387.41 ",
    "fwd FLOPS per GPU = fwd flops per GPU / fwd latency: 81.9 TFLOPS", "step latency: 1.8 Gs",
    # MindSpore's callbacks and msrun's workers
    "epoch: 2 step: 12, loss is 0.4447", "Train epoch time: 802.759 ms, per step time: 66.897 ms",
    " (data time: 1.234 ms)", "epoch time: 1.5e3 ms, per step time: ", "PostProcess] This node 1 rank id: 1",
    # DeepSpeed's comms logger
    "[Rank 0] comm op: all_reduce | time (ms): 125.72 | msg size: 2.25 KB | ", "algbw (Gbps): 0.00 | busbw (Gbps): 0.00",
    "comm op: all_reduce | [Caller Func: allreduce_bucket] | ", "time (ms): 0.73 | msg size: 0B", " | msg size: 4.0 ZB",
    # OpenNMT-py
    "Step 50/ 5000; acc:   5.35; ppl: 1497.24; xent: 7.31; ", "lr: 1.00000; ", " 84/336 tok/s;", "    890 sec",
    # mmcv's TextLoggerHook
    "Epoch [1][15/678]\t", "lr: 2.000e-02, eta: 1 day, 16:24:41, time: 0.391, ", "data_time: 0.009, memory: 3946, ",
    "Iter [150/80000]\t", "Iter(val) [500]\t", "Epoch(val) [1][625]\t", "bbox_mAP: 0.3620, ",
    # PySlowFast
    "json_stats: {", '"_type": "train_iter", ', '"epoch": "10/50", ', '"iter": "90/159", ', '"dt": 4.99287, ',
    '"dt_data": 0.00628, ', '"gpu_mem": "4.68G", ', '"_type": "val_epoch", ', "}",
    # MetricLogger, Swin, Detectron2, DLRM, GPT-NeoX
    "Epoch: [2]  [ 150/1251]  eta: 0:20:52  ", "  max mem: ", "Test:  [ 0/50]  eta: ", "* Acc@1 ", " Acc@5 ",
    "Train: [30/300][400/2859]\teta 0:20:52 lr ", "\tmem 16138MB", "d2.utils.events]:  eta: ", "  last_time: ",
    "max_mem: 3961M", "Finished training it 1024/315310 of epoch 0, ", " ms/it, loss ", "Testing at - ",
    "| epoch   2 |    60/   99 batches | lr ", " | ms/batch ", " | ppl ", "| end of epoch   1 | time: ",
    "s | valid loss ", "| End of training | test loss ", " Time=21:35:09", " Device=xla:0/2 ",
    " samples/sec: 51.2 | iteration ", " approx flops per GPU: 150.3TFLOPS |", "global_step/max_steps': '",
    "Epoch [1/5], Step [", "100/600], Loss: ", "epoch: 8/40, iter: ", "| yolox.core.trainer:246 - ",
    " batch_cost: ", " reader_cost: ", "1|26|Loss: ", "[trainer0|0]:",
    "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size\n", "    70/1000      6.73G  ",
    # Ultralytics' own bar and its validation, OLMo-core's numbers and evaluations, LitGPT's end,
    # torchvision's evaluation result
    "128: 50% \u2501\u2501\u2501\u2500\u2500\u2500 1/2 ", "2.4s/it 0.7s<2.4s", " 0/2  0.1s", "\r\x1b[K",
    "                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95): ",
    "                   all          4          4      0.989", "=2.107B", "=1.59E-06", "=2,378",
    "Running lm evals...", "Finished lm evals in 0.5 seconds. Metrics:\n", "    checkpoint/save_duration_s=",
    "    throughput/in-loop eval batches=",
    "Final evaluation | val loss: ", " | val ppl: ", "Test:  Acc@1 ", ";  Acc@5 ",
    # PaddleDetection, pycocotools' table, ms-swift's mean step, a cut validation label
    "Epoch: [1] [ 20/200] learning_rate: ", " eta: 67 days, 10:28:48 ", " data_cost: ", " images/s, max_mem_reserved: ",
    "Save checkpoint: ", "Eval iter: 0", "Evaluate annotation type *bbox*",
    " Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = ",
    " Average Recall     (AR) @[ IoU=0.50:0.95 | area= large | maxDets=100 ] = ", "'train_speed(s/it)': ",
    "'iteration': '5/20'", "  mA\u2026", "resume=''",
    # verl's SFT trainer after its bar, nanoGPT's resume
    "\rEpoch 1/1:  35%|###5      | 7/20 [00:01<00:03,  3.62it/s]", "step:8 - train/mfu:", "Resuming training from ",
    "Last step checkpoint completed in ", "Checkpoints will be loaded from and saved to ",
    "/out/model_0000009.pth", "ckpt_epoch_0.pth saving......", ".pth saved !!!", "Save weights to ",
    "Evaluate in main process...",
    # Megatron's timers of every rank and its straggler report's GPU counters, NeMo's saves and
    # resumes, Ray Train's reports
    "times across ranks (ms):\n", "INFO:megatron.core.timers:times across ranks (ms):\n", "  batch-generator:\n",
    "     rank  1: ", "(min, max) time across ranks (ms):\n", "    forward-compute ......: (", " | MnPwr/Rnk: ",
    "W/8 | MxClk/Rnk: ", "MHz/0 | MnEtpt/Rnk: ", "Restored all states from the checkpoint at ",
    "Global Checkpoint Save : Rank: 0 : Iteration: ", "TrainingReport(checkpoint=None, metrics={'loss': ",
    # TensorFlow's loops: the Estimator, TF-slim, the Object Detection API, Orbit (and absl's prefix)
    "INFO:tensorflow:", "I1201 10:54:09.452073 1400 controller.py:531] ", "loss = 0.65", ", step = ", " (0.054 sec)",
    "global step 7: loss = ", " sec/step)", "Step 200 per-step time 0.831s loss=", "train | step:     25 | ",
    " eval | step:     20 | ", "steps/sec:    3.2 | ", "eval time:    0.1 sec | ", "output: ", "output: \n",
    "    {'learning_rate': 0.001,\n", "     'training_loss': 0.675}", "Saving checkpoints for 10 into ",
    "Calling checkpoint listeners after saving checkpoint 10...", "Saving dict for global step 10: ",
    "Inference Time : 0.11933s", "Starting evaluation at ", "Restoring parameters from /m/model.ckpt-40",
    "restored from checkpoint: ", "saved checkpoint to ",
    # fairseq's and metaseq's formats, saves and validations
    "| train_inner | ", "| train | ", "| valid | ", "][valid][INFO] - ", "| epoch 001 | ", "| epoch 009:   ",
    "epoch 001:    100 / 1975 ", "valid on 'valid' subset | ", "num_updates=", "num_updates ", '{"epoch": 1, ',
    '"valid_loss": "7.2", ', " (epoch 1 @ 10 updates, score None) (writing took ", "Preparing to save checkpoint for epoch ",
    'begin validation on "', " after 85 updates",
    # PyTorch's NCCL watchdog and flight recorder, torchrun's report of its failed ranks
    "Received a dump signal due to a collective timeout from  rank 6 and ", "this local rank and ",
    "Last enqueued NCCL work: 5, last completed NCCL work: 4.", "[PG ID 0 PG GUID 0(default_pg) Rank 7] ", "[PG 1 Rank 0] ",
    "failure detected by watchdog at work sequence id: 3 PG status: last enqueued work: ", ", last completed work: ",
    "Timeout at NCCL work: ", "watchdog got stuck for 480 seconds",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n", "Root Cause (first observed failure):\n",
    "[0]:\n", "  time      : 2026-11-29_22:21:32\n", "  rank      : 1 (local_rank: 1)\n",
    "  exitcode  : -6 (pid: 12)  (SIGABRT)\n", "  traceback : ", "============================================================\n",
    # Megatron's check of the gradients
    "AssertionError: Rank 13: found NaN in local grad norm", ". Device: 5, node: ", "RuntimeError: Rank 2, node ",
    ", device 2, iteration -1: Unexpected result nan (message='",
    # NCCL's warnings of a failed link
    "node-7:4242:4301 [3] ", "ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer ", "10.0.0.12<58172>",
    " with status=12 opcode=0 len=0 vendor err 129 (Recv)", " with error 12, opcode 0, len 0, vendor err 129",
    "NCCL WARN socketProgressOpt: Call to recv from ", " failed : Connection reset by peer",
    "NCCL WARN socketProgress: Connection closed by remote peer ",
    "srun: error: Node failure on ", " DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***", "slurmstepd-vm: error: ",
    "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. ", "7/8 clients joined.",
    # loss scalers' overflows, a victim's error, the MNIST example, MLPerf's logger
    "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536", ", reducing to 32768",
    ", but hysteresis is 2. Reducing hysteresis to 1", "Grad overflow on iteration ", "Reducing dynamic loss scale from ",
    "Using dynamic loss scale of ", "[Rank 0] Overflow detected. Skipping step.", "Gradient overflow.  Skipping step, loss scaler 0 ",
    "reducing loss scale to 1e-202", "NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: 64.0",
    "Connection closed by peer [127.0.0.1]:41654", "Train Epoch: 1 [640/60000 (1%)]\tLoss: 2.213470",
    "Test set: Average loss: 0.0468, Accuracy: 9842/10000 (98%)", ":::MLLOG ", '{"namespace": "", "time_ms": 1593112761379, ',
    '"key": "tracked_stats", "value": {"throughput": 1.9}, ', '"key": "eval_accuracy", "value": 0.19, ', '"metadata": {"step": 3072}}',
    "srun: error: vm: task 1: Exited with exit code 1",
    # ESPnet's reporter (its values run into the next name where it leaves out the `, `), FunASR's count
    "(trainer:811) INFO: ", "1epoch:train:1-2batch: ", "3epoch:train:1-50batch:50num_updates: ", "iter_time=0.002, ",
    "forward_time=0.010loss_ctc=55.366", "optim0_lr0=1.000e-03, ", "train_time=0.015", "2epoch results: [train] ",
    "time=1 minute and 2.5 seconds, total_count=16, [valid] ", "The training was resumed using /x/checkpoint.pth",
]

lines = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=20), max_size=40).map("".join)


def _check(recs):
    for r in recs:
        assert r["kind"] in {"progress", "timing", "checkpoint", "eval", "restart", "error", "nccl_init", "nccl_coll"}
        assert "rank" in r and "step" in r and "framework" in r
        msgpack.packb(r)


def _check_count(d, lines: int, text: str) -> None:
    """Each line is counted once; a line that srun cut into pieces of 1024 bytes (a labelled
    line exactly that long begins one) counts once for all its pieces, and so does one that
    `srun -u` cut between writes, whose newline came alone: a label with nothing behind it
    (srun's, or another launcher's read as srun's, so a line that ends in a space)."""
    if re.search(r"(?m)^ {0,7}[0-9]{1,7}: [^\n]{%d}$| $" % PIECE, text):
        assert d.stats["lines"] <= lines
    else:
        assert d.stats["lines"] == lines


def _feed_checked(d, line):
    _check(d.feed(line))


@SETTINGS
@given(st.lists(lines, max_size=8), st.sampled_from([None, *FORMATS]))
@example([" iteration [default0]:\n0"], None)   # a torchrun prefix, then a newline inside
@example(["0: " + "x" * 1024, "output: \n iteration "], None)     # srun's first piece, then a newline inside
def test_any_text_never_raises(batch, fmt):
    d = Dispatcher(fmt)
    for line in batch:
        _feed_checked(d, line)
    _check(d.flush())
    _check_count(d, len(batch), "\n".join(batch))


@SETTINGS
@given(st.lists(lines, max_size=8), st.sampled_from([None, *FORMATS]), st.booleans())
def test_any_block_never_raises(batch, fmt, as_bytes):
    """The same through `feed_chunk`, where the active parser's block readers see the text."""
    text = "".join(line + "\n" for line in batch)
    d = Dispatcher(fmt)
    _check(d.feed_chunk(text.encode("utf-8", "surrogatepass") if as_bytes else text))
    _check(d.flush())
    _check_count(d, text.count("\n"), text)


@SETTINGS
@given(st.lists(lines, max_size=8), st.integers(1, 64), st.sampled_from([None, *FORMATS]))
def test_any_stream_read_as_the_probe_reads_never_raises(batch, read_size, fmt):
    """The log probe's way: whole lines, and the `\r` redraws of a line not ended yet, at any
    read size; each line is counted once, when it ends."""
    data = "".join(line + "\n" for line in batch).encode("utf-8", "surrogatepass")
    d, pending = Dispatcher(fmt), b""
    for i in range(0, len(data), read_size):
        done, redraws, pending = cut_pending(pending + data[i:i + read_size])
        _check(d.feed_chunk(done))
        _check(d.feed_redraws(redraws))
    _check(d.feed_chunk(pending))
    _check(d.flush())
    _check_count(d, data.count(b"\n"), data.decode("utf-8", "surrogatepass"))


@SETTINGS
@given(st.lists(st.binary(max_size=200), max_size=8))
def test_any_bytes_never_raise(batch):
    d = Dispatcher()
    for raw in batch:
        _feed_checked(d, raw)
    _check(d.flush())


@SETTINGS
@given(lines, st.sampled_from(sorted(PARSERS)))
def test_each_parser_direct(line, name):
    p = PARSERS[name]()
    for r in (None, 0):
        _check(p.parse(line, r))
    _check(p.flush())
    _check(NcclParser().parse(line, None))
    _check(EventParser().parse(line, None, name))
    rank, rest = split_rank_prefix(line)
    assert rank is None or rank >= 0
    assert line.endswith(rest)


@pytest.mark.parametrize("line", ["saving checkpoint at iteration \U00016130", "step \U00016131/9 loss 2.0",
                                  "[rank\U00016132]: x", "iteration 1/ 9 | lm loss: \U00016133.5 |"])
def test_digits_that_python_cannot_read_are_no_numbers(line):
    """`regex`'s Unicode `\\d` takes digits newer than Python 3.11's tables (Gurung Khema,
    Unicode 16), which `int()` refuses: the patterns take ASCII digits only."""
    for name in sorted(PARSERS):
        _check(PARSERS[name]().parse(line, None))
    _check(EventParser().parse(line, None, "generic"))
    assert split_rank_prefix(line)[0] is None


def test_pathological_lines_finish():
    d = Dispatcher()
    nasty = [
        "step " + "1" * 200_000,
        " iteration " + "1 |" * 100_000,
        "time (ms) | " + "a: 1 | " * 50_000,
        "{'loss': " + "[" * 100_000,
        " 1%|" + "#" * 300_000 + "| 1/2 [",
        "key=" * 100_000,
        "step: 1  loss: " + "9" * 50_000,
        "\r".join(["  5%|#  | 1/20 [00:01<00:10, 1.0it/s]"] * 5000),
        "a" * 1_048_576,
        "Traceback (most recent call last):",
        "  File " * 100_000,
        "x" * 10 + "\x1b[" * 100_000,
        ":::MLLOG " + "[" * 100_000,
        ':::MLLOG {"key": "tracked_stats", "value": {' + '"a": 1, ' * 50_000 + '"b": 2}, "metadata": {"step": 1}}',
        "Grad overflow on iteration " + "1" * 200_000,
        "Train Epoch: " + "1" * 100_000 + " [",
        "torchx 2026-12-06 13:54:31 INFO",      # (then a role's prefix learnt, and many of it)
        "crash/1 [0]:" * 100_000,
        "crash/1 " * 200_000,
        "llama-worker-1 pytorch " * 40_000,       # (stern's prefix learnt first, then many of it)
        "llama-worker-1 pytorch [default" + "1" * 100_000,
        "[prterun-vm-1@1,0]<stdout>: " + "@" * 200_000,
        "[1,0]" + "][a:1]" * 100_000 + "<stdout>: x",
        "1: x failed (exitcode: 1) local_rank: " + "1" * 100_000,
        "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
        "=   RANK 1 PID 2 RUNNING AT " + "a" * 300_000,
        "\u25b6 Starting validation at step " + "9" * 100_000,
        "{ Epoch:[  1/  2], step:[    2/   19], " + "loss: 1, " * 100_000,
        "{ Epoch:[  1/  2], step:[    2/   19], global_norm: [" + "1" * 200_000,
        "Profile Summary at step " + "6" * 100_000 + ":",
        "iter latency: " + "5" * 100_000 + " ms",
        "[Rank 0] comm op: all_reduce | time (ms): " + "1" * 100_000 + " | msg size: 2.25 KB",
        "[Rank 0] comm op: " + "x | " * 100_000 + "time (ms): 1.0 | msg size: " + "9" * 100_000 + " B",
    ]
    for line in nasty:
        _feed_checked(d, line)
    _check(d.flush())
    assert d.stats["lines"] == len(nasty)


def test_regex_timeout_counts_as_garbage(monkeypatch):
    d = Dispatcher()

    def boom(line, rank, checked=False):
        raise TimeoutError("regex time-out")

    monkeypatch.setattr(d, "_line", boom)
    assert d.feed("step 1/2 loss 1.0") == []
    assert d.stats["timeouts"] == 1 and d.stats["garbage"] == 1


def test_a_parser_bug_costs_one_line(monkeypatch):
    """A parser that raises on a line (a bug) loses that line, counted as garbage; the stream
    goes on, through `feed` and through `feed_chunk` alike."""
    d = Dispatcher()
    real = d._line

    def buggy(line, rank, checked=False):
        if "boom" in line:
            raise ValueError("parser bug")
        return real(line, rank, checked)

    monkeypatch.setattr(d, "_line", buggy)
    assert d.feed("boom step 1 loss 2.0") == []
    got = d.feed_chunk(b"step 1/4 loss 2.0 boom\nstep 2/4 loss 1.5 step_time_ms 150.0\n")
    assert [r["step"] for r in got] == [2]
    assert d.stats["garbage"] == 2 and d.stats["lines"] == 3
    # in a line of redraws too long to read whole, the one redraw: the bar's others are read
    d = Dispatcher()
    real = d._line
    monkeypatch.setattr(d, "_line", buggy)
    redraws = [f"Steps: {n}%|#   | {n}/300 [00:01<00:01, 1.0it/s, step_loss=0.{n}]" for n in range(1, 301)]
    redraws[4] += " boom"
    got = d.feed("\r".join(redraws))
    assert [r["step"] for r in got] + [r["step"] for r in d.flush()] == [n for n in range(1, 301) if n != 5]
    assert (d.stats["garbage"], d.stats["lines"]) == (1, 1)


def test_regex_timeout_mechanism_is_real():
    bad = regex.compile(r"(.*)*,(.*)*,(.*)*x")     # the kind of pattern the parsers avoid
    with pytest.raises(TimeoutError):
        bad.search("a," * 300, timeout=TIMEOUT)
