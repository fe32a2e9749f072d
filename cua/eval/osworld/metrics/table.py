"""OSWorld's Calc metrics: compare_table's rule list over .xlsx workbooks, CSV comparison, city order."""

from __future__ import annotations

import itertools
import os

from cua.eval.osworld.metrics import xlsx_parts as parts
from cua.eval.osworld.metrics.rules import match_value_to_rule

_ENCODINGS = ("utf-8", "utf-8-sig", "latin-1", "windows-1252", "gbk", "cp1251", "iso-8859-1")


def read_lines(path: str) -> list[str]:
    """A text file's lines, trying the encodings OSWorld tries (latin-1 accepts any bytes)."""
    for enc in _ENCODINGS:
        try:
            with open(path, encoding=enc) as f:
                return f.read().splitlines()
        except UnicodeDecodeError:
            continue
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()


def _parse_sheet_idx(idx, result, expected, result_names, expected_names):
    """OSWorld's sheet addressing: an int or "RI<n>" (result by index), "RN<name>", "EI<n>", "EN<name>"."""
    if isinstance(idx, int):
        try:
            name = result_names[idx] if result_names and idx < len(result_names) else ""
        except Exception:
            name = ""
        return result, name
    for prefix, book, names in (("RI", result, result_names), ("EI", expected, expected_names)):
        if idx.startswith(prefix):
            try:
                return book, names[int(idx[2:])]
            except Exception:
                return book, ""
    if idx.startswith("RN"):
        return result, idx[2:]
    if idx.startswith("EN"):
        return expected, idx[2:]
    raise ValueError("Unrecognized sheet index")


def _load_sheet(book, name: str):
    """A sheet as the kind of `book` gives it: printed CSV lines (a path: <stem>-<sheet>.csv, trailing
    blank lines dropped, lines reversed as OSWorld leaves them), a DataFrame or a worksheet; None if absent."""
    import pandas as pd
    from openpyxl import Workbook

    try:
        if isinstance(book, str):
            csv_name = f"{os.path.splitext(book)[0]}-{name}.csv"
            try:
                lines = read_lines(csv_name)
            except OSError:
                return None
            return list(itertools.dropwhile(lambda line: len(line) == 0, (x.strip() for x in reversed(lines))))
        if isinstance(book, pd.ExcelFile):
            return pd.read_excel(book, name)
        if isinstance(book, Workbook):
            return book[name]
        raise NotImplementedError("Not supported workbook format")
    except NotImplementedError:
        raise
    except Exception:
        return None


def compare_csv(result: str, expected, **options) -> float:
    """Line lists equal (strict by default; strict=False strips lines; ignore_case); expected may be a list."""
    if result is None:
        return 0.0
    try:
        got = read_lines(result)
    except OSError:
        return 0.0
    for path in [expected] if isinstance(expected, str) else expected:
        try:
            want = read_lines(path)
        except OSError:
            continue
        a, b = got, want
        if not options.get("strict", True):
            a, b = [x.strip() for x in a], [x.strip() for x in b]
        if options.get("ignore_case", False):
            a, b = [x.lower() for x in a], [x.lower() for x in b]
        if list(a) == list(b):
            return 1.0
    return 0.0


def _fuzzy_cells(rule: dict, sheet1, sheet2) -> bool:
    from openpyxl.utils import get_column_letter
    from openpyxl.worksheet.cell_range import MultiCellRange
    from rapidfuzz import fuzz

    ok = True
    for rl in rule["rules"]:
        for rng in MultiCellRange(rl["range"]):
            for row, col in rng.cells:
                coord = f"{get_column_letter(col)}{row}"
                v1 = str(parts.read_cell_value(*sheet1, coord))
                v2 = str(parts.read_cell_value(*sheet2, coord))
                for old, new in rl.get("normalization", []):
                    v1, v2 = v1.replace(old, new), v2.replace(old, new)
                if "trim_leadings" in rl:
                    v1, v2 = v1.lstrip(rl["trim_leadings"]), v2.lstrip(rl["trim_leadings"])
                if "trim_trailings" in rl:
                    v1, v2 = v1.rstrip(rl["trim_trailings"]), v2.rstrip(rl["trim_trailings"])
                if "ignore_chars" in rl:
                    drop = set(rl["ignore_chars"])
                    v1 = "".join(ch for ch in v1 if ch not in drop)
                    v2 = "".join(ch for ch in v2 if ch not in drop)
                if rl.get("ignore_case", False):
                    v1, v2 = v1.lower(), v2.lower()
                kind = rl["type"]
                if kind == "includes":
                    metric = v2 in v1
                elif kind == "included_by":
                    metric = v1 in v2
                elif kind == "fuzzy_match":
                    metric = fuzz.ratio(v1, v2) >= rl.get("threshold", 85.0)
                elif kind == "exact_match":
                    metric = v1 == v2
                ok = ok and metric  # an unknown type reuses the previous verdict, as OSWorld's loop does
    return ok


def _data_validation_ok(sheet, rule: dict) -> bool:
    validators = sheet.data_validations.dataValidation
    ok = len(validators) >= len(rule["dv_props"])
    for dv in validators:
        metric = False
        for prop in rule["dv_props"]:
            metric = metric or all(match_value_to_rule(getattr(dv, attr), mr) for attr, mr in prop.items())
            if metric:
                break
        ok = ok and metric
        if not ok:
            break
    return ok


