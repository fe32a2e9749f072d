"""OSWorld's Chrome metrics: tabs, URLs, bookmarks, cookies, history, settings, saved pages and PDFs."""

from __future__ import annotations

import io
import itertools
import os
import re
import shutil

from cua.eval.osworld.metrics.rules import compare_urls, lists_equal_unordered


def _url_of(info):
    return info.get("url", None) if isinstance(info, dict) else info


def is_expected_active_tab(active_tab_info, rule: dict) -> float:
    if not active_tab_info:
        return 0.0
    if rule["type"] != "url":
        return 0
    return 1 if compare_urls(rule["url"], _url_of(active_tab_info)) else 0


def is_expected_active_tab_approximate(active_tab_info, rule: dict) -> float:
    from urllib.parse import urlparse, urlunparse

    if not active_tab_info:
        return 0.0
    if rule["type"] != "url":
        return 0

    def strip_query(url):
        return urlunparse(urlparse(url)._replace(query=""))

    return 1 if strip_query(rule["url"]) == strip_query(_url_of(active_tab_info)) else 0


def is_expected_url_pattern_match(result, rules) -> float:
    if not result:
        return 0.0
    if isinstance(result, str):
        url = result
    elif isinstance(result, dict) and "url" in result:
        url = result["url"]
    else:
        return 0.0
    return 1.0 if all(re.search(p, url) for p in rules["expected"]) else 0.0


def is_expected_installed_extensions(installed_extensions, expected) -> float:
    if not installed_extensions:
        return 0.0
    return 1.0 if set(expected["expected"]).issubset(set(installed_extensions)) else 0.0


def is_expected_tabs(open_tabs: list, rule: dict) -> float:
    if not open_tabs:
        return 0.0
    if rule["type"] != "url":
        return 0
    actual = [tab["url"] for tab in open_tabs]
    return 1 if lists_equal_unordered(rule["urls"], actual, compare_urls) else 0


def is_expected_bookmarks(bookmarks, rule: dict) -> float:
    if not bookmarks:
        return 0.0
    children = None
    kind = rule["type"]
    if kind in ("bookmark_bar_folders_names", "bookmark_bar_websites_urls", "liked_authors_websites_urls"):
        children = bookmarks["bookmark_bar"]["children"]
    if kind == "bookmark_bar_folders_names":
        return 1.0 if {b["name"] for b in children if b["type"] == "folder"} == set(rule["names"]) else 0.0
    if kind == "bookmark_bar_websites_urls":
        return 1.0 if {b["url"] for b in children if b["type"] == "url"} == set(rule["urls"]) else 0.0
    if kind == "liked_authors_websites_urls":
        folder = next((b for b in children if b["type"] == "folder" and b["name"] == "Liked Authors"), None)
        if not folder:
            return 0.0
        liked = [b["url"] for b in folder["children"] if b["type"] == "url"]
        urls = rule["urls"]
        for i, url in enumerate(urls):  # OSWorld rewrites the rule's list in place
            if isinstance(url, str):
                urls[i] = [url]
        return 1.0 if any(set(combo) == set(liked) for combo in itertools.product(*urls)) else 0.0
    raise TypeError(f"{kind} not support yet!")


def is_expected_search_query(active_tab_info, rules: dict) -> float:
    if not active_tab_info:
        return 0.0
    return 1.0 if re.search(rules["expect"]["pattern"], active_tab_info["url"]) else 0.0


def pdf_text(path: str) -> str:
    """A PDF's text, page after page (pypdf; OSWorld uses PyMuPDF: see docs/osworld_metrics.md)."""
    from pypdf import PdfReader

    return "".join(page.extract_text() + "\n" for page in PdfReader(path).pages).strip()


def compare_pdfs(pdf1_path, pdf2_path):
    """Mean fuzzy ratio of the texts of paired PDFs; a pair that cannot be read scores 0."""
    from rapidfuzz import fuzz

    if type(pdf2_path) is not list:
        pdf1_path, pdf2_path = [pdf1_path], [pdf2_path]
    score = 0.0
    for p1, p2 in zip(pdf1_path, pdf2_path):
        try:
            score += fuzz.ratio(pdf_text(p1), pdf_text(p2)) / 100
        except Exception:
            pass
    return score / len(pdf2_path)


def _pdf_images(path: str) -> list:
    from PIL import Image
    from pypdf import PdfReader

    images = []
    for page in PdfReader(path).pages:
        for img in page.images:
            try:
                images.append(Image.open(io.BytesIO(img.data)))
            except Exception:
                pass
    return images


def compare_pdf_images(pdf1_path: str, pdf2_path: str, **kwargs) -> float:
    """Share of paired embedded images whose perceptual hashes differ by at most 5 bits."""
    import imagehash

    if not pdf1_path or not pdf2_path:
        return 0.0
    if not all(map(os.path.exists, [pdf1_path, pdf2_path])):
        return 0.0
    try:
        im1, im2 = _pdf_images(pdf1_path), _pdf_images(pdf2_path)
    except Exception:
        return 0.0
    if len(im1) != len(im2):
        return 0.0
    if not im1:
        return 1.0
    return sum(1 for a, b in zip(im1, im2) if imagehash.phash(a) - imagehash.phash(b) <= 5) / len(im1)


