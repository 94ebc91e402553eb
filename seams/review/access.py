"""Who may use the reviewer's desk, and as which reviewer.

The desk shows untrusted states and writes labels that become calibration data, so:

* **a token for every request** — the desk starts with a fresh random token (printed once, in
  its URL). A request that brings it in `?token=` gets a session cookie and is redirected to the
  same path without the token, so the token does not stay in the address bar, the history or a
  `Referer`; every later request must bring the cookie. Neither → 401.
* **the cookie** is HttpOnly (no script reads it) and SameSite=Strict (no other site's page can
  send it), and names a session held in memory here, never the token itself.
* **one reviewer per session** — each session gets its own reviewer id, the name the queue's
  claim and lease use; two browsers are two reviewers, so neither can resolve what the other holds.
* **CSRF** — each session has a CSRF token; every state-changing request is a POST that must
  carry it in its form (`csrf`), and a POST whose `Origin` is another site's is refused too.

Sessions live as long as the process: restarting the desk signs everyone out, and their claims
run out with their leases.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from dataclasses import dataclass

#: The session cookie's name.
COOKIE = "seams_review"
#: The CSRF form field's name.
CSRF_FIELD = "csrf"
#: Most sessions held at once: a client that replays the tokened URL in a loop cannot grow the
#: desk's memory without bound.
MAX_SESSIONS = 1000


@dataclass(frozen=True)
class Session:
    """One browser's session: its reviewer id (for the queue's claims) and its CSRF token."""

    id: str
    reviewer: str
    csrf: str


class DeskAccess:
    """The desk's token and its sessions.

    Parameters
    ----------
    token:
        The secret that opens the desk; a fresh `secrets.token_urlsafe(32)` when not given (tests
        pass their own).
    """

    def __init__(self, token: str | None = None) -> None:
        self.token = token or secrets.token_urlsafe(32)
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def token_ok(self, given: str | None) -> bool:
        """Whether `given` is the desk's token (compared in constant time)."""
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def new_session(self) -> Session:
        """A session for a browser that brought the token: a new reviewer."""
        session = Session(secrets.token_urlsafe(32), f"desk-{secrets.token_hex(8)}", secrets.token_urlsafe(32))
        with self._lock:
            self._sessions[session.id] = session
            while len(self._sessions) > MAX_SESSIONS:  # the oldest goes: it re-enters with the URL
                del self._sessions[next(iter(self._sessions))]
        return session

    def session(self, cookie: str | None) -> Session | None:
        """The session a cookie names, or None."""
        if not cookie:
            return None
        with self._lock:
            return self._sessions.get(cookie)

    @staticmethod
    def csrf_ok(session: Session, given: str | None) -> bool:
        """Whether a form's CSRF token is the session's."""
        return given is not None and hmac.compare_digest(given.encode(), session.csrf.encode())


__all__ = ["COOKIE", "CSRF_FIELD", "DeskAccess", "Session"]
