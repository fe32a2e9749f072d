"""Browser environment: Playwright's sync API driving the distribution's Chromium.

Threading: Playwright's sync API is bound to the thread that created it. Build, use and close a
BrowserEnv on one thread; calls from another thread raise EnvError instead of deadlocking.
Never runs `playwright install`: the browser is /usr/bin/chromium, `CUA_CHROMIUM` or `chromium`
on PATH.
"""

from __future__ import annotations

import contextlib
import io
import os
import threading
import time
import uuid
from typing import Any

from PIL import Image

from cua.actions import Action
from cua.env.base import ActionCancelled, ActionResult, EnvBase, EnvError, resolve_point
from cua.env.chromium import CHROMIUM_ARGS, acquire_driver, chromium_pids, find_chromium, release_driver
from cua.env.settle import wait_settled
from cua.env.xauth import browser_env
from cua.perception.elements import Observation, UIElement

# Canonical key names (cua.actions.normalize_key) -> Playwright key names.
PW_KEYS = {
    "enter": "Enter", "esc": "Escape", "tab": "Tab", "backspace": "Backspace", "delete": "Delete",
    "insert": "Insert", "space": " ", "home": "Home", "end": "End", "pageup": "PageUp",
    "pagedown": "PageDown", "up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft",
    "right": "ArrowRight", "capslock": "CapsLock", "menu": "ContextMenu", "printscreen": "PrintScreen",
    "ctrl": "Control", "alt": "Alt", "shift": "Shift", "super": "Meta",
    **{f"f{i}": f"F{i}" for i in range(1, 13)},
}
SCROLL_NOTCH_PX = 100
TYPE_STEP = 16  # keys typed between two cancel checks
DRAG_STEPS = 12  # pointer moves of a drag, a cancel check before each
PENDING_REQUEST_S = 1.5  # a request younger than this keeps the page unsettled (older: long-poll, ignored)
URL_SCHEMES = {"http", "https", "file", "about", "data"}
# Cheap "has anything changed" probe: mutation/input/scroll counter installed by _INIT_JS, URL,
# ready state, scroll offsets, focus, finite running animations and young fetch/XHR requests.
_PROBE_JS = """() => {
  let anims = 0;
  try { anims = document.getAnimations().filter(a => a.playState === 'running' &&
        a.effect && a.effect.getComputedTiming().endTime !== Infinity).length; } catch (e) {}
  const a = document.activeElement;
  const now = performance.now();
  const busy = window.__cuaReq ? [...window.__cuaReq.values()].some(t => now - t < PENDING_MS) : false;
  return [window.__cuaMut || 0, location.href, document.readyState, scrollX, scrollY, anims,
          a ? a.tagName + '#' + a.id : '', document.getElementsByTagName('*').length, busy ? now : ''].join('|');
}""".replace("PENDING_MS", str(int(PENDING_REQUEST_S * 1000)))
_INIT_JS = """(() => {
  if (window.__cuaMut !== undefined) return;
  window.__cuaMut = 0;
  const bump = () => { window.__cuaMut++; };
  try { new MutationObserver(bump).observe(document, {subtree: true, childList: true,
        attributes: true, characterData: true}); } catch (e) {}
  for (const t of ['input', 'change', 'scroll']) addEventListener(t, bump, true);
  // fetch/XHR the page starts are counted here, synchronously, so the first probe after a click sees them
  const req = window.__cuaReq = new Map();
  let seq = 0;
  const start = () => { const id = ++seq; req.set(id, performance.now()); return () => req.delete(id); };
  const fetch0 = window.fetch;
  if (fetch0) window.fetch = function (...args) {
    const done = start();
    const p = fetch0.apply(this, args);
    p.then(done, done);
    return p;
  };
  const send0 = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    this.addEventListener('loadend', start());
    return send0.apply(this, args);
  };
})();"""

def _check_sources(sources: str) -> None:
    """Reject unknown perception sources before Chromium starts (the pipeline's own parser when present)."""
    try:
        from cua.perception.pipeline import parse_sources
    except ImportError:
        return
    try:
        parse_sources(sources)
    except ValueError as e:
        raise EnvError(str(e)) from None


