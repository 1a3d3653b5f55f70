"""torchrun's prefix of another role or template, rewritten to its default (template.py)."""
from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from ridgescope.cli import cmd_parse
from ridgescope.parsers import Dispatcher
from ridgescope.parsers.template import TeePrefix

from .test_captured import CAPTURED, TEE_HOST
from .test_cli_parse import _args

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

