from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys

from pathlib import Path

import pytest

from ridgescope.cli import cmd_parse, log_blocks

from .conftest import CORPUS

CAPTURED = Path(__file__).resolve().parents[1] / "data" / "captured"
NODE_LOGS = [str(CAPTURED / f"torch-2.15_torchrun-tee3_node-rank-{node}-of-2_2x2rank.log") for node in (0, 1)]


def _args(argv):
    p = argparse.ArgumentParser()
    cmd_parse.register(p)
    return p.parse_args(argv)


def test_help_text_first_line():
    assert cmd_parse.__doc__.strip().splitlines()[0].startswith("Parse training logs")


def test_json_output(capsys):
    f = str(CORPUS / "torchtitan_nemo_nanogpt_etc/torchtitan_qwen3-14b_8xgpu_rank0_slow-step10_ansi.log")
    assert cmd_parse.run(_args([f, "--format", "json"])) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    prog = [r for r in rows if r["kind"] == "progress"]
    assert [r["step"] for r in prog] == list(range(1, 11))
    assert prog[9]["tokens_per_s_per_gpu"] == 560 and prog[9]["rank"] == 0


def test_table_output_and_forced_format(capsys, tmp_path):
    log = tmp_path / "spine.log"
    log.write_text("step 12/60 loss 2.3451 step_time_ms 153.2\nnoise\n")
    assert cmd_parse.run(_args([str(log), "--log-format", "generic"])) == 0
    out = capsys.readouterr().out
    assert "kind=progress" in out and "step=12" in out and "step_time_ms=153.2" in out
    assert "2 lines, 1 records, 0 garbage" in out
    assert out.splitlines()[-1] == "-- framework generic; steps 12-12 (1 distinct, 1 records with a step time) on ranks unlabelled"


def test_table_ends_with_what_the_file_gave(capsys):
    """The line under the table: the framework, the steps and ranks found, the other records."""
    f = str(CAPTURED / "torch-2.15_torchrun-gloo_rank1-raises_2rank.log")
    assert cmd_parse.run(_args([f])) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "-- framework nanogpt; steps 1-3 (3 distinct, 5 records with a step time) on ranks unlabelled "
        "(a step printed up to 2 times: by ranks no line names); error 5")
    f = str(CAPTURED / "megatron-core-0.17.1_pretrain-gpt_2rank-pp2_tee3_log-straggler_rank0-slow_cpu.log")
    assert cmd_parse.run(_args([f])) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("-- framework megatron; steps 1-16 (16 distinct, 16 records with a step time) on ranks 1;")


def test_table_names_the_exception(capsys, tmp_path):
    """torchrun's own traceback ends in `ChildFailedError: ` with no message: the table still
    says what was raised."""
    log = tmp_path / "crash.log"
    log.write_text("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n"
                   "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n====\n")
    assert cmd_parse.run(_args([str(log)])) == 0
    out = capsys.readouterr().out
    assert "error=traceback  exception=torch.distributed.elastic.multiprocessing.errors.ChildFailedError" in out


def test_table_shows_timers_that_map_onto_no_lane(capsys):
    """Megatron's `evaluate` timer block gives no lane: the table shows the timer, not an empty
    `lanes_ms=`."""
    f = str(CAPTURED / "megatron-bridge-0.3.1_megatron-core-0.16.1_tiny-llama_2rank-dp_cpu.log")
    assert cmd_parse.run(_args([f])) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if "kind=timing" in line and "step=10 " in line]
    assert rows[1] == "kind=timing  rank=None  step=10  framework=megatron  timers_ms=evaluate=77.98"
    assert rows[2].endswith("lanes_ms=checkpoint=7205.99")
    assert not any(row.endswith("lanes_ms=") for row in rows)


def test_table_shows_an_evaluations_metrics(capsys):
    f = str(CAPTURED / "detectron2-0.5_defaulttrainer_tiny-coco_cpu.log")
    assert cmd_parse.run(_args([f])) == 0
    evals = [line for line in capsys.readouterr().out.splitlines() if line.startswith("kind=eval")]
    assert len(evals) == 2 and "step=14" in evals[0] and "metrics=bbox/AP=0.107,bbox/AP50=0.388," in evals[0]


def test_table_shows_an_evaluations_scores_given_as_fields(capsys):
    """The HF family gives an evaluation's scores as fields of its own, not under `metrics`."""
    f = str(CAPTURED / "accelerate-1.16.0_own-loop_epoch-eval-print.log")
    assert cmd_parse.run(_args([f])) == 0
    evals = [line for line in capsys.readouterr().out.splitlines() if line.startswith("kind=eval")]
    assert evals[0].endswith("epoch=0  phase=result  accuracy=0.8125  f1=0.823529")


