"""Raw input events -> semantic actions (the agent's own Action models).

Typed text with backspace applied, hotkeys, single/double/triple clicks (GTK's thresholds),
drags, accumulated scrolls and compressed mouse moves. Every reduced action keeps the
sequence numbers of the raw events it came from and the frame seen just before it.

Raw event rows (see recorder.store): kind is one of move, press, release (mouse; `button`),
scroll (`dx`, `dy` in notches, dy > 0 = down), key_down, key_up (`key` canonical name or None,
`char` the typed character or None), pause, resume, stop. `data` may hold `element` (the
element under the pointer or in focus), `window` ({title, app}).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from cua.actions import Action, Click, DoubleClick, Drag, Hotkey, Key, Move, RightClick, Scroll, Type

# GTK defaults (gtk-double-click-time, gtk-double-click-distance, gtk-dnd-drag-threshold).
DOUBLE_CLICK_S = 0.4
DOUBLE_CLICK_PX = 5
DRAG_PX = 8
GTK_KEYS = {
    "gtk-double-click-time": ("double_click_s", 0.001),
    "gtk-double-click-distance": ("double_click_px", 1),
    "gtk-dnd-drag-threshold": ("drag_px", 1),
}


def gtk_thresholds(config_home: str | None = None) -> dict[str, float]:
    """Click/drag thresholds of the desktop: GTK's settings.ini under `config_home`, else GTK defaults."""
    import configparser
    import os

    out = {"double_click_s": DOUBLE_CLICK_S, "double_click_px": DOUBLE_CLICK_PX, "drag_px": DRAG_PX}
    home = config_home or os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    cp = configparser.ConfigParser()
    try:
        cp.read(os.path.join(home, "gtk-3.0", "settings.ini"))
        for key, (name, scale) in GTK_KEYS.items():
            if cp.has_option("Settings", key):
                out[name] = float(cp.get("Settings", key)) * scale
    except (configparser.Error, ValueError, OSError):
        pass
    return out


SCROLL_GAP_S = 0.6
SCROLL_PX = 24
HOVER_S = 0.8
MODIFIERS = ("ctrl", "alt", "shift", "super")
TEXT_BREAK_KEYS = {"enter", "tab", "esc"}


@dataclass
class ReducedAction:
    """One semantic action with links back to the raw events and the pre-action frame."""

    action: Action
    events: list[int]
    t: float
    frame: int | None = None
    element: dict[str, Any] | None = None
    window: dict[str, Any] | None = None
    clicks: int = 1
    masked: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action.to_json(),
            "events": self.events,
            "t": self.t,
            "frame": self.frame,
            "element": self.element,
            "window": self.window,
            "clicks": self.clicks,
            "masked": self.masked,
        }


def _data(ev: dict[str, Any]) -> dict[str, Any]:
    d = ev.get("data")
    return d if isinstance(d, dict) else {}


