"""Text boxes from pixels: rapidocr (PP-OCRv4 det + rec on onnxruntime, models from the wheel).

`ocr(image)` returns one `text` element per visually separate phrase (a detected line split at wide
gaps, so a menu bar gives 'File', 'Edit', ... not one run-on line), each carrying its word boxes in
`attrs["words"]`; `words=True` also returns the words as elements. The engine loads once, lazily,
and calls are serialised by a lock (onnxruntime sessions are shared).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from typing import Any

import numpy as np
from PIL import Image

from cua.perception.elements import BBox, UIElement

MAX_DET_SIDE = 2000  # detection input bound: 4K screens are downscaled for detection only
SMALL_TEXT = 18  # px quad height (about 11 px glyphs): below it, read the image at 2x
UPSCALE_MAX_AREA = 640 * 480  # ... only if the content is at most this big (bounded cost)
BLANK_STD = 1.5  # a region whose pixel std is below this has no text
GAP_FACTOR = 0.58  # split a line where glyphs are further apart than this x line height (word spaces ~0.3-0.5)
ICON_GLYPHS = set("口回国区日田目四囗凹凸中□■")  # what the models read window buttons / icons as...
BOX_GLYPHS = set("口回囗□■")  # ... junk only when one of these plain boxes is among them
REC_CACHE_SIZE = 4096  # recognised crops remembered by pixel hash (unchanged text is not re-read)
_engine: Any = None
_lock = threading.Lock()
_rec_cache: OrderedDict[bytes, Any] = OrderedDict()


def _threads() -> int:
    return int(os.environ.get("CUA_OCR_THREADS", "0")) or min(4, os.cpu_count() or 1)


def engine() -> Any:
    """The shared RapidOCR engine (created on first use; no cls model: screens are upright)."""
    global _engine
    if _engine is None:
        with _lock:
            if _engine is None:
                from rapidocr_onnxruntime import RapidOCR
                from rapidocr_onnxruntime.utils import infer_engine

                _no_spinning(infer_engine.OrtInferSession)
                n = _threads()
                _engine = RapidOCR(
                    det_limit_side_len=32, det_limit_type="min", intra_op_num_threads=n,
                    inter_op_num_threads=1, use_cls=False, print_verbose=False,
                )
                # pad short crops to 64 px (not 320) before recognition: same text, a fraction of the work
                _engine.text_rec.rec_image_shape = [3, 48, 64]
                # GUI text next to borders (a menu bar above an open menu) scores low as a box: keep more
                # boxes and let the recogniser's score filter the junk
                _engine.text_det.postprocess_op.box_thresh = 0.3
    return _engine


def _no_spinning(session_cls: Any) -> None:
    """Make rapidocr's onnxruntime sessions sleep instead of spin between ops (2 shared cores)."""
    orig = session_cls._init_sess_opts
    if getattr(orig, "_cua_patched", False):
        return

    def opts(config: dict[str, Any]) -> Any:
        o = orig(config)
        o.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return o

    opts._cua_patched = True  # type: ignore[attr-defined]
    session_cls._init_sess_opts = staticmethod(opts)


def clear_cache() -> None:
    """Forget remembered recognitions (benchmarks use it to measure a truly cold read)."""
    with _lock:
        _rec_cache.clear()


def _recognise(eng: Any, crops: list[np.ndarray]) -> list[Any]:
    """Recognition results per crop (text, score, glyph info), reusing results for identical crops."""
    keys = [hashlib.blake2b(c.tobytes(), digest_size=16, person=str(c.shape).encode()[:16]).digest() for c in crops]
    missing = [i for i, k in enumerate(keys) if k not in _rec_cache]
    for group in _similar_widths(missing, crops):
        rec, _ = eng.text_rec([crops[i] for i in group], True)
        for i, r in zip(group, rec):
            _rec_cache[keys[i]] = r
    out = []
    for k in keys:
        _rec_cache.move_to_end(k)
        out.append(_rec_cache[k])
    while len(_rec_cache) > REC_CACHE_SIZE:
        _rec_cache.popitem(last=False)
    return out


def _similar_widths(idx: list[int], crops: list[np.ndarray], spread: float = 1.6, size: int = 8) -> list[list[int]]:
    """Batches of crops with similar aspect ratios: a batch is padded to its widest member."""
    ratio = {i: crops[i].shape[1] / max(1, crops[i].shape[0]) for i in idx}
    groups: list[list[int]] = []
    for i in sorted(idx, key=ratio.__getitem__):
        if groups and len(groups[-1]) < size and ratio[i] <= spread * max(1.34, ratio[groups[-1][0]]):
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _to_bgr(image: Image.Image | np.ndarray) -> np.ndarray:
    arr = np.asarray(image.convert("RGB") if isinstance(image, Image.Image) else image)
    if arr.ndim == 2:
        arr = np.stack([arr] * 3, axis=-1)
    return np.ascontiguousarray(arr[:, :, 2::-1])


