"""Parse training logs into step records (progress, timing, checkpoint, eval, restart, error, NCCL).

Prints one JSON object per record (`--format json`) or a table, so that a log can be checked
before it is trusted.  Each file is one stream; launcher rank prefixes are honoured.  A process's
stdout and stderr files given together are read as its two pipes (`pipe_pairs`).
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Callable

from ridgescope.cli import node_logs, pipe_pairs
from ridgescope.cli.log_blocks import BLOCK, CUT_SHORT, collector_format, cut_short, head_blocks, open_log, read_blocks
from ridgescope.parsers import FORMATS, UNLABELLED_BAR, Dispatcher
from ridgescope.parsers.base import NOT_A_FRAMEWORK
from ridgescope.parsers.node_labels import NodeLabels
from ridgescope.parsers.srun import widest_node
from ridgescope.parsers.template import BARE_LOCAL, TeePrefix, bare_local, bare_prefixes, guess
from ridgescope.probes.print_order import PrintOrder

_COLUMNS = ("kind", "rank", "step", "framework")
_SHOWN = ("total_steps", "step_time_ms", "loss", "lr", "grad_norm", "it_per_s", "tokens_per_s",
          "tokens_per_s_per_gpu", "samples_per_s", "tflops", "mfu", "mem_gb", "epoch", "action", "path",
          "duration_ms", "error", "op", "opCount", "count", "datatype", "nranks", "comm_rank", "version",
          "lanes_ms", "phase", "subset", "status", "exception", "signal", "message")
_NAMED = frozenset(_COLUMNS + _SHOWN)


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="log file(s); '-' reads stdin")
    parser.add_argument("--log-format", choices=sorted(FORMATS), default=None,
                        help="force one parser instead of auto-detection (tqdm: a loop whose bar has no label)")
    parser.add_argument("--format", choices=("table", "json"), default="table",
                        help="table (default) or json: one JSON object per line per record")
    add_prefix_template(parser)
    node_logs.add_arguments(parser)


def add_prefix_template(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--prefix-template", default=None, metavar="TEMPLATE",
                        help="torchrun's line prefix where it is not its default [defaultN]: "
                             "its --log-line-prefix-template (e.g. '${hostname}:${rank}: '), "
                             "or '[ROLE${local_rank}]:' for --role ROLE (default: either of "
                             "these two where most of the file's first lines begin with it)")


GUESS_HEAD = 1 << 20
"""How much of a file `prefix_templates` looks at for the prefix of another torchrun template."""


def prefix_templates(args: argparse.Namespace, say: Callable[[str], None]) -> list[str | None]:
    """Each file's torchrun prefix template where it is not the default: the one given, or else
    the one most of the file's first lines begin with (`template.guess`; `say` tells the user
    so).  Read once per file: each reader of the file builds its own parser of it, since a
    `TeePrefix` learns names as it reads.  A file that cannot be read gets None here, and its
    error where it is parsed.  Node logs whose lines begin with `[N]:`, two of them the same N,
    are read with torchrun's template of an empty role (`template.bare_local`)."""
    given = getattr(args, "prefix_template", None)
    if given:
        return [given] * len(args.files)
    templates: list[str | None] = []
    bare: list[frozenset[bytes]] = []       # (of each node log: see `template.bare_local`)
    as_nodes = getattr(args, "node_logs", False)
    for path in args.files:
        template = None
        if path != "-":
            try:
                head = b"".join(block for _, block in zip(range(GUESS_HEAD // BLOCK), head_blocks(path)))
                template = guess(head)
                if as_nodes:
                    bare.append(bare_prefixes(head))
            except OSError:
                pass
            if template:
                say(f"{path}: its lines begin with another launcher's prefix than torchrun's [defaultN]: read "
                    f"as --prefix-template '{template}'")
        templates.append(template)
    if as_nodes and not any(templates) and len(bare) == len(args.files) > 1 and bare_local(bare):
        say(f"the node logs' lines begin with torchrun's [N]: of an empty role (torchx's dist.ddp): "
            f"local ranks, read as --prefix-template '{BARE_LOCAL}'")
        return [BARE_LOCAL] * len(args.files)
    return templates


def tee_prefix(template: str | None) -> TeePrefix | None:
    return TeePrefix(template) if template else None


def note(text: str) -> None:
    print(f"[ridgescope] {text}", file=sys.stderr)


def placed_nodes(args: argparse.Namespace, command: str,
                 templates: list[str | None]) -> list[node_logs.NodeLog | None] | int:
    """Each file's place in the job under `--node-logs` (`node_logs.places`), or the exit code
    once the user is told why the files cannot be placed."""
    try:
        return node_logs.places(args, [tee_prefix(t) for t in templates], note)
    except OSError as exc:
        print(f"ridgescope {command}: {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"ridgescope {command}: {exc}", file=sys.stderr)
        return 2


def workers_per_node(path: str) -> int | None:
    """For a log of `srun --label torchrun --tee` (or of another launcher's node labels, read as
    srun's: `node_labels`): the most workers that one node's lines show in the file's head, so
    that each node's ranks are known from its first line on (see `srun.flatten`); None for stdin
    or another log."""
    if path == "-":
        return None
    widest, labels = 0, NodeLabels()
    for block in head_blocks(path):
        block = labels.block(block, young=True)
        if b": [default" in block:
            widest = max(widest, widest_node(block))
    return widest or None


def file_dispatcher(args: argparse.Namespace, path: str, template: str | None,
                    pipes: pipe_pairs.Pipes | None) -> Dispatcher:
    """The Dispatcher that reads one file; where the file is one of a process's two pipes, it
    shares what the other shows (`pipe_pairs`)."""
    def fresh(path: str, banner=None) -> Dispatcher:
        return Dispatcher(getattr(args, "log_format", None), workers_per_node(path),
                          tee_prefix(template), training_banner=banner)
    return pipe_pairs.dispatcher(path, pipes, fresh)


def iter_records(path: str, disp: Dispatcher):
    """Yield each record that `disp` finds in the file, then what its flush gives.  A log saved
    from a collector is read as the job's own lines (`log_blocks.Collected`)."""
    stream = sys.stdin.buffer if path == "-" else open_log(path)
    try:
        for i, block in enumerate(read_blocks(stream)):
            if i == 0:
                collected = collector_format(block)
                if collected is not None:
                    note(f"{path}: {collected.says}")
            yield from disp.feed_chunk(collected.block(block) if collected is not None else block)
        yield from disp.flush()
        if cut_short(stream):
            note(f"{path}: {CUT_SHORT}")
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


class Summary:
    """What a file gave, in a line under the table: what a user checks before trusting a log
    (did it find the framework, every step, every rank, the saves and the errors?)."""

    def __init__(self) -> None:
        self.kinds: dict[str, int] = {}
        self.steps: set = set()
        self.ranks: set = set()
        self.timed = 0
        self.frameworks: dict[str, int] = {}
        self.named: str | None = None
        """The first framework that a record named, as `ingest` and the log probe take it."""
        self.print_order = PrintOrder()
        self.prints = 1
        """The most times an unlabelled step was printed (`probes/print_order.py`)."""

    def add(self, rec: dict) -> None:
        kind, framework = rec["kind"], rec.get("framework") or ""
        if rec.get("rank") is None:
            self.prints = max(self.prints, (self.print_order.place(rec) or 0) + 1)
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        self.frameworks[framework] = self.frameworks.get(framework, 0) + 1
        if self.named is None and framework not in NOT_A_FRAMEWORK:
            self.named = framework
        if kind == "progress" and isinstance(rec.get("step"), int):
            self.steps.add(rec["step"])
            self.ranks.add(rec.get("rank"))
            self.timed += rec.get("step_time_ms") is not None

    def line(self, framework: str | None) -> str:
        """`framework`: the stream's, where a framework's parser took it; else the first that a
        record named (MindSpore's TimeMonitor among lines the generic parser reads); else the
        parser that gave most records (`generic`: MMEngine's, timm's and other loops' lines)."""
        framework = framework or self.named or max(self.frameworks, key=self.frameworks.__getitem__, default=None)
        steps = (f"steps {min(self.steps)}-{max(self.steps)} ({len(self.steps)} distinct, "
                 f"{self.timed} records with a step time)" if self.steps else "no steps")
        ranks = ", ".join("unlabelled" if r is None else str(r)
                          for r in sorted(self.ranks, key=lambda r: -1 if r is None else r))
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.kinds.items()) if k != "progress")
        if self.prints > 1 and self.ranks == {None} and framework != "megatron":
            ranks += f" (a step printed up to {self.prints} times: by ranks no line names)"
        return (f"framework {framework or 'none'}; {steps}" + (f" on ranks {ranks}" if ranks else "")
                + (f"; {kinds}" if kinds else ""))


def _cell(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, dict):
        return ",".join(f"{k}={_cell(x)}" for k, x in v.items())
    s = str(v)
    return s if len(s) <= 80 else s[:77] + "..."


def run(args: argparse.Namespace) -> int:
    out = sys.stdout
    fmt = getattr(args, "format", "table") or "table"
    rc = 0
    templates = prefix_templates(args, note)
    nodes = placed_nodes(args, "parse", templates)
    if isinstance(nodes, int):
        return nodes
    placed = {path: (node, template) for path, node, template in zip(args.files, nodes, templates)}
    pairs = pipe_pairs.pair_files(args.files)
    pipe_pairs.tell(pairs, note)
    for path in pipe_pairs.reading_order(args.files, pairs):
        node, template = placed[path]
        try:
            disp = file_dispatcher(args, path, template, pairs.get(path))
            if fmt == "table" and len(args.files) > 1:
                out.write(f"== {path}\n")
            summary = Summary()
            for rec in iter_records(path, disp):
                rec = node_logs.as_job_rank(rec, node)
                summary.add(rec)
                if fmt == "json":
                    row = dict(rec)
                    if len(args.files) > 1:
                        row["file"] = path
                    out.write(json.dumps(row, separators=(",", ":"), default=str) + "\n")
                else:
                    cells = [f"{k}={_cell(rec.get(k))}" for k in _COLUMNS]
                    cells += [f"{k}={_cell(rec[k])}" for k in _SHOWN if k in rec and rec[k] != {}]
                    if rec["kind"] == "eval":
                        # an evaluation's own scores: under `metrics`, or, as the HF family gives them, fields
                        cells += [f"{k}={_cell(v)}" for k, v in rec.items() if k not in _NAMED
                                  and v.__class__ in (int, float)]
                        if rec.get("metrics"):
                            cells.append(f"metrics={_cell(rec['metrics'])}")
                    if rec["kind"] == "timing" and not rec.get("lanes_ms") and rec.get("timers_ms"):
                        # timers that map onto no lane (Megatron's `evaluate`): what was timed
                        cells.append(f"timers_ms={_cell(rec['timers_ms'])}")
                    out.write("  ".join(cells) + "\n")
            if fmt == "table":
                s = disp.stats
                glued = f", {s['glued']} lines held prints run together (cut apart)" if s["glued"] else ""
                out.write(f"-- {path}: {s['lines']} lines, {s['records']} records, "
                          f"{s['garbage']} garbage, {s['timeouts']} timeouts{glued}\n")
                out.write(f"-- {summary.line(disp.framework)}\n")
                drawn = disp.unlabelled_bar_steps()
                if drawn and not summary.steps:
                    out.write(f"-- {UNLABELLED_BAR.format(drawn=drawn)}\n")
        except BrokenPipeError:
            raise                   # the reader left (`| head`): no more to print, see `main`
        except OSError as exc:
            print(f"ridgescope parse: {path}: {exc.strerror or exc}", file=sys.stderr)
            rc = 1
        except ValueError as exc:
            print(f"ridgescope parse: {exc}", file=sys.stderr)
            return 2
    return rc
