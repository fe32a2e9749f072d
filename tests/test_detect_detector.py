"""Vision detector: the shipped ONNX model and the classic-CV fallback on a page rendered by real Chromium."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from cua.perception.detect import CLASSES, DEFAULT_MODEL, MAX_INPUT, Detector, decode, nms, prepare
from cua.perception.detect_collect import CHROMIUM, CHROMIUM_ARGS, DOM_BOXES_JS

PAGE = """<!doctype html><html><body style="margin:0;background:#f4f4f4;font:16px sans-serif">
<div style="position:absolute;left:120px;top:90px;width:560px;padding:24px;background:#fff;border:1px solid #ccc">
  <h2 style="margin:0 0 18px 0">Sign in</h2>
  <label>Name: <input id="name" type="text" style="width:300px;font-size:16px;padding:4px"></label><br><br>
  <label><input id="remember" type="checkbox"> Remember me</label><br><br>
  <button id="go" style="font-size:16px;padding:6px 18px">Submit</button>
</div></body></html>"""


@pytest.fixture(scope="module")
def screen() -> tuple[Image.Image, list[list[int]]]:
    """A 1280x800 screenshot of PAGE and its DOM control boxes [x, y, w, h, class_id] (the collector's JS)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.set_content(PAGE)
            boxes = page.evaluate(DOM_BOXES_JS)
            image = Image.open(io.BytesIO(page.screenshot())).convert("RGB")
        finally:
            browser.close()
    return image, boxes


def iou(a: tuple[int, int, int, int], b: list[int]) -> float:
    ax2, ay2, bx2, by2 = a[0] + a[2], a[1] + a[3], b[0] + b[2], b[1] + b[3]
    iw, ih = max(0, min(ax2, bx2) - max(a[0], b[0])), max(0, min(ay2, by2) - max(a[1], b[1]))
    inter = iw * ih
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def best_iou(found, box: list[int]) -> float:
    return max((iou(e.bbox, box) for e in found), default=0.0)


def truth(boxes: list[list[int]], role: str) -> list[int]:
    return next(b for b in boxes if b[4] == CLASSES.index(role))


def test_collector_labels_the_page_controls(screen):
    _, boxes = screen
    assert sorted(b[4] for b in boxes) == sorted(CLASSES.index(r) for r in ("entry", "check box", "push button"))


@pytest.fixture(scope="module")
def heldout(tmp_path_factory) -> list[tuple[Image.Image, list[list[int]]]]:
    """Eight renderings of a MiniWoB++ task held out of training (login-user-popup), with DOM boxes."""
    from cua.perception.detect_collect import VAL_TASKS, collect_miniwob, load_labels

    assert "login-user-popup" in VAL_TASKS
    data = tmp_path_factory.mktemp("heldout")
    collect_miniwob(data, seeds=8, only={"login-user-popup"}, rng_seed=7)
    return [(Image.open(r["image"]).convert("RGB"), r["boxes"]) for r in load_labels(data)]


def test_onnx_model_finds_button_and_text_field(heldout):
    det = Detector()
    assert det.backend == "onnx", f"the shipped model {DEFAULT_MODEL} did not load"
    buttons = both = 0
    for image, boxes in heldout:
        found = det.detect(image)
        assert all(e.source == "vision" and 0 < e.confidence <= 1 and e.role in CLASSES for e in found)
        button = best_iou(found, truth(boxes, "push button")) > 0.5
        entry = any(best_iou(found, b) > 0.5 for b in boxes if b[4] == CLASSES.index("entry"))
        buttons += button
        both += button and entry
    # the model is weak (held-out F1 0.40, tests/test_detect_heldout.py holds that figure): it finds the
    # button on about half of the layouts, and sometimes the button and a field together
    assert buttons >= 2 and both >= 1, (buttons, both)


def test_cv_fallback_when_model_missing(screen, tmp_path, caplog):
    image, boxes = screen
    det = Detector(model_path=tmp_path / "nowhere.onnx")
    with caplog.at_level("WARNING"):
        assert det.backend == "cv"
    assert "classic-CV fallback" in caplog.text
    found = det.detect(image)
    assert best_iou(found, truth(boxes, "push button")) > 0.5
    assert best_iou(found, truth(boxes, "entry")) > 0.5


def test_broken_model_file_falls_back(tmp_path):
    bad = tmp_path / "detector.onnx"
    bad.write_bytes(b"not an onnx model")
    assert Detector(model_path=bad).backend == "cv"


@pytest.mark.parametrize("colour", [(0, 0, 0), (255, 255, 255)])
def test_blank_screen_is_empty(colour, tmp_path):
    blank = Image.new("RGB", (1920, 1080), colour)
    assert Detector().detect(blank) == []
    assert Detector(model_path=tmp_path / "none.onnx").detect(blank) == []


def test_4k_screen_is_bounded(screen):
    image, boxes = screen
    big = image.resize((3840, 2400), Image.BILINEAR)  # the same UI at 3x
    canvas, _ = prepare(big)
    assert canvas.shape[1] <= MAX_INPUT[0] and canvas.shape[0] <= MAX_INPUT[1]
    found = Detector().detect(big)
    assert all(0 <= e.bbox[0] < 3840 and 0 <= e.bbox[1] < 2400 for e in found)
    button = [v * 3 for v in truth(boxes, "push button")[:4]]
    assert best_iou(found, button) > 0.3


def test_crop_of_a_screen_keeps_its_pixel_scale(heldout):
    """A button the model finds well on the whole screen it also finds in a crop around it (same pixel scale)."""
    det = Detector()
    image, boxes = next((im, bx) for im, bx in heldout if best_iou(det.detect(im), truth(bx, "push button")) > 0.6)
    x, y, w, h, _ = truth(boxes, "push button")
    x0, y0 = (x - 40) // 8 * 8, (y - 30) // 8 * 8  # on the model's grid (stride 4 at scale 0.5)
    crop = image.crop((x0, y0, x + w + 40, y + h + 30))
    _, scale = prepare(crop)
    assert scale == pytest.approx(0.5)
    found = det.detect(crop)
    assert best_iou(found, [x - x0, y - y0, w, h]) > 0.5


def test_decode_inverts_the_training_targets():
    """Targets built the way training builds them decode back to the same boxes (train/infer agree)."""
    from cua.perception.detect_train import make_targets

    boxes = np.array([[40, 20, 140, 44, 0], [200, 100, 216, 116, 2], [20, 150, 300, 178, 1]], np.float32)
    heat, reg, _ = make_targets(boxes, (200 // 4, 320 // 4), len(CLASSES))
    out = np.concatenate([heat, reg[:2], reg[2:]], 0)
    got, scores, cls = decode(out, len(CLASSES), 0.5)
    keep = nms(got, scores)
    assert sorted(cls[keep].tolist()) == [0, 1, 2]
    for b in boxes:
        ious = [iou((g[0], g[1], g[2] - g[0], g[3] - g[1]), [b[0], b[1], b[2] - b[0], b[3] - b[1]]) for g in got[keep]]
        assert max(ious) > 0.9


def test_inference_never_imports_torch(screen, tmp_path):
    image, _ = screen
    path = tmp_path / "screen.png"
    image.save(path)
    code = (
        "import sys; from PIL import Image; from cua.perception.detect import Detector; "
        f"d = Detector(score_threshold=0.2); found = d.detect(Image.open({str(path)!r})); "
        "print(d.backend, len(found), 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    backend, count, torch_loaded = out.stdout.split()
    assert backend == "onnx" and int(count) > 0 and torch_loaded == "False"


def test_shipped_model_metadata():
    meta = json.loads(Path(DEFAULT_MODEL).with_suffix(".json").read_text())
    assert DEFAULT_MODEL.stat().st_size < 20 * 1024 * 1024
    assert meta["classes"] == CLASSES
    val = meta["validation"]
    for backend in ("onnx", "cv_fallback"):
        for stats in val[backend].values():
            assert 0 <= stats["precision"] <= 1 and 0 <= stats["recall"] <= 1
    assert meta["dataset"]["train"] > 0 and meta["dataset"]["val"] > 0