def _check_cell(rule: dict, idx, xl_books, paths) -> bool | None:
    """None means the verdict is 0 (sheet missing or an error), as OSWorld returns early."""
    try:
        sheet = _load_sheet(*idx(rule["sheet_idx"], *xl_books))
        if sheet is None:
            return None
        cell = sheet[rule["coordinate"]]
        ok = True
        for prop, r in rule["props"].items():
            if prop == "value":
                try:
                    val = parts.read_cell_value(*idx(rule["sheet_idx"], *paths), rule["coordinate"])
                except Exception:
                    val = None
            else:
                try:
                    val = parts.read_cell_style(prop, cell)
                except Exception:
                    val = None
            ok = ok and match_value_to_rule(val, r)
        return ok
    except Exception:
        return None


def compare_table(result: str, expected: str | None = None, **options) -> float:
    """Apply OSWorld's compare_table rules in order (sheet_name, sheet_data, sheet_print, sheet_fuzzy,
    sparkline, chart, style, freeze, zoom, data_validation, row_props, col_props, filter, pivot_table,
    check_cell); 1.0 only if every rule holds."""
    import openpyxl
    import pandas as pd

    if result is None or not os.path.exists(result):
        return 0.0
    try:
        xl_r = openpyxl.load_workbook(filename=result)
        pd_r = pd.ExcelFile(result)
    except Exception:
        return 0.0
    names_r = pd_r.sheet_names
    if expected is not None:
        xl_e = openpyxl.load_workbook(filename=expected)
        pd_e = pd.ExcelFile(expected)
        names_e = pd_e.sheet_names
    else:
        xl_e = pd_e = names_e = None

    def idx(i, book_r, book_e):
        return _parse_sheet_idx(i, book_r, book_e, names_r, names_e)

    paths, xl_books, pd_books = (result, expected), (xl_r, xl_e), (pd_r, pd_e)
    passes = True
    for r in options["rules"]:
        kind = r["type"]
        if kind == "sheet_name":
            metric = names_r == names_e
        elif kind == "sheet_data":
            precision = r.get("precision", 4)
            s1 = _load_sheet(*idx(r["sheet_idx0"], *pd_books))
            if s1 is None:
                return 0.0
            s2 = _load_sheet(*idx(r["sheet_idx1"], *pd_books))
            metric = s1.round(precision).equals(s2.round(precision))
        elif kind == "sheet_print":
            s1 = _load_sheet(*idx(r["sheet_idx0"], *paths))
            if s1 is None:
                return 0.0
            s2 = _load_sheet(*idx(r["sheet_idx1"], *paths))
            if r.get("ignore_case", False):
                s1, s2 = [x.lower() for x in s1], [x.lower() for x in s2]
            metric = s1 == s2
        elif kind == "sheet_fuzzy":
            metric = _fuzzy_cells(r, idx(r["sheet_idx0"], *paths), idx(r["sheet_idx1"], *paths))
        elif kind == "sparkline":
            metric = parts.load_sparklines(*idx(r["sheet_idx0"], *paths)) == parts.load_sparklines(
                *idx(r["sheet_idx1"], *paths))
        elif kind == "chart":
            metric = parts.load_charts(*idx(r["sheet_idx0"], *xl_books), **r) == parts.load_charts(
                *idx(r["sheet_idx1"], *xl_books), **r)
        elif kind == "style":
            styles = []
            for key in ("sheet_idx0", "sheet_idx1"):
                book, name = idx(r[key], *xl_books)
                styles.append(parts.load_xlsx_styles(book, name, idx(r[key], *paths)[0], **r))
            metric = styles[0] == styles[1]
        elif kind == "freeze":
            s1 = _load_sheet(*idx(r["sheet_idx0"], *xl_books))
            if s1 is None:
                return 0.0
            s2 = _load_sheet(*idx(r["sheet_idx1"], *xl_books))
            metric = s1.freeze_panes == s2.freeze_panes
        elif kind == "zoom":
            sheet = _load_sheet(*idx(r["sheet_idx"], *xl_books))
            if sheet is None:
                return 0.0
            metric = match_value_to_rule(sheet.sheet_view.zoomScale or 100.0, r)
        elif kind == "data_validation":
            sheet = _load_sheet(*idx(r["sheet_idx"], *xl_books))
            if sheet is None:
                return 0.0
            metric = _data_validation_ok(sheet, r)
        elif kind in ("row_props", "col_props"):
            obj = "row" if kind == "row_props" else "column"
            metric = parts.load_rows_or_cols(*idx(r["sheet_idx0"], *xl_books), obj=obj, **r) == \
                parts.load_rows_or_cols(*idx(r["sheet_idx1"], *xl_books), obj=obj, **r)
        elif kind == "filter":
            metric = parts.load_filters(*idx(r["sheet_idx0"], *xl_books), **r) == parts.load_filters(
                *idx(r["sheet_idx1"], *xl_books), **r)
        elif kind == "pivot_table":
            metric = parts.load_pivot_tables(*idx(r["sheet_idx0"], *xl_books), **r) == parts.load_pivot_tables(
                *idx(r["sheet_idx1"], *xl_books), **r)
        elif kind == "check_cell":
            metric = _check_cell(r, idx, xl_books, paths)
            if metric is None:
                return 0.0
        else:
            raise NotImplementedError(f"Unimplemented sheet check: {kind}")
        passes = passes and metric
        if not passes:
            break
    return float(passes)


def compare_conference_city_in_order(actual_city_list_path, expected_city):
    """Cells C2:C22 of the active sheet contain the expected cities in order (a list allows alternatives)."""
    import openpyxl

    want = expected_city["expected"]
    sheet = openpyxl.load_workbook(actual_city_list_path).active
    got = [cell.value for row in sheet["C2:C22"] for cell in row]
    try:
        for i in range(len(got)):
            if isinstance(want[i], str):
                if want[i] not in got[i]:
                    return 0.0
            elif isinstance(want[i], list):
                if not any(s in got[i] for s in want[i]):
                    return 0.0
            else:
                raise TypeError("Expected city should be a string or a list of strings")
    except Exception:
        return 0.0
    return 1.0
