"""The query library: ``sql/queries/*.sql``, each answering one question.

A query file starts with a comment header::

    -- Question: What were the slowest steps of a job, and what caused them?
    -- Param: job String — the job
    -- Param: limit UInt32 = 20 — how many steps to list

and uses ClickHouse query parameters (``{job:String}``) in its body, so it runs as-is in
clickhouse-client (``--param_job=...``), Grafana or any HTTP client of a server.  The CLI reaches
an embedded store through the worker's HTTP API, which takes plain SQL, so ``render`` substitutes
the parameters client-side as typed literals.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import regex

QUERIES_DIR = Path(__file__).parent / "queries"
_QUESTION = regex.compile(r"^--\s*Question:\s*(.+)$")
_PARAM = regex.compile(r"^--\s*Param:\s*(\w+)\s+(.+?)(?:\s*=\s*(\S.*?))?\s+—\s+(.*)$")
_PLACEHOLDER = regex.compile(r"\{(\w+):([^{}]+)\}")
_INT_TYPES = regex.compile(r"^U?Int(8|16|32|64)$")


class LibraryError(ValueError):
    """A query or its parameters are wrong; the message is meant for the user."""


@dataclass
class Param:
    name: str
    type: str
    default: object = None
    required: bool = True
    doc: str = ""


@dataclass
class Query:
    name: str
    question: str
    params: dict[str, Param] = field(default_factory=dict)
    sql: str = ""

    def render(self, **values) -> str:
        """The SQL with every parameter replaced by a literal of its declared type."""
        unknown = set(values) - set(self.params)
        if unknown:
            raise LibraryError(f"{self.name}: unknown parameters {sorted(unknown)}")
        resolved = {}
        for name, param in self.params.items():
            if values.get(name) is not None:
                resolved[name] = values[name]
            elif not param.required:
                resolved[name] = param.default
            else:
                raise LibraryError(f"{self.name}: parameter {name!r} is required")

        def substitute(match):
            name, type_ = match.group(1), match.group(2).strip()
            if name not in resolved:
                raise LibraryError(f"{self.name}: {{{name}}} is not declared in the header")
            return literal(resolved[name], type_)
        return _PLACEHOLDER.sub(substitute, self.sql)


def _quote(value: str) -> str:
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


def literal(value, type_: str) -> str:
    """A ClickHouse literal of ``type_`` for ``value``; refuses values of the wrong shape."""
    type_ = type_.strip()
    try:
        if _INT_TYPES.match(type_):
            number = int(value)
            if type_.startswith("U") and number < 0:
                raise ValueError("negative")
            return str(number)
        if type_ in ("Float32", "Float64"):
            number = float(value)
            return "nan" if math.isnan(number) else repr(number)
        if type_ == "String":
            return _quote(value)
        if type_.startswith("Map("):
            pairs = dict(value or {})
            inner = ", ".join(f"{_quote(k)}, {_quote(v)}" for k, v in pairs.items())
            return f"CAST(map({inner}), {_quote(type_)})"
        if type_.startswith("Array("):
            inner = ", ".join(_quote(v) for v in value or [])
            return f"CAST([{inner}], {_quote(type_)})"
    except (TypeError, ValueError):
        raise LibraryError(f"expected a {type_}, got {value!r}") from None
    raise LibraryError(f"unsupported parameter type {type_}")


def _default(text: str | None, type_: str):
    if text is None:
        return None
    text = text.strip()
    if text == "{}":
        return {}
    if text == "[]":
        return []
    if text.startswith("'") and text.endswith("'"):
        return text[1:-1]
    if _INT_TYPES.match(type_):
        return int(text)
    if type_.startswith("Float"):
        return float(text)
    return text


def parse(name: str, text: str) -> Query:
    question = None
    params: dict[str, Param] = {}
    for line in text.splitlines():
        if not line.startswith("--"):
            if line.strip():
                break
            continue
        if match := _QUESTION.match(line):
            question = match.group(1).strip()
        elif match := _PARAM.match(line):
            pname, ptype, pdefault, doc = match.groups()
            params[pname] = Param(pname, ptype.strip(), _default(pdefault, ptype.strip()),
                                  pdefault is None, doc.strip())
    if not question:
        raise LibraryError(f"{name}: no '-- Question:' line in its header")
    used = {m.group(1) for m in _PLACEHOLDER.finditer(text)}
    if used - set(params):
        raise LibraryError(f"{name}: undeclared parameters {sorted(used - set(params))}")
    return Query(name, question, params, text)


def load(name: str) -> Query:
    path = QUERIES_DIR / f"{name}.sql"
    if not path.is_file():
        raise LibraryError(f"no query named {name!r}; known: {', '.join(names())}")
    return parse(name, path.read_text())


def names() -> list[str]:
    return sorted(p.stem for p in QUERIES_DIR.glob("*.sql"))


def all_queries() -> dict[str, Query]:
    return {name: load(name) for name in names()}


def render(name: str, **values) -> str:
    return load(name).render(**values)


def parse_tags(items: list[str] | None) -> dict[str, str]:
    """``["team=llm", "model=7b"]`` → ``{"team": "llm", "model": "7b"}``."""
    tags = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise LibraryError(f"a tag is key=value, got {item!r}")
        tags[key.strip()] = value.strip()
    return tags


def parse_since(text: str | None) -> int:
    """``7d``, ``2w``, ``36h`` (rounded up to days) or a bare number of days → days; 0: all."""
    if not text:
        return 0
    match = regex.fullmatch(r"\s*(\d+)\s*([dwh]?)\s*", text)
    if not match:
        raise LibraryError(f"--since wants a duration like 7d, 2w or 36h, got {text!r}")
    number, unit = int(match.group(1)), match.group(2) or "d"
    return {"d": number, "w": 7 * number, "h": -(-number // 24)}[unit]
