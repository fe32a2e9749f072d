"""X11 environments: `DesktopEnv` on an existing display, `SandboxEnv` on a private Xvfb desktop.

observe(): mss capture + AT-SPI snapshot, fused by cua.perception.pipeline.Perceiver when present.
act(): XTEST input (cua.env.xinput), then wait_settled (no fixed pauses).

Example:
    with SandboxEnv("mousepad") as env:
        obs = env.observe()
        env.act(parse_action('click(text="Search")'))
"""

from __future__ import annotations

import logging
import os
import statistics
import time
from collections import deque
from typing import Any

from cua.actions import Action
from cua.env.base import ActionResult, EnvBase, EnvError, resolve_point
from cua.env.settle import frame_digest, wait_settled
from cua.perception.elements import Observation, UIElement

SOURCES = ("a11y", "dom", "ocr", "vision")
log = logging.getLogger(__name__)


def parse_sources(sources: str | list[str]) -> list[str] | None:
    """'auto' -> None (backend default), else the validated list."""
    if isinstance(sources, str):
        if sources.strip().lower() in ("", "auto"):
            return None
        sources = [s.strip().lower() for s in sources.split(",") if s.strip()]
    bad = [s for s in sources if s not in SOURCES]
    if bad:
        raise EnvError(f"unknown perception source(s) {bad}; use a comma list of {', '.join(SOURCES)} or auto")
    return list(sources)


