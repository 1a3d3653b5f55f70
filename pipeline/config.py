"""Settings of the stack: flags, then environment variables, then the data dir's config file.

All environment variable names live in ridgescope.probes.env so probes and pipeline agree.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from ridgescope.probes import env


@dataclass
class Settings:
    data_dir: str = str(Path.home() / ".ridgescope")
    broker: str = ""
    """host:port of the Kafka bootstrap server; empty means the embedded Tansu broker."""
    store: str = ""
    """ClickHouse DSN; empty means chdb:///<data_dir>/store."""
    web_port: int = 6066
    """Port of the worker's query API (the process that owns an embedded store)."""
    partitions: int = 4

    def validate(self) -> "Settings":
        if self.store and not self.store.startswith(("chdb://", "http://", "https://")):
            raise ValueError(f"store DSN must start with chdb://, http:// or https://: {self.store!r}")
        if self.broker and ":" not in self.broker:
            raise ValueError(f"broker must be host:port, got {self.broker!r}")
        if not 0 < self.web_port < 65536:
            raise ValueError(f"web_port out of range: {self.web_port}")
        if self.partitions < 1:
            raise ValueError(f"partitions must be at least 1, got {self.partitions}")
        return self

    @property
    def store_dsn(self) -> str:
        return self.store or f"chdb://{Path(self.data_dir).resolve() / 'store'}"

    @property
    def embedded_store(self) -> bool:
        return self.store_dsn.startswith("chdb://")

    @property
    def config_file(self) -> Path:
        return Path(self.data_dir) / "config.json"


_ENV = {"data_dir": env.DATA_DIR, "broker": env.BROKER, "store": env.STORE,
        "web_port": env.WEB_PORT}


def load(**flags) -> Settings:
    """Resolve settings; ``flags`` that are None fall through to env, then the config file."""
    data_dir = flags.get("data_dir") or os.environ.get(env.DATA_DIR) or Settings.data_dir
    settings = Settings(data_dir=data_dir)
    file_values = {}
    if settings.config_file.exists():
        file_values = json.loads(settings.config_file.read_text())
        unknown = set(file_values) - {f.name for f in fields(Settings)}
        if unknown:
            raise ValueError(f"{settings.config_file}: unknown settings {sorted(unknown)}")
    for f in fields(Settings):
        if f.name == "data_dir":
            continue
        value = flags.get(f.name)
        if value is None and f.name in _ENV:
            value = os.environ.get(_ENV[f.name])
        if value is None:
            value = file_values.get(f.name)
        if value is not None:
            setattr(settings, f.name, type(getattr(Settings, f.name))(value))
    return settings.validate()


def save(settings: Settings) -> None:
    """Remember the stack's resolved settings so later commands find it."""
    Path(settings.data_dir).mkdir(parents=True, exist_ok=True)
    values = {k: v for k, v in asdict(settings).items() if k != "data_dir"}
    settings.config_file.write_text(json.dumps(values, indent=2) + "\n")


def forget_broker(settings: Settings, broker: str) -> None:
    """Drop ``broker`` from the config file (the embedded broker that `down` stopped: it kept
    nothing, and the next `up` must start a new one rather than look for it)."""
    if not settings.config_file.exists():
        return
    values = json.loads(settings.config_file.read_text())
    if values.get("broker") == broker:
        values["broker"] = ""
        settings.config_file.write_text(json.dumps(values, indent=2) + "\n")
