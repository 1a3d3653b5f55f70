"""torchrun's prefix of another role or template, rewritten to its default (template.py)."""
from __future__ import annotations

import json

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from ridgescope.cli import cmd_parse
from ridgescope.parsers import Dispatcher
from ridgescope.parsers.template import TeePrefix, guess

from .conftest import CORPUS
from .test_captured import CAPTURED, TEE_HOST, TEE_ROLE
from .test_cli_parse import _args

MPICH_PREFIXED = "mpich-4.0.2_mpiexec-prepend-rank_lines-in-two-writes_3rank.log"

TEMPLATES = ["[${role_name}${local_rank}]:", "${hostname}:${rank}: ", "[${rank}|${local_rank}] ",
             "<$role_name-$local_rank>"]


def test_names_learnt_where_lines_start_are_then_found_inside_lines():
    prefix = TeePrefix("${hostname}:${rank}: ")
    assert prefix.as_default(b"x 1.0node-7:3: y\n") == b"x 1.0node-7:3: y\n"     # not learnt yet
    assert prefix.as_default(b"node-7:2: a\nb 1.0node-7:3: c\n") == b"[default2]:a\nb 1.0[default3]:c\n"


def test_the_number_is_the_jobs_rank_where_the_template_gives_it():
    prefix = TeePrefix("[${rank}|${local_rank}] ")
    assert not prefix.local
    assert prefix.as_default(b"[13|5] step\n") == b"[default13]:step\n"
    assert TeePrefix("[${role_name}${local_rank}]:").local


def test_mpichs_prefix_is_found_where_a_write_began_and_not_inside_an_nccl_line():
    """MPICH's and Intel MPI's `mpiexec -prepend-rank` (`-l`): `[3] ` before each write of a rank,
    so also inside a line whose first part another rank's write cut off; NCCL writes the same
    shape inside its own lines (`host:pid:tid [0] NCCL INFO`), after a space.  (The lines as
    MPICH 4.0.2's Hydra wrote them, the NCCL one of the shape the corpus's NCCL logs show.)"""
    prefix = TeePrefix("[${rank}] ")
    assert prefix.as_default(b"[3] step 1/30 loss 2.3056 step_time_ms 499.4[0] step 1/30 loss 2.3040\n") == (
        b"[default3]:step 1/30 loss 2.3056 step_time_ms 499.4[default0]:step 1/30 loss 2.3040\n")
    nccl = b"[1] node1:124:457 [1] NCCL INFO comm 0x55d4 rank 1 nranks 2 cudaDev 1 busId 20 - Init COMPLETE\n"
    assert prefix.as_default(nccl) == b"[default1]:" + nccl[4:]
    d = Dispatcher(tee_prefix=prefix)
    recs = d.feed_chunk(nccl) + d.flush()
    assert [(r["kind"], r["rank"], r.get("nranks")) for r in recs] == [("nccl_init", 1, 2)]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(TEMPLATES), st.binary(max_size=400), st.sampled_from([b"node-1:0: ", b"[w3]:", b""]))
def test_any_bytes_never_raise_and_keep_their_lines(template, noise, head):
    prefix = TeePrefix(template)
    data = head + noise
    out = prefix.as_default(data)
    assert out.count(b"\n") == data.count(b"\n")
    d = Dispatcher(tee_prefix=TeePrefix(template))
    d.feed_chunk(data)
    d.feed(data[:100])
    d.flush()


def test_parse_takes_the_template(capsys):
    path = str(CAPTURED / TEE_HOST)
    assert cmd_parse.run(_args([path, "--format", "json", "--prefix-template", "${hostname}:${rank}: "])) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert sorted((r["rank"], r["step"]) for r in rows if r["kind"] == "progress") == [
        (rank, step) for rank in range(3) for step in range(1, 5)]


def test_a_template_of_the_jobs_rank_behind_srun_s_label():
    """`srun --label torchrun --log-line-prefix-template '${hostname}:${rank}: '`: the number
    is the job's rank already, whichever node's label is in front."""
    d = Dispatcher(nproc_per_node=2, tee_prefix=TeePrefix("${hostname}:${rank}: "))
    recs = d.feed_chunk(b"1: n1:3: step 1/2 loss 2.0 step_time_ms 100\n"
                        b"0: n0:1: step 1/2 loss 2.0 step_time_ms 100\n")
    assert [r["rank"] for r in recs] == [3, 1]



@pytest.mark.parametrize("capture, template", [(TEE_ROLE, "[${role_name}${local_rank}]:"),
                                               (TEE_HOST, "${hostname}:${rank}: "),
                                               (MPICH_PREFIXED, "[${rank}] ")])
def test_parse_guesses_the_template_most_lines_begin_with(capsys, capture, template):
    """torchrun's own warning lines come first, without a prefix; the workers' lines, most of
    the log, carry the role's or the host's prefix: `parse` reads them as the flag would, and
    says so.  So MPICH's `-prepend-rank` (`[2] `), whose Hydra passes lines on in pieces, each
    behind the rank's prefix, and a line's newline after a prefix of its own
    (`[0] step 2/4 ... 300.0[2] step 3/4 ... 300.2[2] `)."""
    assert cmd_parse.run(_args([str(CAPTURED / capture), "--format", "json"])) == 0
    out = capsys.readouterr()
    rows = [json.loads(line) for line in out.out.splitlines()]
    assert sorted((r["rank"], r["step"]) for r in rows if r["kind"] == "progress") == [
        (rank, step) for rank in range(3) for step in range(1, 5)]
    assert f"read as --prefix-template '{template}'" in out.err


@pytest.mark.parametrize("head, template", [
    (b"[trainer0]:step 1\n[trainer1]:step 1\nnoise\n", "[${role_name}${local_rank}]:"),
    (b"0: [trainer1]:step 1\n1: [trainer0]:x\n", "[${role_name}${local_rank}]:"),  # behind srun's label
    (b"r12i0n8:3: a\nr12i0n9:4: b\n\n\n", "${hostname}:${rank}: "),
    (b"[0] step 1\n[1] step 1\n[1] \n", "[${rank}] "),                 # MPICH's -prepend-rank
    (b"[1] 4242\nnoise\nmore noise\nand more\n", None),                 # a shell's job, once
    (b"[trainer12|4]:a\n[trainer13|5]:b\n", "[${role_name}${rank}|${local_rank}]:"),   # torchtune's
    (b"[trainer0]:step 1\nnoise\nmore noise\nand more\n", None),        # a line in four
    (b"[default0]:a\n[default1]:b\n", None),                              # torchrun's default
    (b"[rank0]:a\n[rank1]:b\n", None),                                    # torch's logger
    (b"[INFO]: a\n[Epoch]: b\n", None),                                   # no number
    (b"host:1:2 [0] NCCL INFO a\nhost:1:2 [0] NCCL INFO b\n", None),      # NCCL's own prefix
    (b"", None)])
def test_guess(head, template):
    assert guess(head) == template


def test_no_log_of_the_corpus_is_taken_for_another_template():
    for path in sorted(CORPUS.rglob("*.log")):
        with open(path, "rb") as fh:
            assert guess(fh.read(cmd_parse.GUESS_HEAD)) is None, path