class BrowserEnv(EnvBase):
    """A headless Chromium page at `size` (CSS px = screenshot px) that agents observe and act on.

    Example: `with BrowserEnv("http://127.0.0.1:8000/") as env: env.act(parse_action('click(text="OK")'))`
    """

    name = "browser"

    def __init__(self, url: str = "about:blank", size: tuple[int, int] = (1280, 800), headless: bool = True,
                 sources: str = "auto", chromium: str | None = None, load_timeout: float = 15.0,
                 settle_timeout: float = 2.0, stable_for: float = 0.08, pass_env: tuple[str, ...] = (),
                 **unknown: Any) -> None:
        if unknown:
            raise EnvError(f"BrowserEnv got unknown option(s) {sorted(unknown)}; it takes url, size, headless, "
                           "sources, chromium, load_timeout, settle_timeout, stable_for, pass_env")
        self.url = url or "about:blank"
        if self.url.split(":", 1)[0].lower() not in URL_SCHEMES or ":" not in self.url:
            raise EnvError(f"browser URL {self.url!r} needs a scheme: http://, https://, file://, about: or data:, "
                           f"e.g. browser:http://{self.url}")
        self.size = (int(size[0]), int(size[1]))
        if not (100 <= self.size[0] <= 7680 and 100 <= self.size[1] <= 4320):
            raise EnvError(f"browser size {self.size} is out of range: width 100..7680, height 100..4320")
        self.sources = sources or "auto"
        self.load_timeout = float(load_timeout)
        self.settle_timeout = float(settle_timeout)
        self.stable_for = float(stable_for)
        self.tag = uuid.uuid4().hex[:12]  # marks our chromium processes (for the leftover sweep)
        self.last_obs: Observation | None = None
        self.last_dom_partial = False
        self._thread = threading.get_ident()
        self._cancel = threading.Event()  # set by cancel() from any thread; long actions check it
        self._perceiver: Any = None
        self._pw = self._browser = self._context = self.page = None
        _check_sources(self.sources)
        executable = find_chromium(chromium)
        try:
            self._pw = acquire_driver()
            self._launch = lambda: self._pw.chromium.launch(
                executable_path=executable, headless=headless,
                args=[*CHROMIUM_ARGS, f"--cua-env-tag={self.tag}"], timeout=60_000,
                env=browser_env(pass_env),  # the sandbox's allow-list: no API keys or tokens in the browser
            )
            self._browser = self._launch()
            self._new_context()
            if self.url != "about:blank":
                self._goto(self.url)
        except EnvError:
            self.close()
            raise
        except Exception as e:  # noqa: BLE001 - any launch failure becomes one clear error
            self.close()
            raise EnvError(f"could not start Chromium ({executable}): {e}. "
                           "Check `chromium --version` works, or set CUA_CHROMIUM") from None

    # ---- lifecycle -------------------------------------------------------------------------
    def _check_thread(self, alive: bool = True) -> None:
        if threading.get_ident() != self._thread:
            raise EnvError("BrowserEnv was used from another thread; Playwright's sync API is bound to "
                           "the thread that created it: create, use and close the env on one thread")
        if self.page is None:
            raise EnvError("this BrowserEnv is closed; create a new one")
        if alive and not self._browser.is_connected():
            raise EnvError("Chromium has exited (crashed or was killed); reset() starts a new one")

    def _new_context(self) -> None:
        if self._context is not None:
            self._context.close()
        self._context = self._browser.new_context(
            viewport={"width": self.size[0], "height": self.size[1]}, device_scale_factor=1)
        self._context.add_init_script(_INIT_JS)
        self._context.on("page", self._adopt_page)  # a popup / target=_blank tab becomes the page we see
        self._inflight: dict[Any, float] = {}  # request -> start; the page is unsettled while a young one loads
        self._context.on("request", self._request_started)
        self._context.on("requestfinished", self._request_ended)
        self._context.on("requestfailed", self._request_ended)
        self.page = self._context.new_page()
        self.page.set_default_timeout(self.load_timeout * 1000)

    def _request_started(self, request: Any) -> None:
        if request.resource_type not in ("websocket", "eventsource", "media", "ping"):
            self._inflight[request] = time.monotonic()

    def _request_ended(self, request: Any) -> None:
        self._inflight.pop(request, None)

    def _adopt_page(self, page: Any) -> None:
        page.set_default_timeout(self.load_timeout * 1000)
        page.on("close", self._page_closed)
        self.page = page

    def _page_closed(self, page: Any) -> None:
        if page is self.page and self._context is not None:
            open_pages = [p for p in self._context.pages if not p.is_closed()]
            if open_pages:
                self.page = open_pages[-1]

    def reset(self) -> Observation:
        """A fresh browser context (no cookies, storage or history) at the start URL; restarts a dead Chromium."""
        self._check_thread(alive=False)
        if not self._browser.is_connected():
            self._context = None
            self._browser = self._launch()
        self._new_context()
        self._perceiver = None
        if self.url != "about:blank":
            self._goto(self.url)
        return self.observe()

    def close(self) -> None:
        """Close the context, the browser and the Playwright driver; sweep any chromium we started."""
        same_thread = threading.get_ident() == self._thread  # else Playwright calls would hang: just sweep
        for obj in (self._context, self._browser) if same_thread else ():
            if obj is not None:
                with contextlib.suppress(Exception):  # best effort; the sweep below ends what is left
                    obj.close()
        if self._pw is not None and same_thread:
            release_driver()
        self._pw = self._browser = self._context = self.page = None
        for pid in reversed(chromium_pids(self.tag)):
            try:
                os.kill(pid, 9)
            except OSError:
                pass

    # ---- page access for checkers ----------------------------------------------------------
    def evaluate(self, js: str, arg: Any = None) -> Any:
        """Evaluate a JS expression or function in the page (eval checkers, MiniWoB reward)."""
        self._check_thread()
        return self.page.evaluate(js, arg) if arg is not None else self.page.evaluate(js)

    def _goto(self, url: str) -> None:
        try:
            self.page.goto(url, wait_until="domcontentloaded", timeout=self.load_timeout * 1000)
        except Exception as e:  # noqa: BLE001
            msg = str(e).splitlines()[0]
            if "Timeout" in type(e).__name__ or "Timeout" in msg:
                raise EnvError(f"page {url} did not load within {self.load_timeout:g} s; check the server "
                               "answers (curl it) or raise load_timeout") from None
            raise EnvError(f"could not open {url}: {msg}; check the URL and that its server is running") from None
        with contextlib.suppress(Exception):  # slow subresources: the document itself is there
            self.page.wait_for_load_state("load", timeout=min(5.0, self.load_timeout) * 1000)

    # ---- observe ---------------------------------------------------------------------------
    def _screenshot(self) -> bytes:
        """A PNG of the viewport. Chromium sometimes answers "Unable to capture screenshot" while a
        page has not painted its first frame (seen under load, on about:blank): that is retried."""
        for attempt in range(3):
            try:
                return self.page.screenshot(type="png", timeout=self.load_timeout * 1000)
            except Exception as e:  # noqa: BLE001
                self._check_thread()  # a dead Chromium gets its own message
                msg = str(e).splitlines()[0]
                if "Unable to capture screenshot" not in msg or attempt == 2:
                    raise EnvError(f"screenshot of {self.page.url} failed: {msg}") from None
                time.sleep(0.25 * (attempt + 1))
        raise AssertionError("unreachable")

    def _source_set(self) -> set[str]:
        s = {p.strip().lower() for p in self.sources.split(",") if p.strip()}
        return {"dom", "ocr", "vision"} if not s or "auto" in s else s

    def observe(self) -> Observation:
        """Viewport screenshot + DOM elements (+ OCR/vision via the perception pipeline when present)."""
        self._check_thread()
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        png = self._screenshot()
        image = Image.open(io.BytesIO(png)).convert("RGB")
        timings["screenshot"] = time.perf_counter() - t0
        structured: list[UIElement] = []
        if "dom" in self._source_set():
            from cua.perception.dom import collect_dom

            t1 = time.perf_counter()
            try:
                res = collect_dom(self.page)
                structured, self.last_dom_partial = res.elements, res.partial
            except Exception as e:  # noqa: BLE001 - e.g. a navigation destroyed the context mid-walk
                if "destroyed" not in str(e) and "navigat" not in str(e):
                    raise EnvError(f"DOM collection on {self.page.url} failed: {str(e).splitlines()[0]}") from None
                self.last_dom_partial = True
            timings["dom"] = time.perf_counter() - t1
        elements = self._perceive(image, structured, timings)
        try:
            title = self.page.title()
        except Exception:  # noqa: BLE001
            title = ""
        timings["total"] = time.perf_counter() - t0
        self.last_obs = Observation(
            screenshot=image, elements=elements, window_title=title, app="chromium", url=self.page.url,
            size=image.size, timings=timings, env=f"browser:{self.url}",
        )
        return self.last_obs

    def _perceive(self, image: Image.Image, structured: list[UIElement], timings: dict[str, float]) -> list[UIElement]:
        if self._perceiver is None:
            try:
                from cua.perception.pipeline import Perceiver
            except ImportError:
                self._perceiver = False
            else:
                self._perceiver = Perceiver(self.sources)
        if self._perceiver:
            elements, t = self._perceiver.perceive(image, structured)
            timings.update({k: v for k, v in t.items() if k not in timings})
            return elements
        ordered = sorted(structured, key=lambda e: (e.bbox[1] // 8, e.bbox[0]))
        return [e.model_copy(update={"id": f"e{i}"}) for i, e in enumerate(ordered)]

    # ---- act -------------------------------------------------------------------------------
    def _probe(self) -> bytes:
        try:
            state = self.page.evaluate(_PROBE_JS)
        except Exception:  # noqa: BLE001 - mid-navigation: report "still changing"
            return f"navigating|{time.monotonic()}".encode()
        now = time.monotonic()
        if any(now - t < PENDING_REQUEST_S for t in self._inflight.values()):
            return f"{state}|loading|{now}".encode()  # differs every time: not settled yet
        return str(state).encode()

    def act(self, action: Action) -> ActionResult:
        """Run one action through page.mouse / page.keyboard / navigation, then wait until the page settles."""
        self._check_thread()
        t0 = time.perf_counter()
        data = action.to_json()
        if action.kind in ("done", "fail"):  # nothing runs on the page
            return ActionResult(action=data, ok=True, changed=False, timings={"total": time.perf_counter() - t0})
        before = self._probe()
        try:
            point = self._execute(action)
        except EnvError as e:
            return ActionResult(action=data, ok=False, error=str(e), timings={"total": time.perf_counter() - t0})
        except Exception as e:  # noqa: BLE001 - Playwright errors become a failed result, not a crash
            return ActionResult(action=data, ok=False, error=f"{action.kind} failed: {str(e).splitlines()[0]}",
                                timings={"total": time.perf_counter() - t0})
        t1 = time.perf_counter()
        with contextlib.suppress(Exception):  # the settle wait below still bounds us
            self.page.wait_for_load_state("domcontentloaded", timeout=self.load_timeout * 1000)
        settled, changed, _ = wait_settled(self._probe, timeout=self.settle_timeout, stable_for=self.stable_for,
                                           before=before)
        t2 = time.perf_counter()
        return ActionResult(action=data, ok=True, point=point, changed=changed, settled=settled,
                            timings={"act": t1 - t0, "settle": t2 - t1, "total": t2 - t0})

    def _point(self, action: Any, end: bool = False) -> tuple[int, int] | None:
        return resolve_point(action, self.last_obs, self.size, end=end)

    def _execute(self, action: Any) -> tuple[int, int] | None:
        kind, mouse, kb = action.kind, self.page.mouse, self.page.keyboard
        if kind in ("click", "double_click", "right_click", "move"):
            x, y = self._point(action)
            if kind == "move":
                mouse.move(x, y)
            else:
                button = "right" if kind == "right_click" else getattr(action, "button", "left")
                mouse.click(x, y, button=button, click_count=2 if kind == "double_click" else 1)
            return x, y
        if kind in ("mouse_down", "mouse_up"):
            p = self._point(action)
            if p is not None:
                mouse.move(*p)
            (mouse.down if kind == "mouse_down" else mouse.up)(button=action.button)
            return p
        if kind == "drag":
            start, end = self._point(action), self._point(action, end=True)
            mouse.move(*start)
            mouse.down()
            try:  # step by step so a cancel stops it; the button is released whatever happens
                for i in range(1, DRAG_STEPS + 1):
                    self._check_cancel("the drag")
                    mouse.move(start[0] + (end[0] - start[0]) * i / DRAG_STEPS,
                               start[1] + (end[1] - start[1]) * i / DRAG_STEPS)
            finally:
                mouse.up()
            return start
        if kind == "scroll":
            p = self._point(action)
            if p is not None:
                mouse.move(*p)
            sx, sy = (action.dx > 0) - (action.dx < 0), (action.dy > 0) - (action.dy < 0)
            for i in range(max(abs(action.dx), abs(action.dy))):  # notch by notch: cancellable between them
                self._check_cancel("the scroll")
                mouse.wheel(SCROLL_NOTCH_PX * sx * (i < abs(action.dx)), SCROLL_NOTCH_PX * sy * (i < abs(action.dy)))
            return p
        if kind == "type":
            if len(action.text) <= 500:  # real key events, as a user's typing, cancellable between chunks
                for i in range(0, len(action.text), TYPE_STEP):
                    self._check_cancel("the typing")
                    kb.type(action.text[i:i + TYPE_STEP])
            else:
                self._type_lines(action.text)  # long text: insert per line, Enter between lines
            return None
        if kind == "key":
            kb.press(PW_KEYS.get(action.key, action.key))
            return None
        if kind == "hotkey":
            keys = [PW_KEYS.get(k, k) for k in action.keys]
            for k in keys:
                kb.down(k)
            for k in reversed(keys):
                kb.up(k)
            return None
        if kind == "goto":
            self._goto(action.url)
            return None
        if kind == "back":
            if self.page.go_back(wait_until="domcontentloaded", timeout=self.load_timeout * 1000) is None:
                raise EnvError("back: there is no previous page in this tab's history")
            return None
        if kind == "wait":
            end = time.monotonic() + action.seconds  # the agent asked for this pause; cancellable
            while (left := end - time.monotonic()) > 0:
                self._check_cancel("the wait")
                self.page.wait_for_timeout(min(left, 0.1) * 1000)
            return None
        if kind in ("done", "fail"):
            return None
        raise EnvError(f"the browser env cannot run {kind!r} actions")

    # -- cancel (POST /cancel on the guest) -----------------------------------------------------
    def cancel(self) -> None:
        """Stop the action in progress between two of its steps (typing, drag, scroll, wait); from any thread."""
        self._cancel.set()

    def clear_cancel(self) -> None:
        """Re-arm after a cancel: the caller's next action runs in full."""
        self._cancel.clear()

    def _check_cancel(self, what: str) -> None:
        if self._cancel.is_set():
            raise ActionCancelled(f"{what} was cancelled part-way; observe before acting again")

    def _type_lines(self, text: str) -> None:
        lines = text.split("\n")
        for i, line in enumerate(lines):
            self._check_cancel("the typing")
            if line:
                self.page.keyboard.insert_text(line)
            if i < len(lines) - 1:
                self.page.keyboard.press("Enter")


__all__ = ["CHROMIUM_ARGS", "PW_KEYS", "BrowserEnv", "chromium_pids", "find_chromium"]
