"""Adaptive wait after an action: poll cheap frame grabs until the screen stops changing, bounded.

Replaces the fixed pause (OSWorld sleeps 2 s after every step): we return as soon as the screen
has been unchanged for `stable_for` seconds after its last change, or, if it has not changed at
all, after `first_change` seconds of quiet (the time an app gets to start reacting).

Example:
    before = grab()
    click()
    settled, changed, elapsed = wait_settled(grab, before=before)
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from typing import Any, NamedTuple


class Settle(NamedTuple):
    """settled: False when `timeout` was hit; changed: final frame differs from `before`."""

    settled: bool
    changed: bool
    elapsed: float


def frame_digest(data: bytes | Any) -> int:
    """A cheap fingerprint of raw frame bytes (crc32 runs at GB/s)."""
    return zlib.crc32(data if isinstance(data, (bytes, bytearray, memoryview)) else bytes(data))


def wait_settled(grab: Callable[[], Any], timeout: float = 3.0, stable_for: float = 0.06, *,
                 before: Any = None, first_change: float | None = None, interval: float = 0.008,
                 trace: dict[str, float] | None = None) -> Settle:
    """Poll `grab()` (any comparable frame fingerprint) until the screen is stable.

    before: the fingerprint taken before the action (so a change that already happened counts);
    defaults to the first grab here. first_change: quiet time accepted when nothing changed yet
    (defaults to `stable_for`). Never waits longer than `timeout` (plus one grab). `trace`, if
    given, receives 'reaction': seconds until the first change seen (callers adapt first_change).
    """
    if first_change is None:
        first_change = stable_for
    t0 = time.monotonic()
    last = grab()
    if before is None:
        before = last
    moved = last != before
    last_change = t0
    while True:
        now = time.monotonic()
        quiet = now - last_change
        if quiet >= (stable_for if moved else first_change):
            return Settle(True, last != before, now - t0)
        if now - t0 >= timeout:
            return Settle(False, last != before, now - t0)
        time.sleep(interval)  # poll period; we return as soon as the screen is stable
        cur = grab()
        if cur != last:
            if not moved and trace is not None:
                trace["reaction"] = time.monotonic() - t0
            last, last_change, moved = cur, time.monotonic(), True
