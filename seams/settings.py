"""What the environment configures, read in one place.

| variable | used for | when unset |
|---|---|---|
| `TYPESAFE_BASE_URL` | a `RemoteJudge`'s server root | `https://api.typesafe.ai` |
| `TYPESAFE_API_KEY` | a `RemoteJudge`'s bearer key (the CLI's `--api-key`, `serve --upstream-key`) | no key |
| `TYPESAFE_DEFAULT_MODEL` | the model a `RemoteJudge` asks (the CLI's `--model`) | `jev-latest` |
| `SEAMS_MODEL_DIR` | the model directory a `LocalJudge` loads (`default_judge()`, every CLI command, `serve`) | the shipped model |

An explicit argument always wins over the environment. `settings()` reads the environment each
time it is called (it is cheap), so a process that changes a variable sees the change; nothing
else in seams reads these variables.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

BASE_URL_ENV = "TYPESAFE_BASE_URL"
API_KEY_ENV = "TYPESAFE_API_KEY"
MODEL_ENV = "TYPESAFE_DEFAULT_MODEL"
MODEL_DIR_ENV = "SEAMS_MODEL_DIR"


@dataclass(frozen=True)
class Settings:
    """The environment's settings; None where a variable is unset or blank."""

    base_url: str | None = None
    api_key: str | None = None
    default_model: str | None = None
    model_dir: Path | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ

        def get(name: str) -> str | None:
            return (env.get(name) or "").strip() or None

        model_dir = get(MODEL_DIR_ENV)
        return cls(base_url=get(BASE_URL_ENV), api_key=get(API_KEY_ENV), default_model=get(MODEL_ENV),
                   model_dir=Path(model_dir).expanduser() if model_dir else None)


def settings() -> Settings:
    """The settings of the environment as it is now."""
    return Settings.from_env()


__all__ = ["API_KEY_ENV", "BASE_URL_ENV", "MODEL_DIR_ENV", "MODEL_ENV", "Settings", "settings"]