class DesktopEnv(EnvBase):
    """An existing X display (default $DISPLAY): observe and act with XTEST, read AT-SPI on its session bus."""

    name = "desktop"

    def __init__(self, display: str | None = None, sources: str = "auto", env_vars: dict[str, str] | None = None,
                 settle_timeout: float = 3.0, stable_for: float = 0.06, first_change: float = 0.25,
                 a11y_timeout: float = 2.0, size: tuple[int, int] | None = None) -> None:
        display = display or (env_vars or os.environ).get("DISPLAY")
        if not display:
            raise EnvError("--env desktop needs an X display but $DISPLAY is not set; set DISPLAY=:0 "
                           "(or whichever display) or use --env sandbox:APP for a private one")
        self.display = display
        self.env = dict(env_vars if env_vars is not None else os.environ)
        self.env["DISPLAY"] = display
        self.sources = parse_sources(sources)
        self.settle_timeout, self.stable_for, self.first_change = settle_timeout, stable_for, first_change
        self.a11y_timeout = a11y_timeout
        from cua.env.xinput import XInput

        self.x = XInput(display)
        self.size = self.x.size
        self._reader = None
        self._perceiver = None
        self._perceiver_missing = False
        self.last: Observation | None = None
        self._reactions: deque[float] = deque(maxlen=15)
        self.a11y_error: str | None = None

    # -- perception ---------------------------------------------------------------------------
    def _alive(self) -> None:
        self.x.ping()

    def reader(self):
        if self._reader is None:
            from cua.perception.a11y import A11yReader

            self._reader = A11yReader(self.env, screen=self.size)
        return self._reader

    def _want(self, source: str) -> bool:
        return self.sources is None or source in self.sources

    def _perceive(self, image, structured: list[UIElement], timings: dict[str, float]) -> list[UIElement]:
        if not self._perceiver_missing and (self.sources is None or set(self.sources) - {"a11y"}):
            if self._perceiver is None:
                try:
                    from cua.perception.pipeline import Perceiver
                except ImportError:
                    self._perceiver_missing = True
                else:
                    self._perceiver = Perceiver(",".join(self.sources) if self.sources else "auto")
            if self._perceiver is not None:
                t = time.monotonic()
                try:
                    elements, stage = self._perceiver.perceive(image, structured)
                except Exception as e:  # noqa: BLE001 - a broken OCR/vision stage must not take the env down
                    log.warning("perception failed (%s: %s); using the structured elements only", type(e).__name__, e)
                    timings["perceive_failed"] = 1.0
                else:
                    timings.update({k: float(v) for k, v in (stage or {}).items()})
                    timings["perceive"] = time.monotonic() - t
                    return elements
        return [e.model_copy(update={"id": f"e{i}"}) for i, e in enumerate(structured)]

    def observe(self) -> Observation:
        """Screenshot + elements (a11y, fused with OCR/vision when the pipeline is present)."""
        t0 = time.monotonic()
        self._alive()
        image = self.x.screenshot()
        timings = {"capture": time.monotonic() - t0}
        title, app, structured = "", "", []
        if self._want("a11y"):
            t = time.monotonic()
            snap = self.reader().snapshot(timeout=self.a11y_timeout)
            timings["a11y"] = time.monotonic() - t
            structured, title, app = snap.elements, snap.window_title, snap.app
            self.a11y_error = snap.error
            if snap.partial:
                timings["a11y_partial"] = 1.0
        if not title:
            title, app = self._x_active_window()
        elements = self._perceive(image, structured, timings)
        timings["total"] = time.monotonic() - t0
        self.last = Observation(screenshot=image, elements=elements, window_title=title, app=app,
                                size=image.size, timings=timings, env=self.spec())
        return self.last

    def state_elements(self) -> list[UIElement]:
        """Every showing accessible element, those of windows behind a modal dialog included: the app's
        state as a checker reads it (observe() leaves out what cannot be clicked)."""
        if not self._want("a11y"):
            return self.observe().elements
        self._alive()
        return self.reader().snapshot(timeout=self.a11y_timeout, keep_blocked=True).elements

    def _x_active_window(self) -> tuple[str, str]:
        """Title and WM_CLASS of _NET_ACTIVE_WINDOW (fallback when AT-SPI has no answer)."""
        def q():
            from Xlib import X
            from Xlib.error import BadDrawable, BadWindow

            d = self.x.d
            prop = d.screen().root.get_full_property(d.intern_atom("_NET_ACTIVE_WINDOW"), X.AnyPropertyType)
            if prop is None or not len(prop.value) or not prop.value[0]:
                return "", ""
            w = d.create_resource_object("window", int(prop.value[0]))
            try:
                name = w.get_full_property(d.intern_atom("_NET_WM_NAME"), d.intern_atom("UTF8_STRING"))
                title = name.value.decode(errors="replace") if name is not None else (w.get_wm_name() or "")
                cls = w.get_wm_class() or ("", "")
            except (BadWindow, BadDrawable):  # the active window vanished (a stale _NET_ACTIVE_WINDOW)
                return "", ""
            return str(title), str(cls[0])

        try:
            return self.x._x(q)
        except EnvError:
            raise
        except Exception:  # noqa: BLE001 - the window vanished while we asked
            return "", ""

    def spec(self) -> str:
        return "desktop"

    def element_at(self, x: float, y: float) -> UIElement | None:
        """The innermost accessible element under (x, y) right now (the recorder's probe)."""
        return self.reader().element_at(x, y)

    def focused_element(self) -> UIElement | None:
        return self.reader().focused()

    # -- actions ------------------------------------------------------------------------------
    def _grab(self) -> int:
        return frame_digest(self.x.grab_raw().raw)

    def act(self, action: Action) -> ActionResult:
        """Execute one action with XTEST, then wait until the screen settles (bounded)."""
        t0 = time.monotonic()
        self._alive()
        kind = action.kind
        if kind in ("goto", "back"):
            return ActionResult(action=action.to_json(), ok=False,
                                error=f"'{kind}' needs a browser; this is an X11 desktop (use --env browser:URL)")
        if kind in ("done", "fail"):
            return ActionResult(action=action.to_json(), ok=True, timings={"total": 0.0})
        if kind == "wait":
            return self._wait(action, t0)
        needs_obs = getattr(action, "element_id", None) is not None or getattr(action, "target", None) is not None \
            or getattr(action, "to_element_id", None) is not None or getattr(action, "to_target", None) is not None
        if needs_obs and self.last is None:
            self.observe()
        try:
            point = resolve_point(action, self.last, self.size) if hasattr(action, "element_id") else None
            end = resolve_point(action, self.last, self.size, end=True) if kind == "drag" else None
        except EnvError as e:
            return ActionResult(action=action.to_json(), ok=False, error=str(e))
        before = self._grab()
        t1 = time.monotonic()
        self._execute(action, point, end)
        t2 = time.monotonic()
        trace: dict[str, float] = {}
        s = wait_settled(self._grab, timeout=self.settle_timeout, stable_for=self._stable_for(action),
                         before=before, first_change=self._first_change(action), trace=trace)
        t3 = time.monotonic()
        if "reaction" in trace:
            self._reactions.append(trace["reaction"] + (t2 - t1))
        done = action.to_json()
        if point is not None:
            done.update({"x": point[0], "y": point[1]})
        if end is not None:
            done.update({"to_x": end[0], "to_y": end[1]})
        return ActionResult(action=done, ok=True, point=point, changed=s.changed, settled=s.settled,
                            timings={"act": t2 - t1, "settle": t3 - t2, "total": t3 - t0})

    def _first_change(self, action: Any) -> float:
        """How long to wait for a first reaction: 3x the app's recent median reaction, within [floor, 1.5 s].

        A loaded machine or a slow app gets more time; an idle one keeps the short floor. Typing almost
        always redraws something but may first load fonts (emoji, CJK), so it gets a longer floor.
        """
        floor = {"type": 1.0, "key": 0.4, "hotkey": 0.4}.get(action.kind, self.first_change)
        if not self._reactions:  # no history yet: first menus/dialogs are built lazily, give them time
            return max(floor, 0.6)
        return min(1.5, max(floor, 3 * statistics.median(self._reactions)))

    def _stable_for(self, action: Any) -> float:
        """Long typed text keeps an app busy: require a longer quiet window (up to 0.3 s)."""
        extra = 0.0004 * len(action.text) if action.kind == "type" else 0.0
        return min(0.3, self.stable_for + extra)

    def _execute(self, action: Any, point: tuple[int, int] | None, end: tuple[int, int] | None) -> None:
        x, kind = self.x, action.kind
        if kind in ("click", "double_click", "right_click"):
            button = "right" if kind == "right_click" else getattr(action, "button", "left")
            x.click(*point, button=button, count=2 if kind == "double_click" else getattr(action, "clicks", 1))
        elif kind == "move":
            x.move(*point)
        elif kind in ("mouse_down", "mouse_up"):
            if point is not None:
                x.move(*point)
            x.button({"left": 1, "middle": 2, "right": 3}[action.button], kind == "mouse_down")
        elif kind == "scroll":
            if point is not None:
                x.move(*point)
            x.scroll(action.dx, action.dy)
        elif kind == "drag":
            x.drag(point, end)
        elif kind == "type":
            x.type_text(action.text)
        elif kind == "key":
            x.hotkey([action.key])
        elif kind == "hotkey":
            x.hotkey(list(action.keys))
        else:  # pragma: no cover - every kind is handled above
            raise EnvError(f"action kind {kind!r} is not supported by the X11 env")

    def _wait(self, action: Any, t0: float) -> ActionResult:
        """`wait` = wait up to `seconds` for the screen to settle (returns early once stable; cancellable)."""
        def grab() -> int:
            self.x.check_cancel("the wait")
            return self._grab()

        before = grab()
        s = wait_settled(grab, timeout=max(action.seconds, 0.0), stable_for=max(action.seconds, 0.0),
                         before=before)
        return ActionResult(action=action.to_json(), ok=True, changed=s.changed, settled=s.settled,
                            timings={"settle": s.elapsed, "total": time.monotonic() - t0})

    # -- cancel (POST /cancel on the guest) -----------------------------------------------------
    def cancel(self) -> None:
        """Stop the action in progress between two of its steps (typing, drag, scroll, wait); from any thread."""
        if self.x is not None:
            self.x.cancel()

    def clear_cancel(self) -> None:
        """Re-arm after a cancel: the caller's next action runs in full."""
        if self.x is not None:
            self.x.clear_cancel()

    # -- life cycle ---------------------------------------------------------------------------
    def reset(self) -> Observation:
        self.last = None
        return self.observe()

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        x, self.x = getattr(self, "x", None), None
        if x is not None:
            x.close()


