"""`seams serve` as a user starts it, checked by independent clients of the protocol.

A real `seams serve` subprocess on the tiny model; `jevcompat test` (the third-party conformance
suite) runs against it with a key and without one, since exactly one of its two auth MUSTs
applies per run; the official `typesafe-sdk` client talks to it directly with a zstd-compressed
body; and the process stops cleanly on SIGTERM and SIGINT.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

pytest.importorskip("fastapi")

KEY = "jevcompat-test-key"
#: `jevcompat test …` as its console script runs it, through this interpreter.
JEVCOMPAT = [sys.executable, "-m", "jevcompat.cli"]
READY = re.compile(r"on http://127\.0\.0\.1:(\d+)")


class Served:
    def __init__(self, proc: subprocess.Popen[str], url: str, banner: str) -> None:
        self.proc, self.url, self.banner = proc, url, banner

    def stop(self, sig: int = signal.SIGTERM) -> tuple[int, str]:
        """Send `sig`, wait for the exit; return the exit code and the rest of stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            _, err = self.proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return self.proc.returncode, err


@contextmanager
def seams_serve(model_dir: Path, *, key: str | None = None) -> Iterator[Served]:
    """Start `python -m seams serve --port 0` and wait until it answers GET /v1/models."""
    env = {k: v for k, v in os.environ.items() if k not in ("SEAMS_API_KEY", "SEAMS_MODEL_DIR")}
    if key:
        env["SEAMS_API_KEY"] = key  # through the environment, as the docs recommend
    proc = subprocess.Popen(
        [sys.executable, "-m", "seams", "serve", "--model-dir", str(model_dir), "--port", "0", "--threads", "1",
         "--alias", "seams-local"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    served = None
    try:
        banner = _read_banner(proc)
        match = READY.search(banner)
        assert match, banner
        served = Served(proc, f"http://127.0.0.1:{match.group(1)}", banner)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{served.url}/v1/models", headers=headers, timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "seams serve never answered"
            time.sleep(0.05)
        yield served
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def _read_banner(proc: subprocess.Popen[str], timeout: float = 60) -> str:
    """stderr up to the 'on http://…' line (imports and model loading come before it).

    Read from the pipe's descriptor, not with `readline`: the server may write several lines at
    once, and a text stream would buffer the later ones where `select` cannot see them."""
    assert proc.stderr is not None
    fd = proc.stderr.fileno()
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sel.select(timeout=0.5):
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            seen += chunk
            text = seen.decode("utf-8", "replace")
            if READY.search(text):
                return text
        elif proc.poll() is not None:
            break
    raise AssertionError(f"seams serve did not start (exit {proc.poll()}): {seen.decode('utf-8', 'replace')}")


def _jevcompat(url: str, out: Path, key: str | None) -> dict:
    cmd = [*JEVCOMPAT, "test", url, "--json", str(out), "--timeout", "60"]
    if key:
        cmd += ["--key", key]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert out.exists(), run.stdout + run.stderr
    report = json.loads(out.read_text())
    assert run.returncode == 0, run.stdout
    return report


def _by_status(report: dict) -> dict[str, dict[str, str]]:
    return {r["id"]: {"level": r["level"], "status": r["status"], "reason": r.get("reason", "")}
            for r in report["results"]}


def test_jevcompat_passes_every_must_and_should(tiny_model_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("jevcompat")
    with seams_serve(tiny_model_dir, key=KEY) as served:
        keyed = _jevcompat(served.url, tmp_path / "keyed.json", KEY)
    with seams_serve(tiny_model_dir) as served:
        open_ = _jevcompat(served.url, tmp_path / "open.json", None)

    for report in (keyed, open_):
        assert report["summary"]["verdict"] == "conformant", report["summary"]
        assert report["summary"]["MUST"]["failed"] == 0 and report["summary"]["SHOULD"]["failed"] == 0
        assert not report["inconclusive"] and not report["case_errors"]
    a, b = _by_status(keyed), _by_status(open_)
    # The keyed run tests auth.bearer, auth.missing and auth.invalid; the open run tests
    # auth.ignored-when-off. Together every requirement of the spec passes.
    assert a["auth.bearer"]["status"] == a["auth.missing"]["status"] == a["auth.invalid"]["status"] == "pass"
    assert b["auth.ignored-when-off"]["status"] == "pass"
    failing = {rid: (a[rid], b[rid]) for rid in a if "pass" not in (a[rid]["status"], b[rid]["status"])}
    assert not failing
    musts = [rid for rid, r in a.items() if r["level"] == "MUST"]
    shoulds = [rid for rid, r in a.items() if r["level"] == "SHOULD"]
    assert keyed["summary"]["MUST"]["passed"] == 32 and len(musts) == 33  # one auth MUST is conditional
    assert all(a[rid]["status"] == "pass" for rid in shoulds) and len(shoulds) == keyed["summary"]["SHOULD"]["passed"]
    # the suite's own drop-in check drove the official SDK against the server
    assert a["dropin.sdk-python"]["status"] == "pass"


def test_the_official_sdk_talks_to_seams_serve_with_zstd(tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ts = pytest.importorskip("typesafe_sdk")
    import httpx2
    from typesafe_sdk._core import compression

    if "zstd" not in compression.COMPRESSORS:
        # Before Python 3.14 the SDK compresses only with its [zstd] extra (backports.zstd). Both
        # write standard zstd frames, so the zstandard package stands in for it here.
        import zstandard

        monkeypatch.setitem(compression.COMPRESSORS, "zstd", zstandard.ZstdCompressor().compress)
    sent: list[tuple[dict[str, str], int]] = []

    def record(request: httpx2.Request) -> None:
        sent.append((dict(request.headers), len(request.content)))

    state = "I was charged twice for my March invoice and want a refund. " * 30  # well over 1 KiB
    with seams_serve(tiny_model_dir, key=KEY) as served:
        http = httpx2.Client(event_hooks={"request": [record]}, timeout=30)
        with ts.TypeSafeClient(api_key=KEY, base_url=served.url, compression="zstd", http_client=http) as client:
            r = client.system_one(
                state=state,
                model="jev-latest",
                questions={
                    "refund": ts.Noul(instructions="Is the customer asking for money back?"),
                    "team": ts.Choice(instructions="Which team?", criteria={"Billing": "Payments", "Sales": None}),
                    "anger": ts.Score(instructions="How upset?", criteria=["Calm", "Frustrated", "Angry"]),
                },
            )
            listed = client.models.list()
        code, err = served.stop()
    headers, size = sent[0]
    assert {k.lower(): v for k, v in headers.items()}["content-encoding"] == "zstd"
    assert size < len(state)  # what went on the wire was the compressed body
    assert r.choices["team"].choice == "Billing"
    assert 0.0 <= r.nouls["refund"].noul <= 1.0
    assert {str(k) for k in r.scores["anger"].probabilities} == {"0", "1", "2"}
    assert [m.name for m in listed.models] == ["seams-tiny-test", "jev-latest", "seams-local"]
    assert code == 0 and "stopped" in err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_seams_serve_stops_cleanly(tiny_model_dir: Path, sig: int) -> None:
    with seams_serve(tiny_model_dir) as served:
        ok = httpx.post(f"{served.url}/v1/systemone", timeout=30,
                        json={"model": "jev-latest", "state": "yes", "questions": {"q": {"type": "noul"}}})
        assert ok.status_code == 200
        code, err = served.stop(sig)
    assert code == 0, err
    assert "seams serve: stopped" in err and "Traceback" not in err


def test_seams_serve_without_a_model_says_which_file(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "seams", "serve", "--model-dir", str(tmp_path), "--port", "0"],
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 2
    assert "config.json" in run.stderr and "Traceback" not in run.stderr
