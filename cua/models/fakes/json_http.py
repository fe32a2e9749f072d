"""The HTTP side every fake provider shares: a quiet HTTP/1.1 handler that answers JSON."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any


class JSONHandler(BaseHTTPRequestHandler):
    """`_send(status, payload)` writes one JSON answer; `retry_statuses` get `Retry-After: 0`."""

    protocol_version = "HTTP/1.1"
    retry_statuses: tuple[int, ...] = (429,)

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def extra_headers(self) -> dict[str, str]:
        """Headers a provider adds to every answer (e.g. a request id)."""
        return {}

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in self.extra_headers().items():
            self.send_header(name, value)
        if status in self.retry_statuses:
            self.send_header("Retry-After", "0")
        self.end_headers()
        self.wfile.write(data)
