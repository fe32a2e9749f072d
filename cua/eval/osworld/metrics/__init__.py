"""OSWorld's evaluator metrics, reimplemented: METRICS maps OSWorld's function names to callables.

`infeasible` is not here: it scores the agent's declaration, not files (cua.eval.osworld.evaluate).
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
    "chrome": (
        "is_expected_active_tab", "is_expected_active_tab_approximate", "is_expected_url_pattern_match",
        "is_expected_installed_extensions", "is_expected_tabs", "is_expected_bookmarks",
        "is_expected_search_query", "compare_pdfs", "compare_pdf_images", "compare_archive", "compare_htmls",
        "is_cookie_deleted", "is_shortcut_on_desktop", "check_history_deleted", "check_enabled_experiments",
        "check_font_size", "is_added_to_steam_cart",
    ),
    "vscode": (
        "check_json_keybindings", "check_json_settings", "compare_text_file", "compare_zip_files",
        "compare_config", "compare_answer", "is_extension_installed", "check_python_file_by_test_suite",
        "check_html_background_image", "compare_result_files",
    ),
    "thunderbird": ("check_thunderbird_prefs", "check_thunderbird_filter", "check_thunderbird_folder"),
    "basic_os": ("check_gnome_favorite_apps", "is_utc_0", "check_text_enlarged", "check_moved_jpgs",
                 "is_in_vm_clickboard"),
    "others": ("compare_epub", "check_mp3_meta", "check_pdf_pages", "check_libre_locale"),
    "vlc": (
        "is_vlc_playing", "is_vlc_recordings_folder", "is_vlc_fullscreen", "compare_images", "compare_audios",
        "compare_videos", "check_qt_bgcone", "check_qt_max_volume", "check_qt_minimal_view",
        "check_qt_slider_colours", "check_global_key_play_pause", "check_one_instance_when_started_from_file",
    ),
    "gimp": (
        "compare_image_list", "check_brightness_decrease_and_structure_sim",
        "check_saturation_increase_and_structure_sim", "check_file_exists_and_structure_sim",
        "check_triangle_position", "check_structure_sim", "check_structure_sim_resized",
        "check_contrast_increase_and_structure_sim", "check_config_status", "check_image_size",
        "check_palette_and_structure_sim", "check_textbox_on_leftside", "check_image_mirror",
        "check_green_background", "check_image_file_size",
    ),
}


def _load() -> dict[str, Callable[..., float]]:
    table: dict[str, Callable[..., float]] = {}
    for module, names in _FAMILIES.items():
        mod = importlib.import_module(f"{__name__}.{module}")
        for name in names:
            table[name] = getattr(mod, name)
    return table


METRICS: dict[str, Callable[..., float]] = _load()


def metrics_table(strict: bool = False) -> dict[str, Callable[..., float]]:
    """OSWorld's metrics as the reference scores them, or with its known bugs fixed (`--strict-metrics`)."""
    if not strict:
        return METRICS
    from cua.eval.osworld.metrics.strict import STRICT

    return {**METRICS, **STRICT}

