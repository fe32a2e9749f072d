"""DOM source: the visible interactive and text-bearing elements of a Playwright page.

One `page.evaluate` of `dom_collect.js` walks the document (open shadow roots and same-origin
iframes included), names each element the way assistive technology would, normalises its role
to the AT-SPI vocabulary ('push button', 'entry', 'check box', ...) and returns viewport boxes
(CSS px; equal to screenshot px at device scale 1). A node/time budget makes huge pages return a
partial result flagged as such instead of hanging.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from cua.perception.elements import UIElement

MAX_FRAME_DEPTH = 3  # cross-origin frames inside cross-origin frames: this deep at most


@dataclass
class DomResult:
    """What one collection returned; `partial` is True when a budget ran out (see `reason`)."""

    elements: list[UIElement] = field(default_factory=list)
    partial: bool = False
    reason: str | None = None  # 'time' | 'nodes' | 'elements'
    visited: int = 0
    seconds: float = 0.0


@lru_cache(maxsize=1)
def collector_js() -> str:
    """The in-page collector's source (a JS arrow function taking an options object)."""
    return resources.files("cua.perception").joinpath("dom_collect.js").read_text(encoding="utf-8")


def elements_from_raw(raw: list[dict[str, Any]], prefix: str = "d") -> list[UIElement]:
    """Turn the collector's plain dicts into UIElements (source 'dom'), ids prefix0, prefix1, ..."""
    els = []
    for i, r in enumerate(raw):
        x, y, w, h = (int(v) for v in r["bbox"])
        els.append(
            UIElement(
                id=f"{prefix}{i}",
                role=r.get("role") or "unknown",
                name=r.get("name") or "",
                bbox=(x, y, max(1, w), max(1, h)),
                source="dom",
                states=list(r.get("states") or []),
                path=[p for p in (r.get("path") or []) if p],
                value=r.get("value"),
                attrs=dict(r.get("attrs") or {}),
            )
        )
    return els


def collect_dom(
    page: Any, max_nodes: int = 20000, max_ms: float = 1500.0, max_elements: int = 3000
) -> DomResult:
    """Collect the page's visible elements, bounded by nodes and milliseconds.

    One evaluate for the page and its same-origin frames; cross-origin frames (which the page's
    script cannot enter) get one evaluate each, offset and clipped by where their frame sits.
    Example: `collect_dom(env.page).elements[0].name`
    """
    t0 = time.perf_counter()
    opts = {"maxNodes": max_nodes, "maxMs": max_ms, "maxElements": max_elements}
    raw = page.evaluate(collector_js(), opts)
    items = list(raw.get("elements") or [])
    partial, reason, visited = bool(raw.get("partial")), raw.get("reason"), int(raw.get("visited") or 0)
    pending = [(page.main_frame, f, 1) for f in raw.get("frames") or []]
    while pending:
        parent, info, depth = pending.pop(0)
        left_ms = max_ms - (time.perf_counter() - t0) * 1000
        if left_ms <= 0:
            partial, reason = True, "time"
            break
        frame = _frame_at(parent, info["x"], info["y"])
        if frame is None:
            continue
        base = {k: info[k] for k in ("ox", "oy", "clip", "path", "frame")} | {"viewport": raw.get("viewport")}
        try:
            sub = frame.evaluate(collector_js(), {**opts, "maxMs": left_ms, "base": base})
        except Exception:  # noqa: BLE001 - a frame that navigated or died meanwhile: leave it out
            partial = True
            continue
        items += sub.get("elements") or []
        visited += int(sub.get("visited") or 0)
        if sub.get("partial"):
            partial, reason = True, sub.get("reason")
        if depth < MAX_FRAME_DEPTH:
            pending += [(frame, f, depth + 1) for f in sub.get("frames") or []]
    return DomResult(elements=elements_from_raw(items), partial=partial, reason=reason, visited=visited,
                     seconds=time.perf_counter() - t0)


def _frame_at(parent: Any, x: float, y: float) -> Any:
    """The child frame of `parent` whose frame element's top-left is at (x, y) in page coordinates."""
    for child in parent.child_frames:
        box = None
        with contextlib.suppress(Exception):  # a frame detached meanwhile has no box
            handle = child.frame_element()
            box = handle.bounding_box()
            handle.dispose()
        if box and abs(box["x"] - x) < 2 and abs(box["y"] - y) < 2:
            return child
    return None


__all__ = ["DomResult", "collect_dom", "collector_js", "elements_from_raw"]