class SandboxEnv(DesktopEnv):
    """`sandbox:APP`: a private Xvfb desktop running APP on a fresh HOME (cua.env.sandbox.Sandbox)."""

    name = "sandbox"

    def __init__(self, app_cmd: str | list[str], size: tuple[int, int] = (1280, 800), sources: str = "auto",
                 timeout: float | None = None, pass_env: tuple[str, ...] = (), **options: Any) -> None:
        from cua.env.sandbox import Sandbox

        parse_sources(sources)
        self.app_cmd = app_cmd
        self.sandbox = Sandbox(app_cmd, size=tuple(size), timeout=timeout, pass_env=pass_env)
        try:
            super().__init__(display=self.sandbox.display, sources=sources, env_vars=self.sandbox.env, **options)
        except BaseException:
            self.sandbox.close()
            raise

    def _alive(self) -> None:
        if not self.sandbox.alive():
            raise EnvError(f"the sandbox display {self.sandbox.display} died (Xvfb exited); close this env "
                           "and start a new one")
        super()._alive()

    def spec(self) -> str:
        cmd = self.app_cmd if isinstance(self.app_cmd, str) else " ".join(self.app_cmd)
        return f"sandbox:{cmd}"

    def observe(self) -> Observation:
        """As on a desktop, with the sandbox's random directory shown under one stable name."""
        self.last = stable_paths(super().observe(), self.sandbox.root)
        return self.last

    def state_elements(self) -> list[UIElement]:
        return stable_paths(Observation(elements=super().state_elements()), self.sandbox.root).elements

    def reset(self) -> Observation:
        """Restart the app clean (fresh HOME) and observe it."""
        self.sandbox.reset()
        self.last = None
        if self._perceiver is not None:
            self._perceiver = None
        return self.observe()

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.sandbox.close()


def stable_paths(obs: Observation, root: str) -> Observation:
    """The sandbox's random directory ("/tmp/cua-sandbox-5moh8z6v", its HOME's parent) named
    "/tmp/cua-sandbox" wherever the app shows it (a file dialog's places, a saved file's window title), so
    a state or skill that shows it ("File › Save As › /tmp/cua-sandbox/home") is the same in every sandbox
    and a rerun's stored graph still leads there."""
    stable = os.path.join(os.path.dirname(root), "cua-sandbox")
    elements, changed = [], root in obs.window_title
    for e in obs.elements:
        text = e.model_dump_json()
        if root in text:
            e, changed = UIElement.model_validate_json(text.replace(root, stable)), True
        elements.append(e)
    if not changed:
        return obs
    return obs.model_copy(update={"elements": elements, "window_title": obs.window_title.replace(root, stable)})
