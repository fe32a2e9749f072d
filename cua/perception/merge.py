"""Fuse perception sources into one element list with reading-order ids and stable signatures.

Structured sources (a11y, dom) are the truth for role and name. OCR text that repeats a structured
element's name at the same place is dropped; OCR text inside a nameless structured element names it;
the rest stays as `text` elements. Vision boxes that duplicate a kept box are dropped; the others are
kept (named by the OCR text inside them, else role 'icon'/'unknown'). A structured element that
another source confirmed lists them all in `attrs['sources']`, e.g. ['a11y', 'ocr'].
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np
from rapidfuzz import fuzz

from cua.perception.elements import BBox, UIElement

STRUCTURED = ("a11y", "dom")
SAME_TEXT = 80  # rapidfuzz ratio above which two names are the same text
NAMEABLE_AREA = 10  # a nameless element takes OCR text when its area is < this x the text's area


def iou(a: BBox, b: BBox) -> float:
    """Intersection over union of two (x, y, w, h) boxes."""
    inter = intersection(a, b)
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


def intersection(a: BBox, b: BBox) -> int:
    w = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    h = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    return max(0, w) * max(0, h)


def contains(outer: BBox, inner: BBox, slack: int = 2) -> bool:
    return (outer[0] - slack <= inner[0] and outer[1] - slack <= inner[1]
            and inner[0] + inner[2] <= outer[0] + outer[2] + slack and inner[1] + inner[3] <= outer[1] + outer[3] + slack)


def centre_in(outer: BBox, inner: BBox) -> bool:
    cx, cy = inner[0] + inner[2] / 2, inner[1] + inner[3] / 2
    return outer[0] <= cx < outer[0] + outer[2] and outer[1] <= cy < outer[1] + outer[3]


def norm_text(s: str) -> str:
    """Lowercase, mnemonic underscores and ellipses removed, whitespace collapsed."""
    s = s.replace("_", "").replace("…", "").replace("...", "").lower()
    return " ".join(s.split())


def same_text(a: str, b: str) -> bool:
    a, b = norm_text(a), norm_text(b)
    if not a or not b:
        return False
    return a == b or fuzz.ratio(a, b) >= SAME_TEXT or (len(b) >= 3 and b in a)


def area(b: BBox) -> int:
    return max(0, b[2]) * max(0, b[3])


def _visible(e: UIElement) -> bool:
    return e.bbox[2] > 0 and e.bbox[3] > 0


class _Boxes:
    """Vectorised box tests against many elements (pages can carry thousands of DOM nodes)."""

    def __init__(self, els: list[UIElement]) -> None:
        self.els = els
        b = np.asarray([e.bbox for e in els], dtype=np.float64).reshape(-1, 4)
        self.x0, self.y0, self.w, self.h = b.T
        self.x1, self.y1 = self.x0 + self.w, self.y0 + self.h
        self.area = self.w * self.h

    def centre_in(self, bb: BBox) -> np.ndarray:
        cx, cy = bb[0] + bb[2] / 2, bb[1] + bb[3] / 2
        return (self.x0 <= cx) & (cx < self.x1) & (self.y0 <= cy) & (cy < self.y1)

    def iou(self, bb: BBox) -> np.ndarray:
        iw = np.minimum(self.x1, bb[0] + bb[2]) - np.maximum(self.x0, bb[0])
        ih = np.minimum(self.y1, bb[1] + bb[3]) - np.maximum(self.y0, bb[1])
        inter = np.clip(iw, 0, None) * np.clip(ih, 0, None)
        union = self.area + bb[2] * bb[3] - inter
        return np.where(union > 0, inter / np.maximum(union, 1e-9), 0.0)

    def contains_all(self, other: _Boxes, slack: int = 2) -> np.ndarray:
        """For a one-box _Boxes: which of `other`'s boxes lie inside it."""
        x0, y0, x1, y1 = self.x0[0], self.y0[0], self.x1[0], self.y1[0]
        return ((x0 - slack <= other.x0) & (y0 - slack <= other.y0)
                & (other.x1 <= x1 + slack) & (other.y1 <= y1 + slack))

    def contains(self, bb: BBox, slack: int = 2) -> np.ndarray:
        return ((self.x0 - slack <= bb[0]) & (self.y0 - slack <= bb[1])
                & (bb[0] + bb[2] <= self.x1 + slack) & (bb[1] + bb[3] <= self.y1 + slack))