class _Reducer:
    def __init__(self, thresholds: dict[str, float] | None = None) -> None:
        th = thresholds or {}
        self.dc_s = float(th.get("double_click_s", DOUBLE_CLICK_S))
        self.dc_px = float(th.get("double_click_px", DOUBLE_CLICK_PX))
        self.drag_px = float(th.get("drag_px", DRAG_PX))
        self.out: list[ReducedAction] = []
        self.held: list[str] = []  # modifiers currently down, in press order
        self.combo_used = False  # a non-modifier key was pressed while modifiers were held
        self.text: list[tuple[str, list[int]]] = []  # (char, raw seqs)
        self.text_first: dict[str, Any] | None = None
        self.text_masked = False
        self.text_extra: list[int] = []  # backspaces etc. folded into the text
        self.press: dict[str, Any] | None = None  # mouse button down, not yet released
        self.press_moves: list[int] = []
        self.dragging = False
        self.pending_click: dict[str, Any] | None = None
        self.scroll: dict[str, Any] | None = None
        self.moves: list[dict[str, Any]] = []

    # -- helpers ---------------------------------------------------------------------
    def emit(self, action: Action, events: list[int], first: dict[str, Any], **kw: Any) -> None:
        d = _data(first)
        self.out.append(
            ReducedAction(
                action=action,
                events=sorted(events),
                t=first["t"],
                frame=first.get("frame"),
                element=kw.pop("element", d.get("element")),
                window=d.get("window"),
                **kw,
            )
        )

    def flush_text(self) -> None:
        if self.text_first is not None:
            seqs = sorted({s for _, ss in self.text for s in ss} | set(self.text_extra))
            if self.text:
                self.emit(
                    Type(text="".join(c for c, _ in self.text)),
                    seqs,
                    self.text_first,
                    masked=self.text_masked,
                )
            elif self.text_extra:  # everything typed was erased: keep the erasing keys out of the script
                pass
        self.text, self.text_first, self.text_masked, self.text_extra = [], None, False, []

    def flush_click(self) -> None:
        c = self.pending_click
        if c is None:
            return
        self.pending_click = None
        x, y, n, btn = c["x"], c["y"], c["count"], c["button"]
        first = c["first"]
        if btn == "right":
            for _ in range(n):
                self.emit(RightClick(x=x, y=y), c["events"], first)
        elif btn == "left" and n == 2:
            self.emit(DoubleClick(x=x, y=y), c["events"], first, clicks=2)
        elif btn == "left" and n >= 3:
            self.emit(Click(x=x, y=y, clicks=3), c["events"], first, clicks=3)
        else:
            for _ in range(n):
                self.emit(Click(x=x, y=y, button=btn), c["events"], first)

    def flush_scroll(self) -> None:
        s = self.scroll
        if s is None:
            return
        self.scroll = None
        dx, dy = max(-100, min(100, s["dx"])), max(-100, min(100, s["dy"]))
        if dx or dy:
            self.emit(Scroll(x=s["x"], y=s["y"], dx=dx, dy=dy), s["events"], s["first"])

    def flush_moves(self, next_ev: dict[str, Any] | None) -> list[int]:
        """Compress the run of moves: a hover (dwell >= HOVER_S, not followed by a press) becomes one Move."""
        if not self.moves:
            return []
        moves, self.moves = self.moves, []
        seqs = [m["seq"] for m in moves]
        last = moves[-1]
        dwell = (next_ev["t"] - last["t"]) if next_ev is not None else math.inf
        pointer_next = next_ev is not None and next_ev["kind"] in ("press", "scroll")
        if not pointer_next and dwell >= HOVER_S:
            x0, y0 = moves[0]["x"], moves[0]["y"]
            if abs(last["x"] - x0) + abs(last["y"] - y0) >= self.dc_px or len(moves) > 1:
                self.flush_text()
                self.emit(Move(x=last["x"], y=last["y"]), seqs, last)
                return []
        return seqs

    def flush_all(self, next_ev: dict[str, Any] | None = None) -> None:
        self.flush_text()
        self.flush_click()
        self.flush_scroll()
        self.flush_moves(next_ev)

    # -- events ----------------------------------------------------------------------
    def feed(self, ev: dict[str, Any]) -> None:
        kind = ev["kind"]
        if kind == "move":
            if self.press is not None:
                self.press_moves.append(ev["seq"])
                if max(abs(ev["x"] - self.press["x"]), abs(ev["y"] - self.press["y"])) >= self.drag_px:
                    self.dragging = True
            else:
                self.moves.append(ev)
            return
        carried = self.flush_moves(ev) if kind != "key_up" else []
        if kind in ("press", "release", "scroll"):
            self.flush_text()
        if kind == "press":
            self.flush_scroll()
            c = self.pending_click
            if c is not None and not (
                c["button"] == ev["button"]
                and ev["t"] - c["t"] <= self.dc_s
                and abs(ev["x"] - c["x"]) <= self.dc_px
                and abs(ev["y"] - c["y"]) <= self.dc_px
            ):
                self.flush_click()
            self.press = {**ev, "carried": carried}
            self.press_moves, self.dragging = [], False
        elif kind == "release":
            p = self.press
            if p is None or p["button"] != ev["button"]:
                return  # a release whose press was before the recording started
            self.press = None
            seqs = p["carried"] + [p["seq"]] + self.press_moves + [ev["seq"]]
            if self.dragging:
                self.flush_click()
                to_el = _data(ev).get("element")
                self.emit(
                    Drag(x=p["x"], y=p["y"], to_x=ev["x"], to_y=ev["y"]),
                    seqs,
                    p,
                    extra={"to_element": to_el} if to_el else {},
                )
            elif self.pending_click is not None:
                c = self.pending_click
                c["count"] += 1
                c["events"] += seqs
                c["t"] = p["t"]
            else:
                self.pending_click = {
                    "x": p["x"],
                    "y": p["y"],
                    "button": p["button"],
                    "count": 1,
                    "events": seqs,
                    "t": p["t"],
                    "first": p,
                }
        elif kind == "scroll":
            self.flush_click()
            s = self.scroll
            if s is not None and (
                ev["t"] - s["t"] > SCROLL_GAP_S
                or abs(ev["x"] - s["x"]) > SCROLL_PX
                or abs(ev["y"] - s["y"]) > SCROLL_PX
            ):
                self.flush_scroll()
                s = None
            if s is None:
                self.scroll = s = {
                    "x": ev["x"],
                    "y": ev["y"],
                    "dx": 0,
                    "dy": 0,
                    "events": [],
                    "first": ev,
                    "t": ev["t"],
                }
            s["dx"] += ev.get("dx") or 0
            s["dy"] += ev.get("dy") or 0
            s["events"] += carried + [ev["seq"]]
            s["t"] = ev["t"]
        elif kind == "key_down":
            self.flush_click()
            self.flush_scroll()
            self.key_down(ev)
        elif kind == "key_up":
            key = ev.get("key")
            if key in self.held:
                self.held.remove(key)
                if not self.held:
                    self.combo_used = False
        elif kind in ("pause", "resume", "stop", "end"):
            self.flush_all(ev)
            self.held, self.combo_used, self.press = [], False, None

    def key_down(self, ev: dict[str, Any]) -> None:
        key, char = ev.get("key"), ev.get("char")
        if key in MODIFIERS:
            if key not in self.held:
                self.held.append(key)
            return
        combo_mods = [m for m in MODIFIERS if m in self.held and m != "shift"]
        printable = char is not None and len(char) == 1 and (char.isprintable())
        if combo_mods or ("shift" in self.held and not printable and key not in (None, "space")):
            self.flush_text()
            mods = [m for m in MODIFIERS if m in self.held]
            base = (key or char or "").lower()
            if not base:
                return
            self.combo_used = True
            self.emit(Hotkey(keys=[*mods, base]), [ev["seq"]], ev)
            return
        if key == "space":
            char, printable = " ", True
        if printable:
            if self.text_first is None:
                self.text_first = ev
            self.text.append((char, [ev["seq"]]))
            self.text_masked = self.text_masked or bool(ev.get("masked"))
            return
        if key == "backspace" and self.text:
            self.text.pop()
            self.text_extra.append(ev["seq"])
            return
        self.flush_text()
        if key:
            self.emit(Key(key=key), [ev["seq"]], ev)


def reduce_events(
    events: Iterable[dict[str, Any]], thresholds: dict[str, float] | None = None
) -> list[ReducedAction]:
    """Turn raw event rows (ordered by seq) into semantic actions, in order.

    `thresholds`: double_click_s, double_click_px, drag_px (a recording's manifest holds its desktop's).
    """
    r = _Reducer(thresholds)
    for ev in events:
        r.feed(ev)
    r.flush_all(None)
    r.out.sort(key=lambda a: (a.t, a.events[0] if a.events else 0))
    return r.out
