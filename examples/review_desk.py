"""A review queue to open in the reviewer's desk, from real states and the shipped model.

    python examples/review_desk.py [--queue QUEUE.sqlite] [--screenshot PNG]
    seams review QUEUE.sqlite            # then open the URL it prints

Three built-in rubrics decide real states from `calibration/` with the shipped local model (no
key, no network): confirm-before-act on actions an agent is about to take, passage-gate on
retrieved passages (a Noul and a three-way Choice), model-routing on tasks (a Score). Each decision
the policy sends to review is queued, as `@gate(..., queue=...)` would queue it; model-routing
never routes to a person (its outcomes all act), so its first two tasks are queued as a spot check.
The desk then shows each item's state, the judge's raw and calibrated answers, the rule that
routed it and the numbers it read, with one control per question.

`--screenshot PNG` starts the desk in this process (`pip install 'seams[review]' selenium`),
claims the first item in headless chromium (Debian's, with its chromedriver), answers its first
question by key and saves the page: docs/review.png was made so.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
from pathlib import Path
from typing import Any

from seams import ReviewQueue, Rubric
from seams.judges import default_judge

ROOT = Path(__file__).resolve().parents[1]
#: (rubric, labelled set, how many states to decide)
SOURCES = [("passage-gate", "heldout.jsonl", 60), ("model-routing", "fit.jsonl", 2),
           ("confirm-before-act", "heldout.jsonl", 40)]


def _states(rubric: str, name: str, n: int) -> list[Any]:
    lines = (ROOT / "calibration" / rubric / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["state"] for line in lines[:n]]


def build(path: Path) -> ReviewQueue:
    """Decide the sources' states and queue what goes to review (and the routing spot check)."""
    judge = default_judge()  # the shipped local model
    queue = ReviewQueue(path, capacity=100, overflow="signal")
    for name, data, n in SOURCES:
        rubric = Rubric.builtin(name)
        states = _states(name, data, n)
        for state, d in zip(states, rubric.decide_many(states, judge=judge), strict=True):
            if d.kind == "review" or name == "model-routing":
                queue.enqueue(state, decision=d, meta={"source": f"calibration/{name}/{data}"})
    return queue


def screenshot(queue: ReviewQueue, png: Path) -> None:
    """The desk in this process, one claimed item answered in headless chromium, saved as `png`."""
    import shutil
    import socket

    import uvicorn
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from seams.review import DeskAccess, create_review_app

    access = DeskAccess()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    server = uvicorn.Server(uvicorn.Config(create_review_app(queue, access=access), log_level="warning",
                                           access_log=False, lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1280,2000", f"--user-data-dir={tempfile.mkdtemp(prefix='seams-chromium-')}"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=opts)
    try:
        driver.get(f"{base}/?token={access.token}")
        driver.find_element(By.ID, "next").click()
        WebDriverWait(driver, 60).until(lambda d: "/items/" in d.current_url)
        body = driver.find_element(By.TAG_NAME, "body")
        body.send_keys("n")  # one answer (the Noul), then the next question is the current one
        driver.save_screenshot(str(png))
    finally:
        driver.quit()
        server.should_exit = True
        thread.join(timeout=10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queue", type=Path, default=None, help="the queue file to write (default: a temporary folder's)")
    ap.add_argument("--screenshot", type=Path, default=None, help="save a screenshot of the desk here")
    args, _ = ap.parse_known_args()
    if args.queue is None:
        args.queue = Path(tempfile.mkdtemp(prefix="seams-desk-")) / "reviews.sqlite"
    args.queue.unlink(missing_ok=True)
    queue = build(args.queue)
    by_rubric: dict[str, int] = {}
    for item in queue.items():
        by_rubric[item.rubric or "—"] = by_rubric.get(item.rubric or "—", 0) + 1
    print(f"{len(queue)} items in {args.queue}: {by_rubric}")
    print(f"open them with: seams review {args.queue}")
    if args.screenshot:
        screenshot(queue, args.screenshot)
        print(f"screenshot: {args.screenshot}")
    queue.close()


if __name__ == "__main__":
    main()
