"""The probe interface: idempotent instrument()/uninstrument() around _instrument/_uninstrument.

A probe that fails to arm logs once and stays off; it never raises into the training job.
"""
from __future__ import annotations

import logging
import os

from ridgescope.probes import env

log = logging.getLogger("ridgescope.probes")


def debug(message: str) -> None:
    """Say why a probe stepped aside, only when asked (stderr belongs to the job)."""
    if os.environ.get(env.DEBUG) == "1":
        print(f"[ridgescope] {message}", flush=True, file=__import__("sys").stderr)


class Probe:
    name = "probe"

    def __init__(self) -> None:
        self.instrumented = False

    def instrument(self, **kwargs) -> bool:
        if self.instrumented:
            return True
        try:
            self._instrument(**kwargs)
        except Exception as exc:  # noqa: BLE001 - a probe must never break the job
            debug(f"{self.name} probe not armed: {type(exc).__name__}: {exc}")
            return False
        self.instrumented = True
        return True

    def uninstrument(self) -> None:
        if not self.instrumented:
            return
        try:
            self._uninstrument()
        finally:
            self.instrumented = False

    def _instrument(self, **kwargs) -> None:
        raise NotImplementedError

    def _uninstrument(self) -> None:
        raise NotImplementedError