def content_box(gray: np.ndarray, margin: int = 6) -> BBox | None:
    """Bounding box (x, y, w, h) of the non-flat part of an image; None when it is flat everywhere."""
    g = gray.astype(np.int16)
    edge_x = np.abs(np.diff(g, axis=1)) > 12
    edge_y = np.abs(np.diff(g, axis=0)) > 12
    rows = edge_x.any(axis=1)
    rows[:-1] |= edge_y.any(axis=1)
    cols = edge_y.any(axis=0)
    cols[:-1] |= edge_x.any(axis=0)
    if not rows.any() or not cols.any():
        return None
    y0, y1 = np.flatnonzero(rows)[[0, -1]]
    x0, x1 = np.flatnonzero(cols)[[0, -1]]
    h, w = gray.shape
    x0, y0 = max(0, x0 - margin), max(0, y0 - margin)
    x1, y1 = min(w, x1 + 2 + margin), min(h, y1 + 2 + margin)
    return int(x0), int(y0), int(x1 - x0), int(y1 - y0)


def content_bands(gray: np.ndarray, margin: int = 4, min_gap: int = 12) -> list[tuple[int, int]]:
    """Row ranges (y0, y1) that may hold text; blank stretches (and rows crossed only by long
    vertical lines such as window borders and scroll bars) are skipped."""
    import cv2

    g = gray.astype(np.int16)
    edges = (np.abs(np.diff(g, axis=1)) > 12).astype(np.uint8)
    if edges.shape[0] > 48:
        lines = cv2.morphologyEx(edges, cv2.MORPH_OPEN, np.ones((41, 1), np.uint8))
        edges &= 1 - lines
    rows = edges.any(axis=1)
    idx = np.flatnonzero(rows)
    if len(idx) == 0:
        return []
    bands, start, last = [], idx[0], idx[0]
    for y in idx[1:]:
        if y - last > min_gap:
            bands.append((max(0, start - margin), min(len(rows), last + 1 + margin)))
            start = y
        last = y
    bands.append((max(0, start - margin), min(len(rows), last + 1 + margin)))
    return bands


