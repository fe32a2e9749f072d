"""Vision element detector: screenshot -> interactable regions (source "vision"), no a11y/DOM needed.

Runs the shipped ONNX model (models/detector.onnx, trained by `python -m cua.perception.detect_train`)
on onnxruntime's CPU provider; when the model is absent or cannot be loaded it falls back to classic
computer vision (edges + morphology + contours). `Detector.backend` says which one is in use.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from cua.perception.elements import UIElement

log = logging.getLogger(__name__)

MODELS_DIR = Path(__file__).resolve().parent / "models"
DEFAULT_MODEL = MODELS_DIR / "detector.onnx"
# Roles the model predicts, in output-channel order (overridden by detector.json when present).
CLASSES: list[str] = ["push button", "entry", "check box", "radio button", "combo box", "menu item", "link"]
INPUT_SIZE = (640, 400)  # width, height of a training screen (a 1280x800 screen at PIXEL_SCALE)
PIXEL_SCALE = 0.5  # screen pixels -> network pixels; the network saw UIs at this scale in training
MAX_INPUT = (1280, 800)  # bigger screens (4K) are shrunk further so time stays bounded
STRIDE = 4
PAD_VALUE = 128


def letterbox(image: Image.Image, size: tuple[int, int] = INPUT_SIZE) -> tuple[np.ndarray, float]:
    """Resize keeping aspect ratio into a `size` canvas (padding right/bottom); returns (HxWx3 uint8, scale)."""
    w, h = image.size
    scale = min(size[0] / w, size[1] / h)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    rgb = image.convert("RGB")
    resized = rgb.resize((nw, nh), Image.BILINEAR) if (nw, nh) != (w, h) else rgb
    canvas = np.full((size[1], size[0], 3), PAD_VALUE, dtype=np.uint8)
    canvas[:nh, :nw] = np.asarray(resized)
    return canvas, scale


def prepare(image: Image.Image, pixel_scale: float = PIXEL_SCALE, max_input: tuple[int, int] = MAX_INPUT,
            multiple: int = 16) -> tuple[np.ndarray, float]:
    """Scale a screen (or a crop of one) to network pixels, padded right/bottom to a multiple of 16."""
    w, h = image.size
    scale = min(pixel_scale, max_input[0] / w, max_input[1] / h)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    pw, ph = -(-nw // multiple) * multiple, -(-nh // multiple) * multiple
    canvas = np.full((ph, pw, 3), PAD_VALUE, dtype=np.uint8)
    canvas[:nh, :nw] = np.asarray(image.convert("RGB").resize((nw, nh), Image.BILINEAR))
    return canvas, scale


def to_tensor(canvas: np.ndarray) -> np.ndarray:
    """HxWx3 uint8 -> 1x3xHxW float32 in [0, 1] (the network's input layout)."""
    return (canvas.astype(np.float32) / 255.0).transpose(2, 0, 1)[None]


def nms(boxes: np.ndarray, scores: np.ndarray, iou: float = 0.5) -> list[int]:
    """Greedy non-maximum suppression on (N, 4) x1,y1,x2,y2 boxes; returns kept indices, best first."""
    if len(boxes) == 0:
        return []
    x1, y1, x2, y2 = boxes.T
    areas = np.maximum(x2 - x1, 0) * np.maximum(y2 - y1, 0)
    order = np.argsort(-scores)
    keep: list[int] = []
    while order.size:
        i = int(order[0])
        keep.append(i)
        rest = order[1:]
        iw = np.clip(np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]), 0, None)
        ih = np.clip(np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]), 0, None)
        inter = iw * ih
        union = areas[i] + areas[rest] - inter
        order = rest[inter / np.maximum(union, 1e-6) <= iou]
    return keep


