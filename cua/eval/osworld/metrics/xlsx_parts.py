"""Parts of an .xlsx that OSWorld's compare_table checks: raw cell values, sparklines, charts, pivot
tables, filters, row/column dimensions and cell styles (conditional formatting applied)."""

from __future__ import annotations

import itertools
import os
import re
import zipfile
from typing import Any

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
X14 = "http://schemas.microsoft.com/office/spreadsheetml/2009/9/main"
XM = "http://schemas.microsoft.com/office/excel/2006/main"


def _sheet_xml_ids(z: zipfile.ZipFile) -> dict[str, str]:
    """Sheet name -> sheetId, as OSWorld maps names to xl/worksheets/sheet<ID>.xml."""
    import lxml.etree

    root = lxml.etree.fromstring(z.read("xl/workbook.xml"))
    return {sh.get("name"): sh.get("sheetId") for sh in root.iter(f"{{{MAIN}}}sheet")
            if sh.getparent() is not None and sh.getparent().tag == f"{{{MAIN}}}sheets"}


def _text_of(el) -> str | None:
    """xmltodict's view of a text-only element: its text, or None when empty."""
    return el.text if el is not None else None


def read_cell_value(xlsx_file: str, sheet_name: str, coordinate: str) -> Any:
    """The stored value of one cell, read from the file's XML: numbers as float, strings as str,
    formulas' cached results; None when the cell, sheet or file is absent."""
    import lxml.etree

    if not os.path.exists(xlsx_file):
        return None
    try:
        with zipfile.ZipFile(xlsx_file) as z:
            try:
                sst = lxml.etree.fromstring(z.read("xl/sharedStrings.xml"))
                shared = ["".join(t.text for t in si.iter(f"{{{MAIN}}}t")) for si in sst
                          if si.tag == f"{{{MAIN}}}si"]
            except Exception:
                shared = []
            ids = _sheet_xml_ids(z)
            sheet = lxml.etree.fromstring(z.read(f"xl/worksheets/sheet{ids[sheet_name]}.xml"))
            cells = [c for row in sheet.iter(f"{{{MAIN}}}row") for c in row
                     if c.tag == f"{{{MAIN}}}c" and c.get("r") == coordinate]
            if not cells:
                return None
            cell = cells[0]
    except Exception:
        return None
    kind = cell.get("t")
    v = cell.find(f"{{{MAIN}}}v")
    try:
        if kind is None or kind == "n":
            if v is None:
                raise KeyError("v")
            return float(_text_of(v))
        if kind == "s":
            return shared[int(_text_of(v))]
        if kind in ("str", "e"):
            if v is None:
                raise KeyError("v")
            return _text_of(v)
        if kind == "inlineStr":
            is_ = cell.find(f"{{{MAIN}}}is")
            if is_ is None:
                raise KeyError("is")
            t = is_.find(f"{{{MAIN}}}t")
            if t is None:
                raise KeyError("t")
            return _text_of(t)
    except (KeyError, ValueError):
        return None
    return None


def load_sparklines(xlsx_file: str, sheet_name: str) -> dict[str, str]:
    """{sqref: formula} of the x14 sparklines of one sheet."""
    import lxml.etree

    try:
        with zipfile.ZipFile(xlsx_file) as z:
            ids = _sheet_xml_ids(z)
            sheet = lxml.etree.fromstring(z.read(f"xl/worksheets/sheet{ids[sheet_name]}.xml"))
    except zipfile.BadZipFile:
        return {}
    out = {}
    for sp in sheet.iter(f"{{{X14}}}sparkline"):
        out[_text_of(sp.find(f"{{{XM}}}sqref"))] = _text_of(sp.find(f"{{{XM}}}f"))
    return out


def _ref_formula(ref) -> str:
    for kind in ("numRef", "strRef"):
        if hasattr(ref, kind) and hasattr(getattr(ref, kind), "f"):
            return getattr(ref, kind).f
    return ""


def _rich_title(title):
    try:
        return title.tx.rich.p[0].r[0].t
    except Exception:
        return None


def load_charts(book, sheet_name: str, **options) -> dict[str, Any]:
    """{"values,categories;..." of each chart: {the chart_props asked for}}."""
    try:
        sheet = book[sheet_name]
    except KeyError:
        return {}
    props = set(options.get("chart_props", []))
    charts = {}
    for ch in sheet._charts:
        series = ";".join(f"{_ref_formula(s.val)},{_ref_formula(s.cat)}" for s in ch.series)
        info: dict[str, Any] = {}
        if "title" in props:
            info["title"] = _rich_title(ch.title)
        if "legend" in props:
            info["legend"] = ch.legend.position if ch.legend is not None else None
        if "anchor" in props:
            a = ch.anchor
            info["anchor"] = [a.editAs, a._from.col, a.to.row, a.to.col, a.to.row]
        if "width" in props:
            info["width"] = ch.width
        if "height" in props:
            info["height"] = ch.height
        if "type" in props:
            info["type"] = ch.tagname
        if "direction" in props:
            info["direction"] = ch.barDir
        for axis in ("x", "y", "z"):
            if f"{axis}title" in props:
                try:
                    info[f"{axis}title"] = getattr(ch, f"{axis}_axis").title.tx.rich.p[0].r[0].t
                except Exception:
                    info[f"{axis}title"] = None
        charts[series] = info
    return charts