def _det_raw(eng: Any, img: np.ndarray) -> np.ndarray:
    """Run the DB text detector on `img` as is (padded to a multiple of 32, never stretched)."""
    h, w = img.shape[:2]
    ph, pw = max(32, -(-h // 32) * 32), max(32, -(-w // 32) * 32)
    if (ph, pw) != (h, w):
        img = np.pad(img, ((0, ph - h), (0, pw - w), (0, 0)), mode="edge")
    x = (img.astype(np.float32) * (2 / 255.0) - 1.0).transpose(2, 0, 1)[None]
    pred = eng.text_det.infer(x)[0]
    boxes, _ = eng.text_det.postprocess_op(pred, (ph, pw))
    if boxes is None or len(boxes) == 0:
        return np.zeros((0, 4, 2), np.float32)
    return np.asarray(eng.text_det.filter_tag_det_res(boxes, (h, w)), np.float32).reshape(-1, 4, 2)


def _detect(eng: Any, img: np.ndarray, gray: np.ndarray) -> np.ndarray:
    """Text-line quads (N, 4, 2) in `img` coordinates.

    Blank row stretches are cut out before detection (GUI screens are mostly empty space), with a
    few replicated rows between the kept bands; big images are downscaled for detection only.
    """
    w = img.shape[1]
    bands = content_bands(gray)
    if not bands:
        return np.zeros((0, 4, 2), np.float32)
    sep = 6
    parts, offsets, y = [], [], 0  # offsets: (stacked y0, original y0, height)
    for y0, y1 in bands:
        parts.append(img[y0:y1])
        parts.append(np.repeat(img[y1 - 1 : y1], sep, axis=0))
        offsets.append((y, y0, y1 - y0))
        y += y1 - y0 + sep
    stacked = np.concatenate(parts, axis=0)
    scale = min(1.0, MAX_DET_SIDE / max(stacked.shape[:2]))
    if scale < 1.0:
        import cv2

        sh, sw = stacked.shape[:2]
        stacked = cv2.resize(stacked, (max(32, int(sw * scale)), max(32, int(sh * scale))), interpolation=cv2.INTER_AREA)
    boxes = _det_raw(eng, stacked) / scale
    out = []
    for q in boxes:
        cy = float(q[:, 1].mean())
        s0, o0, bh = next(((s0, o0, bh) for s0, o0, bh in offsets if cy < s0 + bh + sep), offsets[-1])
        q = q.copy()
        q[:, 1] = (q[:, 1] - s0).clip(0, bh) + o0
        q[:, 0] = q[:, 0].clip(0, w)
        out.append(q)
    return np.asarray(out, np.float32).reshape(-1, 4, 2)


def _ink_splits(gray: np.ndarray, quad: np.ndarray) -> list[float]:
    """x positions (image coords) of the wide blank gaps inside a text line: where phrases separate."""
    x0, x1 = int(quad[:, 0].min()), int(np.ceil(quad[:, 0].max()))
    top, bottom = float(quad[:, 1].min()), float(quad[:, 1].max())
    y0, y1 = int(top + 0.2 * (bottom - top)), int(np.ceil(bottom - 0.2 * (bottom - top)))  # skip borders
    g = gray[y0:y1, x0:x1]
    if g.shape[0] < 3 or g.shape[1] < 3:
        return []
    bg = float(np.median(np.concatenate([g[0], g[-1], g[:, 0], g[:, -1]])))
    ink = (np.abs(g - bg) > 48).any(axis=0)
    cols = np.flatnonzero(ink)
    if len(cols) < 2:
        return []
    gaps = np.diff(cols)
    min_gap = GAP_FACTOR * (bottom - top)
    return [x0 + (cols[i] + cols[i + 1]) / 2 for i in np.flatnonzero(gaps > min_gap)]


def _segments(chars: list[str], cboxes: list[Any], splits: list[float]) -> list[list[tuple[str, list[float]]]]:
    """Group recognised glyphs into phrases (split at `splits` xs) of words (split at spaces)."""
    phrases: list[list[tuple[str, list[float]]]] = []
    cur: list[tuple[str, list[float]]] = []
    word, wbox, seg = "", None, 0

    def close_word() -> None:
        nonlocal word, wbox
        if word.strip() and wbox is not None:
            cur.append((word, wbox))
        word, wbox = "", None

    for ch, quad in zip(chars, cboxes):
        q = np.asarray(quad, np.float32)
        x0, x1 = float(q[:, 0].min()), float(q[:, 0].max())
        y0, y1 = float(q[:, 1].min()), float(q[:, 1].max())
        if ch.isspace():
            close_word()
            continue
        new_seg = sum(1 for s in splits if s < (x0 + x1) / 2)
        if new_seg != seg:
            seg = new_seg
            close_word()
            if cur:
                phrases.append(cur)
                cur = []
        word += ch
        wbox = [x0, y0, x1, y1] if wbox is None else [min(wbox[0], x0), min(wbox[1], y0), max(wbox[2], x1), max(wbox[3], y1)]
    close_word()
    if cur:
        phrases.append(cur)
    return phrases


def _unskipped(quads: np.ndarray, skip: list[BBox], dx: int, dy: int, up: int) -> np.ndarray:
    """Quads (image coords, scaled by `up`) not lying mostly inside any skip box (screen coords)."""
    keep = []
    for q in quads:
        x0, x1 = q[:, 0].min() / up + dx, q[:, 0].max() / up + dx
        y0, y1 = q[:, 1].min() / up + dy, q[:, 1].max() / up + dy
        a = max(1.0, (x1 - x0) * (y1 - y0))
        inside = any(max(0.0, min(x1, sx + sw) - max(x0, sx)) * max(0.0, min(y1, sy + sh) - max(y0, sy)) >= 0.8 * a
                     for sx, sy, sw, sh in skip)
        keep.append(not inside)
    return quads[np.asarray(keep, bool)].reshape(-1, 4, 2)


def _junk(text: str, score: float) -> bool:
    """Icons read as text: lone punctuation, box-like glyphs, low-confidence 1-2 character reads."""
    t = "".join(text.split())
    if not t or (set(t) <= ICON_GLYPHS and set(t) & BOX_GLYPHS):  # '口回国' yes, '中国' (China) no
        return True
    return len(t) <= 2 and (score < 0.6 or not any(c.isalnum() for c in t))


def _element(text: str, box: list[float], conf: float, dx: int, dy: int, level: str, **attrs: Any) -> UIElement:
    x0, y0, x1, y1 = box
    bbox = (round(x0) + dx, round(y0) + dy, max(1, round(x1 - x0)), max(1, round(y1 - y0)))
    return UIElement(
        id="ocr", role="text", name=text, bbox=bbox, source="ocr", confidence=round(float(conf), 4),
        signature=f"ocr/text:{text}", attrs={"level": level, **attrs},
    )


def ocr(image: Image.Image | np.ndarray, region: BBox | None = None, words: bool = False,
        min_score: float = 0.5, skip: list[BBox] | None = None) -> list[UIElement]:
    """Text elements (role 'text', source 'ocr') in screen coordinates, top-to-bottom then left-to-right.

    `region` (x, y, w, h) limits the work to part of the image; `words=True` adds word-level elements;
    text lines lying inside a `skip` box (screen coordinates) are detected but not recognised.
    Example: ocr(Image.open("screen.png"))[0].name -> 'File'
    """
    full = _to_bgr(image)
    ox, oy = 0, 0
    if region is not None:
        x, y, w, h = (int(v) for v in region)
        x, y = max(0, x), max(0, y)
        full = full[y : y + max(0, h), x : x + max(0, w)]
        ox, oy = x, y
    if full.size == 0 or full.shape[0] < 4 or full.shape[1] < 4:
        return []
    gray = full.mean(axis=2) if full.shape[0] * full.shape[1] < 4_000_000 else full[::2, ::2].mean(axis=2)
    if float(gray.std()) < BLANK_STD:
        return []
    if gray.shape[:2] == full.shape[:2]:
        cb = content_box(gray)
    else:
        cb = content_box(gray, margin=3)
        cb = cb and (cb[0] * 2, cb[1] * 2, cb[2] * 2 + 2, cb[3] * 2 + 2)
    if cb is None:
        return []
    cx, cy, cw, ch = cb
    img = np.ascontiguousarray(full[cy : cy + ch, cx : cx + cw])
    gray_crop = img.mean(axis=2)
    eng = engine()
    up = 1
    with _lock:
        quads = _detect(eng, img, gray_crop)
        if len(quads) == 0:
            return []
        heights = quads[:, :, 1].max(axis=1) - quads[:, :, 1].min(axis=1)
        if float(np.median(heights)) < SMALL_TEXT and img.shape[0] * img.shape[1] <= UPSCALE_MAX_AREA:
            import cv2  # small print (web pages at 100%, dense UIs): read it at twice the size

            up = 2
            img = cv2.resize(img, None, fx=up, fy=up, interpolation=cv2.INTER_CUBIC)
            gray_crop = img.mean(axis=2)
            quads = _detect(eng, img, gray_crop)
            if len(quads) == 0:
                return []
        if skip:
            quads = _unskipped(quads, skip, cx + ox, cy + oy, up)
            if len(quads) == 0:
                return []
        quads = eng.sorted_boxes(quads)
        crops = eng.get_crop_img_list(img, quads)
        rec = _recognise(eng, crops)
        detailed = eng.cal_rec_boxes(crops, quads, rec)
    out: list[UIElement] = []
    for quad, (text, score, cboxes, chars, _confs) in zip(quads, detailed):
        if float(score) < min_score or _junk(str(text), float(score)):
            continue
        splits = _ink_splits(gray_crop, np.asarray(quad)) if chars else []
        phrases = _segments(list(chars), list(cboxes or []), splits) if chars else []
        if not phrases:  # no per-glyph boxes: the whole quad is one phrase
            q = np.asarray(quad)
            box = [q[:, 0].min(), q[:, 1].min(), q[:, 0].max(), q[:, 1].max()]
            phrases = [[(str(text).strip(), box)]]
        if up != 1:
            phrases = [[(t, [v / up for v in b]) for t, b in phrase] for phrase in phrases]
        for phrase in phrases:
            box = [min(b[0] for _, b in phrase), min(b[1] for _, b in phrase),
                   max(b[2] for _, b in phrase), max(b[3] for _, b in phrase)]
            wlist = [[t, round(b[0]) + cx + ox, round(b[1]) + cy + oy,
                      max(1, round(b[2] - b[0])), max(1, round(b[3] - b[1]))] for t, b in phrase]
            name = " ".join(t for t, _ in phrase)
            out.append(_element(name, box, score, cx + ox, cy + oy, "line", words=wlist))
            if words and len(phrase) > 1:
                out.extend(_element(t, b, score, cx + ox, cy + oy, "word") for t, b in phrase)
    out.sort(key=lambda e: (e.bbox[1] + e.bbox[3] // 2, e.bbox[0]))
    return out
