"""--strict-metrics: the reference's known bugs fixed, each shown on an input where the two disagree."""

from __future__ import annotations

from pathlib import Path

from cua.eval.osworld.metrics import METRICS, metrics_table

INPUTS = Path(__file__).parent / "golden_inputs"


def test_strict_table_replaces_only_the_buggy_metrics():
    strict = metrics_table(strict=True)
    assert metrics_table() is METRICS
    changed = {k for k in strict if strict[k] is not METRICS[k]}
    assert changed == {"check_thunderbird_folder", "check_page_number_colors", "check_green_background",
                       "check_image_size"}


def test_strict_thunderbird_folder_compares_the_messages():
    case = INPUTS / "check_thunderbird_folder--differ-quirk"
    a, b = str(case / "a"), str(case / "b")
    assert METRICS["check_thunderbird_folder"](a, b) == 1.0  # the reference skips every message
    assert metrics_table(True)["check_thunderbird_folder"](a, b) == 0.0
    assert metrics_table(True)["check_thunderbird_folder"](a, a) == 1.0


def test_strict_page_number_colour_reads_rrggbb():
    case = INPUTS / "check_page_number_colors--red-read" / "a.pptx"  # master colour 0F0000: not red
    assert METRICS["check_page_number_colors"](str(case), {"color": "red"}) == 1  # read as F0 00 0?
    assert metrics_table(True)["check_page_number_colors"](str(case), {"color": "red"}) == 0


def test_strict_image_size_measures_content_only_when_asked(tmp_path):
    from PIL import Image

    img = Image.new("RGBA", (40, 30), (0, 0, 0, 0))
    img.paste((255, 0, 0, 255), (5, 5, 15, 10))
    path = tmp_path / "p.png"
    img.save(path)
    rule = {"width": 40, "height": 30, "ignore_transparent": True}
    assert METRICS["check_image_size"](str(path), rule) == 0.0
    assert metrics_table(True)["check_image_size"](str(path), rule) == 0.0
    assert metrics_table(True)["check_image_size"](str(path), {"width": 10, "height": 5, "ignore_transparent": True}) == 1.0
    assert metrics_table(True)["check_image_size"](str(path), {"width": 40, "height": 30}) == 1.0


def test_the_evaluator_scores_with_the_strict_table_only_when_asked():
    from cua.eval.osworld.evaluate import metric

    assert metric("check_thunderbird_folder") is METRICS["check_thunderbird_folder"]
    assert metric("check_thunderbird_folder", metrics_table(True)) is not METRICS["check_thunderbird_folder"]
