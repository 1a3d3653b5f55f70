"""Safe reading of printed Python/JSON dicts (`{'loss': 2.1, 'epoch': 0.5}`) without eval."""
from __future__ import annotations

import regex

from .base import LIMIT, num

_ITEM = regex.compile(
    r"""\s*+['"]([^'"]{1,80}+)['"]\s*+:\s*+(?:['"]([^'"]{0,80}+)['"]|([-+\w.]{1,40}+))\s*+(?:,|$)""")
MAX_DICT = 8192


def parse_flat_dict(text: str) -> dict | None:
    """Flat dict of scalars; nested values are skipped.  None when `text` is not such a dict."""
    t = text.strip()
    if len(t) > MAX_DICT or not (t.startswith("{") and t.endswith("}")):
        return None
    body = t[1:-1]
    out: dict = {}
    for m in _ITEM.finditer(body, timeout=LIMIT.timeout):
        key = m.group(1)
        raw = m.group(2) if m.group(2) is not None else m.group(3)
        v = num(raw)
        if v is not None:
            out[key] = int(v) if v == int(v) and "." not in raw and "e" not in raw.lower() else v
        elif raw in ("True", "False", "true", "false"):
            out[key] = raw.lower() == "true"
        elif m.group(2) is not None:
            out[key] = raw
    return out or None