def decode(
    out: np.ndarray, num_classes: int, score_threshold: float, stride: int = STRIDE, top_k: int = 300
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CenterNet-style decode of a (C+4, H, W) map: class heatmaps, then log-w, log-h, offset-x, offset-y.

    Returns boxes (N, 4) x1,y1,x2,y2 in network-input pixels, scores (N,), class ids (N,).
    """
    import cv2

    heat = out[:num_classes]
    peaks = np.empty_like(heat)
    kernel = np.ones((3, 3), np.uint8)
    for c in range(num_classes):
        peaks[c] = cv2.dilate(heat[c], kernel)
    cand = (heat >= peaks) & (heat >= score_threshold)
    cls, ys, xs = np.nonzero(cand)
    scores = heat[cls, ys, xs]
    if scores.size > top_k:
        sel = np.argpartition(-scores, top_k)[:top_k]
        cls, ys, xs, scores = cls[sel], ys[sel], xs[sel], scores[sel]
    bw = np.exp(np.clip(out[num_classes, ys, xs], -2.0, 7.0)) * stride
    bh = np.exp(np.clip(out[num_classes + 1, ys, xs], -2.0, 7.0)) * stride
    cx = (xs + out[num_classes + 2, ys, xs]) * stride
    cy = (ys + out[num_classes + 3, ys, xs]) * stride
    boxes = np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], axis=1)
    return boxes.astype(np.float32), scores.astype(np.float32), cls.astype(np.int64)


def is_blank(image: Image.Image) -> bool:
    """True for a (near-)uniform screen: black, white or one flat colour; checked on a thumbnail."""
    thumb = image.convert("L").resize((64, 40), Image.BILINEAR) if image.size != (64, 40) else image.convert("L")
    arr = np.asarray(thumb, dtype=np.float32)
    if arr.std() >= 1.5:
        return False
    # The thumbnail can hide small content; confirm on a coarse full-resolution sample.
    full = np.asarray(image.convert("L"))[::4, ::4]
    return int(full.max()) - int(full.min()) <= 8


def _border_support(edges: np.ndarray, x: int, y: int, w: int, h: int) -> float:
    """Weakest of the four sides: the fraction of it backed by edge pixels (within 1 px)."""
    H, W = edges.shape

    def frac(band: np.ndarray, axis: int) -> float:
        return float((band.max(axis=axis) > 0).mean()) if band.size else 0.0

    y0, y1, x0, x1 = max(y - 1, 0), min(y + h + 1, H), max(x - 1, 0), min(x + w + 1, W)
    top = frac(edges[y0:min(y + 2, H), x:x + w], 0)
    bottom = frac(edges[max(y + h - 2, 0):y1, x:x + w], 0)
    left = frac(edges[y:y + h, x0:min(x + 2, W)], 1)
    right = frac(edges[y:y + h, max(x + w - 2, 0):x1], 1)
    return min(top, bottom, left, right)


def detect_cv(image: Image.Image, max_side: int = 1600) -> list[tuple[tuple[int, int, int, int], str, float]]:
    """Classic-CV fallback: edges + adaptive threshold + morphology -> control-sized rectangles."""
    import cv2

    w, h = image.size
    scale = min(1.0, max_side / max(w, h))
    gray = np.asarray(image.convert("L"))
    if scale < 1.0:
        gray = cv2.resize(gray, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
    edges = cv2.Canny(gray, 40, 120)
    thresh = cv2.adaptiveThreshold(gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, 15, 8)
    mask = cv2.bitwise_or(edges, cv2.morphologyEx(thresh, cv2.MORPH_OPEN, np.ones((1, 1), np.uint8)))
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (3, 3)))
    contours, _ = cv2.findContours(mask, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    s = 1.0 / scale
    found: list[tuple[np.ndarray, float, str]] = []
    for cnt in contours:
        x, y, bw, bh = cv2.boundingRect(cnt)
        W, H = bw * s, bh * s
        if not (10 <= H <= 70 and 10 <= W <= 500) or W * H > 0.05 * w * h:
            continue
        rect = cv2.contourArea(cnt) / max(bw * bh, 1)
        if rect < 0.55 or _border_support(edges, x, y, bw, bh) < 0.7:
            continue  # only closed, box-like outlines (buttons, fields, check boxes), not words
        role = "check box" if 10 <= W <= 22 and 10 <= H <= 22 and 0.8 <= W / H <= 1.25 else "unknown"
        if role == "unknown" and W / H < 1.2:
            continue  # tall/square non-checkbox shapes are mostly glyphs and icons' innards
        found.append((np.array([x * s, y * s, (x + bw) * s, (y + bh) * s], np.float32), 0.3 + 0.4 * rect, role))
    if not found:
        return []
    boxes = np.stack([f[0] for f in found])
    scores = np.array([f[1] for f in found], np.float32)
    # Outer borders win over their inner outlines: prefer larger boxes among overlapping ones.
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    keep = nms(boxes, scores + areas / (areas.max() * 10), iou=0.3)
    out = []
    for i in keep:
        x1, y1, x2, y2 = boxes[i]
        out.append(((int(x1), int(y1), int(x2 - x1), int(y2 - y1)), found[i][2], float(scores[i])))
    return out


class Detector:
    """Finds interactable regions on a screenshot. `backend` is "onnx" (trained model) or "cv" (fallback)."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        score_threshold: float | None = None,
        nms_iou: float = 0.5,
        threads: int = 2,
    ) -> None:
        self.model_path = Path(model_path) if model_path else DEFAULT_MODEL
        self.score_threshold = score_threshold if score_threshold is not None else 0.3
        self._threshold_given = score_threshold is not None
        self.nms_iou = nms_iou
        self.threads = max(1, min(int(threads), 2))
        self._session: Any = None
        self._backend: str | None = None
        self.classes = list(CLASSES)
        self.pixel_scale = PIXEL_SCALE
        self.max_input = MAX_INPUT
        self.stride = STRIDE
        self.timings: dict[str, float] = {}

    @property
    def backend(self) -> str:
        """'onnx' when the model loads, 'cv' otherwise (decided on first use, cached)."""
        if self._backend is None:
            self._load()
        return self._backend or "cv"

    def _load(self) -> None:
        try:
            if not self.model_path.is_file():
                raise FileNotFoundError(f"no detector model at {self.model_path}")
            import onnxruntime as ort

            meta_path = self.model_path.with_suffix(".json")
            if meta_path.is_file():
                meta = json.loads(meta_path.read_text())
                self.classes = list(meta.get("classes", self.classes))
                self.pixel_scale = float(meta.get("pixel_scale", self.pixel_scale))
                self.max_input = tuple(meta.get("max_input", self.max_input))  # type: ignore[assignment]
                self.stride = int(meta.get("stride", self.stride))
                if not self._threshold_given:  # the F1-best threshold picked on training screens
                    self.score_threshold = float(meta.get("score_threshold", self.score_threshold))
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = self.threads
            opts.inter_op_num_threads = 1
            opts.log_severity_level = 3
            self._session = ort.InferenceSession(str(self.model_path), opts, providers=["CPUExecutionProvider"])
            self._backend = "onnx"
        except Exception as exc:  # noqa: BLE001 -- missing file, broken model, onnxruntime missing: fall back, say so once
            log.warning("vision detector: using the classic-CV fallback (%s)", exc)
            self._session = None
            self._backend = "cv"

    def detect(self, image: Image.Image) -> list[UIElement]:
        """Elements with source 'vision', role from the model's classes, confidence = score, ids 'v0', 'v1'..."""
        t0 = time.perf_counter()
        if image.width < 8 or image.height < 8 or is_blank(image):
            self.timings = {"detect": time.perf_counter() - t0}
            return []
        if self.backend == "onnx":
            raw = self._detect_onnx(image)
        else:
            raw = detect_cv(image)
        W, H = image.size
        elements: list[UIElement] = []
        for (x, y, w, h), role, score in raw:
            x, y = max(0, x), max(0, y)
            w, h = min(w, W - x), min(h, H - y)
            if w < 3 or h < 3:
                continue
            elements.append(
                UIElement(id=f"v{len(elements)}", role=role, bbox=(x, y, w, h), source="vision", confidence=round(score, 4))
            )
        elements.sort(key=lambda e: (e.bbox[1] // 8, e.bbox[0]))
        for i, e in enumerate(elements):
            e.id = f"v{i}"
        self.timings = {"detect": time.perf_counter() - t0}
        return elements

    def _detect_onnx(self, image: Image.Image) -> list[tuple[tuple[int, int, int, int], str, float]]:
        canvas, scale = prepare(image, self.pixel_scale, self.max_input)
        name = self._session.get_inputs()[0].name
        out = self._session.run(None, {name: to_tensor(canvas)})[0][0]
        boxes, scores, cls = decode(out, len(self.classes), self.score_threshold, self.stride)
        keep = nms(boxes, scores, self.nms_iou)
        result = []
        for i in keep:
            x1, y1, x2, y2 = boxes[i] / scale
            role = self.classes[int(cls[i])] if int(cls[i]) < len(self.classes) else "unknown"
            box = tuple(int(v) for v in np.rint([x1, y1, x2 - x1, y2 - y1]))
            result.append((box, role, float(scores[i])))
        return result


__all__ = ["CLASSES", "Detector", "decode", "detect_cv", "is_blank", "letterbox", "nms", "prepare"]
