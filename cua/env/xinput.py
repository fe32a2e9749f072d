"""Mouse and keyboard input on one X display through the XTEST extension (python-xlib), plus capture.

Direct XTEST keeps several displays apart (pyautogui binds to $DISPLAY at import) and is fast.
Any unicode character can be typed: characters missing from the keymap are bound to spare keycodes
(kept bound, rotated only when the spares run out, so an app never sees a keycode change under a
key event it has not read yet).

Long actions (typing, drags, scrolls) check a cancel flag between small steps: `cancel()` from any thread
stops them there (a held button is released first) with `ActionCancelled`; `clear_cancel()` re-arms.

Example:
    x = XInput(":1"); x.click(100, 200); x.type_text("héllo ✓"); x.hotkey(["ctrl", "s"])
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TypeVar

from cua.env.base import ActionCancelled, EnvError

T = TypeVar("T")
KEYSYM_NAMES = {
    "enter": "Return", "esc": "Escape", "tab": "Tab", "backspace": "BackSpace", "delete": "Delete",
    "insert": "Insert", "space": "space", "home": "Home", "end": "End", "pageup": "Prior", "pagedown": "Next",
    "up": "Up", "down": "Down", "left": "Left", "right": "Right", "capslock": "Caps_Lock", "menu": "Menu",
    "printscreen": "Print", "ctrl": "Control_L", "alt": "Alt_L", "shift": "Shift_L", "super": "Super_L",
    **{f"f{i}": f"F{i}" for i in range(1, 13)},
}
CHAR_KEYS = {"\n": "enter", "\r": "enter", "\t": "tab"}
BUTTONS = {"left": 1, "middle": 2, "right": 3}
TYPE_STEP = 16  # keys sent (and synced) between two cancel checks
__all__ = ["ActionCancelled", "XInput"]


def char_keysym(ch: str) -> int:
    """X keysym of one character (Latin-1 keysyms equal the code point; others are 0x01000000 + cp)."""
    cp = ord(ch)
    if 0x20 <= cp <= 0x7E or 0xA0 <= cp <= 0xFF:
        return cp
    return 0x01000000 + cp


class XInput:
    """XTEST input and mss capture for one display; every call raises EnvError if the display is gone."""

    def __init__(self, display: str) -> None:
        from Xlib import display as xdisplay
        from Xlib.error import DisplayError

        self.name = display
        try:
            self.d = xdisplay.Display(display)
        except (DisplayError, OSError) as e:
            raise EnvError(f"cannot open X display {display!r} ({e}); is the X server running? "
                           "Use --env sandbox:APP to start one") from None
        if not self.d.has_extension("XTEST"):
            raise EnvError(f"X display {display} has no XTEST extension; start Xvfb/Xorg with XTEST enabled")
        self.lock = threading.RLock()
        self._tls = threading.local()
        self._cancel = threading.Event()
        lo, hi = self.d.display.info.min_keycode, self.d.display.info.max_keycode
        mapping = self.d.get_keyboard_mapping(lo, hi - lo + 1)
        self._spare = [lo + i for i, syms in enumerate(mapping) if not any(syms)]
        self._bound: OrderedDict[int, int] = OrderedDict()  # keysym -> spare keycode
        geo = self.d.screen().root.get_geometry()
        self.size = (int(geo.width), int(geo.height))

    # -- plumbing -----------------------------------------------------------------------------
    def _x(self, fn: Callable[[], T]) -> T:
        from Xlib.error import ConnectionClosedError, XError

        with self.lock:
            try:
                return fn()
            except (ConnectionClosedError, XError, OSError, BrokenPipeError) as e:
                raise EnvError(f"X display {self.name} is gone or refused the request ({type(e).__name__}: {e}); "
                               "restart the environment") from None

    def _fake(self, event: int, detail: int = 0, x: int | None = None, y: int | None = None) -> None:
        from Xlib.ext import xtest

        if x is None:
            xtest.fake_input(self.d, event, detail)
        else:
            xtest.fake_input(self.d, event, x=int(x), y=int(y))

    def sync(self) -> None:
        self._x(self.d.sync)

    # -- cancel -------------------------------------------------------------------------------
    def cancel(self) -> None:
        """Stop the long action in progress at its next step (thread-safe; stays set until clear_cancel)."""
        self._cancel.set()

    def clear_cancel(self) -> None:
        self._cancel.clear()

    def check_cancel(self, what: str = "the action") -> None:
        """Raise ActionCancelled if cancel() was called."""
        if self._cancel.is_set():
            raise ActionCancelled(f"{what} was cancelled part-way; observe before acting again")

    def ping(self) -> None:
        """One round trip: raises EnvError when the display died."""
        self._x(lambda: self.d.get_input_focus())

    # -- capture ------------------------------------------------------------------------------
    def _mss(self):
        sct = getattr(self._tls, "sct", None)
        if sct is None:
            import mss

            try:
                sct = mss.MSS(display=self.name)
            except Exception as e:  # noqa: BLE001 - mss raises ScreenShotError and friends
                raise EnvError(f"cannot capture X display {self.name}: {e}") from None
            self._tls.sct = sct
        return sct

    def grab_raw(self):
        """One frame as mss's ScreenShot (BGRA bytes in .bgra / .raw, .size)."""
        sct = self._mss()
        try:
            return sct.grab(sct.monitors[0])
        except Exception as e:  # noqa: BLE001
            self._tls.sct = None
            raise EnvError(f"screen capture on X display {self.name} failed ({e}); is the display still up?") from None

    def screenshot(self):
        from PIL import Image

        shot = self.grab_raw()
        return Image.frombuffer("RGB", shot.size, shot.raw, "raw", "BGRX", 0, 1)  # decodes: no shared buffer

    def close(self) -> None:
        sct = getattr(self._tls, "sct", None)
        if sct is not None:
            with contextlib.suppress(Exception):
                sct.close()
            self._tls.sct = None
        with contextlib.suppress(Exception):
            self.d.close()

    # -- pointer ------------------------------------------------------------------------------
    def move(self, x: int, y: int) -> None:
        from Xlib import X

        self._x(lambda: (self._fake(X.MotionNotify, x=x, y=y), self.d.sync()))

    def button(self, button: int, down: bool | None = None, count: int = 1) -> None:
        """Press (down=True), release (False) or click (None) `button` `count` times."""
        from Xlib import X

        def go():
            for _ in range(count):
                if down in (True, None):
                    self._fake(X.ButtonPress, button)
                if down in (False, None):
                    self._fake(X.ButtonRelease, button)
            self.d.sync()

        self._x(go)

    def click(self, x: int, y: int, button: str = "left", count: int = 1) -> None:
        self.move(x, y)
        self.button(BUTTONS[button], None, count)

    def scroll(self, dx: int, dy: int) -> None:
        """Scroll by notches, one click of the wheel button per step (cancellable between notches)."""
        for amount, (pos, neg) in ((dy, (5, 4)), (dx, (7, 6))):
            for _ in range(abs(amount)):
                self.check_cancel("the scroll")
                self.button(pos if amount > 0 else neg, None, 1)

    def drag(self, start: tuple[int, int], end: tuple[int, int], button: str = "left", steps: int = 8) -> None:
        """Press at start, move in `steps`, release at end; a cancel between steps releases the button."""
        self.check_cancel("the drag")
        self.move(*start)
        self.button(BUTTONS[button], True)
        try:
            for i in range(1, steps + 1):
                self.check_cancel("the drag")
                self.move(round(start[0] + (end[0] - start[0]) * i / steps),
                          round(start[1] + (end[1] - start[1]) * i / steps))
        finally:  # never leave the button held, cancelled or not
            self.button(BUTTONS[button], False)

    def pointer(self) -> tuple[int, int]:
        q = self._x(lambda: self.d.screen().root.query_pointer())
        return int(q.root_x), int(q.root_y)

    # -- keyboard -----------------------------------------------------------------------------
    def _keycode(self, keysym: int) -> tuple[int, bool]:
        """(keycode, needs_shift) for a keysym, binding a spare keycode when the keymap lacks it."""
        if keysym in self._bound:
            self._bound.move_to_end(keysym)
            return self._bound[keysym], False
        for code, index in self.d.keysym_to_keycodes(keysym):
            if index in (0, 1):
                return code, index == 1
        if not self._spare and not self._bound:
            raise EnvError(f"no spare keycode on {self.name} to type keysym {keysym:#x}")
        if self._spare:
            code = self._spare.pop()
        else:
            _, code = self._bound.popitem(last=False)
        self.d.change_keyboard_mapping(code, [(keysym, keysym)])
        self.d.sync()
        self._bound[keysym] = code
        return code, False

    def _keysym_of(self, key: str) -> tuple[int, bool]:
        from Xlib import XK

        if key in KEYSYM_NAMES:
            sym = XK.string_to_keysym(KEYSYM_NAMES[key])
            return sym, False
        if len(key) == 1:
            return char_keysym(key), False
        raise EnvError(f"unknown key {key!r}: use a single character or a canonical name ({', '.join(KEYSYM_NAMES)})")

    def _press(self, key: str, down: bool) -> None:
        from Xlib import X

        sym, _ = self._keysym_of(key)
        code, shift = self._keycode(sym)
        shift_code = self.d.keysym_to_keycode(XK_SHIFT()) if shift else 0
        if down:
            if shift:
                self._fake(X.KeyPress, shift_code)
            self._fake(X.KeyPress, code)
        else:
            self._fake(X.KeyRelease, code)
            if shift:
                self._fake(X.KeyRelease, shift_code)

    def hotkey(self, keys: list[str]) -> None:
        """Press keys in order, release in reverse (a single key is a plain key press)."""
        def go():
            for k in keys:
                self._press(k, True)
            for k in reversed(keys):
                self._press(k, False)
            self.d.sync()

        self._x(go)

    def type_text(self, text: str, chunk: int = TYPE_STEP) -> None:
        """Type any unicode text; newlines and tabs become Enter and Tab. Each chunk of keys is synced
        before the cancel check, so a cancel stops the typing within one chunk of what the server took."""
        def go(part: str) -> None:
            for ch in part:
                key = CHAR_KEYS.get(ch, ch)
                self._press(key, True)
                self._press(key, False)
            self.d.sync()

        for i in range(0, len(text), chunk):
            self.check_cancel("the typing")
            self._x(lambda part=text[i:i + chunk]: go(part))


def XK_SHIFT() -> int:
    from Xlib import XK

    return XK.string_to_keysym("Shift_L")
