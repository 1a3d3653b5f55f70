"""Framework-independent events: checkpoints, restarts, evaluation phases, and errors
(NCCL watchdog timeouts and how far each rank had got (`watchdog.py`), NCCL errors and failed
links, CUDA OOM and XLA's and TensorFlow's, CUDA errors, NaN gradients, the steps an fp16 loss
scaler skipped (`overflow.py`, a warning), Python tracebacks as one event (marked `victim` where
they only say another process failed, `victims.py`), launcher and scheduler failures
(`launcher_errors.py`, `torchrun_report.py`), processes that died of a signal)."""
from __future__ import annotations

from . import launcher_errors, nccl, overflow, torchrun_report, watchdog
from .base import SOURCE_LOCATION, Pattern, num, parse_bar, record, to_ms
from .coco import CocoSummary
from .hf import epoch_result, printed_metrics
from .victims import victim

WATCHDOG = Pattern(
    r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(\d++), OpType=(\w++)"
    r"(?:, NumelIn=(\d++), NumelOut=(\d++))?,? ?(?:Timeout\(ms\)=(\d++))?\) ran for (\d++) milliseconds")
RANK_TAG = Pattern(r"\[Rank (\d{1,7}+)\]")
OOM = Pattern(r"CUDA out of memory\. Tried to allocate ([\d.]++) ([GMK]i?B)(?:\. GPU (\d++))?")
RETRIES = Pattern(r"(\d++) CUDA memory allocation retries")
# Device memory exhausted where the runtime is XLA's (JAX, PyTorch/XLA, TF with XLA) or
# TensorFlow's own: both raise the status RESOURCE_EXHAUSTED (`jaxlib.xla_extension.XlaRuntimeError:
# RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184 bytes.`; TPU's `Ran out of
# memory in memory space hbm`; TensorFlow's `ResourceExhaustedError: OOM when allocating tensor with
# shape[..]`), which does not say the device's kind: `device_oom`, not `cuda_oom`.
DEVICE_OOM = Pattern(r"RESOURCE_EXHAUSTED: .{0,200}?(?i:out of memory)(?: while trying to allocate (\d++) bytes)?"
                     r"|OOM when allocating tensor")
CHILD = Pattern(r"failed \(exitcode: (-?\d++)\) local_rank: (\d++) \(pid: (\d++)\)")
KILLING = Pattern(r"Killing subprocess (\d++)")
NCCL_WARN = Pattern(r"NCCL WARN (.{0,500}+)")
# A process that died of a signal, as the shell reports it (`line 12: 4242 Segmentation fault
# (core dumped) python train.py`), as faulthandler does (`Fatal Python error: Segmentation
# fault`), or as libstdc++ does before it aborts (`terminate called after throwing an instance of
# 'c10::DistBackendError'`).  (torch's elastic agent says `failed (exitcode: -11)`: CHILD.)
CRASH = Pattern(r"\b(Segmentation fault|Bus error|Floating point exception|Illegal instruction"
                r"|Aborted(?= \(core dumped\)))")
FATAL_PY = Pattern(r"Fatal Python error: (.{1,500}+)")
CPP_ABORT = Pattern(r"terminate called after throwing an instance of '([^']{1,200}+)'")
EXC_END = Pattern(r"([A-Za-z_][\w.]{0,120}?(?:Error|Exception|Interrupt|Exit|Warning|Failure))(?::\s?(.{0,2000}+))?$")
NAN = Pattern(r"(?:Inf|NaN|nan|inf) detected|[Ll]oss is (?:nan|NaN|inf)")
GRAD_NAN = Pattern(r"(?:found (?:NaN|Inf) in|Unexpected result (?:nan|inf)\b)")
"""Megatron's check of each rank's gradients before they are reduced (`--check-for-nan-in-grad`),
fatal: `AssertionError: Rank 11: found NaN in local grad norm in backward pass before
data-parallel communication collective. Device: 3, node: gpu-7` (its rerun state machine's since
0.9: `RuntimeError: Rank 2, node gpu-7, device 2, iteration -1: Unexpected result nan
(message='found NaN in local grad norm for bucket #0 ...')`): the rank whose gradients went bad."""
GRAD_NAN_RANK = Pattern(r"Rank (\d{1,7}+)[:,]")
GRAD_NAN_NODE = Pattern(r"\bnode:? ([\w.-]{1,200}+)")
GRAD_NAN_DEVICE = Pattern(r"\b[Dd]evice:? (\d{1,4}+)")

CKPT = Pattern(
    r"(?i)\b(sav(?:ing|ed)|save(?= checkpoints?: )|preparing to save|wr(?:ote|iting)|load(?:ing|ed)|restor(?:ing|ed)"
    r"|stor(?:ing|ed))\b"
    r"[^\n]{0,80}?\bcheckpoints?\b(?!_|=| *+:? *+(?:None|False|True)\b)")
