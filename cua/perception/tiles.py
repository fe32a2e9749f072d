"""Which parts of the screen changed between two frames, as a few pixel regions to re-perceive."""

from __future__ import annotations

import numpy as np

from cua.perception.elements import BBox

TILE = 64  # px; the grid the frame difference is taken on


def diff_mask(prev: np.ndarray, cur: np.ndarray, threshold: int = 8) -> np.ndarray:
    """Boolean image: True where a pixel changed by more than `threshold` (frames of equal size)."""
    import cv2

    if prev.shape != cur.shape:
        raise ValueError(f"frames differ in size: {prev.shape} vs {cur.shape}")
    diff = cv2.absdiff(prev, cur)
    if diff.ndim == 3:
        diff = diff.max(axis=2)
    return diff > threshold


def tile_grid(mask: np.ndarray, tile: int = TILE) -> np.ndarray:
    """Boolean grid (rows, cols): True where any pixel of the tile is set in `mask`."""
    h, w = mask.shape
    rows, cols = -(-h // tile), -(-w // tile)
    padded = np.zeros((rows * tile, cols * tile), dtype=bool)
    padded[:h, :w] = mask
    return padded.reshape(rows, tile, cols, tile).any(axis=(1, 3))


def changed_tiles(prev: np.ndarray, cur: np.ndarray, tile: int = TILE, threshold: int = 8) -> np.ndarray:
    """Boolean grid (rows, cols): True where any pixel of the tile differs by more than `threshold`."""
    return tile_grid(diff_mask(prev, cur, threshold), tile)


def tile_regions(grid: np.ndarray, tile: int = TILE, size: tuple[int, int] | None = None) -> list[BBox]:
    """Bounding boxes (x, y, w, h in pixels) of 8-connected groups of changed tiles, clipped to `size`."""
    import cv2

    if not grid.any():
        return []
    n, _, stats, _ = cv2.connectedComponentsWithStats(grid.astype(np.uint8), connectivity=8)
    out = []
    for i in range(1, n):
        c, r, cw, rh = (int(v) for v in stats[i][:4])
        box = (c * tile, r * tile, cw * tile, rh * tile)
        out.append(clip(box, size) if size else box)
    return out


def clip(box: BBox, size: tuple[int, int]) -> BBox:
    x, y, w, h = box
    x0, y0 = max(0, x), max(0, y)
    x1, y1 = min(size[0], x + w), min(size[1], y + h)
    return x0, y0, max(0, x1 - x0), max(0, y1 - y0)


def grow(box: BBox, margin: int, size: tuple[int, int]) -> BBox:
    x, y, w, h = box
    return clip((x - margin, y - margin, w + 2 * margin, h + 2 * margin), size)


def union(a: BBox, b: BBox) -> BBox:
    x0, y0 = min(a[0], b[0]), min(a[1], b[1])
    x1, y1 = max(a[0] + a[2], b[0] + b[2]), max(a[1] + a[3], b[1] + b[3])
    return x0, y0, x1 - x0, y1 - y0


def overlaps(a: BBox, b: BBox) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def merge_overlapping(boxes: list[BBox]) -> list[BBox]:
    """Union boxes until none overlap (a handful of regions; quadratic is fine)."""
    boxes = list(boxes)
    changed = True
    while changed:
        changed = False
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                if overlaps(boxes[i], boxes[j]):
                    boxes[i] = union(boxes[i], boxes.pop(j))
                    changed = True
                    break
            if changed:
                break
    return boxes
