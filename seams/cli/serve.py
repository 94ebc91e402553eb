"""`seams serve`: System One over HTTP (FastAPI on uvicorn), the local model by default.

The socket is bound here, before uvicorn starts, so `--port 0` picks a free port and the line
printed on stderr names the real one (tests and scripts read it). SIGINT and SIGTERM stop the
server gracefully: in-flight requests finish, then the process exits 0.
"""

from __future__ import annotations

import ctypes
import ipaddress
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import InputError
from . import app
from ._common import EXIT_USAGE, LogLevelChoice, err_console, errors_to_exit, is_local, make_judge

#: Seconds an idle keep-alive connection is kept open. Longer than clients keep theirs (httpx:
#: 5 s, uvicorn's default too), so the client closes first: at equal timeouts a client may send on
#: a connection in the instant the server closes it, and the request fails (one ReadError in
#: 15,242 requests of a 30-minute bench/soak.py run, clients pausing a mean 1 s).
KEEP_ALIVE_S = 30


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on. Use 0.0.0.0 to accept remote clients (set --api-key then).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on; 0 picks a free one (printed on start).")] = 8000,
    model_dir: Annotated[Path | None, typer.Option(help="A local model directory instead of the shipped model (default: $SEAMS_MODEL_DIR).")] = None,
    api_key: Annotated[str | None, typer.Option(envvar="SEAMS_API_KEY", show_default=False, help="Require 'Authorization: Bearer KEY' on every request (prefer the env variable: arguments show in ps).")] = None,
    threads: Annotated[int | None, typer.Option(min=1, help="onnxruntime intra-op threads (default: one per physical core).")] = None,
    max_body_bytes: Annotated[int, typer.Option(min=1, help="Largest request body accepted, compressed or decoded; larger ones get 413.")] = 4 * 1024 * 1024,
    judge: Annotated[str, typer.Option(help="'local', 'local-once' (the shipped model reading the state once), or the base URL of another System One server to front.")] = "local",
    upstream_key: Annotated[str | None, typer.Option(show_default=False, help="Bearer key for an upstream --judge URL (default: $TYPESAFE_API_KEY).")] = None,
    alias: Annotated[list[str] | None, typer.Option(help="Another model name to answer to, beside jev-latest and the model's id (repeatable).")] = None,
    log_level: Annotated[LogLevelChoice, typer.Option(help="uvicorn log level: critical, error, warning, info, debug.")] = LogLevelChoice.warning,
    max_pairs: Annotated[int, typer.Option(min=0, help="Most model runs (hypotheses × windows) one request may cost; more gets 422. 0: no limit.")] = 512,
    max_tokens: Annotated[int | None, typer.Option(min=0, show_default=False, help="Most tokens one request's model runs may read in all; more gets 422. Default: sized at start from a timed run, a quarter of --request-timeout's worth on this machine. 0: no limit.")] = None,
    concurrency: Annotated[int | None, typer.Option(min=0, show_default=False, help="Most requests computing at once; the rest wait their turn. Default: 2 for the local judge (its runs share the cores), no bound in front of another server. 0: no bound.")] = None,
    queue_timeout: Annotated[float | None, typer.Option(min=0.001, show_default=False, help="Seconds a request may wait for its turn before a 529 with retry-after. Default: half of --request-timeout.")] = None,
    request_timeout: Annotated[float, typer.Option(min=0, help="Seconds a request may take, its wait for a turn included, before its work is stopped (504). 0: no limit.")] = 30.0,
    body_timeout: Annotated[float, typer.Option(min=0.001, help="Seconds a request body may take to arrive; slower ones get 408.")] = 10.0,
) -> None:
    """Serve System One (POST /v1/systemone, GET /v1/models) over the local model or another judge."""
    try:
        import uvicorn

        from ..server import create_app
    except ModuleNotFoundError as exc:
        err_console.print(f"[red]error:[/red] seams serve needs the [serve] extra ({exc.name} is missing): "
                          "pip install 'seams[serve]'")
        raise typer.Exit(EXIT_USAGE) from None

    cap_malloc_arenas()
    with errors_to_exit():
        if not is_local(judge) and (model_dir is not None or threads is not None):
            raise InputError("--model-dir and --threads are for the local judge; drop them with --judge URL")
        if api_key and not api_key.strip():
            raise InputError("the API key is blank; unset SEAMS_API_KEY to serve without a key")
        the_judge = make_judge(judge, api_key=upstream_key, model_dir=model_dir, threads=threads)
        tokens, sized = token_bound(the_judge, max_tokens, request_timeout or None, local=is_local(judge))
    asgi = create_app(the_judge, api_key=api_key or None, max_body_bytes=max_body_bytes, model_names=alias or (),
                      max_pairs=max_pairs or None, max_tokens=tokens, request_timeout=request_timeout or None,
                      body_timeout=body_timeout, concurrency=turns(concurrency, local=is_local(judge)),
                      queue_timeout=queue_timeout)

    sock = listen_on(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    auth = "Bearer key required" if api_key else "no key required"
    if sized:
        print(f"seams serve: {sized}", file=sys.stderr, flush=True)
    print(f"seams serve: {the_judge.model_id} on http://{shown}:{bound} ({auth}); Ctrl-C stops",
          file=sys.stderr, flush=True)
    if not api_key and not is_loopback(host):
        print(f"seams serve: warning: listening on {host} without a key; anyone who can reach it can use it "
              "(set SEAMS_API_KEY)", file=sys.stderr, flush=True)

    config = uvicorn.Config(asgi, log_level=log_level.value, access_log=log_level.value in ("info", "debug"),
                            timeout_graceful_shutdown=10, timeout_keep_alive=KEEP_ALIVE_S, lifespan="off")
    run_until_stopped(config, sock)
    print("seams serve: stopped", file=sys.stderr, flush=True)


#: glibc malloc arenas the server keeps (`cap_malloc_arenas`).
MALLOC_ARENAS = 2


def cap_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas for this process, unless `MALLOC_ARENA_MAX` already says how many.

    Why: glibc gives each thread that allocates under contention an arena of its own (up to eight
    per core) and returns little of what is freed in them. The server's worker threads each
    tokenise, pad and read answers, so RSS grew with the threads used, not with a leak: a 60 s
    loopback soak (16 clients, `python bench/soak.py --seconds 60 --skip-queue`) ended at 482 MiB
    by default and at 299 MiB with two arenas (docs/local-judge.md, "`seams serve`"). Returns
    whether the cap was set (False off glibc, or when the environment sets it)."""
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc (musl has no arenas to cap)
        return False
    m_arena_max = -8  # glibc's M_ARENA_MAX
    return bool(libc.mallopt(m_arena_max, arenas))


def turns(given: int | None, *, local: bool) -> int | None:
    """Requests computing at once: as given (0 is no bound); else 2 for the local judge, whose runs
    share the machine's cores, and no bound in front of another server, whose calls mostly wait."""
    if given is not None:
        return given or None
    return 2 if local else None


def token_bound(judge: Any, given: int | None, request_timeout: float | None, *, local: bool) -> tuple[int | None, str]:
    """The request token bound to serve with, and a line saying how it was sized ("" when given).

    Given: as given (0 is no limit). Otherwise, for the local judge with a timeout, a quarter of the
    timeout's worth at the cost a token measured now (`seams.server.sizing`); a remote judge's
    work is its own server's to bound, and with no timeout there is nothing to size against."""
    if given is not None:
        return given or None, ""
    if not local or request_timeout is None:
        return None, ""
    from ..server.sizing import SHARE, max_tokens_for, seconds_per_token

    per_token = seconds_per_token(judge)
    tokens = max_tokens_for(request_timeout, per_token)
    return tokens, (f"--max-tokens {tokens:,}: {per_token * 1000:.3f} ms a token measured now, so a request at the "
                    f"bound computes in about {SHARE:.0%} of --request-timeout {request_timeout:g}s (set it to fix it)")


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def listen_on(host: str, port: int) -> socket.socket:
    """A socket bound to `host:port`, or exit 2 saying why it cannot be (the port taken, say)."""
    try:
        return bind_socket(host, port)
    except OSError as exc:
        err_console.print(f"[red]error:[/red] cannot listen on {host}:{port}: {exc.strerror or exc}")
        raise typer.Exit(EXIT_USAGE) from None


def run_until_stopped(config: Any, sock: socket.socket) -> None:
    """uvicorn on `sock` until Ctrl-C or SIGTERM; the socket is closed after."""
    import uvicorn

    server = uvicorn.Server(config)
    # uvicorn re-raises the signal it caught after its graceful shutdown; absorb SIGTERM's so the
    # process exits 0 instead of dying by the default handler (SIGINT's arrives as KeyboardInterrupt).
    previous = signal.signal(signal.SIGTERM, lambda *_: None)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()


def bind_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock
