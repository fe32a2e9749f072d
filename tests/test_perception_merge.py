"""Fusion: a11y wins over OCR for the same word, OCR names nameless boxes, ids and signatures are stable."""

from __future__ import annotations

import pytest

from cua.perception.merge import assign_ids, iou, merge
from cua.perception.pipeline import Perceiver, parse_sources
from tests.perception_fixtures import app_window, el


def test_a11y_and_ocr_of_the_same_word_become_one_element_with_the_a11y_role():
    a11y = [el("menu", "Search", (330, 102, 60, 26), path=["frame:Editor", "menu bar:"])]
    ocr = [el("text", "Search", (336, 107, 50, 17), source="ocr")]
    out = merge(a11y, ocr)
    assert len(out) == 1
    assert out[0].role == "menu" and out[0].source == "a11y" and out[0].signature == "frame:Editor/menu bar:/menu:Search"
    assert out[0].attrs["sources"] == ["a11y", "ocr"]


def test_ocr_names_a_nameless_button_and_other_text_is_kept():
    a11y = [el("push button", "", (100, 100, 80, 30))]
    ocr = [el("text", "OK", (125, 106, 25, 16), source="ocr"), el("text", "Elsewhere", (400, 400, 70, 16), source="ocr")]
    out = merge(a11y, ocr)
    assert [(e.role, e.name, e.source) for e in out] == [("push button", "OK", "a11y"), ("text", "Elsewhere", "ocr")]
    assert out[0].attrs["name_from"] == "ocr" and out[0].signature == "push button:OK"


def test_a_big_nameless_container_is_not_named_by_text_inside_it():
    out = merge([el("panel", "", (0, 0, 1000, 700))], [el("text", "Hello", (10, 10, 40, 15), source="ocr")])
    assert {e.name for e in out} == {"", "Hello"}


def test_vision_boxes_that_match_nothing_become_icons_and_duplicates_are_dropped():
    a11y = [el("push button", "Save", (10, 10, 60, 24))]
    vision = [el("push button", "", (11, 11, 58, 22), source="vision"), el("unknown", "", (300, 300, 20, 20), source="vision")]
    out = merge(a11y, [], vision)
    assert [(e.role, e.source) for e in out] == [("push button", "a11y"), ("icon", "vision")]
    assert out[1].signature == "vision/icon:@9,9"


def test_ids_follow_reading_order_and_repeat_names_get_distinct_signatures():
    ocr = [el("text", "Open", (300, 50, 40, 15), source="ocr"), el("text", "Open", (10, 200, 40, 15), source="ocr"),
           el("text", "Close", (10, 52, 40, 15), source="ocr")]
    out = merge([], ocr)
    assert [(e.id, e.name) for e in out] == [("e0", "Close"), ("e1", "Open"), ("e2", "Open")]
    assert [e.signature for e in out] == ["ocr/text:Close", "ocr/text:Open", "ocr/text:Open#1"]
    again = assign_ids(list(reversed(out)))
    assert [e.id for e in again] == ["e0", "e1", "e2"] and again[2].bbox == (10, 200, 40, 15)


def test_two_observations_of_the_same_screen_give_equal_ids_and_signatures():
    a11y = [el("menu", "File", (210, 102, 45, 26)), el("push button", "", (900, 105, 20, 20))]
    img = app_window()
    first, _ = Perceiver("a11y,ocr", incremental=False).perceive(img, a11y)
    second, _ = Perceiver("a11y,ocr", incremental=False).perceive(img.copy(), a11y)
    assert [(e.id, e.signature) for e in first] == [(e.id, e.signature) for e in second]
    assert len({e.signature for e in first}) == len(first)
    file_els = [e for e in first if e.name == "File"]
    assert len(file_els) == 1 and file_els[0].source == "a11y"
    assert any(e.source == "ocr" and e.name == "Search" for e in first)


def test_sources_are_parsed_and_bad_ones_named():
    assert parse_sources("a11y, ocr") == ({"a11y", "ocr"}, False)
    assert parse_sources("auto")[1] is True
    with pytest.raises(ValueError, match="unknown perception source.*'sonar'.*a11y, dom, ocr, vision"):
        parse_sources("ocr,sonar")


def test_iou():
    assert iou((0, 0, 10, 10), (0, 0, 10, 10)) == 1.0
    assert iou((0, 0, 10, 10), (20, 20, 5, 5)) == 0.0
    assert 0.14 < iou((0, 0, 10, 10), (5, 5, 10, 10)) < 0.15
