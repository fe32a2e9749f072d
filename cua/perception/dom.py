"""DOM source: the visible interactive and text-bearing elements of a Playwright page.

One `page.evaluate` of `dom_collect.js` walks the document (open shadow roots and same-origin
iframes included), names each element the way assistive technology would, normalises its role
to the AT-SPI vocabulary ('push button', 'entry', 'check box', ...) and returns viewport boxes
(CSS px; equal to screenshot px at device scale 1). A node/time budget makes huge pages return a
partial result flagged as such instead of hanging.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from cua.perception.elements import UIElement


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
    """Collect the page's visible elements in one evaluate call, bounded by nodes and milliseconds.

    Example: `collect_dom(env.page).elements[0].name`
    """
    t0 = time.perf_counter()
    raw = page.evaluate(
        collector_js(), {"maxNodes": max_nodes, "maxMs": max_ms, "maxElements": max_elements}
    )
    return DomResult(
        elements=elements_from_raw(raw.get("elements") or []),
        partial=bool(raw.get("partial")),
        reason=raw.get("reason"),
        visited=int(raw.get("visited") or 0),
        seconds=time.perf_counter() - t0,
    )


__all__ = ["DomResult", "collect_dom", "collector_js", "elements_from_raw"]