def _archive_comparator(file_type: str):
    from cua.eval.osworld.metrics import docs, slides, table, vlc, vscode

    table_ = {
        "text": vscode.compare_text_file, "pdf": compare_pdfs, "docx": docs.compare_docx_files,
        "ppt": slides.compare_pptx_files, "image": vlc.compare_images, "csv": table.compare_csv,
        "table": table.compare_table, "audio": vlc.compare_audios, "video": vlc.compare_videos,
    }
    if file_type not in table_:
        raise ValueError(f"[ERROR]: not support file type: {file_type}")
    return table_[file_type]


def compare_archive(pred_path: str, gold_path: str, **kwargs) -> float:
    """Unpack both archives beside them (<stem>_pred, <stem>_gold, the latter kept as a cache), require
    the same file names, and average the per-file metric of file_type."""
    file_path = kwargs.pop("file_path", "")
    if not pred_path:
        return 0.0
    pred_dir = os.path.splitext(pred_path)[0] + "_pred"
    gold_dir = os.path.splitext(gold_path)[0] + "_gold"
    if os.path.exists(pred_dir):
        shutil.rmtree(pred_dir, ignore_errors=True)
    os.makedirs(pred_dir)
    shutil.unpack_archive(pred_path, pred_dir)
    if not os.path.exists(gold_dir):
        os.makedirs(gold_dir)
        shutil.unpack_archive(gold_path, gold_dir)
    pred_files = sorted(os.listdir(os.path.join(pred_dir, file_path)))
    gold_files = sorted(os.listdir(os.path.join(gold_dir, file_path)))
    if pred_files != gold_files:
        return 0.0
    compare = _archive_comparator(kwargs.pop("file_type", "text"))
    score = 0
    for f1, f2 in zip(pred_files, gold_files):
        score += compare(os.path.join(pred_dir, file_path, f1), os.path.join(gold_dir, file_path, f2), **kwargs)
    return score / len(pred_files)


def compare_htmls(html_path1: str, html_path2: str, **options) -> float:
    """Documents equal node by node: tag names, stripped texts, attributes (sdnum optionally ignored)."""
    from bs4 import BeautifulSoup, Tag

    with open(html_path1, encoding="utf-8") as f:
        soup1 = BeautifulSoup(f, "lxml")
    with open(html_path2, encoding="utf-8") as f:
        soup2 = BeautifulSoup(f, "lxml")
    ignore_sdnum = options.get("ignore_sdnum", None)

    def same(e1, e2) -> bool:
        if not (isinstance(e1, Tag) and isinstance(e2, Tag)):
            return e1 == e2
        if e1.name != e2.name or e1.text.strip() != e2.text.strip():
            return False
        if e1.attrs != e2.attrs:
            if ignore_sdnum:
                return {k: v for k, v in e1.attrs.items() if k != "sdnum"} == \
                    {k: v for k, v in e2.attrs.items() if k != "sdnum"}
            return False
        return True

    for e1, e2 in zip(soup1.descendants, soup2.descendants):
        if not same(e1, e2):
            return 0.0
    return 1.0


def is_cookie_deleted(cookie_data, rule):
    if rule["type"] != "domains":
        raise TypeError(f"{rule['type']} not support yet!")
    domains = [c[1] for c in cookie_data]
    return 0.0 if any(compare_urls(d, cd) for d in rule["domains"] for cd in domains) else 1.0


def is_shortcut_on_desktop(shortcuts: dict, rule):
    kind = rule["type"]
    if kind == "name":
        line = "Name=" + rule["name"] + "\n"
    elif kind == "exec":
        line = "Exec=" + rule["exec"] + "\n"
    else:
        raise TypeError(f"{kind} not support yet!")
    return 1.0 if any(line in content for content in shortcuts.values()) else 0.0


def check_history_deleted(history_data, rule):
    if rule["type"] != "keywords":
        raise TypeError(f"{rule['type']} not support yet!")
    urls = [h[0] for h in history_data]
    return 0.0 if any(k in u for k in rule["keywords"] for u in urls) else 1.0


def check_enabled_experiments(enabled_experiments, rule):
    names = [e.split("@")[0] for e in enabled_experiments]
    if rule["type"] != "names":
        raise TypeError(f"{rule['type']} not support yet!")
    return 1.0 if names == rule["names"] else 0.0


def check_font_size(font_size, rule):
    size = font_size["default_font_size"]
    if rule["type"] == "value":
        return 1.0 if size == rule["value"] else 0.0
    if rule["type"] == "range":
        return 1.0 if rule["min"] < size < rule["max"] else 0.0
    raise TypeError(f"{rule['type']} not support yet!")


def is_added_to_steam_cart(active_tab_info, rule):
    content = active_tab_info["content"]
    return 0.0 if any(item not in content for item in rule["items"]) else 1.0


