"""Seeing an effect without the accessibility tree: a toggle's mark in pixels, text by OCR, a region that changed.

Used where a postcondition would read accessibility state (checked, showing, text) and there is no tree.
Example: toggle_mark(obs.image(), ocr_line.bbox) -> True when the box left of 'Line Numbers' holds a tick.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from cua.perception.elements import BBox

MARK_INK = 0.3  # share of the indicator's inside that differs from its own background when marked (seen: 0-0.13 off, 0.87+ on)


def mark_box(text_bbox: BBox) -> BBox:
    """Where a check/radio indicator sits for a label: the square left of its text, one line high."""
    x, y, w, h = text_bbox
    side = max(min(h, 18), 10)
    return x - side - 6, y + h // 2 - side // 2, side, side


def mark_ink(img: Image.Image, text_bbox: BBox) -> float:
    """Share of the indicator's inside (its outline shaved off) that differs from the inside's median."""
    x, y, w, h = mark_box(text_bbox)
    inner = (x + w // 4 + 1, y + h // 4 + 1, x + w - w // 4 - 1, y + h - h // 4 - 1)
    if inner[0] < 0 or inner[1] < 0 or inner[2] <= inner[0] or inner[3] <= inner[1]:
        return 0.0
    a = np.asarray(img.convert("L").crop(inner), dtype=np.int16)
    return float((np.abs(a - np.median(a)) > 50).mean())


def toggle_mark(img: Image.Image, text_bbox: BBox) -> bool:
    """Whether the check/radio indicator left of a label is marked (a tick or dot inside it)."""
    return mark_ink(img, text_bbox) >= MARK_INK


def region_changed(a: Image.Image, b: Image.Image, box: BBox | None = None, threshold: int = 40) -> float:
    """Share of pixels in `box` (default the whole frame) whose grey level moved by more than `threshold`."""
    if a.size != b.size:
        return 1.0
    if box is not None:
        x, y, w, h = box
        a, b = a.crop((x, y, x + w, y + h)), b.crop((x, y, x + w, y + h))
    ga, gb = np.asarray(a.convert("L"), dtype=np.int16), np.asarray(b.convert("L"), dtype=np.int16)
    return float((np.abs(ga - gb) > threshold).mean()) if ga.size else 0.0


def row_mark(img: Image.Image, row: BBox) -> bool | None:
    """The check/radio indicator at the left of a menu row whose toolkit exposes no checked state (GTK's
    model menus): True when marked, False when empty, None when the row starts with no indicator.
    The indicator is the row's first ink, a square of 10-22 px standing apart from the label after it."""
    x, y, w, h = row
    if w <= 0 or h <= 0:
        return None
    a = np.asarray(img.crop((x, y, x + min(w, 3 * h), y + h)).convert("L"), dtype=np.int16)  # crop first: cheap
    ink = np.abs(a - np.median(a)) > 50
    ink[:, ink.mean(axis=0) > 0.8] = False  # the menu's own borders
    ink[ink.mean(axis=1) > 0.8] = False
    cols = np.flatnonzero(ink.any(axis=0))
    if cols.size == 0:
        return None
    end = cols[0]
    for c in cols[1:]:  # the first run of inked columns (a gap of 3 px ends it)
        if c - end > 3:
            break
        end = c
    glyph = ink[:, cols[0]:end + 1]
    rows = np.flatnonzero(glyph.any(axis=1))
    gw, gh = glyph.shape[1], rows[-1] - rows[0] + 1
    if not (10 <= gw <= 22 and 10 <= gh <= 22 and abs(gw - gh) <= 3 and end + 4 < a.shape[1]):
        return None
    box = glyph[rows[0]:rows[-1] + 1]
    if not all((box[:, :3].any(), box[:, -3:].any(), box[:3].any(), box[-3:].any(),
                box[gh // 2 - 1:gh // 2 + 2, :3].any(), box[gh // 2 - 1:gh // 2 + 2, -3:].any())):
        return None  # not a closed outline (a letter)
    q = max(gw, gh) // 4 + 1
    inner = box[q:gh - q, q:gw - q]
    return bool(inner.size) and float(inner.mean()) >= MARK_INK