# (`save` only as a label's, PaddleDetection's `Save checkpoint: /output/ppyoloe`, or after
# fairseq's `Preparing to`: a plain `save` is more often a setting's name than a message's verb.)
# The noun first: DeepSpeed's `[Torch] Checkpoint global_step10 is about to be saved!` and `... is
# ready now!`, NeMo's `Scheduled async checkpoint save for /ckpt/..` and `Async checkpoint save for
# step 19 finalized successfully.`, torchtune's `Model checkpoint of size 0.04 GiB saved to /out/..`
# (Not a path's `/checkpoint/` or a flag's `--checkpoint-activations`: the verb follows the noun
# or its tag.)
CKPT_NOUN = Pattern(r"(?i)(?<![/\w-])checkpoints? (?:[\w.-]{1,200}+ ){0,4}?(saved?|loaded|load|is about to be saved|is ready now)\b")
CKPT_HF = Pattern(r"Saving model checkpoint to (\S{1,1000}+)")
_CKPT_SWIN = ((" saving...", "start"), (" saved !!!", "end"))
"""Swin Transformer's (and its followers': SimMIM, Swin-MoE) `.../ckpt_epoch_0.pth saving......`,
then `... saved !!!`: the path is the word before."""
CKPT_YOLOX = Pattern(r"Save weights to (\S{1,1000}+)")
"""YOLOX's `Save weights to ./YOLOX_outputs/yolox_s`, before it saves (its latest, last epoch's and best)."""
CKPT_PADDLEOCR = Pattern(r"\bsave (?:best model is to|model in) (\S{1,1000}+)\s*+$")
"""PaddleOCR's (`tools/program.py`) `save model in /out/latest` and `save best model is to
/out/best_accuracy`, once saved."""
PADDLEOCR_METRIC = Pattern(r"([A-Za-z_][\w.]{0,60}+): (-?[\d.]++(?:e[+-]?\d++)?)(?:, |\s*+$)")
"""One `name: value` of PaddleOCR's `cur metric, acc: 0.5, norm_edit_dis: 0.8, fps: 188.0`."""
CKPT_NOT = Pattern(r"(?i)\b(?:not|no|never|without|skip(?:ping)?)\s++$")
"""What, right before a checkpoint's verb, says it did not happen (MaxText: `No existing
checkpoints found, not restoring checkpoint.`)."""
# Lightning's ModelCheckpoint(verbose=True): `Epoch 0, global step 100: 'val_loss' reached 2.34500
# (best 2.34500), saving model to '/ckpt/epoch=0-step=100.ckpt' as top 1`, then it saves.
CKPT_LIGHTNING = Pattern(r"global step (\d++): .{0,400}?saving model to '([^']{1,1000}+)'")
# Keras' ModelCheckpoint(verbose=1): `Epoch 2: val_loss improved from 0.68356 to 0.65689, saving
# model to /ckpt/best.keras` (or `Epoch 00002: saving model to ...`), then, in Keras 3, `Epoch 2:
# finished saving model to /ckpt/best.keras`.
CKPT_KERAS = Pattern(r"Epoch (\d++): (?:.{0,400}?, )?(finished )?saving model to (\S{1,1000}+)")
CKPT_PATH = Pattern(r"""(?:\bto|\bfrom|\bat|\bin|\bfor|:|\bcheckpoint)\s++['"]?(/?[\w.~-]{0,200}+/[^\s'",]{1,800}+|[\w.-]{1,200}?\.(?:pt|pth|bin|ckpt|safetensors|distcp)\b)""")
CKPT_DUR = Pattern(r"(?i)\b(?:in|took|duration:?|time spent in \w{1,40}+:|(?<!start )time(?: \(ms\))?:?)\s*+"
                   r"([\d.]++)\s*+(ms|s|sec|secs|seconds)\b")
"""A save's or load's printed time; not when it started (NeMo 2's `Global Checkpoint Save : Rank: 0 :
Iteration: 9 : Start time: 1796088337.933s : Save duration: 6.063s`, and its load's `Time spent in
load_checkpoint: 0.029s`)."""
CKPT_STEP = Pattern(r"(?i)(?:iteration|global[ _]step|step)[\s:=_-]{0,8}+(\d++)|checkpoint-(\d++)|step[-_](\d++)"
                    r"|/model_(\d{7})\.pth\b|(?:@|after) (\d++) (?:updates|steps)\b")
