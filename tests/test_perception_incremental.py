"""Incremental perception: after a change, re-reading only changed tiles gives what a cold read gives."""

from __future__ import annotations

import numpy as np

from cua.perception.pipeline import Perceiver
from cua.perception.tiles import changed_tiles, merge_overlapping, tile_regions
from tests.perception_fixtures import app_window, el


def _view(els):
    """Names by source; OCR may drop or add a space between runs on different crops ('foxjumps')."""
    return sorted(("".join(e.name.split()).lower(), e.source) for e in els)


def test_changed_tiles_and_regions():
    a = np.zeros((200, 300), np.uint8)
    b = a.copy()
    b[70:80, 140:150] = 255
    grid = changed_tiles(a, b, tile=64)
    assert grid.shape == (4, 5) and grid.sum() == 1 and grid[1, 2]  # the tile at x 128..191, y 64..127
    assert tile_regions(grid, 64, (300, 200)) == [(128, 64, 64, 64)]
    assert merge_overlapping([(0, 0, 10, 10), (5, 5, 10, 10), (50, 50, 5, 5)]) == [(0, 0, 15, 15), (50, 50, 5, 5)]


def test_incremental_after_opening_a_menu_matches_a_cold_read():
    a11y = [el("menu", "Search", (330, 102, 60, 26))]
    p = Perceiver("a11y,ocr")
    first, t1 = p.perceive(app_window(), a11y)
    assert p.last_regions == [(0, 0, 1280, 800)] and "ocr" in t1 and "merge" in t1
    opened = app_window(menu_open=True)
    incr, _ = p.perceive(opened, a11y)
    regions = p.last_regions
    assert regions and all(r[2] * r[3] < 1280 * 800 / 4 for r in regions), regions  # only part was re-read
    cold, _ = Perceiver("a11y,ocr", incremental=False).perceive(opened, a11y)
    assert _view(incr) == _view(cold)
    for name in ("Find Next", "Replace", "Go to Line", "Saved to disk", "File"):
        assert any(e.name == name for e in incr), (name, _view(incr))
    # unchanged screen: nothing re-read, same result
    again, _ = p.perceive(opened.copy(), a11y)
    assert p.last_regions == [] and _view(again) == _view(incr)
    # and back: the menu's text is gone
    closed, _ = p.perceive(app_window(), a11y)
    assert not any(e.name == "Find Next" for e in closed) and _view(closed) == _view(first)


def test_size_change_or_reset_reads_everything():
    p = Perceiver("ocr")
    p.perceive(app_window(), [])
    small = app_window().crop((0, 0, 640, 400))
    p.perceive(small, [])
    assert p.last_regions == [(0, 0, 640, 400)]
    p.reset()
    p.perceive(small, [])
    assert p.last_regions == [(0, 0, 640, 400)]


def test_ocr_named_false_skips_text_the_structured_source_already_names():
    a11y = [el("menu", "Search", (330, 102, 60, 26)), el("label", "Saved to disk", (215, 395, 110, 26))]
    full, _ = Perceiver("a11y,ocr", incremental=False).perceive(app_window(), a11y)
    lean, _ = Perceiver("a11y,ocr", incremental=False, ocr_named=False).perceive(app_window(), a11y)
    by_name = {e.name: e for e in full}
    assert by_name["Search"].attrs.get("sources") == ["a11y", "ocr"]
    lean_names = {e.name: e for e in lean}
    assert "sources" not in lean_names["Search"].attrs and "sources" not in lean_names["Saved to disk"].attrs
    assert {"File", "Edit", "View"} <= set(lean_names)  # text no structured element names is still read
