"""ASGI middleware: bearer-token auth (every path) and request-body size limits."""

from __future__ import annotations

import json
from collections.abc import Callable

from vm.guest.auth import AuthGuard

Scope = dict
ASGIApp = Callable


async def _send_json(send, status: int, detail: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"detail": detail}).encode()
    hdrs = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": hdrs + (headers or [])})
    await send({"type": "http.response.body", "body": body})


class AuthMiddleware:
    """Refuse any HTTP request without the right bearer token; 429 while a client is locked out."""

    def __init__(self, app: ASGIApp, guard: AuthGuard):
        self.app, self.guard = app, guard

    async def __call__(self, scope: Scope, receive, send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            await self.app(scope, receive, send)
            return
        client = (scope.get("client") or ("unknown", 0))[0]
        wait = self.guard.retry_after(client)
        if wait > 0:
            await _send_json(send, 429, f"too many failed authentication attempts; retry in {wait:.0f} s",
                             [(b"retry-after", str(max(1, round(wait))).encode())])
            return
        header = None
        for k, v in scope.get("headers", []):
            if k == b"authorization":
                header = v.decode("latin-1")
                break
        if not self.guard.check(client, header):
            await _send_json(send, 401, "missing or wrong bearer token: send 'Authorization: Bearer <token>' "
                             "with the token from the guest's token file or $CUA_TOKEN",
                             [(b"www-authenticate", b'Bearer realm="cua-guest"')])
            return
        await self.app(scope, receive, send)


class BodyLimitMiddleware:
    """413 for bodies over the limit (per path prefix), whether sent with Content-Length or chunked."""

    def __init__(self, app: ASGIApp, default: int, per_path: dict[str, int] | None = None):
        self.app, self.default, self.per_path = app, default, per_path or {}

    def limit_for(self, path: str) -> int:
        return next((n for p, n in self.per_path.items() if path == p), self.default)

    async def __call__(self, scope: Scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope.get("path", ""))
        length = None
        for k, v in scope.get("headers", []):
            if k == b"content-length":
                try:
                    length = int(v)
                except ValueError:
                    await _send_json(send, 400, "invalid Content-Length header")
                    return
        if length is not None:
            if length > limit:
                await _send_json(send, 413, f"request body of {length} bytes is over the {limit}-byte limit")
                return
            await self.app(scope, receive, send)
            return
        # No Content-Length (chunked or none): buffer up to the limit, then replay.
        chunks, total = [], 0
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return
            body = msg.get("body", b"")
            total += len(body)
            if total > limit:
                await _send_json(send, 413, f"request body is over the {limit}-byte limit")
                return
            chunks.append(body)
            if not msg.get("more_body", False):
                break
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