def load_pivot_tables(book, sheet_name: str, **options) -> dict[str, Any]:
    """{"type;(r,c):(r,c);sheet" of each pivot's source: {the pivot_props asked for}}, with field
    indices shifted past the source's empty leading columns as OSWorld does."""
    from openpyxl.utils import coordinate_to_tuple

    try:
        sheet = book[sheet_name]
    except KeyError:
        return {}
    props = set(options.get("pivot_props", []))
    out = {}
    for pvt in sheet._pivots:
        raw = [[(i.h, i.x) for i in f.items if i.x is not None] for f in pvt.pivotFields]
        trimmed = list(itertools.dropwhile(lambda r: len(r) == 0, raw))
        left = len(raw) - len(trimmed)
        selection = list(itertools.dropwhile(lambda r: len(r) == 0, reversed(trimmed)))[::-1]
        right = len(trimmed) - len(selection)
        src = pvt.cache.cacheSource
        a, b = src.worksheetSource.ref.split(":")
        ra, rb = coordinate_to_tuple(a), coordinate_to_tuple(b)
        key = "{:};{:}:{:};{:}".format(src.type, (ra[0], ra[1] + left), (rb[0], rb[1] - right),
                                         src.worksheetSource.sheet)
        info: dict[str, Any] = {}
        if "name" in props:
            info["name"] = pvt.name
        if "show_total" in props:
            info["show_total"] = pvt.visualTotals
        if "show_empty_row" in props:
            info["show_empty_row"] = pvt.showEmptyRow
        if "show_empty_col" in props:
            info["show_empty_col"] = pvt.showEmptyCol
        if "show_headers" in props:
            info["show_headers"] = pvt.showHeaders
        if "location" in props:
            info["location"] = pvt.location
        if "filter" in props or "selection" in props:
            info["selection"] = selection if "ordered" in props else [set(r) for r in selection]
        if "filter" in props:
            info["filter_fields"] = {f.fld for f in pvt.pageFields}
        if "col_fields" in props:
            info["col_fields"] = [f.x - left for f in pvt.colFields]
        if "row_fields" in props:
            info["row_fields"] = [f.x - left for f in pvt.rowFields]
        if "data_fields" in props:
            named = "data_fields_name" in props
            info["data_fields"] = [
                "{:d};{:};{:};{:}".format(f.fld - left, f.name if named else "", f.subtotal, f.showDataAs)
                for f in pvt.dataFields
            ]
        out[key] = info
    return out


def load_rows_or_cols(book, sheet_name: str, **options) -> dict:
    try:
        sheet = book[sheet_name]
    except KeyError:
        return {}
    dims = getattr(sheet, f"{options['obj']}_dimensions")
    props = set(options.get("props", []))
    return {no: {p: getattr(d, p) for p in props} for no, d in dims.items()}


def load_filters(book, sheet_name: str, **options) -> dict[str, Any]:
    try:
        sheet = book[sheet_name]
    except KeyError:
        return {}
    flt = sheet.auto_filter
    out: dict[str, Any] = {"ref": flt.ref}
    columns = []
    for fc in flt.filterColumn:
        col: dict[str, Any] = {"col_id": fc.colId, "hidden_button": fc.hiddenButton, "show_button": fc.showButton}
        if fc.filters is not None:
            col["filters_blank"] = fc.filters.blank
            col["filters"] = set(fc.filters.filter)
        if fc.customFilters is not None:
            col["custom_filters_op"] = fc.customFilters._and
            col["custom_filters"] = {(c.operator, c.val) for c in fc.customFilters.customFilter}
        columns.append(col)
    out["filter_column"] = sorted(columns, key=lambda d: d["col_id"])
    ss = flt.sortState
    if ss is not None:
        out["sort_state"] = {
            "sort": ss.columnSort, "case": ss.caseSensitive, "method": ss.sortMethod, "ref": ss.ref,
            "condition": [
                {"descending": c.descending, "key": c.sortBy, "ref": c.ref, "custom_list": c.customList,
                 "dxf_id": c.dxfId, "icon": c.iconSet, "iconid": c.iconId}
                for c in ss.sortCondition
            ],
        }
    return out


