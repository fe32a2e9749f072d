"""Rule-based OSWorld metrics on plain values, text files and JSON: verdicts as floats."""

from __future__ import annotations

import csv
import datetime
import difflib
import json
import os
import re
import sqlite3
from typing import Any

from cua.eval.osworld.metrics.rules import match_record, match_value_to_rule


def _ratio(a, b) -> float:
    from rapidfuzz import fuzz

    return fuzz.ratio(a, b)


def check_include_exclude(result: str, rules: dict) -> float:
    if result is None:
        return 0.0
    ok = all(r in result for r in rules.get("include", [])) and all(r not in result for r in rules.get("exclude", []))
    return 1.0 if ok else 0.0


def exact_match(result, rules) -> float:
    return 1.0 if result == rules["expected"] else 0.0


def match_in_list(result, rules) -> float:
    return 1.0 if result in rules["expected"] else 0.0


def is_in_list(result, rules) -> float:
    return 1.0 if rules["expected"] in result else 0.0


def literal_match(result: Any, expected: Any, **options) -> float:
    kind = options.get("type", "str")
    fold = options.get("ignore_case", False)
    if kind == "str":
        a, b = str(result), str(expected)
        return float(a.lower() == b.lower() if fold else a == b)
    if kind == "list":
        if type(result) not in (list, tuple) or type(expected) not in (list, tuple) or len(result) != len(expected):
            return 0.0
        norm = (lambda s: str(s).lower()) if fold else str
        return float([norm(s) for s in result] == [norm(s) for s in expected])
    raise NotImplementedError(f"literal_match type {kind!r} is not supported")


def diff_text_file(result: str, expect: str) -> float:
    if result is None:
        return 0.0
    with open(result) as f:
        a = f.read().splitlines()
    with open(expect) as f:
        b = f.read().splitlines()
    return difflib.SequenceMatcher(a=a, b=b).ratio()


def fuzzy_match(result, rules) -> float:
    return _ratio(result, rules["expected"]) / 100.0


def fuzzy_place_math(result_file_path, rules) -> float:
    if result_file_path is None:
        return 0.0
    from docx import Document

    words = [w for p in Document(result_file_path).paragraphs for w in p.text.split()]
    scores = [max([0] + [_ratio(w, ans) / 100 for ans in rules["expected"]]) for w in words]
    if len(scores) != 3:
        return 0.0
    return sum(scores) / 3


def check_csv(result: str, rules: dict) -> float:
    if result is None:
        return 0.0
    expect = rules.get("expect", [])
    unexpect = rules.get("unexpect", [])
    found = [False] * len(expect)
    clean = True
    with open(result) as f:
        for record in csv.DictReader(f):
            for i, r in enumerate(expect):
                found[i] = found[i] or match_record(r, record)
            clean = clean and not any(match_record(r, record) for r in unexpect)
    return float(all(found) and clean)


def check_list(result: str, rules: dict) -> float:
    if result is None:
        return 0.0
    expect = [re.compile(p) for p in rules.get("expect", [])]
    unexpect = [re.compile(p) for p in rules.get("unexpect", [])]
    found = [False] * len(expect)
    clean = True
    with open(result) as f:
        for line in f:
            for i, r in enumerate(expect):
                found[i] = found[i] or r.search(line) is not None
            clean = clean and all(r.search(line) is None for r in unexpect)
    return float(all(found) and clean)


_A11Y_PARTS = {"st": "state", "attr": "attributes", "cp": "component", "doc": "document", "txt": "text",
               "val": "value", "act": "action"}
A11Y_NAMESPACES = {
    "ubuntu": {**_A11Y_PARTS, "docattr": "document/attributes"},
    "windows": {**_A11Y_PARTS, "docattr": "document/attributes", "class": "class"},
    "macos": {**{k: v for k, v in _A11Y_PARTS.items() if k != "attr"}, "attr": "attributes", "role": "role"},
}
A11Y_NAMESPACES = {
    os_: {k: f"https://accessibility.{os_}.example.org/ns/{v}" for k, v in parts.items()}
    for os_, parts in A11Y_NAMESPACES.items()
}


def check_accessibility_tree(result: str, rules: list, osname: str = "ubuntu") -> float:
    import lxml.etree
    from lxml.cssselect import CSSSelector

    ns = A11Y_NAMESPACES[osname]
    tree = lxml.etree.fromstring(result)
    total = 1.0
    for r in rules:
        if "xpath" in r:
            elements = tree.xpath(r["xpath"], namespaces=ns)
        elif "selectors" in r:
            elements = CSSSelector(", ".join(r["selectors"]), namespaces=ns)(tree)
        else:
            raise ValueError("At least one of xpath and selectors is required")
        if len(elements) == 0:
            return 0.0
        if "text" in r:
            want = r["text"]
            score = 0
            for e in elements:
                got = e.text or None
                score = max(score, want == got if r["exact"] else _ratio(want, got) / 100.0)
        else:
            score = 1.0
        total *= score
    return float(total)


def run_sqlite3(result: str, rules: dict) -> float:
    return float(sqlite3.connect(result).execute(rules["sql"]).fetchone()[0] or 0)


def _load_json_or_yaml(path: str, is_yaml: bool):
    with open(path, encoding="utf-8") as f:
        if is_yaml:
            import yaml

            return yaml.safe_load(f)
        return json.load(f)


