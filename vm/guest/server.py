"""Running the guest app under uvicorn with the connection guard (header deadline, per-address cap) and TLS."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from vm.guest.connections import guarded_protocol

KEEP_ALIVE_S = 5


def _ws_protocol() -> str:
    """uvicorn's WebSocket implementation for /vnc; without the websockets package the guest still serves HTTP."""
    try:
        import websockets  # noqa: F401 - only probing that it is installed
    except ImportError:
        return "none"
    return "websockets-sansio"


def server_config(app: FastAPI, host: str, port: int, tls_cert: Path | None = None, tls_key: Path | None = None,
                  log_level: str = "warning") -> uvicorn.Config:
    """The one uvicorn configuration `cua serve`, the tests and the benchmark run.

    No `limit_concurrency`: uvicorn answers 503 to everyone once that many sockets are open, idle strangers
    included; the connection guard bounds strangers instead and leaves the token holder alone.
    """
    if (tls_cert is None) != (tls_key is None):
        raise ValueError("TLS needs both --tls-cert and --tls-key")
    return uvicorn.Config(app, host=host, port=port, http=guarded_protocol(app.state.connection_guard),
                          ws=_ws_protocol(),  # only /vnc (the live view), behind the token
                          log_level=log_level, server_header=False, date_header=False, proxy_headers=False,
                          timeout_keep_alive=KEEP_ALIVE_S, access_log=False,
                          ssl_certfile=str(tls_cert) if tls_cert else None,
                          ssl_keyfile=str(tls_key) if tls_key else None)


@contextlib.contextmanager
def serve_in_thread(config: uvicorn.Config, start_timeout: float = 30.0) -> Iterator[uvicorn.Server]:
    """Run a uvicorn server on a background thread until the block ends (tests and benchmarks)."""
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="cua-guest-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the guest server did not start on {config.host}:{config.port}")
        time.sleep(0.02)
    try:
        yield server
    finally:
        server.should_exit = True
        thread.join(15)