def test_a_reader_that_leaves_ends_the_command_quietly():
    """`ridgescope parse LOG | head -1`: the closed pipe ends the command with no error message
    (the log's table, ~120 KB, is more than the pipe holds)."""
    f = str(CORPUS / "nccl/nccl-tests_allreduce_2xA100-nvlink_debug-all_coll.log")
    proc = subprocess.run(f"{sys.executable} -m ridgescope.cli.main parse {f} | head -1", shell=True,
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.startswith("kind=nccl_init") and proc.stdout.count("\n") == 1
    assert proc.stderr == ""


def test_missing_file(capsys, tmp_path):
    assert cmd_parse.run(_args([str(tmp_path / "nope.log"), "--format", "json"])) == 1
    assert "nope.log" in capsys.readouterr().err


def test_blocks_give_what_lines_give(capsys, monkeypatch):
    """`parse` feeds blocks; on a log larger than a block, every record is the one `feed` finds
    a line at a time, in order (checked with a small block, so that lines straddle reads)."""
    from .conftest import feed_all
    rel = "deepspeed/dschat_step1_sft_opt-1.3b_16proc.log"
    monkeypatch.setattr(log_blocks, "BLOCK", 4099)
    assert cmd_parse.run(_args([str(CORPUS / rel), "--format", "json"])) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    want, _ = feed_all((CORPUS / rel).read_bytes().split(b"\n")[:-1])
    assert rows == json.loads(json.dumps(want, default=str))
    assert len(rows) > 1000 and {r["kind"] for r in rows} >= {"progress", "eval"}


def test_a_log_without_records_still_gets_its_summary(capsys, tmp_path):
    log = tmp_path / "quiet.log"
    log.write_bytes(b"hello\n\xff\xfe garbage\nbye")
    assert cmd_parse.run(_args([str(log)])) == 0
    assert capsys.readouterr().out == (f"-- {log}: 3 lines, 0 records, 1 garbage, 0 timeouts\n"
                                       "-- framework none; no steps\n")


def test_the_summary_says_how_many_lines_held_prints_run_together(capsys):
    """Two ranks' prints that ran into one line are cut apart, and the summary says how many
    lines were, so that a user knows the log's ranks shared a pipe."""
    log = CAPTURED / "torch-2.15_torchrun-unlabelled_prints-glued-in-one-line_2x2rank.log"
    assert cmd_parse.run(_args([str(log)])) == 0
    out = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("kind=progress") for line in out) == 32
    assert out[-2] == (f"-- {log}: 32 lines, 32 records, 0 garbage, 0 timeouts, "
                       "6 lines held prints run together (cut apart)")


def _progress(capsys) -> dict[int, dict[int, dict]]:
    """step -> rank -> the progress record `parse --format json` printed."""
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    steps: dict[int, dict[int, dict]] = {}
    for r in rows:
        if r["kind"] == "progress":
            assert r["rank"] not in steps.setdefault(r["step"], {}), r
            steps[r["step"]][r["rank"]] = r
    return steps


def test_node_logs_give_each_node_its_ranks(capsys):
    """Two torchruns (static rendezvous, `--node-rank 0` and `1`, 2 workers each), each node's
    `--tee` output in a file of its own: both print `[default0]:` and `[default1]:`.  Read as
    node logs, node 1's workers are ranks 2 and 3, and rank 3's straggling step 20 is its own."""
    assert cmd_parse.run(_args([*NODE_LOGS, "--node-logs", "--format", "json"])) == 0
    steps = _progress(capsys)
    assert sorted(steps) == list(range(1, 31))
    assert all(sorted(ranks) == [0, 1, 2, 3] for ranks in steps.values())
    assert [steps[1][rank]["local_rank"] for rank in range(4)] == [0, 1, 0, 1]
    # the captured values: rank 3 (node 1, local 1) printed 742.5 ms at step 20, the others
    # waited for it in the all-reduce
    assert steps[20][3]["step_time_ms"] == 742.5 and steps[20][2]["step_time_ms"] == 746.4
    assert steps[19][3]["step_time_ms"] == 139.0


C10D_NODE_LOGS = [str(CAPTURED / f"torch-2.15_torchrun-c10d-tee3_loglevel-info_joined-{when}_2x2rank.log")
                  for when in ("second", "first")]


def test_node_logs_take_the_ranks_a_c10d_rendezvous_gave(capsys):
    """Two nodes of a c10d rendezvous (LOGLEVEL=INFO), listed with node 1's log first: each
    agent logged its node's ranks (`global_ranks=[2, 3]`), which the list's order does not
    change.  Rank 3, the first file's local rank 1, took 500.2 ms at step 10."""
    assert cmd_parse.run(_args([*C10D_NODE_LOGS, "--node-logs", "--format", "json"])) == 0
    out = capsys.readouterr()
    assert "joined-second_2x2rank.log: ranks 2-3, as torchrun's rendezvous gave them" in out.err
    steps = {}
    for r in map(json.loads, out.out.splitlines()):
        if r["kind"] == "progress":
            steps.setdefault(r["step"], {})[r["rank"]] = (r["local_rank"], r["step_time_ms"])
    assert sorted(steps) == list(range(1, 17))
    assert steps[10] == {0: (0, 50.2), 1: (1, 50.2), 2: (0, 50.2), 3: (1, 500.2)}
    # listed the other way round: the same ranks
    assert cmd_parse.run(_args([*C10D_NODE_LOGS[::-1], "--node-logs", "--format", "json"])) == 0
    assert sorted(capsys.readouterr().out.splitlines()) == sorted(out.out.splitlines())


def test_a_nodes_log_read_alone_takes_the_ranks_its_agent_logged(capsys):
    """Without `--node-logs`, node 1's log (its agent logged `global_ranks=[2, 3]`) gives ranks
    2 and 3 all the same; node 0's, whose local ranks are its job ranks, is read as it is."""
    second, first = C10D_NODE_LOGS
    assert cmd_parse.run(_args([second, "--format", "json"])) == 0
    out = capsys.readouterr()
    assert "a node's log, its [defaultN] local ranks: ranks 2-3" in out.err
    rows = [json.loads(line) for line in out.out.splitlines()]
    assert {(r["rank"], r["local_rank"]) for r in rows if r["kind"] == "progress"} == {(2, 0), (3, 1)}
    assert [(r["rank"], r["step_time_ms"]) for r in rows if r["step"] == 10] == [(2, 50.2), (3, 500.2)]
    assert cmd_parse.run(_args([first, "--format", "json"])) == 0
    out = capsys.readouterr()
    assert "rendezvous" not in out.err
    rows = [json.loads(line) for line in out.out.splitlines()]
    assert {r["rank"] for r in rows if r["kind"] == "progress"} == {0, 1}
    assert not any("local_rank" in r for r in rows)


