"""Fast screen grabs for /screenshot: no perception, just pixels.

Order: the backend's own `screenshot()`, mss on the backend's X display, a Playwright page's
screenshot, and only then a full `observe()`.
"""

from __future__ import annotations

import io
import threading
from typing import Any

from PIL import Image

_grabbers: dict[tuple[int, str], Any] = {}
_lock = threading.Lock()


def _own_display(env: Any) -> str | None:
    for obj in (env, getattr(env, "sandbox", None)):
        d = getattr(obj, "display", None) if obj is not None else None
        if isinstance(d, str) and d.startswith(":"):
            return d
    if type(env).__name__ == "DesktopEnv":
        import os

        return os.environ.get("DISPLAY")
    return None


def _mss_grab(display: str) -> Image.Image:
    import mss

    key = (threading.get_ident(), display)
    with _lock:
        grab = _grabbers.get(key)
        if grab is None:
            grab = _grabbers[key] = mss.mss(display=display)
    shot = grab.grab(grab.monitors[0])
    return Image.frombytes("RGB", shot.size, shot.bgra, "raw", "BGRX")


def grab_image(env: Any) -> Image.Image:
    """The current screen of `env` as a PIL image, as cheaply as the backend allows."""
    shot = getattr(env, "screenshot", None)
    if callable(shot):
        img = shot()
        if isinstance(img, Image.Image):
            return img
    display = _own_display(env)
    if display:
        return _mss_grab(display)
    page = getattr(env, "page", None)
    if page is not None and callable(getattr(page, "screenshot", None)):
        img = Image.open(io.BytesIO(page.screenshot(type="png")))
        img.load()
        return img
    return env.observe().image()
