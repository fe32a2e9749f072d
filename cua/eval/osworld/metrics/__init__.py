"""OSWorld's evaluator metrics, reimplemented: METRICS maps OSWorld's function names to callables.

Each metric takes (result, expected, **options) or (result, **options) as the reference's does and
returns its verdict (1.0 pass / 0.0 fail, or a score). The heavy libraries (openpyxl, pandas,
python-docx, python-pptx, pypdf, pdfplumber, Pillow, scikit-image...) are imported inside the
functions, so importing this package is cheap. Conformance with desktop-env 1.0.2 is proven by
tests/osworld/golden.jsonl (`make osworld-golden`), replayed by tests/osworld/test_metrics_golden.py.
"""

from __future__ import annotations

import importlib
from typing import Callable

# module -> names it defines; one table from which METRICS is built
_FAMILIES: dict[str, tuple[str, ...]] = {
    "general": (
        "check_include_exclude", "exact_match", "match_in_list", "is_in_list", "literal_match",
        "diff_text_file", "fuzzy_match", "fuzzy_place_math", "check_csv", "check_list",
        "check_accessibility_tree", "run_sqlite3", "check_json", "check_direct_json_object",
        "compare_time_in_speedtest_results", "is_included_all_json_objects",
        "is_gold_text_included_in_pdf", "file_contains", "check_line_number",
        "compare_terminal_and_txt", "compare_python_pure_text",
    ),
    "docs": (
        "find_default_font", "contains_page_break", "compare_docx_files", "compare_docx_tables",
        "compare_docx_images", "compare_image_text", "compare_line_spacing", "compare_font_names",
        "compare_subscript_contains", "has_page_numbers_in_footers", "is_first_line_centered",
        "check_file_exists", "check_tabstops", "compare_contains_image", "evaluate_colored_words_in_tables",
        "check_highlighted_words", "evaluate_strike_through_last_paragraph", "check_italic_font_size_14",
        "compare_docx_lines", "compare_docx_files_and_ignore_new_lines", "compare_references",
    ),
    "slides": (
        "compare_pptx_files", "check_presenter_console_disable", "check_image_stretch_and_center",
        "check_slide_orientation_Portrait", "evaluate_presentation_fill_to_rgb_distance", "check_left_panel",
        "check_transition", "check_page_number_colors", "check_auto_saving_time",
    ),
    "table": ("compare_table", "compare_csv", "compare_conference_city_in_order"),
}


def _load() -> dict[str, Callable[..., float]]:
    table: dict[str, Callable[..., float]] = {}
    for module, names in _FAMILIES.items():
        mod = importlib.import_module(f"{__name__}.{module}")
        for name in names:
            table[name] = getattr(mod, name)
    return table


METRICS: dict[str, Callable[..., float]] = _load()


def infeasible(declared_infeasible: bool) -> float:
    """OSWorld scores an infeasible task 1 when the agent's last action declared it infeasible (FAIL)."""
    return 1.0 if declared_infeasible else 0.0


NEEDS_AGENT_VERDICT = {"infeasible"}