"""The step a checkpoint's message or path names (fvcore's, Detectron2's: `model_0000009.pth`, its
iteration as Detectron2 prints it; fairseq's and metaseq's `(epoch 1 @ 10 updates)` and `after 85
updates`, their steps)."""
# A resume names its step, or the checkpoint it names does (LitGPT: `Resuming training from
# out/step-00000008/lit_model.pth`).  A setting's name is no message (`Namespace(..., resume='',
# start_epoch=0)`, `'resume': False`, `resume: true`).
RESUME = Pattern(
    r"(?i)(?:resum(?:ing|ed|e)|continuing training|restarting)\b"
    r"(?!['\"]?+ *+=|['\"] *+:| *+: *+(?:true|false|none|null|''|\"\"|\d))[^\n]{0,80}?"
    r"(iteration|global step|step|epoch)(?:\s*+[:=]?\s*+|[-_])(\d++)")
RESUME_FROM = Pattern(r"\bResuming(?: training)? from (?:checkpoint )?['\"]?(/?[\w.~-]{0,200}+/[^\s'\",]{1,800}+"
                      r"|(?!scratch\b)[\w.~-]{1,200}+)['\"]? *+$"
                      r"|\bresume from ['\"]?(/?[\w.~-]{0,200}+/[^\s'\",]{1,800}+)['\"]? *+$")
"""A resume that names only its checkpoint's path, not its step: nanoGPT's `Resuming training
from out`, PaddleOCR's `resume from /out/latest` (a path), the last words of its line."""
RESUME_SETTING = Pattern(r"^\s*+resume_from_checkpoint=(/?[\w.~-]{0,200}+/[^\s,]{0,800}?checkpoint-(\d++))/?,?\s*+$")
"""A Trainer run's `resume_from_checkpoint=/out/checkpoint-8,` in the arguments it prints (ms-swift
prints them all, HF at `log_level="info"`): it resumes at the checkpoint's step.  (`=None` names
none; the `--resume_from_checkpoint` of a command line is not its own line.)"""
RESUME_STEP = Pattern(r"(?i)\b(?:iter(?:ation)?|global[ _]step|step)\s*+[:=]?\s*+(\d++)")
"""The step of a resume line that names its epoch first (HF 5: `... with epoch 1 and global step 8`,
MMEngine: `resumed epoch: 2, iter: 16`)."""
LIGHTNING_RESUME = "states from the checkpoint"
"""Lightning's resume (`fit(ckpt_path=...)`): `Restoring states from the checkpoint path at X`, then
`Restored all states from the checkpoint at X`.  Only a resume prints it, never a load of weights
to start from; where X names no step (NeMo 2's `.../tiny_gpt--...-consumed_samples=48.0-last/weights`),
the restart's step is known only from the first step the run draws after it."""
GLOO_TIMEOUT = Pattern(r"Timed out waiting (\d{1,12}+)ms for (\w{1,20}+) operation")
STORE_TIMEOUT = Pattern(r"Timed out after (\d{1,9}+) seconds waiting for (?:clients|workers)\. "
                        r"(\d{1,7}+)/(\d{1,7}+) (?:clients|workers) joined")
"""The rendezvous store's wait for the job's processes, timed out (`torch.distributed.DistStoreError:
Timed out after 901 seconds waiting for clients. 7/8 clients joined.`): some never started or
never reached it (a node down, a wrong address)."""
RESTART_ELASTIC = Pattern(r"(\d++)/(\d++) attempts left; will restart worker group")
EVAL_START = Pattern(r"(?i)\*{3,}+\s*+(?:Running )?(Evaluation|Evaluating|Prediction)\b")
EVAL_FAIRSEQ = Pattern(r'begin validation on "([^"]{1,200}+)" subset')
"""fairseq's and metaseq's validation begins (`fairseq.py` reads its result)."""


_EVAL_BEGINS = ("Eval iter: 0", "Evaluate in main process...")
"""How PaddleDetection's and YOLOX's evaluations begin (the end of their line)."""
_CKPT_NOT = ("%|", "not found", "Unable to find", "No checkpoint", "no existing checkpoint",
             "if checkpoint", "will be saved", "will be loaded", "Defaulting", "_checkpoint=",
             "metadata loaded from", "none found")