def test_node_logs_keep_the_rank_that_torchruns_report_names(capsys):
    """Two nodes' `--tee` output, rank 3 (node 1's local rank 1) raising at step 3: node 1's
    torchrun reports `rank : 3 (local_rank: 1)` failed first, the job's rank, which stays (it
    was read as a local rank, rank 5 of four); its agent's `failed ... local_rank: 1` line, which
    names no rank, is node 1's local rank 1, rank 3."""
    logs = [str(CAPTURED / f"torch-2.15_torchrun-tee3_2node_rank3-raises_node{n}.log") for n in (0, 1)]
    assert cmd_parse.run(_args([*logs, "--node-logs", "--format", "json"])) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    firsts = [(r["rank"], r["local_rank"], r["failed_ranks"]) for r in rows if r.get("first")]
    assert firsts == [(0, 0, [0, 1]), (3, 1, [2, 3])]
    agents = [(r["rank"], r["local_rank"]) for r in rows if r.get("error") == "child_failed" and not r.get("first")]
    assert agents == [(0, 0), (3, 1)]
    (culprit,) = [r for r in rows if "shape mismatch" in (r.get("message") or "")]
    assert (culprit["rank"], culprit["local_rank"]) == (3, 1)
    assert {r["rank"] for r in rows if r["kind"] == "progress"} == {0, 1, 2, 3}


def test_torchx_log_dirs_replicas_read_as_node_logs(capsys, tmp_path):
    """torchx's log directory (`-cfg log_dir=DIR`): each replica's `ROLE/N/combined.log`, its
    workers' lines behind torchrun's `[M]:` of an empty role.  Read as node logs, `[M]:` is a
    local rank, as two replicas' both `[0]:` show: node 1's workers are ranks 2 and 3, and rank 3
    (local rank 1) raised first."""
    run = CAPTURED / "torchx-0.7.0_torch-2.15_dist-ddp-2x2_log-dir_rank3-raises" / "crash"
    logs = [str(run / str(replica) / "combined.log") for replica in (0, 1)]
    assert cmd_parse.run(_args([*logs, "--node-logs", "--format", "json"])) == 0
    out = capsys.readouterr()
    assert "local ranks, read as --prefix-template '[${local_rank}]:'" in out.err
    rows = [json.loads(line) for line in out.out.splitlines()]
    steps: dict = {}
    for r in rows:
        if r["kind"] == "progress":
            steps.setdefault(r["rank"], []).append(r["step"])
    assert steps == {0: [1, 2, 3], 1: [1, 2, 3], 2: [1, 2, 3], 3: [1, 2]}
    assert sorted((r["rank"], r["local_rank"]) for r in rows if r.get("first")) == [(0, 0), (3, 1)]
    (culprit,) = [r for r in rows if "shape mismatch" in (r.get("message") or "")]
    assert (culprit["rank"], culprit["local_rank"]) == (3, 1)
    # the job's ranks (a `[${rank}]:` template) number each node's workers apart: read as printed
    ranked = tmp_path / "node1.log"
    ranked.write_bytes(re.sub(rb"(?m)^\[([01])\]:", lambda m: b"[%d]:" % (int(m.group(1)) + 2),
                              Path(logs[1]).read_bytes()))
    assert cmd_parse.run(_args([logs[0], str(ranked), "--node-logs", "--format", "json"])) == 0
    out = capsys.readouterr()
    assert "local ranks, read as" not in out.err
    assert {json.loads(line)["rank"] for line in out.out.splitlines()} >= {0, 1, 2, 3}


def test_without_node_logs_the_nodes_ranks_collide(capsys):
    """What `--node-logs` is for: read alone, each file gives local ranks 0 and 1."""
    for path in NODE_LOGS:
        assert cmd_parse.run(_args([path, "--format", "json"])) == 0
        assert all(sorted(ranks) == [0, 1] for ranks in _progress(capsys).values())


def test_a_nodes_stdout_and_stderr_files_are_one_node(capsys, tmp_path):
    """Each node's torchrun under `srun --output node%n.out --error node%n.err`: the two files
    of a node are one node, so node 1's workers are ranks 2 and 3, not 4 and 5."""
    files = []
    for node, log in enumerate(NODE_LOGS):
        out, err = tmp_path / f"node{node}.out", tmp_path / f"node{node}.err"
        out.write_bytes(Path(log).read_bytes())
        err.write_text("[default1]:UserWarning: something the job warns about\n")
        files += [str(out), str(err)]
    assert cmd_parse.run(_args([*files, "--node-logs", "--format", "json"])) == 0
    assert all(sorted(ranks) == [0, 1, 2, 3] for ranks in _progress(capsys).values())


def test_node_logs_take_the_workers_per_node_given(capsys):
    """A node whose last workers printed nothing shows fewer local ranks than it ran: the
    count given places node 1 after all of node 0's workers, and a count too small is refused."""
    assert cmd_parse.run(_args([*NODE_LOGS, "--node-logs", "--nproc-per-node", "8", "--format", "json"])) == 0
    out = capsys.readouterr()
    rows = [json.loads(line) for line in out.out.splitlines()]
    assert {r["rank"] for r in rows if r["kind"] == "progress"} == {0, 1, 8, 9}
    assert "ranks 8-15" in out.err
    assert cmd_parse.run(_args([*NODE_LOGS, "--node-logs", "--nproc-per-node", "1"])) == 2
    assert "more than --nproc-per-node 1" in capsys.readouterr().err


@pytest.mark.parametrize("template, line, rank", [
    ("[${role_name}${local_rank}]:", "[trainer1]:step 5/9 loss 2.0 step_time_ms 100.0\n", 3),
    ("${hostname}:${rank}: ", "vm:1: step 5/9 loss 2.0 step_time_ms 100.0\n", 1)])
