"""What the recorder attaches to: an X display (and its env vars) plus an element probe.

`open_target("sandbox:mousepad")` starts the sandbox desktop and returns its DISPLAY; the probe
looks up the element under the pointer / in focus through AT-SPI (cua.perception.a11y).
"""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from recorder.store import RecordingError


def _as_dict(el: Any) -> dict[str, Any] | None:
    if el is None:
        return None
    if hasattr(el, "model_dump"):
        return el.model_dump(mode="json")
    return dict(el) if isinstance(el, dict) else None


class A11yProbe:
    """Pre-action AT-SPI lookups: a background thread keeps recent snapshots of the accessibility tree.

    A snapshot is taken after every input that may change the UI (and every REFRESH_S when idle).
    The element under a click is looked up in the latest snapshot that started after the previous
    input and before the click, i.e. the UI as the person saw it, not after the click changed it.
    """

    cheap_focus = True
    REFRESH_S = 3.0
    WAIT_S = 3.0

    def __init__(self, env_vars: dict[str, str] | None = None, screen: tuple[int, int] = (1280, 800)):
        from cua.perception.a11y import A11yReader

        self.reader = A11yReader(env_vars, screen)
        self.snaps: list[tuple[float, float, Any]] = []  # (started, finished, snapshot)
        self.cond = threading.Condition()
        self.prev_input = self.last_input = self.focus_change = -1.0
        self.kick = threading.Event()
        self.done = threading.Event()
        self.clock: Callable[[], float] = time.monotonic
        self.inflight: float | None = None
        self.thread: threading.Thread | None = None

    def start(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.thread = threading.Thread(target=self._loop, name="recorder-a11y", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.done.set()
        self.kick.set()
        if self.thread is not None:
            self.thread.join(10)
        self.reader.close()

    def _loop(self) -> None:
        while not self.done.is_set():
            self.kick.wait(self.REFRESH_S)
            self.kick.clear()
            if self.done.is_set():
                break
            t0 = self.clock()
            with self.cond:
                self.inflight = t0
            snap = self.reader.snapshot(timeout=1.5)
            with self.cond:
                self.inflight = None
                if not snap.error:
                    self.snaps = [*self.snaps[-7:], (t0, self.clock(), snap)]
                self.cond.notify_all()

    def note_input(self, t: float, kind: str, key: str | None, combo: bool) -> None:
        """Called for each press / scroll / key down, before the lookups for it."""
        self.prev_input, self.last_input = self.last_input, t
        typing = kind == "key_down" and key not in ("enter", "tab", "esc") and not combo
        if kind == "press" or (kind == "key_down" and not typing):
            self.focus_change = t
        if not typing:
            self.kick.set()

    def _snapshot_since(self, since: float, until: float) -> Any:
        """The latest snapshot started in [since, until]; waits (bounded) for one in flight."""
        deadline = time.monotonic() + self.WAIT_S
        with self.cond:
            while True:
                ok = [s for s in self.snaps if since <= s[0] <= until]
                if ok:
                    return ok[-1][2]
                if self.inflight is None or not (since <= self.inflight <= until):
                    return None
                if not self.cond.wait(max(0.0, deadline - time.monotonic())):
                    return None

    def element_at(self, x: int, y: int) -> dict[str, Any] | None:
        from cua.perception.a11y import smallest_at

        snap = self._snapshot_since(self.prev_input, self.last_input)
        if snap is None:  # nothing taken between the previous input and this one: look now
            snap = self.reader.snapshot(timeout=1.5)
        return _as_dict(smallest_at(snap.elements, x, y))

    def focused(self) -> dict[str, Any] | None:
        snap = self._snapshot_since(self.focus_change, math.inf)
        if snap is None:
            self.kick.set()
            snap = self._snapshot_since(self.focus_change, math.inf) or (
                self.snaps[-1][2] if self.snaps else None
            )
        if snap is None:
            return None
        return _as_dict(next((e for e in reversed(snap.elements) if "focused" in e.states), None))


@dataclass
class RecordTarget:
    display: str
    x_env: dict[str, str] = field(default_factory=dict)
    probe: Any = None
    env: Any = None

    def close(self) -> None:
        if self.env is not None:
            self.env.close()
            self.env = None


def display_of(env: Any) -> tuple[str | None, dict[str, str]]:
    for holder in (env, getattr(env, "sandbox", None), getattr(env, "sb", None)):
        if holder is None:
            continue
        disp = getattr(holder, "display", None)
        if isinstance(disp, str) and disp:
            x_env = getattr(holder, "env", None)
            return disp, dict(x_env) if isinstance(x_env, dict) else {}
    return None, {}


def open_target(spec: str) -> RecordTarget:
    """Resolve an ENV string to something recordable; raise RecordingError naming the fix if not."""
    kind = (spec or "").split(":", 1)[0].strip().lower()
    if kind == "sandbox":
        from cua.env import make_env

        env = make_env(spec)
        disp, x_env = display_of(env)
        if not disp:
            env.close()
            raise RecordingError(f"the {spec} env does not expose its X display; cannot record it")
        size = tuple(
            getattr(env, "size", None) or getattr(getattr(env, "sandbox", None), "size", (1280, 800))
        )
        return RecordTarget(disp, x_env, A11yProbe(x_env or None, size), env)
    if kind == "desktop":
        disp = os.environ.get("DISPLAY")
        if not disp:
            raise RecordingError(
                "--env desktop records the current X display, but $DISPLAY is not set; "
                "set DISPLAY or use --env sandbox:APP"
            )
        return RecordTarget(disp, {}, A11yProbe(None), None)
    if kind in ("browser", "remote"):
        raise RecordingError(
            f"recording {kind}: envs is not supported here; record a browser on a desktop "
            "(--env 'sandbox:chromium --no-sandbox URL'), or use the guest's /recording API "
            "for a remote desktop"
        )
    raise RecordingError(f"unknown env {spec!r}; use sandbox:APP or desktop")
