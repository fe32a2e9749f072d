"""The detector's held-out check: F1 on screens it never trained on, re-measurable on any machine.

The check set is rebuilt, not stored: the held-out MiniWoB++ tasks (VAL_TASKS) rendered at CHECK_SEEDS
layouts each (a layout depends only on task and seed) plus the held-out mousepad windows (the Search
menu, the search bar, the Go To, Print and About dialogs), each scored only inside its window. Its F1
is recorded in detector.json (`heldout_check`) when the model is made or re-checked, and
tests/test_detect_heldout.py fails when the shipped model scores below that figure minus TOLERANCE.

    python -m cua.perception.detect_check            # measure the shipped model, print the figures
    python -m cua.perception.detect_check --record   # and write them into detector.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from cua.perception.detect import MODELS_DIR, Detector
from cua.perception.detect_collect import VAL_TASKS, collect_heldout_mousepad, collect_miniwob, inside, load_labels

CHECK_SEEDS = 3
# F1 may move this much between machines (font hinting, a mousepad menu caught mid-animation) and no more.
TOLERANCE = 0.03


def iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU between (N, 4) and (M, 4) x1,y1,x2,y2 boxes."""
    iw = np.clip(np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]), 0, None)
    ih = np.clip(np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]), 0, None)
    inter = iw * ih
    area = lambda z: (z[:, 2] - z[:, 0]) * (z[:, 3] - z[:, 1])
    return inter / np.maximum(area(a)[:, None] + area(b)[None, :] - inter, 1e-6)


def match(pred: np.ndarray, truth: np.ndarray, thr: float = 0.5) -> int:
    """Greedy one-to-one matches at IoU >= thr (preds in score order); returns the true-positive count."""
    if len(pred) == 0 or len(truth) == 0:
        return 0
    ious = iou_matrix(pred, truth)
    used, tp = set(), 0
    for i in range(len(pred)):
        order = np.argsort(-ious[i])
        for j in order:
            if ious[i, j] < thr:
                break
            if j not in used:
                used.add(int(j))
                tp += 1
                break
    return tp


def evaluate(data: Path, detector, split: str = "val") -> dict[str, dict]:
    """Class-agnostic precision / recall / F1 at IoU 0.5 per data source, plus mean ms per screen."""
    from PIL import Image

    stats: dict[str, list[float]] = {}
    for r in load_labels(data, split):
        image = Image.open(r["image"]).convert("RGB")
        t = time.perf_counter()
        found = detector.detect(image)
        dt = time.perf_counter() - t
        if r.get("region"):  # a held-out window on a screen whose other windows were trained on
            found = [e for e in found if inside(e.bbox, r["region"])]
        pred = np.array([[e.bbox[0], e.bbox[1], e.bbox[0] + e.bbox[2], e.bbox[1] + e.bbox[3]] for e in found],
                        np.float32).reshape(-1, 4)
        truth = np.array([[x, y, x + w, y + h] for x, y, w, h, _ in r["boxes"]], np.float32).reshape(-1, 4)
        s = stats.setdefault(r["source"], [0, 0, 0, 0.0, 0])
        s[0] += match(pred, truth)
        s[1] += len(pred)
        s[2] += len(truth)
        s[3] += dt
        s[4] += 1
    out = {}
    for src, (tp, npred, ntrue, secs, n) in sorted(stats.items()):
        p, rc = tp / max(npred, 1), tp / max(ntrue, 1)
        out[src] = {"screens": n, "precision": round(p, 3), "recall": round(rc, 3),
                    "f1": round(2 * p * rc / max(p + rc, 1e-9), 3), "ms_per_screen": round(1000 * secs / max(n, 1), 1)}
    return out


def collect_check_set(out: Path, mousepad: bool = True) -> dict[str, int]:
    """Render the check set into `out` (labels.jsonl + images); screens per source."""
    n = {"miniwob": collect_miniwob(out, seeds=CHECK_SEEDS, only=set(VAL_TASKS))}
    if mousepad:
        n["mousepad"] = collect_heldout_mousepad(out)
    return n


def measure(detector: Any, data: Path | None = None, mousepad: bool = True) -> dict[str, Any]:
    """Per-source precision / recall / F1 of `detector` on the check set (rebuilt when `data` is None)."""
    if data is not None:
        return evaluate(data, detector, "val")
    with tempfile.TemporaryDirectory(prefix="cua-detcheck-") as tmp:
        collect_check_set(Path(tmp), mousepad)
        return evaluate(Path(tmp), detector, "val")


def record(meta_path: Path, result: dict[str, Any]) -> dict[str, Any]:
    """Write the figures into detector.json as `heldout_check`; returns that entry."""
    meta = json.loads(meta_path.read_text())
    meta["heldout_check"] = {
        "f1": {src: r["f1"] for src, r in result.items()}, "detail": result, "tolerance": TOLERANCE,
        "set": {"miniwob_tasks": sorted(VAL_TASKS), "miniwob_seeds": CHECK_SEEDS,
                "mousepad_windows": ["menu-Search", "dialog-find (search bar)", "dialog-goto", "dialog-print",
                                     "dialog-about"], "scored": "IoU 0.5, class-agnostic, inside the held-out window"},
        "measured": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    meta_path.write_text(json.dumps(meta, indent=1))
    return meta["heldout_check"]


def shortfalls(result: dict[str, Any], recorded: dict[str, Any], both_ways: bool = False) -> list[str]:
    """Sources whose F1 fell below the recorded figure minus the tolerance (empty: reproduced).

    `both_ways` also counts a figure above it plus the tolerance: a retraining that should reproduce a model
    and scores far better did not reproduce it either.
    """
    tol = recorded.get("tolerance", TOLERANCE)
    bad = []
    for src, f1 in recorded["f1"].items():
        if src in result and result[src]["f1"] < f1 - tol:
            bad.append(f"{src}: F1 {result[src]['f1']:.3f} < recorded {f1:.3f} - {tol}")
        elif both_ways and src in result and result[src]["f1"] > f1 + tol:
            bad.append(f"{src}: F1 {result[src]['f1']:.3f} > recorded {f1:.3f} + {tol}")
    return bad


def main(argv: list[str] | None = None) -> int:

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=MODELS_DIR / "detector.onnx")
    ap.add_argument("--record", action="store_true", help="write the figures into the model's detector.json")
    a = ap.parse_args(argv)
    det = Detector(a.model)
    if det.backend != "onnx":
        raise SystemExit(f"{a.model} does not load in onnxruntime; train it with `make train-detector`")
    result = measure(det)
    print(json.dumps(result, indent=1))
    meta_path = a.model.with_suffix(".json")
    if a.record:
        record(meta_path, result)
        print(f"recorded in {meta_path}")
    else:
        old = json.loads(meta_path.read_text()).get("heldout_check") if meta_path.is_file() else None
        if old:
            bad = shortfalls(result, old)
            print("reproduced within tolerance" if not bad else "NOT reproduced: " + "; ".join(bad))
            return 1 if bad else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
