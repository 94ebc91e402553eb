"""The reviewer's desk: `create_review_app(queue)` is the ASGI app `seams review` runs.

A page over a `ReviewQueue` where a person answers what a rubric's policy routed to review:

* `GET /` lists open, claimed and resolved items with their counts and the queue's capacity;
* `POST /next` claims the oldest open item under a lease (the queue's own `claim`) and shows it;
* `GET /items/{id}` shows the state's fields, the questions with the judge's raw and calibrated
  answers, the rule that routed the item and the numbers it read, and one control per question;
* `POST /items/{id}/resolve | skip | release` label it (through `ReviewQueue.resolve`, so a label
  the queue refuses is refused here, with its reason on the page), pass it on, or hand it back.

Access (token, cookie, CSRF, one reviewer per browser session) is `seams.review.access`; what a
page shows is `seams.review.view`. States are untrusted text: the templates are rendered with
autoescape on, the pages carry a Content-Security-Policy that runs only the desk's own script,
and no state is ever put in a URL or a log line.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.staticfiles import StaticFiles

from ..errors import InputError, QueueError, RubricError, SeamsError
from ..queue import ReviewItem, ReviewQueue
from ..rubric import Rubric, builtin_names
from .access import COOKIE, CSRF_FIELD, DeskAccess, Session
from .view import ItemView, item_view, labels_from_form, state_fields

log = logging.getLogger("seams.review")
HERE = Path(__file__).resolve().parent
#: How long a claim holds an item before it is open to the next reviewer.
DEFAULT_LEASE_S = 600.0
#: Most items of one status listed on the index page (the counts are always whole).
LIST_LIMIT = 200
#: The one body type the desk takes, and its bound (a form of labels is a few hundred bytes).
FORM_TYPE = "application/x-www-form-urlencoded"
MAX_FORM_BYTES = 64 * 1024
#: Only the desk's own script and style run; no frames, no form posts elsewhere, no referrer.
_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


def _templates() -> Environment:
    env = Environment(loader=FileSystemLoader(HERE / "templates"),
                      autoescape=select_autoescape(("html",), default=True), trim_blocks=True, lstrip_blocks=True)
    env.filters["when"] = lambda t: "—" if t is None else datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S")
    return env


class _Rubrics:
    """The rubric each item was decided with, looked up once per name: the one given to the desk
    when the names match, else a built-in of that name, else none (the page then reads the
    questions' shapes from the stored answers alone)."""

    def __init__(self, given: Rubric | None) -> None:
        self._cache: dict[str, Rubric | None] = {given.name: given} if given is not None else {}

    def __call__(self, item: ReviewItem) -> Rubric | None:
        name = item.rubric
        if name is None:
            return None
        if name not in self._cache:
            try:
                self._cache[name] = Rubric.builtin(name) if name in builtin_names() else None
            except RubricError:
                self._cache[name] = None
        return self._cache[name]


def _preview(state: Any, limit: int = 90) -> str:
    text = " · ".join(v for _, v in state_fields(state)).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def create_review_app(queue: ReviewQueue, *, rubric: Rubric | None = None, access: DeskAccess | None = None,
                      lease_s: float = DEFAULT_LEASE_S, capacity: int | None = None) -> FastAPI:
    """The desk over `queue`.

    Parameters
    ----------
    queue:
        The review queue file, opened (the desk never enqueues).
    rubric:
        The rubric the items were decided with, for the questions' wording, the options'
        descriptions, the rules' descriptions and the calibrated answers; built-in rubrics are
        found by the name stored with each item without it.
    access:
        The token and sessions; a fresh token when not given (`app.state.access.token`).
    lease_s:
        How long a claim holds an item before another reviewer may take it.
    capacity:
        The capacity to show; by default the one the queue's latest enqueue ran under.
    """
    access = access or DeskAccess()
    env = _templates()
    rubrics = _Rubrics(rubric)
    app = FastAPI(title="seams review", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.access = access
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    def page(name: str, request: Request, status_code: int = 200, **context: Any) -> HTMLResponse:
        session: Session = request.state.session
        counts = queue.counts()
        html = env.get_template(name).render(
            csrf=session.csrf, csrf_field=CSRF_FIELD, reviewer=session.reviewer, counts=counts,
            capacity=capacity if capacity is not None else queue.recorded_capacity(),
            unresolved=counts["open"] + counts["claimed"], queue_name=queue.path.name, **context)
        return HTMLResponse(html, status_code=status_code)

    @app.middleware("http")
    async def _guard(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        response = await _admit(request, call_next)
        for k, v in _HEADERS.items():
            response.headers.setdefault(k, v)
        return response

    async def _admit(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        given = request.query_params.get("token")
        if given is not None:
            if not access.token_ok(given):
                return _refused(401, "This desk's token is wrong. Open the URL `seams review` printed.")
            session = access.new_session()
            # Strip the token (and anything else) from the address: it must not stay in the
            # history, a bookmark or a Referer.
            response: Response = RedirectResponse(request.url.path, status_code=303)
            response.set_cookie(COOKIE, session.id, httponly=True, samesite="strict", path="/",
                                secure=request.url.scheme == "https")
            return response
        found = access.session(request.cookies.get(COOKIE))
        if found is None:
            return _refused(401, "This desk needs its token. Open the URL `seams review` printed.")
        if request.method not in ("GET", "HEAD"):
            origin = request.headers.get("origin")
            if origin is not None and origin != "null" and urlsplit(origin).netloc != request.headers.get("host"):
                return _refused(403, "Cross-site request refused.")
        request.state.session = found
        return await call_next(request)

    async def _checked_form(request: Request) -> dict[str, str] | Response:
        # The desk's forms are url-encoded and small; read them here (no multipart parser needed),
        # bounded, and refuse any other body.
        if request.headers.get("content-type", "").split(";")[0].strip() not in ("", FORM_TYPE):
            return _refused(415, "The desk takes url-encoded forms only.")
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_FORM_BYTES:
                return _refused(413, f"A form over {MAX_FORM_BYTES} bytes.")
        try:
            values = dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False))
        except UnicodeDecodeError:
            return _refused(400, "The form is not UTF-8.")
        if not access.csrf_ok(request.state.session, values.get(CSRF_FIELD)):
            return _refused(403, "The form's CSRF token is missing or wrong; reload the page and try again.")
        return values

    @app.get("/", response_class=HTMLResponse)
    def index(request: Request, done: int | None = None, note: str | None = None) -> HTMLResponse:
        lists = {s: queue.items(s)[:LIST_LIMIT] for s in ("claimed", "open", "resolved")}
        rows = {s: [(i, _preview(i.state), (i.decision or {}).get("outcome", ""), (i.decision or {}).get("rule") or "")
                    for i in items] for s, items in lists.items()}
        return page("index.html", request, rows=rows, done=done, empty=note == "empty", limit=LIST_LIMIT)

    @app.post("/next")
    async def next_item(request: Request) -> Response:
        form = await _checked_form(request)
        if isinstance(form, Response):
            return form
        item = queue.claim(request.state.session.reviewer, lease_s=lease_s)
        if item is None:
            return RedirectResponse("/?note=empty", status_code=303)
        return RedirectResponse(f"/items/{item.id}", status_code=303)

    def _item_page(request: Request, item: ReviewItem, *, error: str | None = None, status_code: int = 200,
                   chosen: dict[str, str] | None = None) -> HTMLResponse:
        view: ItemView = item_view(item, rubrics(item))
        mine = item.status == "claimed" and item.claimed_by == request.state.session.reviewer
        return page("item.html", request, status_code=status_code, view=view, mine=mine, error=error,
                    chosen=chosen or {})

    def _get(item_id: int) -> ReviewItem | None:
        try:
            return queue.get(item_id)
        except QueueError:
            return None

    @app.get("/items/{item_id}", response_class=HTMLResponse)
    def show(request: Request, item_id: int) -> Response:
        item = _get(item_id)
        if item is None:
            return _refused(404, f"No review item {item_id}.")
        return _item_page(request, item)

    @app.post("/items/{item_id}/resolve")
    async def resolve(request: Request, item_id: int) -> Response:
        form = await _checked_form(request)
        if isinstance(form, Response):
            return form
        item = _get(item_id)
        if item is None:
            return _refused(404, f"No review item {item_id}.")
        reviewer = request.state.session.reviewer
        chosen = {k: v for k, v in form.items() if k != CSRF_FIELD}
        if item.status != "resolved" and (item.status != "claimed" or item.claimed_by != reviewer):
            held = "held by another reviewer" if item.status == "claimed" else "not claimed"
            return _item_page(request, item, status_code=409, chosen=chosen,
                              error=f"Item {item_id} is {held}: claim an item with Next before you resolve it.")
        try:
            labels = labels_from_form(form, item_view(item, rubrics(item)))
            queue.resolve(item_id, labels, reviewer=reviewer)
        except (InputError, QueueError) as exc:
            code = 422 if isinstance(exc, InputError) else 409
            return _item_page(request, queue.get(item_id), error=str(exc), status_code=code, chosen=chosen)
        log.info("item %d resolved by %s", item_id, reviewer)  # the id and reviewer, never the state
        return RedirectResponse(f"/?done={item_id}", status_code=303)

    @app.post("/items/{item_id}/release")
    async def release(request: Request, item_id: int) -> Response:
        form = await _checked_form(request)
        if isinstance(form, Response):
            return form
        try:
            queue.release(item_id, request.state.session.reviewer)
        except QueueError as exc:
            item = _get(item_id)
            return _item_page(request, item, error=str(exc), status_code=409) if item else _refused(404, str(exc))
        return RedirectResponse("/", status_code=303)

    @app.post("/items/{item_id}/skip")
    async def skip(request: Request, item_id: int) -> Response:
        """Pass an item on: claim the next one while still holding this (so the claim cannot
        return it), then release this one for another reviewer."""
        form = await _checked_form(request)
        if isinstance(form, Response):
            return form
        reviewer = request.state.session.reviewer
        item = _get(item_id)
        if item is None or item.status != "claimed" or item.claimed_by != reviewer:
            return _item_page(request, item, status_code=409, error=f"Item {item_id} is not yours to skip.") \
                if item else _refused(404, f"No review item {item_id}.")
        nxt = queue.claim(reviewer, lease_s=lease_s)
        queue.release(item_id, reviewer)
        if nxt is None:
            return RedirectResponse("/?note=empty", status_code=303)
        return RedirectResponse(f"/items/{nxt.id}", status_code=303)

    @app.exception_handler(SeamsError)
    async def _seams_error(request: Request, exc: SeamsError) -> Response:
        # A storage failure (a damaged queue file): say so, without a traceback or the state.
        return _refused(500, f"{type(exc).__name__}: {exc}")

    return app


def _refused(status_code: int, message: str) -> HTMLResponse:
    """A small page for a refusal (no template: it must render before there is a session)."""
    from html import escape

    body = (f"<!doctype html><html lang=en><meta charset=utf-8><title>seams review: {status_code}</title>"
            f"<body><h1>{status_code}</h1><p>{escape(message)}</p></body></html>")
    return HTMLResponse(body, status_code=status_code)


__all__ = ["DEFAULT_LEASE_S", "create_review_app"]
