"""`seams review`: the reviewer's desk (seams.review) on a queue file, under uvicorn.

Prints one line on stdout, the desk's URL with a fresh token, so a person can open it and a
script can read it; everything else goes to stderr. The socket is bound before uvicorn starts
(as `seams serve` does), so `--port 0` picks a free port and the printed URL names it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..errors import InputError
from . import app
from ._common import EXIT_USAGE, err_console, errors_to_exit
from .serve import is_loopback, listen_on, run_until_stopped


@app.command()
def review(
    queue: Annotated[Path, typer.Argument(help="The review queue's SQLite file (a ReviewQueue's path).")],
    rubric: Annotated[str | None, typer.Option(help="The rubric file or built-in name the items were decided with (default: the built-in named by each item, if any).")] = None,
    port: Annotated[int, typer.Option(help="Port to listen on; 0 picks a free one (the printed URL names it).")] = 8765,
    host: Annotated[str, typer.Option(help="Interface to listen on: loopback unless --allow-remote.")] = "127.0.0.1",
    allow_remote: Annotated[bool, typer.Option("--allow-remote", help="Allow a --host other than loopback: anyone who can reach it and has the URL's token can read the states and label them.")] = False,
    lease: Annotated[float, typer.Option(min=1, help="Seconds a claim holds an item before another reviewer may take it.")] = 600.0,
    capacity: Annotated[int | None, typer.Option(min=1, help="The capacity to show (default: the one the queue's latest enqueue ran under).")] = None,
) -> None:
    """Open a web page where a person answers the items a policy routed to review."""
    try:
        import uvicorn

        from ..review import DeskAccess, create_review_app
    except ModuleNotFoundError as exc:
        err_console.print(f"[red]error:[/red] seams review needs the [review] extra ({exc.name} is missing): "
                          "pip install 'seams[review]'")
        raise typer.Exit(EXIT_USAGE) from None
    from ..queue import ReviewQueue
    from ..rubric import Rubric

    with errors_to_exit():
        if not is_loopback(host) and not allow_remote:
            raise InputError(f"--host {host} is not a loopback address: the desk shows states and takes labels, so "
                             "another host needs --allow-remote")
        if not queue.is_file():
            raise InputError(f"no review queue at {queue} (a ReviewQueue creates it on its first enqueue)")
        the_rubric = Rubric.resolve(rubric) if rubric is not None else None
        q = ReviewQueue(queue)
        q.counts()  # a file that is not a queue fails here, before the server starts
    access = DeskAccess()
    asgi = create_review_app(q, rubric=the_rubric, access=access, lease_s=lease, capacity=capacity)
    sock = listen_on(host, port)
    # Listening before the URL is printed: a client that reads the line and connects at once is
    # queued by the kernel until uvicorn accepts, never refused.
    sock.listen(128)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    if not is_loopback(host):
        print(f"seams review: warning: listening on {host}, not loopback: anyone who can reach it with the token "
              "can read the queue's states and label them; prefer an SSH tunnel", file=sys.stderr, flush=True)
    print(f"http://{shown}:{bound}/?token={access.token}", flush=True)
    # No access log: a request line names an item and could carry the token before its redirect.
    config = uvicorn.Config(asgi, log_level="warning", access_log=False, timeout_graceful_shutdown=5, lifespan="off")
    try:
        run_until_stopped(config, sock)
    finally:
        q.close()
