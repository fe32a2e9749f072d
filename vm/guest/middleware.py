"""ASGI middleware: bearer-token auth (every path) and request-body size limits."""

from __future__ import annotations

import json
from collections.abc import Callable

from vm.guest.auth import AuthGuard
from vm.guest.connections import ConnectionGuard

Scope = dict
ASGIApp = Callable
CLOSE = (b"connection", b"close")


async def _send_json(send, status: int, detail: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"detail": detail}).encode()
    hdrs = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": hdrs + (headers or [])})
    await send({"type": "http.response.body", "body": body})


class AuthMiddleware:
    """Refuse any HTTP request without the right bearer token.

    The right token is always served: a lock-out only answers *wrong* tokens with 429 (and a growing
    Retry-After), so strangers cannot lock the owner out. A request that passes marks its connection trusted
    in the connection guard (never evicted by the per-address cap).
    """

    def __init__(self, app: ASGIApp, guard: AuthGuard, connections: ConnectionGuard | None = None):
        self.app, self.guard, self.connections = app, guard, connections

    async def __call__(self, scope: Scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        client = (scope.get("client") or ("unknown", 0))[0]
        header = None
        for k, v in scope.get("headers", []):
            if k == b"authorization":
                header = v.decode("latin-1")
                break
        wait = self.guard.retry_after(client)  # the lock in force when this attempt arrived
        if self.guard.check(client, header):
            if self.connections is not None:
                self.connections.trust(scope.get("client"))
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":  # a WebSocket (/vnc) without the token: refused before the handshake
            await send({"type": "websocket.close", "code": 1008})
            return
        if wait > 0:
            await _send_json(send, 429, f"too many failed authentication attempts; retry in {wait:.0f} s",
                             [(b"retry-after", str(max(1, round(wait))).encode()), CLOSE])
            return
        await _send_json(send, 401, "missing or wrong bearer token: send 'Authorization: Bearer <token>' "
                         "with the token from the guest's token file or $CUA_TOKEN",
                         [(b"www-authenticate", b'Bearer realm="cua-guest"'), CLOSE])


class BodyTooLarge(Exception):
    """Raised into the app when the bytes received pass the limit (the 413 has already been sent)."""


class BodyLimitMiddleware:
    """Body limits that count the bytes actually received, whatever the headers claim.

    A request with both Content-Length and Transfer-Encoding is refused with 400 (RFC 9112 section 6.3: such
    framing is a smuggling attempt). A declared length over the limit is refused before reading; otherwise
    every received chunk is counted and the 413 is sent the moment the count passes the limit (the app sees
    `BodyTooLarge` from receive() and whatever it tries to answer afterwards is dropped).
    """

    def __init__(self, app: ASGIApp, default: int, per_path: dict[str, int] | None = None):
        self.app, self.default, self.per_path = app, default, per_path or {}

    def limit_for(self, path: str) -> int:
        """The limit of `path`: a key equal to it, or a key ending in "/" that it starts with."""
        return next((n for p, n in self.per_path.items() if path == p or (p.endswith("/") and path.startswith(p))),
                    self.default)

    async def __call__(self, scope: Scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope.get("path", ""))
        lengths = [v for k, v in scope.get("headers", []) if k == b"content-length"]
        chunked = any(k == b"transfer-encoding" for k, _ in scope.get("headers", []))
        if lengths and chunked:
            await _send_json(send, 400, "request has both Content-Length and Transfer-Encoding; send one "
                             "(RFC 9112 section 6.3)", [CLOSE])
            return
        if len(set(lengths)) > 1 or any(not v.strip().isdigit() for v in lengths):
            await _send_json(send, 400, "invalid or repeated Content-Length header", [CLOSE])
            return
        if lengths and int(lengths[0]) > limit:
            await _send_json(send, 413, f"request body of {int(lengths[0])} bytes is over the {limit}-byte limit",
                             [CLOSE])
            return
        total, refused = 0, False

        async def counted_receive():
            nonlocal total, refused
            msg = await receive()
            if msg["type"] == "http.request":
                total += len(msg.get("body", b""))
                if total > limit and not refused:
                    refused = True
                    await _send_json(send, 413, f"request body is over the {limit}-byte limit", [CLOSE])
                if refused:
                    raise BodyTooLarge(f"over {limit} bytes")
            return msg

        async def guarded_send(message) -> None:
            if not refused:
                await send(message)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except BodyTooLarge:
            if not refused:  # pragma: no cover - raised only after the 413 went out
                raise
