"""`seams serve`: System One over HTTP, in front of any judge (the local one by default).

Needs the `[serve]` extra (FastAPI and uvicorn); nothing in the core imports this package.
"""

from .app import DEFAULT_MAX_BODY_BYTES, JEV_LATEST, create_app

__all__ = ["DEFAULT_MAX_BODY_BYTES", "JEV_LATEST", "create_app"]
