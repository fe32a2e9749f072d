"""Connection-level defence for the guest server: header deadline and per-address cap on untrusted sockets.

A stranger who opens hundreds of sockets and sends nothing (or trickles header bytes) must not keep the token
holder waiting. Every connection starts *untrusted*: it has `header_timeout` seconds to deliver a complete
request head, and each address may hold at most `per_address` untrusted connections (`max_untrusted` over
all addresses); over a cap, the *oldest* untrusted connection is closed, so a newcomer (perhaps the owner)
always gets in. A connection that has carried a request with the right token is *trusted*: never evicted,
governed only by the keep-alive timeout. The auth middleware marks it through `ConnectionGuard.trust`.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol


class ConnectionGuard:
    """Book-keeping shared by every connection of one server (event-loop thread only)."""

    def __init__(self, header_timeout: float = 5.0, per_address: int = 32, max_untrusted: int = 1024):
        self.header_timeout, self.per_address, self.max_untrusted = header_timeout, per_address, max_untrusted
        self._untrusted: OrderedDict[Any, str] = OrderedDict()  # connection -> address, oldest first
        self._by_address: dict[str, OrderedDict[Any, None]] = {}
        self._by_client: dict[tuple[str, int], Any] = {}
        self.evicted = 0
        self.timed_out = 0

    def untrusted_count(self, address: str | None = None) -> int:
        return len(self._untrusted) if address is None else len(self._by_address.get(address, ()))

    def opened(self, conn: Any, client: tuple[str, int] | None) -> None:
        if client:
            self._by_client[client] = conn
        self._watch(conn, client[0] if client else "unknown")

    def _watch(self, conn: Any, address: str) -> None:
        """Count `conn` as untrusted (waiting for a request head), evicting the oldest over a cap."""
        mine = self._by_address.setdefault(address, OrderedDict())
        while len(mine) >= self.per_address:
            self._evict(next(iter(mine)))
        while len(self._untrusted) >= self.max_untrusted:
            self._evict(next(iter(self._untrusted)))
        mine[conn] = None
        self._untrusted[conn] = address

    def _evict(self, conn: Any) -> None:
        self.evicted += 1
        self._unwatch(conn)
        conn.drop()

    def _unwatch(self, conn: Any) -> None:
        address = self._untrusted.pop(conn, None)
        if address is not None:
            mine = self._by_address.get(address)
            if mine is not None:
                mine.pop(conn, None)
                if not mine:
                    del self._by_address[address]

    def head_received(self, conn: Any) -> None:
        """A full request head arrived: the deadline is met; the request still has to pass auth."""
        self._unwatch(conn)

    def idle_again(self, conn: Any, client: tuple[str, int] | None) -> None:
        """A response finished on a connection that never proved the token: it waits for a head again."""
        if not getattr(conn, "trusted", False):
            self._watch(conn, client[0] if client else "unknown")

    def trust(self, client: Any) -> None:
        """The request from `client` (scope['client']) carried the right token: never evict its connection."""
        conn = self._by_client.get(tuple(client)) if client else None
        if conn is not None:
            conn.trusted = True
            self._unwatch(conn)

    def closed(self, conn: Any, client: tuple[str, int] | None) -> None:
        self._unwatch(conn)
        if client and self._by_client.get(client) is conn:
            del self._by_client[client]


def guarded_protocol(guard: ConnectionGuard) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the guard's header deadline and caps (pass it as `http=` to uvicorn)."""

    class GuardedH11Protocol(H11Protocol):
        trusted = False
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            guard.opened(self, self.client)
            self._arm()

        def _arm(self) -> None:
            self._disarm()
            if not self.trusted and not self.transport.is_closing():
                self._deadline = self.loop.call_later(guard.header_timeout, self._header_timeout)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _header_timeout(self) -> None:
            self._deadline = None
            guard.timed_out += 1
            guard.head_received(self)  # no longer counted; the socket goes away now
            self.drop()

        def drop(self) -> None:
            self._disarm()
            if not self.transport.is_closing():
                self.transport.abort()

        def _saw_head(self, before: Any) -> None:
            if self.cycle is not before:  # h11 produced a Request event: the head is complete
                self._disarm()
                guard.head_received(self)

        def data_received(self, data: bytes) -> None:
            before = self.cycle
            super().data_received(data)
            self._saw_head(before)

        def on_response_complete(self) -> None:
            before = self.cycle
            if not self.trusted:
                guard.idle_again(self, self.client)
                self._arm()
            super().on_response_complete()
            self._saw_head(before)  # a pipelined request may have been parsed just now

        def handle_websocket_upgrade(self, event: Any) -> None:
            """A complete head asked for a WebSocket (/vnc): the socket leaves this protocol, and the guard."""
            self._disarm()
            guard.head_received(self)
            guard.closed(self, self.client)
            super().handle_websocket_upgrade(event)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            guard.closed(self, self.client)
            super().connection_lost(exc)

    return GuardedH11Protocol