def test_node_logs_under_a_prefix_template(capsys, tmp_path, template, line, rank):
    """A role's prefix names local ranks, as the default does; a template of `${rank}` names the
    job's, which stay as they are."""
    logs = []
    for node in (0, 1):
        log = tmp_path / f"node{node}.log"
        log.write_text(line.replace("[trainer1]", f"[trainer{node}]") if node == 0 else line)
        logs.append(str(log))
    assert cmd_parse.run(_args([*logs, "--node-logs", "--prefix-template", template,
                                "--format", "json"])) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows[-1]["rank"] == rank and rows[-1]["step"] == 5


def test_node_logs_are_files(capsys):
    assert cmd_parse.run(_args(["-", "--node-logs"])) == 2
    assert "not standard input" in capsys.readouterr().err


@pytest.mark.parametrize("compress", ["gzip", "bz2", "lzma"])
def test_compressed_logs_read_as_their_text(capsys, tmp_path, compress):
    """Old logs are kept compressed: told by their first bytes, whatever their names."""
    import importlib
    plain = Path(NODE_LOGS[1])
    packed = tmp_path / "node1.log.old"
    packed.write_bytes(importlib.import_module(compress).compress(plain.read_bytes()))
    assert cmd_parse.run(_args([str(plain), "--format", "json"])) == 0
    want = capsys.readouterr().out
    assert cmd_parse.run(_args([str(packed), "--format", "json"])) == 0
    assert capsys.readouterr().out == want and want.count("\n") == 60


def test_a_compressed_log_cut_short_gives_its_whole_lines(capsys, tmp_path):
    """A gzip file copied while it was written: every whole line up to the cut is read, the
    line the cut fell in is not (a number cut in two is another number), and `parse` says so.
    Two members one after the other (appended rotations) read as one file."""
    import gzip
    text = b"".join(b"step %d/9 loss 2.0 step_time_ms 1234.5\n" % step for step in range(1, 10))
    whole = gzip.compress(text, mtime=0)
    for cut in range(20, len(whole) - 8, 7):
        log = tmp_path / "cut.log.gz"
        log.write_bytes(whole[:cut])
        assert cmd_parse.run(_args([str(log), "--format", "json"])) == 0
        out = capsys.readouterr()
        rows = [json.loads(line) for line in out.out.splitlines()]
        assert all(r["step_time_ms"] == 1234.5 for r in rows)
        assert [r["step"] for r in rows] == list(range(1, len(rows) + 1))
        assert "cut short" in out.err
    log.write_bytes(whole + whole)
    assert cmd_parse.run(_args([str(log), "--format", "json"])) == 0
    out = capsys.readouterr()
    assert out.out.count("\n") == 18 and "cut short" not in out.err


def test_ingest_reads_a_compressed_log(tmp_path):
    import gzip

    from ridgescope.cli.cmd_ingest import read_file
    log = tmp_path / "node1.log.gz"
    log.write_bytes(gzip.compress(Path(NODE_LOGS[1]).read_bytes()))
    result = read_file(str(log), None)
    assert (result.lines, result.records) == (64, 60)
    assert sorted({it.record["step"] for it in result.items}) == list(range(1, 31))


def test_a_zstd_log_is_refused_with_what_to_do(capsys, tmp_path):
    log = tmp_path / "a.log.zst"
    log.write_bytes(b"\x28\xb5\x2f\xfd" + b"\0" * 16)
    assert cmd_parse.run(_args([str(log)])) == 1
    assert "zstd -d" in capsys.readouterr().err


def test_ingest_names_the_framework_the_generic_parser_read():
    """MMEngine's lines are read by the generic parser, which claims no stream: the job is
    still stored as MMEngine's, as the log probe names it."""
    from ridgescope.cli.cmd_ingest import read_file
    result = read_file(str(CAPTURED / "mmengine-0.10.7_logger-hook_by-iters.log"), None)
    assert (result.framework, result.records) == ("mmengine", 20)


def test_nccl_names_no_framework_of_the_job(capsys):
    """NCCL's records (its init lines come first with NCCL_DEBUG=INFO) name no training framework:
    a log of NCCL's lines alone is stored as no framework's (it was `nccl`'s); the summary under
    `parse`'s table names the first framework a record named, as `ingest` does (MindSpore's
    TimeMonitor among LossMonitor lines the generic parser reads: it said `generic`)."""
    from ridgescope.cli.cmd_ingest import read_file
    result = read_file(str(CORPUS / "nccl" / "raddet_2gpu_nccl-init_interleaved.log"), None)
    assert (result.framework, result.records) == (None, 2)
    assert cmd_parse.run(_args([str(CAPTURED / "mindspore-2.10.0_msrun-2-workers_join_stdout_cpu.log")])) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("-- framework mindspore; steps 1-12 ")


