"""Messages are validated where they enter and leave; the error is the dead-letter reason."""
from __future__ import annotations

import msgpack
import pytest

from ridgescope.schemas import envelope
from ridgescope.schemas.envelope import SchemaError


def spans_msg(**overrides):
    payload = {"step": 3, "t0_ns": 1, "t1_ns": 2, "spans": [], "buckets": [], "world_size": 4}
    msg = envelope.make("step_spans", "job", 1, "host", 5, 7, payload)
    msg.update(overrides)
    return msg


def test_roundtrip_keeps_every_field():
    msg = spans_msg()
    assert envelope.decode(envelope.encode(msg)) == msg


@pytest.mark.parametrize("raw, reason", [
    (b"", "empty message"),
    (b"\xc1garbage", "not msgpack"),
    (msgpack.packb([1, 2]), "envelope is list, expected a map"),
    (msgpack.packb({"v": 1}), "envelope field 'kind' is missing"),
])
def test_undecodable_messages_say_why(raw, reason):
    with pytest.raises(SchemaError, match=reason):
        envelope.decode(raw)


def test_wrong_types_unknown_kinds_and_versions_are_refused():
    with pytest.raises(SchemaError, match="envelope field 'rank' has type str"):
        envelope.validate(spans_msg(rank="1"))
    with pytest.raises(SchemaError, match="unknown kind 'nope'"):
        envelope.validate(spans_msg(kind="nope"))
    with pytest.raises(SchemaError, match="unsupported schema version 2"):
        envelope.validate(spans_msg(v=2))
    with pytest.raises(SchemaError, match="step_spans: payload field 'step' is missing"):
        envelope.validate(spans_msg(p={"t0_ns": 1}))
    with pytest.raises(SchemaError, match="payload field 'world_size' has type bool"):
        envelope.validate(spans_msg(p={"step": 1, "t0_ns": 1, "t1_ns": 2, "spans": [],
                                       "buckets": [], "world_size": True}))


def test_encode_refuses_what_decode_would_refuse():
    with pytest.raises(SchemaError):
        envelope.encode(spans_msg(job=None))