def read_cell_style(name: str, cell, diff=None) -> Any:
    """One style property of a cell (or of a conditional format's differential style applied to it)."""
    from openpyxl.cell.cell import MergedCell

    has_value = cell.value is not None
    src = diff or cell
    if name == "number_format":
        if not (has_value and cell.data_type == "n"):
            return None
        return cell.number_format if diff is None else diff.numFmt.formatCode
    font_attrs = {"font_name": "name", "font_family": "family", "font_bold": "bold", "font_italic": "italic",
                  "font_underline": "underline", "font_size": "size"}
    if name in font_attrs:
        return getattr(src.font, font_attrs[name]) if has_value else None
    if name == "font_color":
        return src.font.color.rgb if has_value else None
    if name == "fill_type":
        try:
            return src.fill.tagname
        except Exception:
            return None
    if name in ("bgcolor", "fgcolor"):
        try:
            return diff.fill.bgColor.rgb if diff is not None else cell.fill.fgColor.rgb
        except Exception:
            return None
    if name == "hyperlink":
        return cell.hyperlink or "" if has_value else None
    if name == "merge":
        return isinstance(cell, MergedCell)
    raise NotImplementedError(f"Unsupported Style: {name}")


def _cf_operator(op: str, value, ref: list) -> bool:
    try:
        if op == "lessThanOrEqual":
            return value <= ref[0]
        if op == "lessThan":
            return value < ref[0]
        if op == "equal":
            return value == ref[0]
        if op == "greaterThanOrEqual":
            return value >= ref[0]
        if op == "notEqual":
            return value != ref[0]
        if op == "greaterThan":
            return value > ref[0]
        if op == "between":
            return min(ref) <= value <= max(ref)
        if op == "notBetween":
            return value < min(ref) or value > max(ref)
    except (TypeError, IndexError):
        return False
    raise UnboundLocalError("unsupported conditional-format operator")  # the reference fails here too


_ABSOLUTE = re.compile(r"\$(?P<col1>[A-Z]{1,3})\$(?P<row1>\d+)(?::\$(?P<col2>[A-Z]{1,3})\$(?P<row2>\d+))?")
_TEXT_TYPES = {"expression", "containsText", "notContainsText", "endsWith", "beginsWith", "containsErrors",
               "notContainsErrors"}


def load_xlsx_styles(book, sheet_name: str, book_name: str, **options) -> dict[str, list]:
    """{coordinate: [the props asked for]} of every cell; cells that a conditional format's rule
    activates (formulas evaluated with the `formulas` package, as OSWorld does) take its style."""
    from openpyxl.utils import get_column_letter
    from openpyxl.worksheet.cell_range import CellRange

    try:
        sheet = book[sheet_name]
    except KeyError:
        return {}
    props = options.get("props", [])
    styles = {c.coordinate: [read_cell_style(p, c) for p in props] for col in sheet.iter_cols() for c in col}
    cf_list = sheet.conditional_formatting
    if not list(cf_list):
        return styles
    import formulas

    parser = formulas.Parser()
    for fmt in cf_list:
        for rule in fmt.rules:
            funcs, arg_lists, broken = [], [], False
            for fml in rule.formula:
                try:
                    func = parser.ast("=" + fml)[1].compile()
                except Exception:
                    broken = True
                    break
                args: list = []
                for m in _ABSOLUTE.findall(fml):
                    if m[2] is None and m[3] is None:  # never true (findall gives ''), kept as OSWorld has it
                        args.append(read_cell_value(book_name, sheet_name, f"{m[0]}{m[1]}"))
                    else:
                        args.append([read_cell_value(book_name, sheet_name, f"{get_column_letter(c[1])}{c[0]}")
                                     for c in CellRange(f"{m[0]}{m[1]}:{m[2]}{m[3]}").cells])
                funcs.append(func)
                arg_lists.append(args)
            if broken:
                continue
            if rule.type in _TEXT_TYPES:
                cond, cargs = funcs[0], arg_lists[0]

                def is_active(v, cond=cond, cargs=cargs):
                    return cond(v, *cargs)
            elif rule.type == "cellIs":
                try:
                    refs = [f() for f in funcs]
                except Exception:
                    continue

                def is_active(v, op=rule.operator, refs=refs):
                    return _cf_operator(op, v, refs)
            active = []
            nothings = 0
            for rng in fmt.cells:
                for r, c in rng.cells:
                    cell = sheet.cell(row=r, column=c)
                    value = read_cell_value(book_name, sheet_name, f"{get_column_letter(c)}{r}")
                    if value is None:
                        nothings += 1
                        if nothings > 50:
                            break
                        continue
                    try:
                        hit = is_active(value)
                    except Exception:
                        hit = False
                    if hit:
                        active.append(cell)
            for cell in active:
                styles[cell.coordinate] = [read_cell_style(p, cell, rule.dxf) for p in props]
    return styles