class EventParser:
    """Runs on every stream next to the framework parser."""

    def __init__(self) -> None:
        self.tb: dict = {}
        """rank -> its open traceback's lines, the crash of an abort held for its `what()`, or
        mpirun's report of the first process that failed (its lines hold no keyword)"""
        self.seen_timeouts: set = set()
        self.seen_failures: set = set()     # failed links' and nodes' keys: each is told again and again
        self.last_step: dict = {}
        self.coco = CocoSummary()
        self.mpirun = launcher_errors.MpirunReport()
        self.hydra = launcher_errors.HydraReport()
        self.torchrun = torchrun_report.TorchrunReport()
        self.resumed_unnumbered: dict = {}
        """rank -> the record of a restart whose step the rank's next step says: a resume that named
        no step (its load record), or the word of torchrun's agent, unlabelled (one node's), that
        a worker failed (None: any rank's), after which it may start its workers again
        (`--max-restarts`)"""
        self.scaler = overflow.ScalerLines()
        self.srun_told_first = False

    def in_traceback(self, rank) -> bool:
        return rank in self.tb

    def _close_tb(self, rank, framework, exc: str | None, msg: str | None, final: bool = True) -> dict:
        state = self.tb[rank]
        lines = state["lines"]
        state["open"] -= 1
        if final or state["open"] <= 0:
            self.tb.pop(rank, None)
        error = "traceback"
        text = f"{exc}: {msg}" if msg else (exc or "")
        device_oom = DEVICE_OOM.search(text) if "RESOURCE_EXHAUSTED" in text or "OOM when" in text else None
        if device_oom is not None:
            error = "device_oom"
        elif "out of memory" in text or "OutOfMemoryError" in (exc or ""):
            error = "cuda_oom"
        elif "NCCL" in text and ("timeout" in text.lower() or "Watchdog" in text):
            error = "nccl_timeout"
        elif "NCCL error" in text:      # `DistBackendError: NCCL error in: ..., unhandled system error`
            error = "nccl_error"
        elif "CUDA error: " in text:    # `an illegal memory access was encountered`, `uncorrectable ECC error ..`
            error = "cuda_error"
        elif grad_nan(text):
            error = "nan_inf"       # fatal here: the traceback's exception
        elif "joined" in text and STORE_TIMEOUT.search(text):
            error = "rendezvous_timeout"
        elif "Timed out waiting" in text and "gloo" in text:
            # this rank waited for a peer that never came: a victim, like NCCL's watchdog's
            error = "gloo_timeout"
        m = GLOO_TIMEOUT.search(text) if error == "gloo_timeout" else None
        extra = {"timeout_ms": int(m.group(1)), "op": m.group(2)} if m else {}   # what it waited for
        if device_oom is not None and device_oom.group(1):
            extra["tried_gb"] = round(int(device_oom.group(1)) / 2 ** 30, 3)
        if error == "rendezvous_timeout":
            extra.update(store_timeout(text))
        if victim(text):
            extra["victim"] = True      # it saw another process fail (see `victims`)
        if error == "nan_inf":
            place = grad_nan_place(text)
            named = place.pop("rank", None)
            rank = named if rank is None else rank
            extra.update(place)
        return record("error", framework, rank, self.step_of(rank), error=error, traceback=True,
                      exception=exc, message=(msg or "")[:2000], frames=sum(1 for x in lines if x.lstrip().startswith("File ")),
                      text="\n".join(lines)[-4000:], **extra)

    def traceback_line(self, line: str, rank, framework: str) -> tuple[bool, list]:
        """Feed a line while a traceback is open; returns (consumed, records).

        Several processes that share one unprefixed stream print their tracebacks interleaved:
        each `Traceback` header opens one more, each exception line closes one, so each
        traceback is still one event."""
        state = self.tb[rank]
        if "abort" in state:
            return False, [self._aborted(rank, line)]
        if "mpirun" in state:
            recs = self._mpirun_report(rank, line, framework)
            return not self.mpirun.passed, recs
        if "hydra" in state:
            recs = self._hydra_report(rank, line, framework)
            return not self.hydra.passed, recs
        if "torchrun" in state:
            return self._torchrun_report(rank, line, framework)
        lines = state["lines"]
        if line.startswith("Traceback (most recent call last)"):
            state["open"] += 1
            if len(lines) < 400:
                lines.append(line)
            return True, []
        if line.startswith((" ", "\t")) or line.startswith("During handling") or \
                line.startswith("The above exception") or not line.strip():
            if len(lines) < 400:
                lines.append(line)
            state["foreign"] = 0
            return True, []
        m = EXC_END.match(line.strip())
        if m:
            state["foreign"] = 0
            rec = self._close_tb(rank, framework, m.group(1), m.group(2), final=False)
            if rank in self.tb:
                state["lines"] = [x for x in lines if x.startswith("Traceback")][:1]
            elif m.group(1).endswith("ChildFailedError"):      # torchrun's report of its ranks follows
                self.torchrun.begin()
                self.tb[rank] = {"lines": [], "open": 1, "torchrun": True}
            return True, [rec]
        # another process's line in between: tolerate a few, then close what is open
        state["foreign"] = state.get("foreign", 0) + 1
        if state["foreign"] <= 5:
            return False, []
        out = []
        while rank in self.tb:
            out.append(self._close_tb(rank, framework, None, None, final=False))
        return False, out

    def _mpirun_report(self, rank, line: str, framework: str) -> list[dict]:
        """A line of mpirun's report of the first process that failed: its record once the exit
        code is read (the rank the report names), nothing if the report ends without one."""
        fields = self.mpirun.read(line)
        if fields is None and self.mpirun.lines < self.mpirun.REPORT_LINES:
            return []
        del self.tb[rank]
        if fields is None:
            return []
        return [record("error", framework, fields.pop("rank"), self.step_of(rank), **fields)]

    def _hydra_report(self, rank, line: str, framework: str) -> list[dict]:
        """A line of Hydra's box on a process that died: its record once the box says how."""
        fields = self.hydra.read(line)
        if fields is None and self.hydra.lines < self.hydra.REPORT_LINES and not self.hydra.passed:
            return []
        del self.tb[rank]
        if fields is None:
            return []
        named = fields.pop("rank")
        return [record("error", framework, named if named is not None else rank, self.step_of(rank), **fields)]

    def _told(self, failure: tuple) -> bool:
        """Was this failure told already (a link's repeats on each of its channels and
        connections, srun's node failure for each task of the node)?  Notes it if not."""
        if failure in self.seen_failures:
            return True
        if len(self.seen_failures) >= 4096:
            self.seen_failures.clear()
        self.seen_failures.add(failure)
        return False

    def _torchrun_report(self, rank, line: str, framework: str) -> tuple[bool, list[dict]]:
        """A line of torchrun's report of its failed ranks; returns (consumed, records).  Once it
        ends: what each rank's own exception says that a line would (an OOM, a CUDA or NCCL
        error), as that rank's, and the rank that failed first.  A line of something else ends a
        report cut short, and is read as any line."""
        report = self.torchrun
        consumed = report.belongs(line)
        if consumed:
            entries = report.read(line)
            if entries is None and report.lines < report.LINES:
                return True, []
        else:
            entries = report.failures()
        del self.tb[rank]
        out = []
        for entry in entries or ():
            if entry.get("exception"):
                out += [r for r in self.parse(entry["exception"], entry["rank"], framework) if r["kind"] == "error"]
        fields = torchrun_report.first_failure(entries or [])
        if fields is not None:
            out.append(record("error", framework, fields.pop("rank"), self.step_of(rank), **fields))
        return consumed, out

    def _aborted(self, rank, line: str | None) -> dict:
        """The crash of a process that aborted on a C++ exception, with what the exception
        said where `line`, the rank's line after, is libstdc++'s `what():` (the line is then read
        as any other too: a watchdog's timeout that it names is its own event)."""
        rec = self.tb.pop(rank)["abort"]
        what = line.strip() if line else ""
        if what.startswith("what():"):
            rec["what"] = what[7:].strip()[:2000]
        return rec

    def step_of(self, rank):
        """The step a rank is at: its own last one, else the stream's unprefixed one, else the
        furthest any rank reached (often rank 0 alone prints its steps, or a node's launcher
        labels them by node; the ranks of a synchronous job move together)."""
        last = self.last_step
        step = last.get(rank)
        if step is None:
            step = last.get(None)
            if step is None and last:
                step = max((s for s in last.values() if isinstance(s, int)), default=None)
        return step

    def parse(self, line: str, rank, framework: str) -> list[dict]:
        if "%|" in line:
            # a bar's desc is no event (`Loading checkpoint shards: 100%|...`), but a message
            # logged to the bar's stream before its next redraw is glued to the bar's end
            if line.rstrip().endswith("]"):
                return []       # a bar alone (the cheap test: most lines here are redraws)
            bar = parse_bar(line)
            if bar is not None:
                line = line[bar["end"]:]
        if line.startswith("Traceback (most recent call last)"):
            self.tb[rank] = {"lines": [line], "open": 1}
            return []
        step = self.step_of(rank)
        if "Watchdog caught" in line:
            m = WATCHDOG.search(line)
            if m:
                if rank is None and "[Rank " in line:   # torch's own tag, where no launcher put one
                    tag = RANK_TAG.search(line)
                    rank = int(tag.group(1)) if tag else None
                key = (rank, m.group(1), m.group(2))
                if key in self.seen_timeouts:
                    return []
                self.seen_timeouts.add(key)
                return [record("error", framework, rank, step, error="nccl_timeout", seq=int(m.group(1)),
                               op=m.group(2), numel_in=_i(m.group(3)), numel_out=_i(m.group(4)),
                               timeout_ms=_i(m.group(5)), ran_ms=_i(m.group(6)), victim=True,
                               message=line.strip()[:2000])]
        if "work: " in line or "watchdog got stuck" in line:
            found = watchdog.read(line, rank)
            if found is not None:
                return [record("error", framework, found[0], step, message=line.strip()[:500], **found[1])]
        if "out of memory" in line:
            m = OOM.search(line)
            if m:
                tried = num(m.group(1))
                if tried is not None and m.group(2).upper().startswith("M"):
                    tried /= 1024
                return [record("error", framework, rank, step, error="cuda_oom", message=line.strip()[:2000],
                               tried_gb=tried,
                               gpu=_i(m.group(3)))]
        if "RESOURCE_EXHAUSTED" in line or "OOM when" in line:
            m = DEVICE_OOM.search(line)
            if m:
                return [record("error", framework, rank, step, error="device_oom", message=line.strip()[:2000],
                               tried_gb=round(int(m.group(1)) / 2 ** 30, 3) if m.group(1) else None)]
        if "allocation retries" in line:
            m = RETRIES.search(line)
            if m:
                return [record("error", framework, rank, step, error="cuda_alloc_retry", severity="warning",
                               retries=int(m.group(1)), message=line.strip()[:500])]
        if "NCCL WARN" in line:
            m = NCCL_WARN.search(line)
            if m:
                net = nccl.net_failure(line)
                if net is None:
                    return [record("error", framework, rank, step, error="nccl_warn", message=m.group(1).strip())]
                # a link's failure repeats on each of its channels and connections: once a peer and status
                if self._told((rank, net.get("host"), net["peer"], net.get("ib_status"), net.get("reason"))):
                    return []
                return [record("error", framework, rank, step, error="nccl_net", message=m.group(1).strip(), **net)]
        if "exitcode" in line:
            m = CHILD.search(line)
            if m:
                code = int(m.group(1))
                failed = record("error", framework, rank, step, error="child_failed", exitcode=code,
                                signal=launcher_errors.signal_name(-code) if code < 0 else None,
                                local_rank=int(m.group(2)), pid=int(m.group(3)), message=line.strip()[:500])
                if rank is None:    # (a node's agent, behind its label, may be one of several)
                    self.resumed_unnumbered[None] = failed
                return [failed]
        if "Killing subprocess" in line:
            m = KILLING.search(line)
            if m:
                return [record("error", framework, rank, step, error="killed", pid=int(m.group(1)),
                               message=line.strip()[:500])]
        if "srun: error: " in line or "slurmstepd" in line or "noticed that process rank" in line:
            fields = launcher_errors.read(line)     # (before the crash's words: `task 3: Segmentation fault`)
            if fields is not None and fields.get("launcher") == "srun" and fields["error"] == "child_failed" \
                    and not self.srun_told_first:
                fields["first"] = self.srun_told_first = True   # srun tells its tasks' ends as it sees them
            if fields is not None and fields.pop("wrapped", False) and rank not in self.tb:
                self.mpirun.begin(dict(fields, message=line.strip()[:500]))     # its signal: the next line's
                self.tb[rank] = {"lines": [line], "open": 1, "mpirun": True}
                return []
            if fields is not None and not (fields["error"] == "node_failure" and self._told(("node", fields["host"]))):
                return [record("error", framework, fields.pop("rank", rank), step, message=line.strip()[:500],
                               **fields)]
        if "BAD TERMINATION" in line and self.hydra.REPORT in line and rank not in self.tb:
            self.hydra.begin()
            self.tb[rank] = {"lines": [line], "open": 1, "hydra": True}
            return []
        if self.mpirun.REPORT in line and rank not in self.tb:     # (a traceback of the rank's open: it stays)
            self.mpirun.begin()
            self.tb[rank] = {"lines": [line], "open": 1, "mpirun": True}
            return []
        # (`terminate called after throwing an instance of 'c10::Error'` passes the pre-check
        # by its exception's name: every one of torch's and the standard library's holds `rror`)
        if ("core dumped" in line or "egmentation fault" in line or "Fatal Python error" in line
                or "after throwing" in line):
            out = self._crash(line, rank, framework, step)
            if out:
                return out
        if "overflow" in line or "OVERFLOW" in line or "dynamic loss scale" in line:
            fields = self._overflow(line, rank)
            if fields is not None:
                named = fields.pop("rank", None)
                if rank is None and named is None and "[Rank " in line:   # DeepSpeed's log_dist tag
                    tag = RANK_TAG.search(line)
                    named = int(tag.group(1)) if tag else None
                who = named if rank is None else rank
                at = self.step_of(who)      # (the rank's own step, where DeepSpeed's names it)
                return [record("error", framework, who, step if at is None else at,
                               error="loss_scale_overflow", severity="warning", **fields)]
        if "detected" in line or "oss is" in line:
            m = NAN.search(line)
            if m:
                return [record("error", framework, rank, step, error="nan_inf", severity="warning",
                               message=line.strip()[:500])]
        if "joined" in line and STORE_TIMEOUT.search(line):
            return [record("error", framework, rank, step, error="rendezvous_timeout", message=line.strip()[:500],
                           **store_timeout(line))]
        if grad_nan(line):
            place = grad_nan_place(line)
            named = place.pop("rank", None)
            return [record("error", framework, named if rank is None else rank, step, error="nan_inf",
                           message=line.strip()[:500], **place)]
        low = None
        if "saving model to '" in line:
            m = CKPT_LIGHTNING.search(line)
            if m:
                return [record("checkpoint", framework, rank, int(m.group(1)), action="save", path=m.group(2),
                               phase="start", message=line.strip()[:500])]
        if "saving model to " in line:
            m = CKPT_KERAS.search(line)
            if m:
                return [record("checkpoint", framework, rank, step, action="save", path=m.group(3),
                               epoch=int(m.group(1)), phase="end" if m.group(2) else "start",
                               message=line.strip()[:500])]
        if "saving..." in line or "saved !!!" in line:
            for marker, phase in _CKPT_SWIN:
                at = line.find(marker)
                path = line[:at].rsplit(None, 1)[-1] if at > 0 and not line[at - 1].isspace() else ""
                if path.endswith(".pth"):
                    return [record("checkpoint", framework, rank, step, action="save", path=path, phase=phase,
                                   message=line.strip()[:500])]
        if "Save weights to " in line:
            m = CKPT_YOLOX.search(line)
            if m:
                return [record("checkpoint", framework, rank, step, action="save", path=m.group(1),
                               phase="start", message=line.strip()[:500])]
        if "save model in " in line or "save best model is to " in line:
            m = CKPT_PADDLEOCR.search(line)
            if m:
                return [record("checkpoint", framework, rank, step, action="save", path=m.group(1),
                               phase="end", message=line.strip()[:500])]
        if "cur metric, " in line:     # PaddleOCR's evaluation (its `best metric, ...` repeats the best)
            at = line.find("cur metric, ") + 12
            scores = {m.group(1): num(m.group(2)) for m in PADDLEOCR_METRIC.finditer(line[at:at + 2000])}
            if scores:
                return [record("eval", framework, rank, step, phase="result", metrics=scores)]
        if "epoch " in line:
            fields = epoch_result(line)
            if fields is not None:
                return [record("eval", framework, rank, step, phase="result", **fields)]
        if "{'" in line and ("{'bleu': " in line or "{'rouge1': " in line or "metrics: {" in line):
            fields = printed_metrics(line)
            if fields is not None:
                return [record("eval", framework, rank, step, phase="result", **fields)]
        if line.rstrip().endswith("Current checkpoints:"):
            # timm's train.py, after it kept a checkpoint among its best: the list that follows,
            # best first, does not say which one is new
            return [record("checkpoint", framework, rank, step, action="save", path=None, phase="end",
                           message=line.strip()[:500])]
        if "resumed from the latest checkpoint " in line:
            # MMEngine's `Auto resumed from the latest checkpoint /work/epoch_2.pth.`: the load;
            # its next line, `resumed epoch: 2, iter: 16`, is the restart and names its step
            words = line[line.find("resumed from the latest checkpoint ") + 35:].split()
            return [record("checkpoint", framework, rank, step, action="load",
                           path=words[0].rstrip(".") if words else None, phase="start", message=line.strip()[:500])]
        if "heckpoint" in line or "CHECKPOINT" in line:
            # (a logger's location, `[torch_checkpoint_engine.py:33:commit]`, says nothing)
            said = SOURCE_LOCATION.sub("", line) if ".py:" in line else line
            if not any(w in said for w in _CKPT_NOT):
                out = self._checkpoint(said, rank, framework, step, line)
                if out:
                    return out
        if "esum" in line or "ontinuing" in line or "estart" in line:
            low = line
            m = RESUME_SETTING.match(line) if "resume_from_checkpoint=" in line else None
            if m:
                return [record("restart", framework, rank, int(m.group(2)), path=m.group(1),
                               message=line.strip()[:500])]
            m = RESUME.search(low)
            if m:
                if m.group(1).lower() != "epoch":
                    return [record("restart", framework, rank, int(m.group(2)), message=line.strip()[:500])]
                sm = RESUME_STEP.search(low, m.end())
                return [record("restart", framework, rank, int(sm.group(1)) if sm else None,
                               epoch=int(m.group(2)), message=line.strip()[:500])]
            m = RESUME_FROM.search(low)
            if m:
                return [record("restart", framework, rank, None, path=(m.group(1) or m.group(2)).rstrip("."),
                               message=line.strip()[:500])]
            m = RESTART_ELASTIC.search(low)
            if m:
                return [record("restart", framework, rank, step, attempts_left=int(m.group(1)),
                               max_attempts=int(m.group(2)), message=line.strip()[:500])]
        if "***" in line:
            m = EVAL_START.search(line)
            if m:
                return [record("eval", framework, rank, step, phase="start", message=line.strip()[:300])]
        if "maxDets=" in line or "annotation type" in line:
            metrics = self.coco.read(line, rank)
            if metrics:
                return [record("eval", framework, rank, step, phase="result", metrics=metrics)]
        if "begin validation on " in line:
            m = EVAL_FAIRSEQ.search(line)
            if m:
                return [record("eval", framework, rank, step, phase="start", subset=m.group(1),
                               message=line.strip()[:300])]
        if "Eval" in line and line.rstrip().endswith(_EVAL_BEGINS):
            return [record("eval", framework, rank, step, phase="start", message=line.strip()[:300])]
        return []

    def _overflow(self, line: str, rank) -> dict | None:
        """The fields of a loss scaler's skipped step, where the line completes one (see `overflow`)."""
        said = overflow.skipping(line)
        if said is None:
            return self.scaler.read(line, rank)
        if self.scaler.seen and "Overflow detected" in line:
            return None     # DeepSpeed's fused optimizer, telling its ranks' overflow again
        return said

    def _crash(self, line: str, rank, framework: str, step) -> list[dict]:
        """A process that died of a signal, or aborted on a C++ exception: one `crash` event."""
        message = line.strip()[:500]
        m = CPP_ABORT.search(line)
        if m:
            rec = record("error", framework, rank, step, error="crash", signal="SIGABRT", exception=m.group(1),
                         message=message)
            if rank in self.tb:     # (a traceback of the rank's still open: given as it is)
                return [rec]
            # held for the line after, which says what was thrown (`  what():  CUDA error: ...`)
            self.tb[rank] = {"lines": [line], "open": 1, "abort": rec}
            return []
        m = FATAL_PY.search(line)
        cause = m.group(1).strip() if m else None
        m = CRASH.search(cause or line)
        if m is None and cause is None:
            return []
        return [record("error", framework, rank, step, error="crash",
                       signal=launcher_errors.SIGNAL_WORDS.get(m.group(1)) if m else None, message=message)]

    def _checkpoint(self, line: str, rank, framework: str, step, message: str) -> list[dict]:
        m = CKPT_HF.search(line)
        hf_path = m.group(1) if m else None
        verb = "saving"
        if not m:
            m = CKPT.search(line) or CKPT_NOUN.search(line)
            if not m or CKPT_NOT.search(line[max(0, m.start() - 20):m.start()]):
                return []
            verb = m.group(1).lower()
        action = "load" if verb.startswith(("load", "restor")) else "save"
        tail = line[m.start():]
        pm = CKPT_PATH.search(tail)
        path = pm.group(1).rstrip(".") if pm else hf_path
        dm = CKPT_DUR.search(tail)
        sm = CKPT_STEP.search(tail)
        if sm:
            step = int(next(g for g in sm.groups() if g is not None))
            if step > (self.last_step.get(rank) or 0):      # the rank reached it
                self.last_step[rank] = step
        done = (verb.endswith("ed") and not verb.startswith("is about")) or verb == "is ready now" \
            or "uccessfully" in line or "inished" in line or dm is not None     # a time: it ended
        out = [record("checkpoint", framework, rank, step, action=action, path=path,
                      duration_ms=to_ms(num(dm.group(1)), dm.group(2)) if dm else None,
                      phase="end" if done else "start", message=message.strip()[:500])]
        if action == "load" and done and sm and step and step > 0:
            out.append(record("restart", framework, rank, step, message=message.strip()[:500]))
            self.resumed_unnumbered.pop(rank, None)
        elif action == "load" and done and not sm and LIGHTNING_RESUME in line:
            self.resumed_unnumbered[rank] = out[0]
        return out

    def flush(self, framework: str) -> list[dict]:
        out = []
        for rank in list(self.tb):
            if "abort" in self.tb[rank]:
                out.append(self._aborted(rank, None))
            elif "mpirun" in self.tb[rank]:
                del self.tb[rank]
            while rank in self.tb:
                out.append(self._close_tb(rank, framework, None, None, final=False))
        for rank, fields in self.scaler.flush():
            out.append(record("error", framework, rank, self.step_of(rank), error="loss_scale_overflow",
                              severity="warning", **fields))
        return out


def store_timeout(text: str) -> dict:
    """How long the rendezvous store waited, and how many of the job's processes joined it."""
    m = STORE_TIMEOUT.search(text)
    return {"timeout_s": int(m.group(1)), "joined": int(m.group(2)), "expected": int(m.group(3))} if m else {}


def grad_nan(text: str) -> bool:
    """Does the text hold a gradient check's failure (`GRAD_NAN`)?"""
    return ("found NaN" in text or "found Inf" in text or "Unexpected result" in text) and \
        GRAD_NAN.search(text) is not None


def grad_nan_place(text: str) -> dict:
    """The rank, node and device a gradient check names (`GRAD_NAN`), those it names."""
    place: dict = {}
    for key, pattern in (("rank", GRAD_NAN_RANK), ("host", GRAD_NAN_NODE), ("device", GRAD_NAN_DEVICE)):
        m = pattern.search(text)
        if m is not None:
            place[key] = m.group(1).rstrip(".") if key == "host" else int(m.group(1))
    return place


def _i(text):
    return int(text) if text is not None else None