def _collected(data: bytes, zone: bytes = b"Z", after: bytes = b"") -> bytes:
    """`data` as `kubectl logs --timestamps` gives it: each line behind its RFC 3339 time, here
    1.5 s after the line before from 2026-01-10T10:00:00 (`after`: CRI's stream and tag)."""
    lines = data.split(b"\n")
    if not lines[-1]:
        lines.pop()
    return b"".join(b"2026-01-10T10:%02d:%02d.%06d000%s %s%s\n" % (
        i * 3 // 2 // 60, i * 3 // 2 % 60, i % 2 * 500000, zone, after, line) for i, line in enumerate(lines))


@pytest.mark.parametrize("zone, after", [(b"Z", b""), (b"+02:00", b""), (b"", b""), (b"Z", b"stdout F ")])
def test_a_collectors_log_reads_as_the_jobs_own(capsys, tmp_path, zone, after):
    """A log saved from a collector (kubectl, docker, a store's export, a node's CRI file) has a
    timestamp before each of the job's lines, before the launcher's prefix: it is read without them, and gives
    what the job's own log gives, ranks included; `parse` says so.  Read from stdin too."""
    plain = Path(NODE_LOGS[1])
    stamped = tmp_path / "node1.log"
    stamped.write_bytes(_collected(plain.read_bytes(), zone, after))
    assert cmd_parse.run(_args([str(plain), "--format", "json"])) == 0
    want = capsys.readouterr().out
    assert cmd_parse.run(_args([str(stamped), "--format", "json"])) == 0
    out = capsys.readouterr()
    assert out.out == want and want.count("\n") == 60 and "collector's timestamps" in out.err
    assert {json.loads(line)["rank"] for line in want.splitlines()} == {0, 1}     # (its local ranks)
    # the node's place in the job is read from the head of each stamped file too
    both = []
    for path in NODE_LOGS:
        copy = tmp_path / Path(path).name
        copy.write_bytes(_collected(Path(path).read_bytes(), zone, after))
        both.append(str(copy))
    assert cmd_parse.run(_args([*NODE_LOGS, "--node-logs", "--format", "json"])) == 0
    want = capsys.readouterr().out
    assert cmd_parse.run(_args([*both, "--node-logs", "--format", "json"])) == 0
    assert capsys.readouterr().out == want.replace(str(CAPTURED), str(tmp_path))
    proc = subprocess.run([sys.executable, "-m", "ridgescope.cli.main", "parse", "-", "--format", "json"],
                          input=stamped.read_bytes(), capture_output=True, check=True)
    assert proc.stdout.decode().count("\n") == 60 and b"collector's timestamps" in proc.stderr


def _as_cri(data: bytes, part: int) -> bytes:
    """`data` as containerd writes it on a Kubernetes node, each line cut into entries of `part`
    bytes, tagged `P` but the last, `F`."""
    out = []
    for i, line in enumerate(data.split(b"\n")[:-1]):
        pieces = [line[j:j + part] for j in range(0, len(line), part)] or [b""]
        stamp = b"2026-01-10T10:%02d:%02d.%09dZ stdout " % (i // 60, i % 60, i)
        out += [stamp + (b"F " if k == len(pieces) - 1 else b"P ") + piece + b"\n" for k, piece in enumerate(pieces)]
    return b"".join(out)


def test_cri_parts_of_a_line_are_joined_again(capsys, tmp_path, monkeypatch):
    """containerd cuts a line past 16 KiB into parts (`P`, then `F`): joined again, across the
    blocks a file is read in, in `parse` and in `ingest`; a last line whose `F` never came is
    dropped, as a compressed file's cut line is."""
    from ridgescope.cli.cmd_ingest import read_file
    monkeypatch.setattr(log_blocks, "BLOCK", 512)
    plain = Path(NODE_LOGS[1])
    cri = tmp_path / "node1.log"
    cri.write_bytes(_as_cri(plain.read_bytes(), 5) + b"2026-01-10T11:00:00.000000000Z stdout P step 31/30 loss 2.0 step_time_ms 5")
    assert cmd_parse.run(_args([str(plain), "--format", "json"])) == 0
    want = capsys.readouterr().out
    assert cmd_parse.run(_args([str(cri), "--format", "json"])) == 0
    assert capsys.readouterr().out == want and want.count("\n") == 60
    got, plain_result = read_file(str(cri), None), read_file(str(plain), None)

    def shown(result):
        return [{k: v for k, v in it.record.items() if not k.startswith("ts_")} for it in result.items]
    assert shown(got) == shown(plain_result) and len(got.items) == 60
    assert {it.record["ts_source"] for it in got.items} == {"log"}


def test_a_time_that_begins_a_few_lines_is_left_in_place():
    """Lines of the job's own that begin with such a time, among others that do not, are no
    collector's stamps."""
    head = b"2026-01-10T10:00:00Z job starts\n" + b"step 1/9 loss 2.0\n" * 3
    assert not log_blocks.stamped(head)
    assert log_blocks.stamped(_collected(head)) and not log_blocks.stamped(b"")
    assert log_blocks.unstamped(_collected(head)) == head
    # a file's last line, unended, is still a line; a CRI part, unended, goes on in what follows
    collected = log_blocks.collector_format(_collected(head))
    assert collected.block(_collected(head)[:-1]) == head[:-1]
    parts = _as_cri(head, 4)
    cut = parts.rfind(b" P ")
    cut = parts.index(b"\n", cut) + 1       # after the last line's parts but its last
    assert collected.block(parts[:cut]) == head[:-len(b"step 1/9 loss 2.0\n")]
    assert collected.block(parts[cut:]) == b"step 1/9 loss 2.0\n"
    assert collected.block(_as_cri(head, 100) + b"2026-01-10T10:00:09Z stdout P step 2/9") == head


def test_ingest_times_a_collectors_log_by_its_stamps(tmp_path):
    """A log with no time of its own, saved with a collector's timestamps: each record is
    placed at its line's stamp, and the records are the job's own: each rank's traceback (behind
    torch's `[rankN]:`) one error of that rank."""
    from ridgescope.cli.cmd_ingest import read_file
    plain = CAPTURED / "torch-2.15_torchrun-gloo_rank1-raises_2rank.log"
    stamped = tmp_path / "job.log"
    stamped.write_bytes(_collected(plain.read_bytes()))
    want, got = read_file(str(plain), None), read_file(str(stamped), None)

    def shown(result):
        return [(r["kind"], r["rank"], r["step"], r.get("error")) for r in (it.record for it in result.items)]
    assert shown(got) == shown(want) and got.records == want.records == 10
    assert ("error", 1, 3, "traceback") in shown(got)
    assert want.timestamps != "printed" and got.timestamps == "printed"
    first = got.items[0]
    line_no = plain.read_bytes().split(b"\n").index(b"step 1/5 loss 2.0000 step_time_ms 1.0")
    assert (first.record["step"], first.source, first.ts) == (1, "log", calendar_ns(2026, 1, 10, 10, 0, line_no * 1.5))


@pytest.mark.parametrize("pods", [[b"[pod/llama-master-0/pytorch] ", b"[pod/llama-worker-0/pytorch] "],
                                  [b"llama-master-0 pytorch ", b"llama-worker-0 pytorch "],
                                  [b"ml llama-master-0 pytorch ", b"ml llama-worker-0 pytorch "]])
def test_kubectl_prefix_and_timestamps_of_a_pytorchjobs_pods_read_as_its_node_logs(capsys, tmp_path, pods):
    """`kubectl logs -l ... --prefix --timestamps` of a PyTorchJob: each pod's prefix, then the
    stamp (and `stern --timestamps`'s pod and container, its namespace before them over several).
    The stamps are read off, the master's pod is node 0 and `worker-0` node 1: the records are
    those of the two nodes' own logs read with `--node-logs`."""
    mixed = b"".join(pod + line for pod, path in zip(pods, NODE_LOGS)
                     for line in _collected(Path(path).read_bytes()).splitlines(keepends=True))
    kubectl = tmp_path / "kubectl.log"
    kubectl.write_bytes(mixed)
    assert cmd_parse.run(_args([*NODE_LOGS, "--node-logs", "--format", "json"])) == 0
    node_logs = capsys.readouterr().out
    assert cmd_parse.run(_args([str(kubectl), "--format", "json"])) == 0
    out = capsys.readouterr()

    def records(text: str) -> list[str]:     # (the node logs' records name their file and local rank)
        return sorted(json.dumps({k: v for k, v in json.loads(line).items() if k not in ("local_rank", "file")})
                      for line in text.splitlines())
    got = records(out.out)
    assert got == records(node_logs) and {json.loads(line)["rank"] for line in got} == {0, 1, 2, 3}
    assert "collector's timestamps" in out.err


def _stern_short(pod: bytes, data: bytes) -> bytes:
    """`data` as `stern --timestamps=short` prints a pod's lines: its prefix, then month, day
    and time (no year), one line a second from 01-10 10:00:00."""
    return b"".join(pod + b"01-10 10:%02d:%02d " % (i // 60, i % 60) + line
                    for i, line in enumerate(data.splitlines(keepends=True)))


def test_sterns_short_timestamps_are_read_off_and_dated_in_the_year_written(capsys, tmp_path):
    """`stern --timestamps=short` puts `MM-DD HH:MM:SS ` between its pod's prefix and the job's
    line: read off, the pods' lines are the two nodes' logs; `ingest` dates each in the year the
    file was written (the year before, where the date would come after that)."""
    from ridgescope.cli.cmd_ingest import read_file
    stern = tmp_path / "stern.log"
    stern.write_bytes(b"".join(_stern_short(pod, Path(path).read_bytes()) for pod, path in
                               zip([b"llama-master-0 pytorch ", b"llama-worker-0 pytorch "], NODE_LOGS)))
    assert cmd_parse.run(_args([*NODE_LOGS, "--node-logs", "--format", "json"])) == 0
    node_logs = capsys.readouterr().out
    assert cmd_parse.run(_args([str(stern), "--format", "json"])) == 0
    out = capsys.readouterr()

    def records(text: str) -> list[str]:
        return sorted(json.dumps({k: v for k, v in json.loads(line).items() if k not in ("local_rank", "file")})
                      for line in text.splitlines())
    assert records(out.out) == records(node_logs) and len(records(out.out)) == 120

    for written, year in (calendar_ns(2026, 3, 1, 0, 0, 0), 2026), (calendar_ns(2027, 1, 5, 0, 0, 0), 2026):
        os.utime(stern, ns=(written, written))
        got = read_file(str(stern), None)
        first = next(it for it in got.items if it.record is not None)
        line_no = Path(NODE_LOGS[0]).read_bytes().split(b"\n").index(b"[default0]:step 1/30 loss 2.3014 step_time_ms 264.2")
        assert got.timestamps == "printed"
        assert (first.rank, first.record["step"], first.ts) == (0, 1, calendar_ns(year, 1, 10, 10, 0, line_no))


def calendar_ns(*parts) -> int:
    import calendar
    *whole, seconds = parts
    return (calendar.timegm((*whole, 0, 0, 0, 0)) + int(seconds)) * 10 ** 9 + round(seconds % 1 * 1e9)


def _as_docker_json(data: bytes, cut: int = 0) -> bytes:
    """`data` as Docker's json-file driver keeps it: each line a JSON object holding the line,
    its newline included, under `log`, with its stream and time; `cut`: lines longer than that
    are cut into entries, all but the last without the newline, as Docker does past 16 KiB."""
    out = []
    for i, line in enumerate(data.decode("utf-8", "surrogateescape").splitlines(keepends=True)):
        when = "2026-01-10T10:%02d:%02d.%09dZ" % (i // 60 % 60, i % 60, i)
        parts = [line[j:j + cut] for j in range(0, len(line), cut)] if cut else [line]
        out += [json.dumps({"log": part, "stream": "stdout", "time": when}) + "\n" for part in parts]
    return "".join(out).encode("utf-8", "surrogateescape")


@pytest.mark.parametrize("cut", [0, 7])
def test_a_collectors_json_lines_read_as_the_jobs_own(capsys, tmp_path, cut):
    """Docker's json-file logs (and a store's export of JSON lines) hold each of the job's lines
    in a field: read as those lines, a line that Docker cut into entries joined again."""
    plain = CAPTURED / "torch-2.15_torchrun-gloo_rank1-raises_2rank.log"
    collected = tmp_path / "container-json.log"
    collected.write_bytes(_as_docker_json(plain.read_bytes(), cut))
    assert cmd_parse.run(_args([str(plain), "--format", "json"])) == 0
    want = capsys.readouterr().out
    assert cmd_parse.run(_args([str(collected), "--format", "json"])) == 0
    out = capsys.readouterr()
    assert out.out == want and want.count("\n") == 10 and "text under 'log'" in out.err


@pytest.mark.parametrize("key, time_key", [("message", "asctime"), ("line", "timestamp"), ("textPayload", "timestamp")])
def test_json_lines_of_other_collectors(capsys, tmp_path, key, time_key):
    """python-json-logger's lines (`message`), Loki's `logcli --output=jsonl` (`line`), Google
    Cloud Logging's export (`textPayload`): each entry one line, with no newline of its own."""
    lines = ["loading data", "step 1/3 loss 2.0 step_time_ms 100.0", "step 2/3 loss 1.9 step_time_ms 900.0",
             "step 3/3 loss 1.8 step_time_ms 101.0"]
    entries = [json.dumps({time_key: "2026-01-10T10:00:0%dZ" % i, key: line}) for i, line in enumerate(lines)]
    log = tmp_path / "export.jsonl"
    log.write_text("\n".join(entries * 3 + ["a line of no JSON"]) + "\n")     # one in 13: still the collector's
    assert cmd_parse.run(_args([str(log), "--format", "json"])) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["step"], r["step_time_ms"]) for r in rows] == [(1, 100.0), (2, 900.0), (3, 101.0)] * 3


def _pod_entry(shape: str, pod: str, line: str) -> dict:
    """One of a job's lines as a collector's JSON line that names its pod and container."""
    if shape == "stern":        # stern -o json
        return {"message": line, "nodeName": "gke-1", "namespace": "ml", "podName": pod, "containerName": "pytorch"}
    if shape == "loki":         # logcli query --output=jsonl
        return {"labels": {"namespace": "ml", "pod": pod, "container": "pytorch"}, "line": line,
                "timestamp": "2026-01-10T10:00:00Z"}
    if shape == "fluent-bit":   # its kubernetes filter, over Docker's json-file entries
        return {"log": line + "\n", "stream": "stdout", "kubernetes": {"pod_name": pod, "container_name": "pytorch"}}
    return {"textPayload": line, "resource": {"type": "k8s_container",       # Google Cloud Logging's export
                                              "labels": {"pod_name": pod, "container_name": "pytorch"}}}


@pytest.mark.parametrize("shape", ["stern", "loki", "fluent-bit", "gcp"])
def test_a_collectors_json_lines_of_a_jobs_pods_read_as_its_node_logs(capsys, tmp_path, shape):
    """A PyTorchJob's pods' lines exported as JSON lines, each naming its pod: read behind
    kubectl's prefix of that pod, the master's pod node 0 and `worker-0` node 1, the records are
    those of the two nodes' own logs read with `--node-logs` (before, both nodes' `[default0]:`
    were rank 0)."""
    pods = ["llama-master-0", "llama-worker-0"]
    entries = [json.dumps(_pod_entry(shape, pod, line))
               for pod, path in zip(pods, NODE_LOGS) for line in Path(path).read_text().splitlines()]
    export = tmp_path / "export.jsonl"
    export.write_text("\n".join(entries) + "\n")
    assert cmd_parse.run(_args([*NODE_LOGS, "--node-logs", "--format", "json"])) == 0
    node_logs = capsys.readouterr().out
    assert cmd_parse.run(_args([str(export), "--format", "json"])) == 0

    def records(text: str) -> list[str]:     # (the node logs' records name their file and local rank)
        return sorted(json.dumps({k: v for k, v in json.loads(line).items() if k not in ("local_rank", "file")})
                      for line in text.splitlines())
    got = records(capsys.readouterr().out)
    assert got == records(node_logs) and {json.loads(line)["rank"] for line in got} == {0, 1, 2, 3}


def test_a_jobs_own_json_metrics_are_no_collectors():
    """A job that prints its metrics as JSON has none of the collectors' keys: its lines are its own."""
    head = b"".join(b'{"step": %d, "loss": 2.0, "time": "2026-01-10T10:00:00Z"}\n' % i for i in range(20))
    assert log_blocks.collector_format(head) is None


def test_ingest_times_docker_json_by_its_entries():
    """Each line of a Docker json-file log is placed at its entry's time."""
    import tempfile

    from ridgescope.cli.cmd_ingest import read_file
    plain = CAPTURED / "torch-2.15_torchrun-gloo_rank1-raises_2rank.log"
    with tempfile.TemporaryDirectory() as tmp:
        collected = Path(tmp) / "container-json.log"
        collected.write_bytes(_as_docker_json(plain.read_bytes(), 7))
        got, want = read_file(str(collected), None), read_file(str(plain), None)
    assert [(it.record["kind"], it.record["rank"], it.record["step"]) for it in got.items] == [
        (it.record["kind"], it.record["rank"], it.record["step"]) for it in want.items]
    line_no = plain.read_bytes().split(b"\n").index(b"step 1/5 loss 2.0000 step_time_ms 1.0")
    first = got.items[0]
    assert (first.source, first.ts) == ("log", calendar_ns(2026, 1, 10, 10, 0, line_no + line_no / 1e9))


TS_TORCHRUN = CAPTURED / "moreutils-0.67_ts-iso-fraction_torch-2.15_torchrun-tee3_rank1-raises_2rank.log"
TS_DEFAULT = CAPTURED / "moreutils-0.67_ts-default_torch-2.15_torchrun-tee3_2rank.log"
TS_ONE_PROCESS = CAPTURED / "moreutils-0.67_ts-month-day-fraction_print-args-steps_1proc.log"
TS_ELAPSED = CAPTURED / "moreutils-0.67_ts-s-elapsed_torch-2.15_torchrun-tee3_2rank.log"


@pytest.mark.parametrize("log", [TS_TORCHRUN, TS_DEFAULT, TS_ONE_PROCESS, TS_ELAPSED])
def test_a_wrappers_clock_is_read_past(capsys, tmp_path, log):
    """A job piped through `ts` has a clock before every line, before torchrun's prefix: the log
    reads as the job's own (here: the same log with its clocks cut off by hand), and `parse`
    says why."""
    import re
    bare = tmp_path / "bare.log"
    bare.write_bytes(re.sub(rb"(?m)^(?:\d{4}-\d\d-\d\d |[A-Z][a-z]{2} \d\d )?\d\d:\d\d:\d\d(?:\.\d+)? ", b"",
                            log.read_bytes()))
    assert bare.read_bytes() != log.read_bytes()
    assert cmd_parse.run(_args([str(bare), "--format", "json"])) == 0
    want = capsys.readouterr().out
    assert cmd_parse.run(_args([str(log), "--format", "json"])) == 0
    out = capsys.readouterr()
    assert out.out == want and "a wrapper put there (ts)" in out.err
    rows = [json.loads(line) for line in out.out.splitlines()]
    steps = sorted((r["rank"] if r["rank"] is not None else -1, r["step"]) for r in rows if r["kind"] == "progress")
    if log is TS_TORCHRUN:      # rank 1 raises at step 3; torchrun's report, behind the clock too
        assert steps == [(0, 1), (0, 2), (0, 3), (1, 1), (1, 2)]
        (first,) = [r for r in rows if r.get("error") == "child_failed" and r["rank"] is not None]
        assert first["rank"] == 1 and "rank 1 failed first" in first["message"]
        assert any(r.get("error") == "traceback" and r["rank"] == 1 and r["exception"] == "RuntimeError" for r in rows)
    elif log in (TS_DEFAULT, TS_ELAPSED):
        assert steps == [(rank, step) for rank in (0, 1) for step in range(1, 6)]
    else:
        assert steps == [(-1, step) for step in range(1, 17)]
        assert [r["step_time_ms"] for r in rows if r["step"] == 10] == [500.1]


def test_a_loggers_own_clock_is_no_wrappers():
    """fairseq, YOLOX and PaddleSeg stamp each line with their logger's clock, then its level or
    separator: their lines are left as they are.  A clock on a few lines is no wrapper's."""
    for name in ("fairseq_simple_train-inner.log", "yolox_trainer-lines.log", "paddleseg_train.log",
                 "pithtrain_hyphenated-keys.log", "metaseq_checkpoint-save.log"):
        head = (CAPTURED.parent / "excerpts" / name).read_bytes()
        assert not log_blocks.clocked(head), name
        assert log_blocks.clocked(b"".join(b"Dec 03 02:09:56 " + line for line in head.splitlines(True))), name
    for log in (TS_TORCHRUN, TS_DEFAULT, TS_ONE_PROCESS, TS_ELAPSED):
        assert log_blocks.clocked(log.read_bytes())
    head = b"2026-12-03 02:09:56 job starts\n" + b"step 1/9 loss 2.0\n" * 3
    assert not log_blocks.clocked(head) and not log_blocks.clocked(b"")
    assert not log_blocks.clocked(b"10:00:01 INFO step 1\n10:00:02 WARNING slow\n")


def test_ingest_times_steps_by_a_wrappers_clock():
    """`ts`'s clocks date each record: to the microsecond where it prints them, in the year the
    log was written where it prints none (its default, `Dec 03 02:09:57`)."""
    import time

    from ridgescope.cli.cmd_ingest import read_file
    one = read_file(str(TS_ONE_PROCESS), None)
    assert one.timestamps == "printed" and [it.record["step"] for it in one.items] == list(range(1, 17))
    first, tenth = one.items[0], one.items[9]
    assert time.strftime("%b %d %H:%M:%S", time.gmtime(first.ts // 10**9)) == "Dec 03 02:11:17"
    assert first.ts % 10**9 == 772010000 and (tenth.ts - one.items[8].ts) // 10**6 == 500
    rank_steps = read_file(str(TS_DEFAULT), None)
    assert sorted((it.rank, it.record["step"]) for it in rank_steps.items) == [
        (rank, step) for rank in (0, 1) for step in range(1, 6)]
    assert {time.strftime("%b %d %H:%M:%S", time.gmtime(it.ts // 10**9)) for it in rank_steps.items} == {"Dec 03 02:09:57"}


def test_a_loop_whose_bar_has_no_label_is_read_when_told(capsys):
    """tqdm's default bar over each epoch's batches, then over its evaluation's, none labelled
    (a real run into a pipe): by its looks nobody's training, so `parse` gives no step and says
    what would read it; `--log-format tqdm` reads each epoch's bar as the run's steps."""
    log = str(CAPTURED / "tqdm-4.70.1_own-loop_unlabelled-bar_pipe.log")
    assert cmd_parse.run(_args([log])) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == ["-- framework none; no steps",
                        "-- a bar with no label drew 6 steps and gave none (downloads and evaluations draw "
                        "the same); if it is the training loop's, --log-format tqdm reads it"]
    assert cmd_parse.run(_args([log, "--log-format", "tqdm", "--format", "json"])) == 0
    prog = [row for row in map(json.loads, capsys.readouterr().out.splitlines()) if row["kind"] == "progress"]
    assert [row["step"] for row in prog] == list(range(1, 13))      # not the evaluations' 3 batches
    assert min(prog, key=lambda row: row["it_per_s"])["step"] == 10   # the second epoch's slow 4th step
    assert [row.get("iter_in_epoch") for row in prog[6:]] == list(range(1, 7))


def test_ingest_of_a_loop_whose_bar_has_no_label(capsys):
    from ridgescope.cli.cmd_ingest import read_file
    log = str(CAPTURED / "tqdm-4.70.1_own-loop_unlabelled-bar_pipe.log")
    assert read_file(log, None).items == []
    assert "a bar with no label drew 6 steps" in capsys.readouterr().err
    told = read_file(log, "tqdm")
    assert [it.record["step"] for it in told.items if it.record is not None] == list(range(1, 13))
    assert "no label" not in capsys.readouterr().err
