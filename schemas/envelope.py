"""The msgpack envelope every RidgeScope message travels in, validated at the edges.

An envelope is a flat map: ``v`` (schema version), ``kind``, ``job``, ``rank``, ``host``,
``ts_ns`` (event time), ``seq`` (per-producer sequence number, for dedup) and ``p``, the
kind-specific payload.  Producers call :func:`encode`; consumers call :func:`decode`, which
raises :class:`SchemaError` with a reason that the dead-letter topic keeps.
"""
from __future__ import annotations

from typing import Any

import msgpack

from ridgescope.schemas.kinds import PAYLOAD_SPECS

VERSION = 1

_ENVELOPE_SPEC: dict[str, tuple[type, ...]] = {
    "v": (int,),
    "kind": (str,),
    "job": (str,),
    "rank": (int,),
    "host": (str,),
    "ts_ns": (int,),
    "seq": (int,),
    "p": (dict,),
}


class SchemaError(ValueError):
    """A message that does not match its schema; the text is the dead-letter reason."""


def make(kind: str, job: str, rank: int, host: str, ts_ns: int, seq: int, payload: dict) -> dict:
    """Build an envelope dict (not yet encoded)."""
    return {"v": VERSION, "kind": kind, "job": job, "rank": rank, "host": host,
            "ts_ns": ts_ns, "seq": seq, "p": payload}


def validate(msg: Any) -> dict:
    """Check an envelope and its payload; return it unchanged or raise SchemaError."""
    if not isinstance(msg, dict):
        raise SchemaError(f"envelope is {type(msg).__name__}, expected a map")
    for field, types in _ENVELOPE_SPEC.items():
        if field not in msg:
            raise SchemaError(f"envelope field '{field}' is missing")
        value = msg[field]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise SchemaError(f"envelope field '{field}' has type {type(value).__name__}")
    if msg["v"] != VERSION:
        raise SchemaError(f"unsupported schema version {msg['v']}")
    spec = PAYLOAD_SPECS.get(msg["kind"])
    if spec is None:
        raise SchemaError(f"unknown kind '{msg['kind']}'")
    payload = msg["p"]
    for field, (types, required) in spec.items():
        if field not in payload:
            if required:
                raise SchemaError(f"{msg['kind']}: payload field '{field}' is missing")
            continue
        value = payload[field]
        if value is None and not required:
            continue
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise SchemaError(
                f"{msg['kind']}: payload field '{field}' has type {type(value).__name__}")
    return msg


def encode(msg: dict) -> bytes:
    """Validate and pack an envelope."""
    return msgpack.packb(validate(msg), use_bin_type=True)


def decode(raw: bytes | None) -> dict:
    """Unpack and validate an envelope; any failure becomes a SchemaError."""
    if not raw:
        raise SchemaError("empty message")
    try:
        msg = msgpack.unpackb(raw, raw=False, strict_map_key=False)
    except Exception as exc:  # msgpack raises several unrelated types
        raise SchemaError(f"not msgpack: {type(exc).__name__}: {exc}") from None
    return validate(msg)