def check_json(result: str, rules: dict, is_yaml: bool = False) -> float:
    if result is None or not os.path.exists(result):
        return 0.0
    try:
        data = _load_json_or_yaml(result, is_yaml)
    except Exception:
        return 0.0
    if is_yaml and data is None:
        return 0.0
    ok = True
    for r in rules.get("expect", {}):
        value = data
        try:
            for k in r["key"]:
                value = value[k]
        except (KeyError, TypeError):
            return 0.0
        except Exception:
            return 0.0
        try:
            ok = ok and match_value_to_rule(value, r)
        except Exception:
            return 0.0
    for r in rules.get("unexpect", {}):
        value = data
        try:
            for k in r["key"]:
                try:
                    value = value[k]
                except (KeyError, TypeError):
                    value = None
                    break
            ok = ok and not match_value_to_rule(value, r)
        except Exception:
            return 0.0
    return float(ok)


def check_direct_json_object(result, rules) -> float:
    """Compare a JSON object (or its text, single quotes allowed) key by key with rules["expected"]."""
    if isinstance(result, str):
        result = json.loads(result.strip().replace("'", '"'))
    if result is None:
        return 0.0
    try:
        expected = rules.get("expected", {})
        if expected:
            for value in expected.values():
                if value == "__EVALUATION_FAILED__":
                    return 0.0
    except Exception:
        return 0.0
    try:
        expected = rules["expected"]
        if not rules.get("expect_in_result", False):
            for key in expected.keys():
                want = expected.get(key)
                if expected.get("ignore_list_order", False):
                    if sorted(want) != sorted(result.get(key)):
                        return 0.0
                elif want != result.get(key):
                    return 0.0
            return 1.0
        for key in expected.keys():
            want = expected.get(key)
            got = result.get(key)
            if isinstance(want, list):
                hit = any(
                    (isinstance(got, list) and w in got) or (isinstance(got, str) and w == got) for w in want
                )
                if not hit:
                    return 0.0
            elif isinstance(want, str):
                if want not in got:
                    return 0.0
            else:
                return 0.0
        return 1.0
    except Exception:
        return 0.0


def compare_time_in_speedtest_results(speedtest_result_path, time_diff):
    """The second CSV line's time (HH:MM, last 5 chars of column 2) is within time_diff minutes of now."""
    if not speedtest_result_path:
        return 0
    try:
        with open(speedtest_result_path) as f:
            for i, line in enumerate(f):
                if i == 1:
                    date = line.split(",")[1]
                    break
            now = datetime.datetime.strptime(datetime.datetime.now().strftime("%H:%M"), "%H:%M")
            then = datetime.datetime.strptime(date[-5:], "%H:%M")
            if not abs((then - now).total_seconds()) / 60 < int(time_diff):
                return 0
        return 1
    except Exception:
        return 0


def is_included_all_json_objects(gold_file_path, result_file_path):
    if not gold_file_path or not result_file_path:
        return 0
    with open(gold_file_path) as f:
        gold = json.load(f)
    with open(result_file_path) as f:
        got = json.load(f)
    return 0 if any(k not in got.keys() or gold[k] != got[k] for k in gold.keys()) else 1


def is_gold_text_included_in_pdf(pdf_file_path, gold_text_path):
    if not gold_text_path or not pdf_file_path:
        return 0
    import pdfplumber

    with open(gold_text_path) as f:
        gold = json.load(f)
    with pdfplumber.open(pdf_file_path) as pdf:
        text = "".join(page.extract_text() for page in pdf.pages)
    return 0 if any(v not in text for v in gold.values()) else 1


def file_contains(file_path, config):
    if not file_path:
        return 0.0
    try:
        with open(file_path) as f:
            text = f.read()
        if any(t not in text for t in config["expected"]):
            return 0.0
    except Exception:
        return 0.0
    return 1.0


_TIME = re.compile(r"([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)")


def check_line_number(file_path, line_number):
    if file_path is None or not os.path.isfile(file_path):
        return 0.0
    try:
        with open(file_path) as f:
            count = sum(1 for line in f if _TIME.search(line))
        return 1 if count == int(line_number["expected"]) else 0
    except Exception:
        return 0.0


def compare_terminal_and_txt(txt_file_path, terminal_output):
    if not txt_file_path or not terminal_output:
        return 0
    with open(txt_file_path) as f:
        return 1 if terminal_output == f.read() else 0


_PY_HEADER = ("#!", "# -*- coding:", "# coding:", "# coding=")


def _normalize_python(text: str) -> str:
    lines = text.splitlines()
    i = 0
    while i < len(lines) and i < 3 and lines[i].strip().startswith(_PY_HEADER):
        i += 1
    return "\n".join(line.expandtabs(4).rstrip() for line in lines[i:] if line.strip())


def compare_python_pure_text(py_file_path, gold_file_path):
    if not py_file_path or not gold_file_path:
        return 0.0
    try:
        with open(py_file_path, encoding="utf-8") as f:
            mine = f.read()
        with open(gold_file_path, encoding="utf-8") as f:
            gold = f.read()
    except Exception:
        return 0.0
    return 1.0 if _normalize_python(mine) == _normalize_python(gold) else 0.0
