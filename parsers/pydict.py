"""Safe reading of printed Python/JSON dicts (`{'loss': 2.1, 'epoch': 0.5}`) without eval."""
from __future__ import annotations

import json
import json.scanner

from .base import Pattern, num

_ITEM = Pattern(
    r"""\s*+['"]([^'"]{1,80}+)['"]\s*+:\s*+(?:['"]([^'"]{0,80}+)['"]|([-+\w.]{1,40}+))\s*+(?:,|$)""")
MAX_DICT = 8192
_QUOTES = ("'", '"')
_BOOLS = ("True", "False", "true", "false")
_BARE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+-.")


def _put(out: dict, key: str, raw: str, quoted: bool) -> None:
    """Store one printed value as the dict holds it: a number (int when printed as one), a
    bool, or, quoted, the text; anything else is skipped."""
    v = num(raw)
    if v is not None:
        out[key] = int(v) if v == int(v) and "." not in raw and "e" not in raw.lower() else v
    elif raw in _BOOLS:
        out[key] = raw.lower() == "true"
    elif quoted:
        out[key] = raw


def plain_dict(body: str) -> dict | None:
    """The dict of a plainly printed body (`'k': v, 'k': 'v'`), read without the regex;
    None at any doubt (other spacing, quotes or commas inside, non-ASCII bare values), where
    `_ITEM` decides.  Where it answers, it answers what the items `_ITEM.finditer` finds give."""
    out: dict = {}
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
            _put(out, key, inner, True)
        elif len(v) <= 40 and _BARE.issuperset(v):
            # what `_put` makes of the two common bare values, spelt out
            if v.isdigit():
                out[key] = int(float(v))
            elif "." in v:          # a float, or skipped
                try:
                    f = float(v)
                except ValueError:
                    continue
                if f - f == 0.0:
                    out[key] = f
            else:
                _put(out, key, v, False)
        else:
            return None
    return out


def regex_dict(body: str) -> dict:
    """The dict of the items `_ITEM` finds in a body."""
    out: dict = {}
    for m in _ITEM.finditer(body):
        key, quoted, bare = m.groups()
        _put(out, key, quoted if quoted is not None else bare, quoted is not None)
    return out


def _no_constant(name: str):
    raise ValueError(name)      # NaN, Infinity: `_put` skips them; the other paths decide


_SCAN = json.scanner.make_scanner(json.JSONDecoder(parse_constant=_no_constant))  # type: ignore[arg-type]
"""`json`'s C scanner, called straight: (value, end) of the JSON text at an index.  (`json.loads`
with a keyword builds a decoder each call, half of its cost on a short dict; the decoder's own
`decode` adds ~0.8 us of Python around the scanner.)"""


def json_dict(text: str) -> dict | None:
    """The dict of a printed dict, stripped, of plain numbers and strings, read by `json` in C (3x faster
    than `plain_dict`); None at any doubt (double quotes or backslashes, a bool, a nested or
    non-finite value, a quoted number, a long key, value or token), where the others decide.
    Where it answers, it answers what `regex_dict` reads from the body."""
    if '"' in text or "\\" in text or max(map(len, text.split()), default=0) > 40:
        return None
    try:
        d, end = _SCAN(text.replace("'", '"'), 0)
    except (ValueError, RecursionError, StopIteration):
        return None
    if end != len(text) or d.__class__ is not dict or not d or "" in d or max(map(len, d)) > 80:
        return None
    for v in d.values():
        kind = v.__class__
        if kind is float:
            if v - v != 0.0:
                return None
        elif kind is int:
            if not -_EXACT < v < _EXACT:
                return None
        elif kind is not str or len(v) > 80 or num(v) is not None or v in _BOOLS:
            return None
    return d


_EXACT = 2 ** 53
"""Beyond this, `_put` reads an int through a float; `json` keeps every digit."""


# A number printed inside its type: `tensor(1.52, device='cuda:0')` (a metric left on the GPU),
# `np.float64(1.25)` (NumPy 2's repr), `array(3.11, dtype=float32)` (a JAX metric fetched with
# `jax.device_get`: a NumPy array of no dimension).
WRAPPED = Pattern(r"\b(?:tensor|array|(?:np|numpy)\.(?:float|int|uint)\d{1,3}+)\((-?[\d.]++(?:[eE][-+]?\d++)?)"
                  r"(?:, [^()]{0,200}+)?\)")


def parse_flat_dict(text: str) -> dict | None:
    """Flat dict of scalars; nested values are skipped.  None when `text` is not such a dict."""
    t = text.strip()
    if len(t) > MAX_DICT or not (t.startswith("{") and t.endswith("}")):
        return None
    if "(" in t:
        t = WRAPPED.sub(r"\1", t)
    out = json_dict(t)
    if out is None:
        body = t[1:-1]
        out = plain_dict(body)
        if out is None:
            out = regex_dict(body)
    return out or None
