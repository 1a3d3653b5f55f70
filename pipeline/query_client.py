"""How the CLI reaches the store: directly for a server, through the worker for chDB."""
from __future__ import annotations

import json
import urllib.error
import urllib.request

from ridgescope.pipeline.config import Settings
from ridgescope.sql.store import ReadOnlyViolation, Store, StoreError


class WorkerStore:
    """The embedded store, queried through the worker process that owns it."""

    def __init__(self, port: int, timeout_s: float = 60.0):
        self.url = f"http://127.0.0.1:{port}/query"
        self.timeout_s = timeout_s

    def query(self, sql: str, *, read_only: bool = True, max_rows: int = 10_000,
              timeout_s: int = 30) -> tuple[list[str], list[tuple]]:
        body = json.dumps({"sql": sql, "read_only": read_only, "max_rows": max_rows,
                           "timeout_s": timeout_s}).encode()
        request = urllib.request.Request(self.url, data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                answer = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            answer = json.loads(exc.read() or b"{}")
            error = answer.get("error", f"HTTP {exc.code}")
            raise (ReadOnlyViolation if answer.get("read_only") else StoreError)(error) from None
        except (urllib.error.URLError, OSError) as exc:
            raise StoreError(
                f"the RidgeScope worker is not answering on {self.url} ({exc}); "
                "is the stack up? Try `ridgescope status`.") from None
        return answer["columns"], [tuple(r) for r in answer["rows"]]


def open_store(settings: Settings):
    """A query-capable store for the CLI."""
    if settings.embedded_store:
        return WorkerStore(settings.web_port)
    return Store(settings.store_dsn)
