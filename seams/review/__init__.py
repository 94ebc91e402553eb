"""`seams review`: the reviewer's desk, a web page over a review queue.

A person answers what a rubric's policy routed to review, one keystroke per answer; the labels go
through `ReviewQueue.resolve` into the queue file, and `seams calibrate RUBRIC --from-queue` fits
from them (docs/review.md). Needs the `[review]` extra (FastAPI, uvicorn and Jinja2); like
`seams.server`, it sits above the core, which never imports it.
"""

from .access import DeskAccess, Session
from .app import DEFAULT_LEASE_S, create_review_app

__all__ = ["DEFAULT_LEASE_S", "DeskAccess", "Session", "create_review_app"]
