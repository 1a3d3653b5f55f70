"""Safe reading of printed Python/JSON dicts (`{'loss': 2.1, 'epoch': 0.5}`) without eval."""
from __future__ import annotations

import regex

from .base import LIMIT, num

_ITEM = regex.compile(
    r"""\s*+['"]([^'"]{1,80}+)['"]\s*+:\s*+(?:['"]([^'"]{0,80}+)['"]|([-+\w.]{1,40}+))\s*+(?:,|$)""")
MAX_DICT = 8192
_QUOTES = ("'", '"')
_BARE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+-.")


def plain_items(body: str) -> list[tuple] | None:
    """The (key, quoted value, bare value) items of a plainly printed body
    (`'k': v, 'k': 'v'`), split without the regex; None at any doubt (other spacing, quotes
    or commas inside, non-ASCII bare values), where `_ITEM` decides.  Where it answers, it
    answers what `_ITEM.finditer` finds."""
    out = []
    for item in body.split(", "):
        k, sep, v = item.partition(": ")
        if not sep or len(k) < 3 or k[0] not in _QUOTES or k[-1] not in _QUOTES:
            return None
        key = k[1:-1]
        if len(key) > 80 or "'" in key or '"' in key or not v:
            return None
        if v[0] in _QUOTES:
            inner = v[1:-1]
            if len(v) < 2 or v[-1] not in _QUOTES or len(inner) > 80 or "'" in inner \
                    or '"' in inner:
                return None
            out.append((key, inner, None))
        elif len(v) <= 40 and _BARE.issuperset(v):
            out.append((key, None, v))
        else:
            return None
    return out


def regex_items(body: str) -> list[tuple]:
    return [m.groups() for m in _ITEM.finditer(body, timeout=LIMIT.timeout)]


def parse_flat_dict(text: str) -> dict | None:
    """Flat dict of scalars; nested values are skipped.  None when `text` is not such a dict."""
    t = text.strip()
    if len(t) > MAX_DICT or not (t.startswith("{") and t.endswith("}")):
        return None
    body = t[1:-1]
    items = plain_items(body)
    if items is None:
        items = regex_items(body)
    out: dict = {}
    for key, quoted, bare in items:
        raw = quoted if quoted is not None else bare
        v = num(raw)
        if v is not None:
            out[key] = int(v) if v == int(v) and "." not in raw and "e" not in raw.lower() else v
        elif raw in ("True", "False", "true", "false"):
            out[key] = raw.lower() == "true"
        elif quoted is not None:
            out[key] = raw
    return out or None
