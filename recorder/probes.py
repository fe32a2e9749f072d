"""What the recorder attaches to: an X display (and its env vars) plus an element probe.

`open_target("sandbox:mousepad")` starts the sandbox desktop and returns its DISPLAY; its probe
looks elements up through AT-SPI. `open_target("browser:URL")` shows Chromium full-screen (kiosk)
on a sandbox desktop, so screen pixels are page pixels, and looks elements up in the DOM.
"""

from __future__ import annotations

import glob
import math
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recorder.store import RecordingError


Box = tuple[int, int, int, int]
Snap = tuple[float, float, list]  # (started, finished, elements)


def _near(box: Box, x: int, y: int, pad: int = 8) -> bool:
    bx, by, bw, bh = box
    return bx - pad <= x < bx + bw + pad and by - pad <= y < by + bh + pad


def _as_dict(el: Any) -> dict[str, Any] | None:
    if el is None:
        return None
    if hasattr(el, "model_dump"):
        return el.model_dump(mode="json")
    return dict(el) if isinstance(el, dict) else None


class SnapshotProbe:
    """Pre-action element lookups from snapshots that a background thread keeps fresh.

    A snapshot is taken right after every input that may change the UI, again SETTLE_AFTER later
    (the app has reacted: the menu or dialog it opened is there; a loaded app takes longer), as soon
    as the frame thread reports the screen changing after a still spell (`note_frame`: a menu that
    showed late, clicked a moment later) and once more when it settles, and every REFRESH_S when idle. The element
    under a click comes from a snapshot the screen under the click did not change after (`element_at`):
    the UI as the person saw it, not after the click changed it. All backend
    calls happen on the probe's own thread (Playwright and AT-SPI clients are thread-bound).
    """

    cheap_focus = True
    REFRESH_S = 3.0
    WAIT_S = 3.0
    SETTLE_AFTER = (0.15, 0.4, 0.8)  # looks after an input (each a few tens of ms)
    SETTLE_S = 0.3  # the screen is taken as settled after this long without a change
    SETTLE_MAX_S = 1.0  # a screen that keeps changing (video, progress) is looked at this often

    def __init__(self) -> None:
        self.snaps: list[Snap] = []
        self.frames: deque[tuple[float, Box | None]] = deque(maxlen=300)  # (taken, where it changed)
        self.cond = threading.Condition()
        self.last_input = self.focus_change = -1.0
        self.kick = threading.Event()  # set: take a snapshot now
        self.done = threading.Event()
        self.clock: Callable[[], float] = time.monotonic
        self.inflight: float | None = None
        self.settle_due: list[float] = []  # when the snapshots after the last input are due
        self.change: tuple[float, float] | None = None  # (first, last) screen change not yet looked at
        self.thread: threading.Thread | None = None
        self.error: str | None = None
        self.ready = threading.Event()

    # backend hooks, called on the probe thread ---------------------------------------------
    def _open(self) -> None: ...

    def _take(self) -> list | None:
        raise NotImplementedError

    def _close(self) -> None: ...

    # lifecycle ---------------------------------------------------------------------------
    def start(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.kick.set()  # first snapshot right away
        self.thread = threading.Thread(target=self._loop, name="recorder-probe", daemon=True)
        self.thread.start()

    def wait_ready(self, timeout: float) -> bool:
        """Block until the first snapshot exists (False after `timeout` or if the backend failed)."""
        end = time.monotonic() + timeout
        while not self.ready.wait(0.1):
            if time.monotonic() > end or (self.thread is not None and not self.thread.is_alive()):
                return False
        return True

    def stop(self) -> None:
        self.done.set()
        self.kick.set()
        if self.thread is not None:
            self.thread.join(15)

    def _wait_s(self) -> float:
        """Seconds until the next snapshot is due without a kick: the settle one, else the refresh."""
        with self.cond:
            due = self.settle_due[0] if self.settle_due else None
        return self.REFRESH_S if due is None else min(self.REFRESH_S, max(0.0, due - self.clock()))

    def _loop(self) -> None:
        try:
            self._open()
            while not self.done.is_set():
                self.kick.wait(self._wait_s())
                self.kick.clear()
                if self.done.is_set():
                    break
                t0 = self.clock()
                with self.cond:
                    self.inflight = t0
                    self.settle_due = [d for d in self.settle_due if d > t0]
                try:
                    els = self._take()
                except Exception as e:  # noqa: BLE001 - a failed look must not end the recording
                    self.error, els = str(e), None
                with self.cond:
                    self.inflight = None
                    if els is not None:
                        self.snaps = [*self.snaps[-7:], (t0, self.clock(), els)]
                        self.ready.set()
                    self.cond.notify_all()
        except Exception as e:  # noqa: BLE001
            self.error = str(e)
        finally:
            with self.cond:
                self.inflight = None
                self.cond.notify_all()
            self._close()

    # queries (recorder's events thread) --------------------------------------------------
    def note_input(self, t: float, kind: str, key: str | None, combo: bool) -> None:
        """Called for each press / scroll / key down, before the lookups for it."""
        self.last_input = t
        typing = kind == "key_down" and key not in ("enter", "tab", "esc") and not combo
        if kind == "press" or (kind == "key_down" and not typing):
            self.focus_change = t
        if not typing:
            with self.cond:  # the UI before the app reacts now, and once more after it has
                self.settle_due = [t + d for d in self.SETTLE_AFTER]
            self.kick.set()

    def note_frame(self, t: float, changed: Box | None) -> None:
        """Called by the frame thread for each frame with where the screen changed (x, y, w, h; the whole
        screen when the active window changed), or None.

        A snapshot is taken as a change begins (a menu that showed late, which a quick person
        clicks before the screen is still again), once the screen has been still for SETTLE_S
        after it (a dialog that opened a while after the click that asked for it), and every
        SETTLE_MAX_S while it keeps changing.
        """
        with self.cond:
            self.frames.append((t, changed))
            self.cond.notify_all()
            began = changed is not None and self.change is None
            if changed is not None:
                self.change = (self.change[0] if self.change else t, t)
            if self.change is None:
                return
            if began:
                self.kick.set()
                return
            first, last = self.change
            if t - last < self.SETTLE_S and t - first < self.SETTLE_MAX_S:
                return
            self.change = None
        self.kick.set()

    def _since(self, since: float, until: float) -> Snap | None:
        """The latest snapshot started in [since, until], waiting (bounded) for one in flight that
        started there later than the latest finished one."""
        deadline = time.monotonic() + self.WAIT_S
        with self.cond:
            while True:
                ok = [s for s in self.snaps if since <= s[0] <= until]
                best = ok[-1] if ok else None
                flying = self.inflight
                if flying is None or not (since <= flying <= until) or (best and flying <= best[0]):
                    return best
                if not self.cond.wait(max(0.0, deadline - time.monotonic())):
                    return best

    def _changed_at(self, x: int, y: int, since: float, until: float) -> bool:
        """Whether a frame taken in (since, until] showed the screen changing at (x, y)."""
        with self.cond:
            return any(since < ft <= until and box is not None and _near(box, x, y) for ft, box in self.frames)

    def _frames_through(self, t: float) -> bool:
        """Wait (bounded) for a frame taken after `t`, so that changes up to `t` are known; True at once
        when no frame thread reports (nothing to wait for)."""
        deadline = time.monotonic() + self.WAIT_S
        with self.cond:
            while self.frames and self.frames[-1][0] <= t:
                if not self.cond.wait(max(0.0, deadline - time.monotonic())):
                    return False
            return True

    def element_at(self, x: int, y: int) -> dict[str, Any] | None:
        """The element under a click as the person saw it: from the latest snapshot started before the
        click, unless the screen changed under the click since it started (the probe was busy while a
        menu opened); else from the first one after the click, if the screen under the click had not
        changed by its end; else None (unknown, so the step keeps its coordinates: better than the
        element the menu covered)."""
        from cua.perception.a11y import smallest_at

        click = self.last_input
        before = self._since(-math.inf, click)
        if before is not None and not self._changed_at(x, y, before[0], click):
            return _as_dict(smallest_at(before[2], x, y))
        self.kick.set()
        after = self._since(click, math.inf)
        if after is not None and self._frames_through(after[1]) and not self._changed_at(x, y, click, after[1]):
            return _as_dict(smallest_at(after[2], x, y))
        return None

    def focused(self) -> dict[str, Any] | None:
        snap = self._since(self.focus_change, math.inf)
        if snap is None:
            self.kick.set()
            snap = self._since(self.focus_change, math.inf) or self._since(-math.inf, math.inf)
        if snap is None:
            return None
        return _as_dict(next((e for e in reversed(snap[2]) if "focused" in e.states), None))


class A11yProbe(SnapshotProbe):
    """Snapshots of the AT-SPI tree (cua.perception.a11y) of one desktop."""

    def __init__(self, env_vars: dict[str, str] | None = None, screen: tuple[int, int] = (1280, 800)):
        super().__init__()
        self.env_vars, self.screen = env_vars, screen
        self.reader: Any = None

    def _open(self) -> None:
        from cua.perception.a11y import A11yReader

        self.reader = A11yReader(self.env_vars, self.screen)

    def _take(self) -> list | None:
        snap = self.reader.snapshot(timeout=1.5)
        return None if snap.error else snap.elements

    def _close(self) -> None:
        if self.reader is not None:
            self.reader.close()


class DomProbe(SnapshotProbe):
    """Snapshots of the DOM (cua.perception.dom) of a Chromium shown full-screen, over CDP."""

    def __init__(self, port_file_glob: str, connect_timeout: float = 30.0):
        super().__init__()
        self.port_file_glob, self.connect_timeout = port_file_glob, connect_timeout
        self.pw: Any = None
        self.browser: Any = None

    def _open(self) -> None:
        from playwright.sync_api import sync_playwright

        deadline = time.monotonic() + self.connect_timeout
        port = None
        while port is None and time.monotonic() < deadline and not self.done.is_set():
            for f in glob.glob(self.port_file_glob):
                text = Path(f).read_text().split()
                port = text[0] if text else None
            if port is None:
                time.sleep(0.1)  # Chromium writes its DevTools port file once it listens
        if port is None:
            raise RecordingError(f"Chromium wrote no DevTools port ({self.port_file_glob})")
        self.pw = sync_playwright().start()
        self.browser = self.pw.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")

    def _page(self) -> Any:
        pages = [p for c in self.browser.contexts for p in c.pages if not p.is_closed()]
        return pages[-1] if pages else None

    def _take(self) -> list | None:
        from cua.perception.dom import collect_dom

        page = self._page()
        return collect_dom(page, max_ms=1000).elements if page is not None else None

    def _close(self) -> None:
        for obj, meth in ((self.browser, "close"), (self.pw, "stop")):
            if obj is not None:
                try:
                    getattr(obj, meth)()
                except Exception:  # noqa: BLE001, S110 - Chromium may be gone already
                    pass


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


def _browser_target(url: str, size: tuple[int, int]) -> RecordTarget:
    from cua.env.chromium import CHROMIUM_ARGS, find_chromium
    from cua.env.sandbox import Sandbox

    if not url or ":" not in url:
        raise RecordingError(f"browser URL {url!r} needs a scheme, e.g. browser:https://example.org")
    argv = [
        find_chromium(),
        *CHROMIUM_ARGS,
        "--kiosk",
        "--remote-debugging-port=0",
        "--force-device-scale-factor=1",
        f"--window-size={size[0]},{size[1]}",
        url,
    ]
    sb = Sandbox(argv, size=size)
    probe = DomProbe(os.path.join(sb.root, "home", ".config", "chromium", "DevToolsActivePort"))
    return RecordTarget(sb.display, dict(sb.env), probe, sb)


def open_target(spec: str, size: tuple[int, int] = (1280, 800)) -> RecordTarget:
    """Resolve an ENV string to something recordable; raise RecordingError naming the fix if not."""
    kind, _, arg = (spec or "").partition(":")
    kind = kind.strip().lower()
    if kind == "sandbox":
        from cua.env import make_env

        env = make_env(spec, size=size)
        disp, x_env = display_of(env)
        if not disp:
            env.close()
            raise RecordingError(f"the {spec} env does not expose its X display; cannot record it")
        return RecordTarget(disp, x_env, A11yProbe(x_env or None, size), env)
    if kind == "browser":
        return _browser_target(arg.strip(), size)
    if kind == "desktop":
        disp = os.environ.get("DISPLAY")
        if not disp:
            raise RecordingError(
                "--env desktop records the current X display, but $DISPLAY is not set; "
                "set DISPLAY or use --env sandbox:APP"
            )
        return RecordTarget(disp, {}, A11yProbe(None), None)
    if kind in ("remote", "vm"):
        raise RecordingError(
            f"a {kind}: env is recorded on its guest, not through a local display: `cua record --env {spec}` "
            "does that (or RemoteEnv.start_recording / stop_recording / fetch_recording)"
        )
    raise RecordingError(f"unknown env {spec!r}; use sandbox:APP, browser:URL or desktop")
