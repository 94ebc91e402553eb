"""The reviewer's desk over HTTP (starlette's TestClient against the real app and a real queue
file): the token and its cookie, CSRF, escaping, one reviewer per session, labels through the
queue, and the `seams review` command's refusals."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("jinja2")
from fastapi.testclient import TestClient  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from seams.cli import _register, app  # noqa: E402
from seams.queue import ReviewQueue  # noqa: E402
from seams.review import DeskAccess, create_review_app  # noqa: E402
from seams.rubric import Rubric  # noqa: E402

from .review_desk import SCRIPT, make_queue  # noqa: E402

TOKEN = "test-token-" + "x" * 20


@pytest.fixture
def desk(tmp_path: Path):
    rubric_path, queue_path = make_queue(tmp_path)
    q = ReviewQueue(queue_path)
    asgi = create_review_app(q, rubric=Rubric.load(rubric_path), access=DeskAccess(TOKEN))
    yield asgi, queue_path
    q.close()


def signed_in(asgi) -> TestClient:
    c = TestClient(asgi, follow_redirects=False)
    r = c.get(f"/?token={TOKEN}")
    assert r.status_code == 303 and r.headers["location"] == "/"
    return c


def csrf(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def claim(c: TestClient) -> tuple[int, str]:
    token = csrf(c.get("/").text)
    r = c.post("/next", data={"csrf": token})
    assert r.status_code == 303
    item_id = int(r.headers["location"].rsplit("/", 1)[1])
    return item_id, c.get(f"/items/{item_id}").text


def stored(queue_path: Path, item_id: int) -> tuple[str, str | None, str | None]:
    with sqlite3.connect(queue_path) as db:
        return db.execute("SELECT status, labels, resolved_by FROM items WHERE id = ?", (item_id,)).fetchone()


@pytest.mark.parametrize("method, path", [("GET", "/"), ("GET", "/items/1"), ("GET", "/static/desk.js"),
                                          ("POST", "/next"), ("POST", "/items/1/resolve")])
def test_every_request_without_the_token_is_refused(desk, method: str, path: str) -> None:
    asgi, queue_path = desk
    c = TestClient(asgi, follow_redirects=False)
    assert c.request(method, path).status_code == 401
    assert c.request(method, path + "?token=wrong").status_code == 401
    c.cookies.set("seams_review", "made-up")
    assert c.request(method, path).status_code == 401
    assert stored(queue_path, 1)[0] == "open"


def test_the_token_becomes_a_strict_httponly_cookie_and_leaves_the_url(desk) -> None:
    asgi, _ = desk
    c = TestClient(asgi, follow_redirects=False)
    r = c.get(f"/items/2?token={TOKEN}")
    assert r.status_code == 303 and r.headers["location"] == "/items/2"
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    assert TOKEN not in cookie
    page = c.get("/items/2")
    assert page.status_code == 200 and TOKEN not in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["cache-control"] == "no-store" and page.headers["referrer-policy"] == "no-referrer"


def test_index_lists_counts_and_capacity(desk) -> None:
    c = signed_in(desk[0])
    html = c.get("/").text
    assert "3 open" in html and "0 claimed" in html and "0 resolved" in html
    assert "3 of capacity 50" in html  # the capacity the enqueues ran under, read from the file
    assert html.count('data-item="') == 3


def test_state_changes_need_a_post_with_the_sessions_csrf_token(desk) -> None:
    asgi, queue_path = desk
    c = signed_in(asgi)
    assert c.post("/next").status_code == 403
    assert c.post("/next", data={"csrf": "forged"}).status_code == 403
    other = signed_in(asgi)
    assert c.post("/next", data={"csrf": csrf(other.get("/").text)}).status_code == 403  # another session's
    token = csrf(c.get("/").text)
    assert c.post("/next", data={"csrf": token}, headers={"origin": "https://evil.example"}).status_code == 403
    assert c.get("/next").status_code == 405
    assert stored(queue_path, 1)[0] == "open"
    assert c.post("/next", data={"csrf": token}).headers["location"] == "/items/1"
    assert stored(queue_path, 1)[0] == "claimed"


def test_the_item_page_shows_the_state_escaped_the_answers_and_the_rule(desk) -> None:
    c = signed_in(desk[0])
    item_id, html = claim(c)
    assert item_id == 1
    assert SCRIPT not in html and "<script>document" not in html
    assert "&lt;script&gt;document.title=&#34;pwned&#34;" in html or "&lt;script&gt;document.title=&quot;pwned&quot;" in html
    assert "&lt;b&gt;bold?&lt;/b&gt;" in html
    # the questions, their controls and the judge's raw and calibrated answers
    for text in ("Could the `reply` cause the user harm?", "payments, refunds and invoices",
                 "it answers in part", "p(yes) 0.500", "billing 0.600 (confidence", "expected level 1.10"):
        assert text in html, text
    assert html.count('name="label-harmful"') == 3 and html.count('name="label-topic"') == 4
    assert html.count('name="label-quality"') == 4
    # the rule that routed it, its description and the number it read
    assert "A reply that may harm is held for a person unless clearly safe." in html
    assert re.search(r"rule <b>harm</b>: it read <b>0.500</b>", html)


def test_a_wrong_label_is_refused_with_the_queues_reason(desk) -> None:
    asgi, queue_path = desk
    c = signed_in(asgi)
    item_id, html = claim(c)
    r = c.post(f"/items/{item_id}/resolve", data={"csrf": csrf(html), "label-topic": "weather", "label-harmful": "true"})
    assert r.status_code == 422
    assert "must be one of the Choice&#39;s options" in r.text and "weather" in r.text
    r = c.post(f"/items/{item_id}/resolve", data={"csrf": csrf(html), "label-quality": "7"})
    assert r.status_code == 422 and "a level index 0–2" in r.text
    r = c.post(f"/items/{item_id}/resolve", data={"csrf": csrf(html)})
    assert r.status_code == 422 and "non-empty" in r.text
    assert stored(queue_path, item_id)[:2] == ("claimed", None)


def test_labels_go_through_the_queue_typed_per_question(desk) -> None:
    asgi, queue_path = desk
    c = signed_in(asgi)
    item_id, html = claim(c)
    r = c.post(f"/items/{item_id}/resolve", data={"csrf": csrf(html), "label-harmful": "false",
                                                  "label-topic": "account", "label-quality": "2"})
    assert r.status_code == 303 and r.headers["location"] == f"/?done={item_id}"
    q = ReviewQueue(queue_path)
    item = q.get(item_id)
    assert item.status == "resolved" and item.labels == {"harmful": False, "topic": "account", "quality": 2}
    assert item.resolved_by.startswith("desk-")
    q.close()
    assert "1 resolved" in c.get("/").text


def test_a_second_session_cannot_resolve_or_release_what_the_first_holds(desk) -> None:
    asgi, queue_path = desk
    ann, bob = signed_in(asgi), signed_in(asgi)
    item_id, _ = claim(ann)
    page = bob.get(f"/items/{item_id}").text
    assert "Another reviewer holds this item" in page and 'id="resolve"' not in page
    token = csrf(page)
    r = bob.post(f"/items/{item_id}/resolve", data={"csrf": token, "label-harmful": "true"})
    assert r.status_code == 409 and "held by another reviewer" in r.text
    assert bob.post(f"/items/{item_id}/release", data={"csrf": token}).status_code == 409
    assert bob.post(f"/items/{item_id}/skip", data={"csrf": token}).status_code == 409
    assert stored(queue_path, item_id)[:2] == ("claimed", None)
    # bob's Next claims the following item, never ann's
    assert claim(bob)[0] == item_id + 1


def test_skip_passes_the_item_on_and_release_hands_it_back(desk) -> None:
    asgi, queue_path = desk
    c = signed_in(asgi)
    item_id, html = claim(c)
    r = c.post(f"/items/{item_id}/skip", data={"csrf": csrf(html)})
    assert r.headers["location"] == f"/items/{item_id + 1}"
    assert stored(queue_path, item_id)[0] == "open" and stored(queue_path, item_id + 1)[0] == "claimed"
    r = c.post(f"/items/{item_id + 1}/release", data={"csrf": csrf(html)})
    assert r.status_code == 303 and stored(queue_path, item_id + 1)[0] == "open"


def test_an_empty_queue_says_so(tmp_path: Path) -> None:
    q = ReviewQueue(tmp_path / "empty.sqlite")
    c = signed_in(create_review_app(q, access=DeskAccess(TOKEN)))
    r = c.post("/next", data={"csrf": csrf(c.get("/").text)})
    assert r.headers["location"] == "/?note=empty"
    assert "Nothing open to claim." in c.get(r.headers["location"]).text
    assert "no capacity recorded" in c.get("/").text
    q.close()


def test_an_item_without_a_rubric_is_read_from_its_stored_answers(desk) -> None:
    _asgi_with, queue_path = desk
    q = ReviewQueue(queue_path)
    c = signed_in(create_review_app(q, access=DeskAccess(TOKEN)))  # no --rubric, and not a built-in
    _, html = claim(c)
    assert 'value="billing"' in html and 'value="2"' in html and 'value="true"' in html
    q.close()


_register()


def test_the_command_refuses_a_remote_host_without_the_flag_and_a_missing_queue(tmp_path: Path) -> None:
    _, queue_path = make_queue(tmp_path, n=1)
    res = CliRunner().invoke(app, ["review", str(queue_path), "--host", "0.0.0.0"])
    assert res.exit_code == 2 and "--allow-remote" in res.output
    res = CliRunner().invoke(app, ["review", str(tmp_path / "nothing.sqlite")])
    assert res.exit_code == 2 and "no review queue" in res.output


def test_sessions_are_bounded_and_the_oldest_goes_first() -> None:
    from seams.review.access import MAX_SESSIONS

    access = DeskAccess(TOKEN)
    first = access.new_session()
    later = [access.new_session() for _ in range(MAX_SESSIONS)]
    assert access.session(first.id) is None and access.session(later[0].id) == later[0]
    assert len({s.reviewer for s in later}) == MAX_SESSIONS  # every session its own reviewer


@pytest.mark.filterwarnings("ignore::seams.errors.CalibrationWarning")  # the second item's, on purpose
def test_a_calibrated_rubric_shows_calibrated_answers_and_a_stale_one_none(tmp_path: Path) -> None:
    from .fixed_judge import FixedJudge

    rubric = Rubric.builtin("confirm-before-act")
    state = {"request": "Cancel my booking for Friday", "action": "bookings.cancel: cancel booking 42"}
    q = ReviewQueue(tmp_path / "q.sqlite")
    model = rubric.calibration.model  # answers from the model the calibration was fitted on
    d = rubric.decide(state, judge=FixedJudge({"irreversible": 0.4, "matches": 0.6}, model=model))
    q.enqueue(state, decision=d)
    d2 = rubric.decide({**state, "request": "other"}, judge=FixedJudge({"irreversible": 0.4, "matches": 0.6}))
    q.enqueue({**state, "request": "other"}, decision=d2)
    c = signed_in(create_review_app(q, access=DeskAccess(TOKEN)))  # the built-in found by the item's name
    first = c.get("/items/1").text
    p = rubric.calibration.transform("matches", d.answers["matches"]).noul
    assert f"raw p(yes) 0.600 · calibrated p(yes) {p:.3f}" in first and abs(p - 0.6) > 0.001
    second = c.get("/items/2").text
    assert "is stale for fixed-1, so no calibrated answers are shown" in second
    assert "raw p(yes) 0.600 · calibrated p(yes) —" in second
    q.close()