def merge(structured: Iterable[UIElement] = (), ocr: Iterable[UIElement] = (),
          vision: Iterable[UIElement] = ()) -> list[UIElement]:
    """One list: structured elements, OCR text not already covered, vision boxes not already covered."""
    out = [e.model_copy(deep=True) for e in structured]
    boxed = _Boxes([e for e in out if _visible(e)])
    nameless = np.asarray([not e.name.strip() for e in boxed.els], dtype=bool)
    texts: list[UIElement] = []
    named_from_ocr: dict[int, list[UIElement]] = {}
    for t in ocr:
        if not t.name.strip():
            continue
        near = np.flatnonzero(boxed.centre_in(t.bbox) | (boxed.iou(t.bbox) > 0.1))
        twin = next((boxed.els[i] for i in near if same_text(boxed.els[i].name, t.name)), None)
        if twin is not None:  # the structured element already says this, at this place
            _seen_by(twin, "ocr")
            continue
        ok = nameless & boxed.centre_in(t.bbox) & (boxed.area < NAMEABLE_AREA * max(1, area(t.bbox)))
        if ok.any():
            idx = np.flatnonzero(ok)
            holder = boxed.els[int(idx[np.argmin(boxed.area[idx])])]
            named_from_ocr.setdefault(id(holder), [holder]).append(t)
            continue
        texts.append(t.model_copy(deep=True))
    for group in named_from_ocr.values():
        holder, parts = group[0], sorted(group[1:], key=lambda t: (t.bbox[1] // 8, t.bbox[0]))
        holder.name = " ".join(p.name for p in parts)
        holder.attrs["name_from"] = "ocr"
        _seen_by(holder, "ocr")
        holder.signature = ""
        holder.model_post_init(None)
    out.extend(texts)
    kept = _Boxes([e for e in out if _visible(e)])
    structured_kept = np.asarray([e.source in STRUCTURED for e in kept.els], dtype=bool)
    text_boxes = _Boxes(texts)
    for v in vision:
        if (kept.iou(v.bbox) >= 0.5).any():
            continue
        if (structured_kept & kept.contains(v.bbox) & (kept.area < 2 * area(v.bbox))).any():
            continue
        v = v.model_copy(deep=True)
        inside = [texts[i] for i in np.flatnonzero(_Boxes([v]).contains_all(text_boxes))] if texts else []
        inside.sort(key=lambda t: (t.bbox[1] // 8, t.bbox[0]))
        if inside and not v.name:
            v.name = " ".join(t.name for t in inside)
        if v.role in ("", "unknown") and not v.name:
            v.role = "icon" if max(v.bbox[2], v.bbox[3]) <= 48 else "unknown"
        v.signature = ""
        out.append(v)
    return assign_ids(out)


def _seen_by(e: UIElement, source: str) -> None:
    """Record in attrs['sources'] every source that found this element (its own first)."""
    seen = e.attrs.setdefault("sources", [e.source])
    if source not in seen:
        seen.append(source)


def reading_key(e: UIElement) -> tuple:
    x, y, w, h = e.bbox
    return (y // 8, x, -(w * h), e.role, e.name)


def assign_ids(elements: list[UIElement]) -> list[UIElement]:
    """Sort into reading order (top-to-bottom, left-to-right), set ids e0.., fill missing signatures."""
    elements = sorted(elements, key=reading_key)
    seen: Counter[str] = Counter()
    for i, e in enumerate(elements):
        e.id = f"e{i}"
        if e.source in ("ocr", "vision"):
            base = f"{e.source}/{e.role}:{e.name}"
            if not e.name:  # nameless boxes are told apart by a coarse position
                base += f"@{e.bbox[0] // 32},{e.bbox[1] // 32}"
            seen[base] += 1
            e.signature = base if seen[base] == 1 else f"{base}#{seen[base] - 1}"
        elif not e.signature:
            e.model_post_init(None)
    return elements
