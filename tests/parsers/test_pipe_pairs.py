"""A process's stdout and stderr saved to two files, given together to `parse` and `ingest`:
read as the log probe reads the two pipes of one process (`cli/pipe_pairs.py`)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ridgescope.cli import cmd_parse, pipe_pairs
from ridgescope.cli.cmd_ingest import FileResult, Item, read_file

CAPTURED = Path(__file__).resolve().parents[1] / "data" / "captured"
LOG_DIR = CAPTURED / "transformers-4.57.3_trainer_tqdm-info_log-dir-redirects3_2rank"
SLURM = CAPTURED / "transformers-4.57.3_trainer_tqdm_66-examples_slurm-out-err"


def two_pipes(stem: str) -> list[str]:
    return [str(CAPTURED / f"{stem}_two-pipes_{pipe}.log") for pipe in ("stdout", "stderr")]


def parsed(files: list[str], capsys) -> dict[str, list[dict]]:
    p = argparse.ArgumentParser()
    cmd_parse.register(p)
    assert cmd_parse.run(p.parse_args([*files, "--format", "json"])) == 0
    out: dict[str, list[dict]] = {}
    for line in capsys.readouterr().out.splitlines():
        row = json.loads(line)
        out.setdefault(Path(row.get("file", files[0])).name, []).append(row)
    return out


def steps(rows: list[dict], kind: str = "progress") -> list:
    return [r["step"] for r in rows if r["kind"] == kind and not r.get("summary")]


@pytest.mark.parametrize("name, other", [
    ("stdout.log", "stderr.log"),                   # torchrun --log-dir --redirects 3
    ("train-4242.out", "train-4242.err"),           # Slurm --output/--error
    ("train_stdout.txt.gz", "train_stderr.txt.gz"),
    ("stdout-of-stdout.log", "stdout-of-stderr.log"),
    ("job.out.xz", "job.err.xz"),
    ("train.o4242", "train.e4242"),                 # PBS, Grid Engine
    ("train.o4242.3", "train.e4242.3"),
    ("a.b.o17.gz", "a.b.e17.gz"),
])
def test_the_stderr_file_of_a_stdout_file(name, other):
    assert pipe_pairs.stderr_name(name) == other


@pytest.mark.parametrize("name", ["train.log", "out", ".out", "rank0.log.gz", "stderr.log", "layout.txt",
                                  "train.e4242", "photo.o", "x.oops1"])
def test_a_name_of_no_stdout_file_has_none(name):
    assert pipe_pairs.stderr_name(name) is None


def test_pairs_are_of_one_directory_and_stderr_is_read_first(tmp_path):
    for rank in ("0", "1"):
        (tmp_path / rank).mkdir()
        for pipe in ("stdout", "stderr"):
            (tmp_path / rank / f"{pipe}.log").write_text("")
    (tmp_path / "a.out").write_text("")
    out0, err0, out1, err1 = (str(tmp_path / r / f"{p}.log") for r in "01" for p in ("stdout", "stderr"))
    alone = str(tmp_path / "a.out")
    # rank 1's stderr given without its stdout, and rank 0's stdout twice
    pairs = pipe_pairs.pair_files([out0, alone, err1, err0, out0])
    assert set(pairs) == {out0, err0} and pairs[out0] is pairs[err0]
    assert pipe_pairs.reading_order([out0, alone, err1, err0], pairs) == [err0, out0, alone, err1]
    pairs = pipe_pairs.pair_files([err1, out1])
    assert pipe_pairs.reading_order([err1, out1], pairs) == [err1, out1]


def test_the_banner_on_stderr_numbers_the_dicts_on_stdout(capsys):
    """A Trainer run with no bar (`disable_tqdm`), 3 batches a step: read with the stderr file
    that logged the training banner, its log dicts' epochs give steps 2-12, as live under
    `ridgescope run`.  (Read alone, the run's end gives the same: `hf_run_end`.)"""
    files = two_pipes("transformers-4.57.3_trainer_disable-tqdm_log-level-info_accum3")
    alone = parsed(files[:1], capsys)
    assert steps(alone[Path(files[0]).name]) == [2, 4, 6, 8, 10, 12]
    rows = parsed(files, capsys)
    out = rows[Path(files[0]).name]
    assert [(r["step"], r["loss"]) for r in out if r["kind"] == "progress" and not r.get("summary")] == [
        (2, 1.4859), (4, 1.4165), (6, 1.5993), (8, 1.1497), (10, 1.0687), (12, 2.3413)]
    assert steps(out, "eval") == [5, 10]
    assert not any(r.get("timed_by_bar") for r in out)     # no bar was drawn
    assert [(r["step"], r["action"]) for r in rows[Path(files[1]).name] if r["kind"] == "checkpoint"] == [
        (8, "save"), (12, "save")]


def test_the_dicts_beside_a_bar_on_stderr_are_numbered_and_timed_by_the_bar(capsys):
    files = two_pipes("transformers-4.57.3_trainer_tqdm_log-level-info")
    rows = parsed(files, capsys)
    bar, dicts = rows[Path(files[1]).name], rows[Path(files[0]).name]
    assert steps(bar) == [2, 4, 5, 6, 8, 10, 12, 14, 15, 16]
    logged = [r for r in dicts if r["kind"] == "progress" and not r.get("summary")]
    assert [(r["step"], r["loss"]) for r in logged] == [
        (2, 0.7972), (4, 0.9701), (6, 2.8824), (8, 1.7717), (10, 0.7868), (12, 2.3337), (14, 1.2684),
        (16, 2.0304)]
    assert all(r["timed_by_bar"] for r in logged)


def test_a_bar_with_no_label_is_the_trainers_where_stdout_shows_the_trainer(capsys):
    """No INFO logging: stderr holds the bar alone, which names nothing, and read alone gives no
    step.  With the stdout file that shows HF's dicts, it is HF's bar (`adopt`) from its first
    redraw: every step it drew, none of the evaluations' bars (`0/2`)."""
    files = two_pipes("transformers-5.24.0_trainer_tqdm")
    assert steps(parsed(files[1:], capsys).get(Path(files[1]).name, [])) == []
    bar = parsed(files, capsys)[Path(files[1]).name]
    assert [(r["step"], r["total_steps"]) for r in bar if r["kind"] == "progress"] == [
        (n, 16) for n in (2, 4, 5, 6, 8, 10, 12, 14, 15, 16)]


def test_with_no_banner_the_bars_total_and_the_runs_end_number_the_dicts(capsys):
    """No INFO logging: stdout holds the dicts, each epoch printed to 2 decimals, stderr the bar
    alone.  Its total (18 steps) and the summary's epoch (2.0) give 9 steps an epoch, and the
    dicts one logging interval (2 steps); the evaluation printed with a dict gets its step."""
    files = [str(SLURM / "train-4242.out"), str(SLURM / "train-4242.err")]
    rows = parsed(files, capsys)
    out = rows["train-4242.out"]
    assert [(r["step"], r["loss"]) for r in out if r["kind"] == "progress" and not r.get("summary")] == [
        (2, 1.5653), (4, 1.4184), (6, 1.1363), (8, 2.363), (10, 0.7239), (12, 1.5957), (14, 1.156),
        (16, 1.8814), (18, 1.8989)]
    assert steps(out, "eval") == [None, 10, None]
    assert all(r["timed_by_bar"] for r in out if r["kind"] == "progress" and not r.get("summary"))
    assert steps(rows["train-4242.err"]) == [2, 4, 5, 6, 8, 10, 12, 14, 15, 16, 18]


def test_ingest_numbers_the_dicts_of_a_pair_with_no_banner():
    """`ingest` reads them so too; the bar times the steps, the dicts make no window."""
    err, out = str(SLURM / "train-4242.err"), str(SLURM / "train-4242.out")
    pairs = pipe_pairs.pair_files([out, err])
    results = {path: read_file(path, None, pipes=pairs[path]) for path in (err, out)}
    pipe_pairs.mark_timed_elsewhere(results, pairs)
    assert [(it.record["step"], it.timed_elsewhere) for it in results[out].items
            if it.record["kind"] == "progress" and not it.record.get("summary")] == [
        (step, True) for step in range(2, 19, 2)]


def test_a_loop_bar_before_the_training_is_not_the_trainers(tmp_path, capsys):
    """A script's own unlabelled bar (a preprocessing loop over 66 examples) drawn on stderr
    before the Trainer's: the summary's runtime and speed say the training made 18 steps, so
    the Trainer's bar is the one of 18, and the dicts get their steps (before, the loop's bar,
    read part way, was taken, and no step was)."""
    loop = ("\r  0%|          | 0/66 [00:00<?, ?it/s]\r 50%|█████     | 33/66 [00:00<00:00, 329.00it/s]"
            "\r100%|██████████| 66/66 [00:00<00:00, 330.00it/s]\n")
    (tmp_path / "train-7.err").write_bytes(loop.encode() + (SLURM / "train-4242.err").read_bytes())
    (tmp_path / "train-7.out").write_bytes((SLURM / "train-4242.out").read_bytes())
    rows = parsed([str(tmp_path / "train-7.out"), str(tmp_path / "train-7.err")], capsys)
    assert steps(rows["train-7.err"]) == [2, 4, 5, 6, 8, 10, 12, 14, 15, 16, 18]
    assert steps(rows["train-7.out"]) == list(range(2, 19, 2))


def test_a_run_that_did_not_end_leaves_its_dicts_without_a_step(tmp_path, capsys):
    """The same run cut before its summary: nothing tells the steps an epoch."""
    lines = (SLURM / "train-4242.out").read_text().splitlines(keepends=True)
    (tmp_path / "train-1.out").write_text("".join(lines[:-1]))
    (tmp_path / "train-1.err").write_bytes((SLURM / "train-4242.err").read_bytes())
    out = parsed([str(tmp_path / "train-1.out"), str(tmp_path / "train-1.err")], capsys)["train-1.out"]
    assert steps(out) == [None] * 9


def test_transformers_5_dicts_with_no_banner(capsys):
    """5.x prints the epoch quoted to 4 digits: 16 steps, 8 an epoch, a dict every 2 steps; the
    evaluations printed with a dict (at 10, and at the end) get its step."""
    files = two_pipes("transformers-5.24.0_trainer_tqdm")
    out = parsed(files, capsys)[Path(files[0]).name]
    assert steps(out) == [2, 4, 6, 8, 10, 12, 14, 16]
    assert steps(out, "eval") == [None, 10, None, 16]


def test_torchruns_log_dir_of_two_ranks(capsys):
    """`torchrun --nproc-per-node 2 --log-dir D --redirects 3`: each worker's stdout.log and
    stderr.log.  Rank 0's banner and bar are in its stderr.log, its dicts in its stdout.log;
    read in pairs, the dicts get their steps."""
    files = sorted(str(f) for f in LOG_DIR.glob("*/attempt_0/*/*.log"))
    assert len(files) == 4
    rows = parsed(files, capsys)
    assert set(rows) == {"stderr.log", "stdout.log"}      # rank 1's files give no record
    assert steps(rows["stderr.log"]) == [2, 4, 5, 6, 8]
    assert [(r["step"], r["loss"]) for r in rows["stdout.log"] if r["kind"] == "progress"
            and not r.get("summary")] == [(2, 1.4024), (4, 1.924), (6, 1.4404), (8, 1.885)]
    assert steps(rows["stdout.log"], "eval") == [5]


def test_ingest_reads_a_pair_as_one_process():
    """`ingest` reads the pair so too: the rank is the directory's, and the dicts, whose steps
    the bar on stderr times, make no window of their own (`StepStreams`), so that each step is
    timed once."""
    pairs = pipe_pairs.pair_files([str(LOG_DIR / "x"), *map(str, LOG_DIR.glob("*/attempt_0/0/*.log"))])
    (err,) = {p.stderr for p in pairs.values()}
    (out,) = {p.stdout for p in pairs.values()}
    bar = read_file(err, None, pipes=pairs[err])
    dicts = read_file(out, None, pipes=pairs[out])
    pipe_pairs.mark_timed_elsewhere({err: bar, out: dicts}, pairs)
    assert [(it.rank, it.record["step"], it.timed_elsewhere) for it in bar.items
            if it.record["kind"] == "progress"] == [(0, n, False) for n in (2, 4, 5, 6, 8)]
    assert [(it.rank, it.record["step"], it.timed_elsewhere) for it in dicts.items
            if it.record["kind"] == "progress" and not it.record.get("summary")] == [
        (0, n, True) for n in (2, 4, 6, 8)]
    alone = read_file(out, None)      # the run's end numbers the dicts, not the evaluation
    assert [it.record["step"] for it in alone.items] == [2, 4, None, 6, 8, None]
    assert pipe_pairs.steps_by_process([bar, dicts, alone], pairs)[0] == (
        f"{out} (with {err})", {(0, n) for n in (2, 4, 5, 6, 8)})


def test_only_the_stdout_files_head_is_read_ahead(tmp_path, monkeypatch):
    """The stdout file is read ahead for the framework it shows up to its head's end (64 MiB;
    one block here), not through a long log of another kind."""
    from ridgescope.cli import log_blocks
    monkeypatch.setattr(log_blocks, "SCAN_HEAD", log_blocks.BLOCK)
    stem = "transformers-5.24.0_trainer_tqdm"
    dicts, bar = (Path(p).read_bytes() for p in two_pipes(stem))
    for name, before in (("near", b""), ("far", b"a line of the job's own\n" * 4000)):
        (tmp_path / f"{name}.out").write_bytes(before + dicts)
        (tmp_path / f"{name}.err").write_bytes(bar)
        pairs = pipe_pairs.pair_files([str(tmp_path / f"{name}.out"), str(tmp_path / f"{name}.err")])
        pipes = pairs[str(tmp_path / f"{name}.err")]
        disp = pipe_pairs.dispatcher(pipes.stderr, pipes, lambda path, banner=None: cmd_parse.Dispatcher())
        assert pipes.frameworks.shown == (["hf_trainer"] if name == "near" else [])
        assert disp.framework == ("hf_trainer" if name == "near" else None)


def _file(path: str, *records: dict) -> FileResult:
    return FileResult(path, items=[Item(r.get("rank", 0), dict(r, kind=r.get("kind", "progress")), None, False)
                                   for r in records])


def _elsewhere(result: FileResult) -> list:
    return [(it.rank, it.record["step"]) for it in result.items if it.timed_elsewhere]


def test_the_file_with_the_frameworks_own_step_times_times_the_rank(tmp_path):
    """As live (`StepStreams`): of the two files, the one whose records carry the framework's own
    step time times the rank, over a bar timed only by the time it drew; else the stderr file.
    Each rank is decided apart, and a dict numbered beside a bar never times its step."""
    pairs = pipe_pairs.pair_files([str(tmp_path / "stdout.log"), str(tmp_path / "stderr.log")])
    err, out = str(tmp_path / "stderr.log"), str(tmp_path / "stdout.log")
    bar = _file(err, {"step": 5, "step_time_ms": 400.0, "step_time_from_elapsed": True},
                {"step": 10, "step_time_ms": 410.0, "step_time_from_elapsed": True},
                {"rank": 1, "step": 5}, {"kind": "checkpoint", "step": 5})
    printed = _file(out, {"step": 5, "step_time_ms": 395.2}, {"step": 10, "step_time_ms": 401.7},
                    {"rank": 1, "step": 5, "timed_by_bar": True})
    pipe_pairs.mark_timed_elsewhere({err: bar, out: printed}, pairs)
    assert _elsewhere(bar) == [(0, 5), (0, 10)] and _elsewhere(printed) == [(1, 5)]
    untimed = _file(out, {"step": 5}, {"step": 10})
    pipe_pairs.mark_timed_elsewhere({err: bar, out: untimed}, pairs)
    assert _elsewhere(bar) == [] and _elsewhere(untimed) == [(0, 5), (0, 10)]


NAMES = st.sampled_from(["stdout.log", "stderr.log", "a.out", "a.err", "b.out", "train_stdout.txt",
                         "train_stderr.txt", "x.log", "stdout.log.gz", "stderr.log.gz", "-"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["d0", "d1"]), NAMES), max_size=10))
def test_pairs_and_reading_order_of_any_files(given_files):
    """Any files: each pair is a stdout file and the stderr file its name names, in one
    directory, each file in one pair at most; the reading order holds each file given exactly
    once (as often as it was given, save a pair's), a pair's stderr file just before its stdout."""
    paths = [name if name == "-" else f"/logs/{d}/{name}" for d, name in given_files]
    pairs = pipe_pairs.pair_files(paths)
    for path, pipes in pairs.items():
        assert path in (pipes.stdout, pipes.stderr) and pairs[pipes.stdout] is pairs[pipes.stderr]
        assert Path(pipes.stdout).parent == Path(pipes.stderr).parent
        assert pipe_pairs.stderr_name(Path(pipes.stdout).name) == Path(pipes.stderr).name
    order = pipe_pairs.reading_order(paths, pairs)
    assert sorted(set(order)) == sorted(set(paths))
    assert all(order.count(p) == (1 if p in pairs else paths.count(p)) for p in set(paths))
    for pipes in pairs.values():
        assert order.index(pipes.stderr) + 1 == order.index(pipes.stdout)
