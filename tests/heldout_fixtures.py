"""What the independent held-out protocol checks share: a stdlib JSON endpoint and running `cua run`.

Each check keeps its own policy, written from the provider's published protocol, not from cua's fakes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

Handler = Callable[[dict], tuple[int, dict]]


@contextmanager
def json_endpoint(route: str, handle: Handler, not_found: dict):
    """Serve POST `route` (a path suffix, query ignored) on 127.0.0.1 with `handle`; yield the base URL."""

    class H(BaseHTTPRequestHandler):
        def log_message(self, *a):  # quiet
            pass

        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            ok = self.path.split("?")[0].rstrip("/").endswith(route)
            code, doc = handle(body) if ok else (404, not_found)
            data = json.dumps(doc).encode()
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_port}"
    finally:
        srv.shutdown()


def cua_run(task: str, model: str, out: Path, env: dict[str, str], *extra: str, max_steps: int = 12):
    """`cua run TASK` on a sandbox mousepad with MODEL; returns the finished process."""
    args = [sys.executable, "-m", "cua.cli", "run", task, "--env", "sandbox:mousepad", "--model", model,
            "--max-steps", str(max_steps), "--out", str(out), *extra]
    return subprocess.run(args, env={**os.environ, **env}, capture_output=True, text=True, timeout=300)
