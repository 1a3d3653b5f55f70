"""HTTP API of the worker: it owns the embedded store, so the CLI's queries come through here."""
from __future__ import annotations

import asyncio
import json
import os

from faust.web import Request, Response, View

from ridgescope.sql.store import ReadOnlyViolation, StoreError


def _json(view: View, body: dict, status: int = 200) -> Response:
    return view.bytes(json.dumps(body, default=str).encode(), status=status,
                      content_type="application/json")


def register(app, store) -> None:
    @app.page("/query")
    class Query(View):
        async def post(self, request: Request) -> Response:
            try:
                body = await request.json()
                sql = body["sql"]
            except Exception:  # noqa: BLE001 - any malformed request is the caller's error
                return _json(self, {"error": "expected a JSON body with 'sql'"}, 400)
            loop = asyncio.get_running_loop()
            try:
                columns, rows = await loop.run_in_executor(None, lambda: store.query(
                    sql, read_only=bool(body.get("read_only", True)),
                    max_rows=int(body.get("max_rows", 10_000)),
                    timeout_s=int(body.get("timeout_s", 30))))
            except ReadOnlyViolation as exc:
                return _json(self, {"error": str(exc), "read_only": True}, 403)
            except StoreError as exc:
                return _json(self, {"error": str(exc)}, 400)
            return _json(self, {"columns": columns, "rows": rows})


def register_status(app) -> None:
    @app.page("/status")
    class Status(View):
        async def get(self, request: Request) -> Response:
            assigned = app.assignor.assigned_actives() if app.assignor else set()
            return _json(self, {"app": app.conf.id, "assigned_partitions": len(assigned),
                                "broker": str(app.conf.broker[0]), "pid": os.getpid()})
