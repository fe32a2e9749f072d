"""OCR on real-font renderings: known words and boxes, phrases split at wide gaps, bad input bounded."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
from PIL import Image

from cua.perception.ocr import ocr
from tests.perception_fixtures import DEJAVU, app_window, text_image


def _names(els):
    return [e.name for e in els]


def test_reads_known_words_with_boxes_where_they_were_drawn():
    img = text_image([(40, 40, "Open Settings"), (40, 120, "Cancel"), (400, 120, "Apply changes")])
    els = ocr(img)
    names = _names(els)
    assert "Open Settings" in names and "Cancel" in names and "Apply changes" in names, names
    cancel = next(e for e in els if e.name == "Cancel")
    x, y, w, h = cancel.bbox
    assert 30 <= x <= 50 and 110 <= y <= 135 and 35 <= w <= 75 and 8 <= h <= 30, cancel.bbox
    assert cancel.source == "ocr" and cancel.role == "text" and 0.5 <= cancel.confidence <= 1.0
    assert cancel.signature == "ocr/text:Cancel"


def test_menu_bar_words_become_separate_elements_with_word_boxes():
    els = ocr(app_window())
    names = _names(els)
    for w in ("File", "Edit", "Search", "View", "Help"):
        assert w in names, names
    line = next(e for e in els if e.name.startswith("The quick"))
    words = line.attrs["words"]
    assert [w[0] for w in words][:3] == ["The", "quick", "brown"]
    xs = [w[1] for w in words]
    assert xs == sorted(xs) and all(line.bbox[0] - 2 <= w[1] <= line.bbox[0] + line.bbox[2] for w in words)
    with_words = ocr(app_window(), words=True)
    assert any(e.name == "quick" and e.attrs["level"] == "word" for e in with_words)


def test_region_limits_the_read_and_keeps_screen_coordinates():
    img = app_window(menu_open=True)
    els = ocr(img, region=(330, 130, 231, 151))
    names = _names(els)
    assert "Find Next" in names and "Replace" in names and "File" not in names
    rep = next(e for e in els if e.name == "Replace")
    assert 330 <= rep.bbox[0] < 400 and 200 <= rep.bbox[1] < 240, rep.bbox


def test_blank_and_black_screens_return_nothing_fast():
    for colour in ("black", "white", (12, 34, 56)):
        t = time.perf_counter()
        assert ocr(Image.new("RGB", (1280, 800), colour)) == []
        assert time.perf_counter() - t < 5  # bounded (generous: shared CI cores), not a speed claim
    assert ocr(Image.new("RGB", (2, 2), "white")) == []
    assert ocr(app_window(), region=(5000, 5000, 10, 10)) == []


def test_4k_screen_is_read_with_screen_coordinates():
    img = Image.new("RGB", (3840, 2160), "white")
    img.paste(text_image([(10, 10, "Downloads folder")], size=(400, 60), fsize=30), (3000, 1800))
    els = ocr(img)
    hit = next(e for e in els if "Downloads" in e.name)
    assert 2990 <= hit.bbox[0] <= 3040 and 1790 <= hit.bbox[1] <= 1830, hit.bbox


@pytest.mark.parametrize("text", ["Привет мир", "文件 编辑 搜索", "مرحبا", "ありがとう"])
def test_non_latin_text_never_crashes(text):
    img = Image.new("RGB", (600, 120), "white")
    from PIL import ImageDraw, ImageFont

    cjk = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"
    path = cjk if any(ord(c) > 0x2E80 for c in text) and os.path.exists(cjk) else DEJAVU
    fnt = ImageFont.truetype(path, 28)
    ImageDraw.Draw(img).text((20, 40), text, fill="black", font=fnt)
    els = ocr(img)
    assert isinstance(els, list)
    for e in els:  # whatever the shipped (Chinese + Latin) models make of it, boxes are sane
        assert e.bbox[2] > 0 and e.bbox[3] > 0 and e.name.strip()
    if text.startswith("文件") and path == cjk:
        assert any("文件" in e.name or "编辑" in e.name for e in els), _names(els)


def test_accepts_numpy_and_greyscale_input():
    img = text_image([(40, 40, "Numbers 12345")])
    assert any("12345" in e.name for e in ocr(np.asarray(img)))
    assert any("12345" in e.name for e in ocr(img.convert("L")))


def test_icon_reads_are_junk_but_short_real_words_are_not():
    from cua.perception.ocr import _junk

    assert _junk("口回国", 0.95) and _junk("?", 0.99) and _junk("7", 0.5)
    assert not _junk("中国", 0.95) and not _junk("OK", 0.9) and not _junk("12", 0.9)
