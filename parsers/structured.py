"""Structured logging: a training script whose logger writes JSON (python-json-logger, Google
Cloud's structured logging, pino and bunyan write `msg`) prints each message inside an object,
`{"asctime": "...", "levelname": "INFO", "message": "step 5/100 loss 2.31 step_time_ms 150"}`.
The message is read as the line it would have been; where it gives nothing (`"message":
"metrics"` with the numbers in fields of their own), the object is read as any printed dict."""
from __future__ import annotations

import json

MESSAGE_KEYS = ("message", "msg")
MAX_OBJECT = 65536


def json_object(text: str) -> dict | None:
    """`text` read as one JSON object; None where it is none, or longer than MAX_OBJECT."""
    s = text.strip()
    if len(s) > MAX_OBJECT or not (s.startswith("{") and s.endswith("}")):
        return None
    try:
        obj = json.loads(s)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def message_of(line: str) -> str | None:
    """The message of a structured log line (a JSON object with a message of several words);
    None for another line."""
    obj = json_object(line)
    if obj is None:
        return None
    for key in MESSAGE_KEYS:
        text = obj.get(key)
        if isinstance(text, str) and " " in text.strip():
            return text.rstrip("\n")
    return None
