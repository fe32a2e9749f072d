"""Screenshot + structured elements -> fused elements, re-reading only what changed since last time.

Keep one `Perceiver` per environment: it remembers the previous frame and its OCR / vision results,
diffs the new frame on a tile grid, and re-runs OCR and detection on the changed regions only.
Example: els, timings = Perceiver("auto").perceive(img, a11y_elements)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from PIL import Image

from cua.perception.elements import BBox, UIElement
from cua.perception.merge import merge
from cua.perception.tiles import (
    TILE,
    diff_mask,
    grow,
    merge_overlapping,
    overlaps,
    tile_grid,
    tile_regions,
    union,
)

KNOWN_SOURCES = ("a11y", "dom", "ocr", "vision")
FULL_RERUN_FRACTION = 0.5  # when more than this share of tiles changed, perceive the whole frame again
NAMED_LEAVES = {"menu item", "check menu item", "radio menu item", "menu", "push button", "toggle button",
                "page tab", "check box", "radio button", "label", "link", "list item"}
MARGIN = 8  # px around a changed region, so text cut by the tile edge is read whole


def parse_sources(sources: str | list[str] | None) -> tuple[set[str], bool]:
    """('auto' | 'a11y,ocr' | [...]) -> (set of sources, auto?). Raises ValueError naming a bad source."""
    if sources is None or sources == "auto" or sources == ["auto"]:
        return {"a11y", "dom", "ocr", "vision"}, True
    parts = [s.strip().lower() for s in (sources.split(",") if isinstance(sources, str) else sources) if s.strip()]
    bad = [s for s in parts if s not in KNOWN_SOURCES and s != "auto"]
    if bad or not parts:
        raise ValueError(f"unknown perception source(s) {bad or sources!r}: use 'auto' or a comma list of "
                         f"{', '.join(KNOWN_SOURCES)} (e.g. 'a11y,ocr')")
    if "auto" in parts:
        return {"a11y", "dom", "ocr", "vision"}, True
    return set(parts), False


def vision_model_available() -> bool:
    try:
        from cua.perception.detect import DEFAULT_MODEL
    except Exception:  # noqa: BLE001 - detector module absent or broken: no vision in 'auto'
        return False
    return DEFAULT_MODEL.is_file()


@dataclass
class _Frame:
    gray: np.ndarray
    ocr: list[UIElement] = field(default_factory=list)
    vision: list[UIElement] = field(default_factory=list)


class Perceiver:
    """Fuses structured elements with OCR (and vision) text/boxes; incremental across calls."""

    def __init__(self, sources: str | list[str] = "auto", incremental: bool = True, tile: int = TILE,
                 ocr_named: bool = True) -> None:
        """`ocr_named=False`: do not re-read text inside named structured leaves (menu items, buttons...)
        whose name already says it: faster, but OCR no longer confirms those names or reads shortcuts."""
        self.sources, auto = parse_sources(sources)
        self.ocr_named = ocr_named
        self._skip: list[BBox] = []
        if auto and not vision_model_available():
            self.sources.discard("vision")
        self.incremental = incremental
        self.tile = tile
        self._prev: _Frame | None = None
        self._detector = None
        self.last_regions: list[BBox] = []

    def reset(self) -> None:
        """Forget the previous frame: the next call perceives everything."""
        self._prev = None

    def perceive(self, image: Image.Image, structured: list[UIElement] | None = None
                 ) -> tuple[list[UIElement], dict[str, float]]:
        """Fused elements (ids e0.. in reading order) and seconds per stage (diff, ocr, vision, merge)."""
        t0 = time.perf_counter()
        structured = [e for e in (structured or []) if e.source in self.sources]
        gray = np.asarray(image.convert("L"))
        size = (gray.shape[1], gray.shape[0])
        timings: dict[str, float] = {}
        regions = self._changed_regions(gray, size)
        timings["diff"] = time.perf_counter() - t0
        prev = self._prev
        full = regions is None
        ocr_els: list[UIElement] = []
        vis_els: list[UIElement] = []
        if "ocr" in self.sources:
            t = time.perf_counter()
            self._skip = [] if self.ocr_named else [e.bbox for e in structured if e.name.strip()
                                                      and e.role in NAMED_LEAVES and e.bbox[2] > 0]
            ocr_els = self._run(self._ocr, image, regions, prev.ocr if prev else [], size)
            timings["ocr"] = time.perf_counter() - t
        if "vision" in self.sources:
            t = time.perf_counter()
            vis_els = self._run(self._vision, image, regions, prev.vision if prev else [], size)
            timings["vision"] = time.perf_counter() - t
        self.last_regions = [(0, 0, *size)] if full else list(regions or [])
        if self.incremental:
            self._prev = _Frame(gray, ocr_els, vis_els)
        t = time.perf_counter()
        elements = merge(structured, ocr_els, vis_els)
        timings["merge"] = time.perf_counter() - t
        timings["perceive"] = time.perf_counter() - t0
        return elements, timings

    def _changed_regions(self, gray: np.ndarray, size: tuple[int, int]) -> list[BBox] | None:
        """None: perceive the whole frame; []: nothing changed; else the pixel regions to redo.

        A region swallows every old box it touches, so a text line the change cuts through is
        re-read whole (as a cold read would see it); boxes outside every region are kept as they are.
        """
        prev = self._prev
        if not self.incremental or prev is None or prev.gray.shape != gray.shape:
            return None
        mask = diff_mask(prev.gray, gray)
        if not mask.any():
            return []
        grid = tile_grid(mask, self.tile)
        if grid.mean() > FULL_RERUN_FRACTION:
            return None
        regions = [grow(r, MARGIN, size) for r in tile_regions(grid, self.tile, size)]
        old = [e.bbox for e in prev.ocr + prev.vision]
        for _ in range(4):
            grown = []
            for r in regions:
                for b in old:
                    if overlaps(r, b):
                        r = union(r, grow(b, MARGIN, size))
                grown.append(r)
            grown = merge_overlapping(grown)
            if grown == regions:
                break
            regions = grown
        return regions

    @staticmethod
    def _run(fn, image: Image.Image, regions: list[BBox] | None, old: list[UIElement],
             size: tuple[int, int]) -> list[UIElement]:
        if regions is None:
            return fn(image, None)
        kept = [e for e in old if not any(overlaps(e.bbox, r) for r in regions)]
        for r in regions:
            kept.extend(e for e in fn(image, r) if _centre_inside(e.bbox, r))
        return kept

    def _ocr(self, image: Image.Image, region: BBox | None) -> list[UIElement]:
        from cua.perception.ocr import ocr

        return ocr(image, region=region, skip=self._skip)

    def _vision(self, image: Image.Image, region: BBox | None) -> list[UIElement]:
        if self._detector is None:
            self._detector = _shared_detector()
        if region is None:
            return self._detector.detect(image)
        x, y, w, h = region
        if w < 8 or h < 8:
            return []
        found = self._detector.detect(image.crop((x, y, x + w, y + h)))
        for e in found:
            e.bbox = (e.bbox[0] + x, e.bbox[1] + y, e.bbox[2], e.bbox[3])
        return found


_DETECTOR = None


def _shared_detector():
    """One Detector per process (its model loads once; its fallback warning is logged once)."""
    global _DETECTOR
    if _DETECTOR is None:
        from cua.perception.detect import Detector

        _DETECTOR = Detector()
    return _DETECTOR


def _centre_inside(b: BBox, r: BBox) -> bool:
    cx, cy = b[0] + b[2] / 2, b[1] + b[3] / 2
    return r[0] <= cx < r[0] + r[2] and r[1] <= cy < r[1] + r[3]


def perceive(image: Image.Image, structured: list[UIElement] | None = None, sources: str = "auto"
             ) -> tuple[list[UIElement], dict[str, float]]:
    """One-shot, non-incremental perception (a fresh Perceiver)."""
    return Perceiver(sources, incremental=False).perceive(image, structured)
