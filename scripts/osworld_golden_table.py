"""Golden cases: Calc metrics (compare_table's rules over .xlsx built with openpyxl, compare_csv)."""

from __future__ import annotations

from pathlib import Path

from osworld_golden_cases import case, text
from osworld_golden_docs import both


def xlsx(name: str, sheets: dict, *, chart=None, freeze=None, zoom=None, validation=None, hidden_rows=(),
         cf=None, fill=None, font=None, number_format=None, csv=None, autofilter=None, widths=None):
    """sheets: {name: rows}; chart: ("bar"|"line", title, bar_dir); cf: (range, operator, formula, rgb);
    fill/font: {coord: rgb}; csv: {sheet: text} written as <stem>-<sheet>.csv beside the book."""
    def build(d: Path) -> None:
        from openpyxl import Workbook
        from openpyxl.chart import BarChart, LineChart, Reference
        from openpyxl.formatting.rule import CellIsRule, FormulaRule
        from openpyxl.styles import Font, PatternFill
        from openpyxl.worksheet.datavalidation import DataValidation

        wb = Workbook()
        wb.remove(wb.active)
        for sname, rows in sheets.items():
            ws = wb.create_sheet(sname)
            for row in rows:
                ws.append(list(row))
        ws = wb[next(iter(sheets))]
        if chart:
            kind, title, bar_dir = chart
            ch = BarChart() if kind == "bar" else LineChart()
            if kind == "bar" and bar_dir:
                ch.type = bar_dir
            ch.title = title
            ch.add_data(Reference(ws, min_col=2, min_row=1, max_row=ws.max_row), titles_from_data=True)
            ch.set_categories(Reference(ws, min_col=1, min_row=2, max_row=ws.max_row))
            ws.add_chart(ch, "E2")
        if freeze:
            ws.freeze_panes = freeze
        if zoom:
            ws.sheet_view.zoomScale = zoom
        if validation:
            dv = DataValidation(type="list", formula1=validation[1], allow_blank=True)
            dv.add(validation[0])
            ws.add_data_validation(dv)
        for r in hidden_rows:
            ws.row_dimensions[r].hidden = True
        if widths:
            for col, w in widths.items():
                ws.column_dimensions[col].width = w
        if cf:
            rng, op, formula, rgb = cf
            pf = PatternFill(start_color=rgb, end_color=rgb, fill_type="solid")
            if op == "expression":
                ws.conditional_formatting.add(rng, FormulaRule(formula=[formula], fill=pf))
            else:
                ws.conditional_formatting.add(rng, CellIsRule(operator=op, formula=[formula], fill=pf))
        for coord, rgb in (fill or {}).items():
            ws[coord].fill = PatternFill(start_color=rgb, end_color=rgb, fill_type="solid")
        for coord, rgb in (font or {}).items():
            ws[coord].font = Font(color=rgb, bold=True)
        for coord, fmt in (number_format or {}).items():
            ws[coord].number_format = fmt
        if autofilter:
            ws.auto_filter.ref = autofilter
        wb.save(d / name)
        for sname, content in (csv or {}).items():
            (d / f"{Path(name).stem}-{sname}.csv").write_text(content)
    return build


DATA = {"Sheet1": [("Name", "Score"), ("a", 1), ("b", 2.5)]}
DATA_BAD = {"Sheet1": [("Name", "Score"), ("a", 1), ("b", 3)]}
DATA_CLOSE = {"Sheet1": [("Name", "Score"), ("a", 1), ("b", 2.50001)]}
DATA_FLOAT = {"Sheet1": [("Name", "Score"), ("a", 1.0), ("b", 2.0)]}
DATA_INT = {"Sheet1": [("Name", "Score"), ("a", 1), ("b", 2)]}
R, E = "@/r.xlsx", "@/e.xlsx"
SD = [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]

case("compare_table", "data-pass", R, E, rules=SD, build=both(xlsx("r.xlsx", DATA), xlsx("e.xlsx", DATA)))
case("compare_table", "data-fail", R, E, rules=SD, build=both(xlsx("r.xlsx", DATA_BAD), xlsx("e.xlsx", DATA)))
case("compare_table", "data-precision", R, E, rules=SD, build=both(xlsx("r.xlsx", DATA_CLOSE), xlsx("e.xlsx", DATA)))
case("compare_table", "data-precision-strict", R, E,
     rules=[{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0", "precision": 6}],
     build=both(xlsx("r.xlsx", DATA_CLOSE), xlsx("e.xlsx", DATA)))
case("compare_table", "data-int-vs-float", R, E, rules=SD,
     build=both(xlsx("r.xlsx", DATA_FLOAT), xlsx("e.xlsx", DATA_INT)))
case("compare_table", "data-empty-sheet", R, E, rules=SD,
     build=both(xlsx("r.xlsx", {"Sheet1": []}), xlsx("e.xlsx", {"Sheet1": []})))
case("compare_table", "data-empty-vs-full", R, E, rules=SD,
     build=both(xlsx("r.xlsx", {"Sheet1": []}), xlsx("e.xlsx", DATA)))
case("compare_table", "data-by-name", R, E,
     rules=[{"type": "sheet_data", "sheet_idx0": "RNSheet2", "sheet_idx1": "ENSheet2"}],
     build=both(xlsx("r.xlsx", {"Sheet1": [(1,)], "Sheet2": [("x", 2)]}),
                xlsx("e.xlsx", {"Sheet1": [(9,)], "Sheet2": [("x", 2)]})))
case("compare_table", "data-missing-sheet", R, E,
     rules=[{"type": "sheet_data", "sheet_idx0": "RNNope", "sheet_idx1": "EI0"}],
     build=both(xlsx("r.xlsx", DATA), xlsx("e.xlsx", DATA)))
case("compare_table", "data-index-out-of-range", R, E,
     rules=[{"type": "sheet_data", "sheet_idx0": 3, "sheet_idx1": "EI0"}],
     build=both(xlsx("r.xlsx", DATA), xlsx("e.xlsx", DATA)))
case("compare_table", "missing-result", "@/nope.xlsx", E, rules=SD, build=xlsx("e.xlsx", DATA))
case("compare_table", "not-a-workbook", R, E, rules=SD, build=both(text(r__xlsx="nope"), xlsx("e.xlsx", DATA)))
case("compare_table", "none-result", None, E, rules=SD, build=xlsx("e.xlsx", DATA))
case("compare_table", "sheet-names", R, E, rules=[{"type": "sheet_name"}],
     build=both(xlsx("r.xlsx", {"A": [(1,)], "B": [(1,)]}), xlsx("e.xlsx", {"A": [(1,)], "C": [(1,)]})))
case("compare_table", "sheet-names-pass", R, E, rules=[{"type": "sheet_name"}, {"type": "sheet_data",
     "sheet_idx0": "RI1", "sheet_idx1": "EI1"}],
     build=both(xlsx("r.xlsx", {"A": [(1,)], "B": [(2,)]}), xlsx("e.xlsx", {"A": [(5,)], "B": [(2,)]})))
PRINT = [{"type": "sheet_print", "sheet_idx0": "RNSheet1", "sheet_idx1": "ENSheet1"}]
case("compare_table", "print-pass", R, E, rules=PRINT,
     build=both(xlsx("r.xlsx", DATA, csv={"Sheet1": "Name,Score\na,1\n\n"}),
                xlsx("e.xlsx", DATA, csv={"Sheet1": "Name,Score\na,1\n"})))
case("compare_table", "print-fail", R, E, rules=PRINT,
     build=both(xlsx("r.xlsx", DATA, csv={"Sheet1": "Name,Score\na,1.0\n"}),
                xlsx("e.xlsx", DATA, csv={"Sheet1": "Name,Score\na,1\n"})))
case("compare_table", "print-case", R, E, rules=[dict(PRINT[0], ignore_case=True)],
     build=both(xlsx("r.xlsx", DATA, csv={"Sheet1": "NAME\n"}), xlsx("e.xlsx", DATA, csv={"Sheet1": "name\n"})))
case("compare_table", "print-missing-csv", R, E, rules=PRINT,
     build=both(xlsx("r.xlsx", DATA), xlsx("e.xlsx", DATA, csv={"Sheet1": "x\n"})))
FUZZ = {"type": "sheet_fuzzy", "sheet_idx0": "RNSheet1", "sheet_idx1": "ENSheet1"}
ADDR_R = {"Sheet1": [("Addr",), ("12 Main Rd.",), ("(555) 123",)]}
ADDR_E = {"Sheet1": [("Addr",), ("12 Main Road",), ("555 123",)]}
case("compare_table", "fuzzy-normalized", R, E,
     rules=[dict(FUZZ, rules=[{"range": ["A2:A2"], "type": "exact_match", "normalization": [["Rd", "Road"]],
                               "trim_trailings": "."},
                              {"range": ["A3"], "type": "exact_match", "ignore_chars": "()"}])],
     build=both(xlsx("r.xlsx", ADDR_R), xlsx("e.xlsx", ADDR_E)))
case("compare_table", "fuzzy-threshold", R, E,
     rules=[dict(FUZZ, rules=[{"range": ["A2"], "type": "fuzzy_match", "threshold": 95}])],
     build=both(xlsx("r.xlsx", ADDR_R), xlsx("e.xlsx", ADDR_E)))
case("compare_table", "fuzzy-includes", R, E,
     rules=[dict(FUZZ, rules=[{"range": ["A2"], "type": "includes", "ignore_case": True, "trim_leadings": "1"}])],
     build=both(xlsx("r.xlsx", {"Sheet1": [("h",), ("12 MAIN Rd",)]}), xlsx("e.xlsx", {"Sheet1": [("h",), ("main",)]})))
case("compare_table", "fuzzy-numbers", R, E,
     rules=[dict(FUZZ, rules=[{"range": ["B2:B3"], "type": "exact_match"}])],
     build=both(xlsx("r.xlsx", DATA), xlsx("e.xlsx", DATA_FLOAT)))
CHART = {"type": "chart", "sheet_idx0": 0, "sheet_idx1": "EI0", "chart_props": ["type", "title", "direction"]}
case("compare_table", "chart-pass", R, E, rules=[CHART],
     build=both(xlsx("r.xlsx", DATA, chart=("bar", "Scores", "col")), xlsx("e.xlsx", DATA, chart=("bar", "Scores", "col"))))
case("compare_table", "chart-direction", R, E, rules=[CHART],
     build=both(xlsx("r.xlsx", DATA, chart=("bar", "Scores", "bar")), xlsx("e.xlsx", DATA, chart=("bar", "Scores", "col"))))
case("compare_table", "chart-missing", R, E, rules=[dict(CHART, chart_props=["type"])],
     build=both(xlsx("r.xlsx", DATA), xlsx("e.xlsx", DATA, chart=("line", "Scores", None))))
case("compare_table", "chart-title", R, E, rules=[dict(CHART, chart_props=["title", "legend"])],
     build=both(xlsx("r.xlsx", DATA, chart=("line", "A", None)), xlsx("e.xlsx", DATA, chart=("line", "B", None))))
FREEZE = [{"type": "freeze", "sheet_idx0": 0, "sheet_idx1": "EI0"}]
case("compare_table", "freeze-pass", R, E, rules=FREEZE,
     build=both(xlsx("r.xlsx", DATA, freeze="B2"), xlsx("e.xlsx", DATA, freeze="B2")))
case("compare_table", "freeze-fail", R, E, rules=FREEZE,
     build=both(xlsx("r.xlsx", DATA, freeze="A2"), xlsx("e.xlsx", DATA, freeze="B2")))
case("compare_table", "freeze-none", R, E, rules=FREEZE, build=both(xlsx("r.xlsx", DATA), xlsx("e.xlsx", DATA)))
ZOOM = {"type": "zoom", "sheet_idx": 0, "method": "ge", "ref": 150}
case("compare_table", "zoom-pass", R, rules=[ZOOM], build=xlsx("r.xlsx", DATA, zoom=200))
case("compare_table", "zoom-default", R, rules=[ZOOM], build=xlsx("r.xlsx", DATA))
case("compare_table", "zoom-missing-sheet", R, rules=[dict(ZOOM, sheet_idx="RNX")], build=xlsx("r.xlsx", DATA))
DV = {"type": "data_validation", "sheet_idx": 0,
      "dv_props": [{"type": {"method": "eq", "ref": "list"}, "formula1": {"method": "eq", "ref": '"Pass,Fail"'},
                    "sqref": {"method": "spreadsheet_range", "ref": ["C2:C3", "C2:C200"]}}]}
case("compare_table", "validation-pass", R, rules=[DV], build=xlsx("r.xlsx", DATA, validation=("C2:C10", '"Pass,Fail"')))
case("compare_table", "validation-range", R, rules=[DV], build=xlsx("r.xlsx", DATA, validation=("C5:C10", '"Pass,Fail"')))
case("compare_table", "validation-none", R, rules=[DV], build=xlsx("r.xlsx", DATA))
case("compare_table", "validation-str-set", R,
     rules=[dict(DV, dv_props=[{"formula1": {"method": "str_set_eq", "ref": ["Fail", "Pass"]}}])],
     build=xlsx("r.xlsx", DATA, validation=("C2:C10", '"Pass,Fail"')))
ROWS = [{"type": "row_props", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["hidden"]}]
case("compare_table", "rows-pass", R, E, rules=ROWS,
     build=both(xlsx("r.xlsx", DATA, hidden_rows=[2]), xlsx("e.xlsx", DATA, hidden_rows=[2])))
case("compare_table", "rows-fail", R, E, rules=ROWS,
     build=both(xlsx("r.xlsx", DATA), xlsx("e.xlsx", DATA, hidden_rows=[2])))
case("compare_table", "cols", R, E, rules=[{"type": "col_props", "sheet_idx0": 0, "sheet_idx1": "EI0",
                                            "props": ["width", "hidden"]}],
     build=both(xlsx("r.xlsx", DATA, widths={"A": 20}), xlsx("e.xlsx", DATA, widths={"A": 20})))
case("compare_table", "cols-fail", R, E, rules=[{"type": "col_props", "sheet_idx0": 0, "sheet_idx1": "EI0",
                                                 "props": ["width"]}],
     build=both(xlsx("r.xlsx", DATA, widths={"A": 20}), xlsx("e.xlsx", DATA, widths={"A": 30})))
FILTER = [{"type": "filter", "sheet_idx0": 0, "sheet_idx1": "EI0"}]
case("compare_table", "filter-pass", R, E, rules=FILTER,
     build=both(xlsx("r.xlsx", DATA, autofilter="A1:B3"), xlsx("e.xlsx", DATA, autofilter="A1:B3")))
case("compare_table", "filter-fail", R, E, rules=FILTER,
     build=both(xlsx("r.xlsx", DATA), xlsx("e.xlsx", DATA, autofilter="A1:B3")))
CELL = {"type": "check_cell", "sheet_idx": 0, "coordinate": "B3"}
case("compare_table", "cell-approx", R, rules=[dict(CELL, props={"value": {"method": "approx:0.1", "ref": 2.45}})],
     build=xlsx("r.xlsx", DATA))
case("compare_table", "cell-approx-fail", R, rules=[dict(CELL, props={"value": {"method": "approx:0.01", "ref": 2.4}})],
     build=xlsx("r.xlsx", DATA))
case("compare_table", "cell-string", R, rules=[dict(CELL, coordinate="A2", props={"value": {"method": "eq", "ref": "a"}})],
     build=xlsx("r.xlsx", DATA))
case("compare_table", "cell-empty", R, rules=[dict(CELL, coordinate="Z9", props={"value": {"method": "eq", "ref": None}})],
     build=xlsx("r.xlsx", DATA))
case("compare_table", "cell-regex", R,
     rules=[dict(CELL, coordinate="A1", props={"value": {"method": "re.I", "ref": "^name$"}})],
     build=xlsx("r.xlsx", DATA))
case("compare_table", "cell-style", R,
     rules=[dict(CELL, coordinate="A2", props={"font_bold": {"method": "eq", "ref": True},
                                                "font_color": {"method": "eq", "ref": "FFFF0000"},
                                                "bgcolor": {"method": "eq", "ref": "FFFFFF00"}})],
     build=xlsx("r.xlsx", DATA, font={"A2": "FFFF0000"}, fill={"A2": "FFFFFF00"}))
case("compare_table", "cell-style-fail", R,
     rules=[dict(CELL, coordinate="A2", props={"bgcolor": {"method": "eq", "ref": "FFFFFF00"}})],
     build=xlsx("r.xlsx", DATA))
case("compare_table", "cell-missing-sheet", R,
     rules=[dict(CELL, sheet_idx="RNNope", props={"value": {"method": "eq", "ref": 1}})], build=xlsx("r.xlsx", DATA))
STYLE = [{"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["bgcolor", "font_color", "number_format"]}]
case("compare_table", "style-pass", R, E, rules=STYLE,
     build=both(xlsx("r.xlsx", DATA, fill={"A2": "FFFFFF00"}), xlsx("e.xlsx", DATA, fill={"A2": "FFFFFF00"})))
case("compare_table", "style-fail", R, E, rules=STYLE,
     build=both(xlsx("r.xlsx", DATA), xlsx("e.xlsx", DATA, fill={"A2": "FFFFFF00"})))
case("compare_table", "style-number-format", R, E, rules=STYLE,
     build=both(xlsx("r.xlsx", DATA, number_format={"B2": "0.00"}), xlsx("e.xlsx", DATA)))
NUMS = {"Sheet1": [("v",), (1,), (5,), (10,)]}
case("compare_table", "style-cf-vs-fill", R, E, rules=STYLE,
     build=both(xlsx("r.xlsx", NUMS, cf=("A2:A4", "greaterThan", "4", "FFFF0000")),
                xlsx("e.xlsx", NUMS, fill={"A3": "FFFF0000", "A4": "FFFF0000"})))
case("compare_table", "style-cf-same", R, E, rules=STYLE,
     build=both(xlsx("r.xlsx", NUMS, cf=("A2:A4", "between", "4", "FFFF0000")),
                xlsx("e.xlsx", NUMS, cf=("A2:A4", "between", "4", "FFFF0000"))))
case("compare_table", "style-cf-expression", R, E, rules=STYLE,
     build=both(xlsx("r.xlsx", NUMS, cf=("A2:A4", "expression", "A2>4", "FFFF0000")),
                xlsx("e.xlsx", NUMS, cf=("A2:A4", "greaterThan", "4", "FFFF0000"))))
case("compare_table", "unknown-rule", R, E, rules=[{"type": "bogus"}], build=both(xlsx("r.xlsx", DATA), xlsx("e.xlsx", DATA)))
case("compare_table", "stops-at-first-fail", R, E, rules=[{"type": "sheet_name"}, {"type": "bogus"}],
     build=both(xlsx("r.xlsx", {"A": [(1,)]}), xlsx("e.xlsx", {"B": [(1,)]})))

case("compare_csv", "pass", "@/r.csv", "@/e.csv", build=text(r__csv="a,b\n1,2\n", e__csv="a,b\n1,2"))
case("compare_csv", "fail", "@/r.csv", "@/e.csv", build=text(r__csv="a,b\n1,3\n", e__csv="a,b\n1,2"))
case("compare_csv", "strip", "@/r.csv", "@/e.csv", strict=False, ignore_case=True,
     build=text(r__csv=" A,b \n", e__csv="a,b"))
case("compare_csv", "list-any", "@/r.csv", ["@/nope.csv", "@/e.csv"], build=text(r__csv="x\n", e__csv="x\n"))
case("compare_csv", "missing", "@/nope.csv", "@/e.csv", build=text(e__csv="x"))
case("compare_csv", "latin1", "@/r.csv", "@/e.csv", build=text(r__csv=b"caf\xe9\n", e__csv="café\n".encode("latin-1")))
case("compare_csv", "none", None, "@/e.csv", build=text(e__csv="x"))

CITIES = {"Sheet1": [("a", "b", "City")] + [("", "", c) for c in ["Paris, FR", "Rome", "Oslo"]]}
case("compare_conference_city_in_order", "pass", "@/r.xlsx", {"expected": ["Paris", ["Roma", "Rome"], "Oslo"]},
     build=xlsx("r.xlsx", CITIES))
case("compare_conference_city_in_order", "fail", "@/r.xlsx", {"expected": ["Rome", "Paris", "Oslo"]},
     build=xlsx("r.xlsx", CITIES))
case("compare_conference_city_in_order", "short-expected", "@/r.xlsx", {"expected": ["Paris"]},
     build=xlsx("r.xlsx", CITIES))
case("compare_conference_city_in_order", "bad-type", "@/r.xlsx", {"expected": [1, 2, 3]}, build=xlsx("r.xlsx", CITIES))

# A workbook as LibreOffice Calc saves it (cached formula results, shared strings) and its openpyxl
# original (formulas without cached values), kept as fixtures.
FIXTURES = Path(__file__).parent / "osworld_golden_fixtures"


def fixture(**names):
    def build(d: Path) -> None:
        for dest, src in names.items():
            (d / dest.replace("__", ".")).write_bytes((FIXTURES / src).read_bytes())
    return build


LO = fixture(r__xlsx="calc_lo.xlsx", e__xlsx="calc_lo.xlsx")
case("compare_table", "lo-data-same", R, E, rules=SD + [{"type": "sheet_data", "sheet_idx0": "RI1", "sheet_idx1": "EI1"}],
     build=LO)
case("compare_table", "lo-vs-uncached-formulas", R, E, rules=SD,
     build=fixture(r__xlsx="calc_lo.xlsx", e__xlsx="calc_openpyxl.xlsx"))
case("compare_table", "lo-cell-formula-result", R, rules=[dict(CELL, coordinate="C4",
     props={"value": {"method": "approx:0.001", "ref": 3.5}})], build=fixture(r__xlsx="calc_lo.xlsx"))
case("compare_table", "uncached-formula-cell", R, rules=[dict(CELL, coordinate="C4",
     props={"value": {"method": "approx:0.001", "ref": 3.5}})], build=fixture(r__xlsx="calc_openpyxl.xlsx"))
case("compare_table", "lo-fuzzy-shared-strings", R, E,
     rules=[dict(FUZZ, rules=[{"range": ["A1:C4"], "type": "exact_match"}])],
     build=fixture(r__xlsx="calc_lo.xlsx", e__xlsx="calc_openpyxl.xlsx"))
case("compare_table", "lo-print", R, E, rules=PRINT,
     build=fixture(r__xlsx="calc_lo.xlsx", e__xlsx="calc_lo.xlsx", **{"r-Sheet1__csv": "calc_lo-Sheet1.csv",
                                                                      "e-Sheet1__csv": "calc_lo-Sheet1.csv"}))
case("compare_table", "lo-sheet-names", R, E, rules=[{"type": "sheet_name"}],
     build=fixture(r__xlsx="calc_lo.xlsx", e__xlsx="calc_openpyxl.xlsx"))


# ---- pivot tables (5 tasks) ----------------------------------------------------------------------
_M = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PR = "http://schemas.openxmlformats.org/package/2006/relationships"


def _pivot_book(out: Path, row_field=0, data_fld=1, page_field=None, subtotal="sum"):
    """A workbook with one pivot table, its parts written by hand (openpyxl can read but not create them)."""
    import zipfile

    from openpyxl import Workbook
    wb = Workbook()
    ws = wb.active
    ws.title = "Sheet1"
    for r in [("Name", "Region", "Score"), ("a", "N", 1), ("b", "S", 2.5), ("a", "S", 4)]:
        ws.append(list(r))
    tmp = out.with_suffix(".base.xlsx")
    wb.save(tmp)
    with zipfile.ZipFile(tmp) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    tmp.unlink()
    cache = (f'<pivotCacheDefinition xmlns="{_M}" xmlns:r="{_R}" recordCount="0" refreshOnLoad="1">'
             '<cacheSource type="worksheet"><worksheetSource ref="A1:C4" sheet="Sheet1"/></cacheSource>'
             '<cacheFields count="3">'
             '<cacheField name="Name" numFmtId="0"><sharedItems count="2"><s v="a"/><s v="b"/></sharedItems></cacheField>'
             '<cacheField name="Region" numFmtId="0"><sharedItems count="2"><s v="N"/><s v="S"/></sharedItems></cacheField>'
             '<cacheField name="Score" numFmtId="0"><sharedItems containsSemiMixedTypes="0" containsString="0" containsNumber="1" minValue="1" maxValue="4"/></cacheField>'
             '</cacheFields></pivotCacheDefinition>')
    def field(i):
        axis = ' axis="axisRow"' if i == row_field else (' axis="axisPage"' if i == page_field else "")
        data = ' dataField="1"' if i == data_fld else ""
        items = '<items count="3"><item x="0"/><item x="1"/><item t="default"/></items>' if (axis and i < 2) else ""
        return f'<pivotField{axis}{data} showAll="0">{items}</pivotField>'
    page = f'<pageFields count="1"><pageField fld="{page_field}" hier="-1"/></pageFields>' if page_field is not None else ""
    table = (f'<pivotTableDefinition xmlns="{_M}" name="PivotTable1" cacheId="1" dataCaption="Values" '
             'applyNumberFormats="0" applyBorderFormats="0" applyFontFormats="0" applyPatternFormats="0" '
             'applyAlignmentFormats="0" applyWidthHeightFormats="1" updatedVersion="6" minRefreshableVersion="3" '
             'createdVersion="6" indent="0" outline="1" outlineData="1">'
             '<location ref="E3:F6" firstHeaderRow="1" firstDataRow="1" firstDataCol="1"/>'
             f'<pivotFields count="3">{field(0)}{field(1)}{field(2)}</pivotFields>'
             f'<rowFields count="1"><field x="{row_field}"/></rowFields>'
             f'{page}<dataFields count="1"><dataField name="{subtotal.title()} of Score" fld="{data_fld}" subtotal="{subtotal}" baseField="0" baseItem="0"/></dataFields>'
             '</pivotTableDefinition>')
    parts["xl/pivotCache/pivotCacheDefinition1.xml"] = cache.encode()
    parts["xl/pivotTables/pivotTable1.xml"] = table.encode()
    parts["xl/pivotTables/_rels/pivotTable1.xml.rels"] = (
        f'<Relationships xmlns="{_PR}"><Relationship Id="rId1" Type="{_R}/pivotCacheDefinition" '
        'Target="../pivotCache/pivotCacheDefinition1.xml"/></Relationships>').encode()
    parts["xl/worksheets/_rels/sheet1.xml.rels"] = (
        f'<Relationships xmlns="{_PR}"><Relationship Id="rId9" Type="{_R}/pivotTable" '
        'Target="../pivotTables/pivotTable1.xml"/></Relationships>').encode()
    wbx = parts["xl/workbook.xml"].decode()
    wbx = wbx.replace("</workbook>", f'<pivotCaches><pivotCache xmlns:r="{_R}" cacheId="1" r:id="rId99"/></pivotCaches></workbook>')
    if "xmlns:r=" not in wbx.split(">", 2)[1] and "xmlns:r=" not in wbx[:400]:
        wbx = wbx.replace("<workbook ", f'<workbook xmlns:r="{_R}" ', 1)
    parts["xl/workbook.xml"] = wbx.encode()
    rels = parts["xl/_rels/workbook.xml.rels"].decode().replace(
        "</Relationships>", f'<Relationship Id="rId99" Type="{_R}/pivotCacheDefinition" '
        'Target="pivotCache/pivotCacheDefinition1.xml"/></Relationships>')
    parts["xl/_rels/workbook.xml.rels"] = rels.encode()
    ct = parts["[Content_Types].xml"].decode().replace("</Types>",
        '<Override PartName="/xl/pivotCache/pivotCacheDefinition1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.pivotCacheDefinition+xml"/>'
        '<Override PartName="/xl/pivotTables/pivotTable1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.pivotTable+xml"/></Types>')
    parts["[Content_Types].xml"] = ct.encode()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for n, b in parts.items():
            z.writestr(n, b)



def pivot(name: str, **kw):
    def build(d: Path) -> None:
        _pivot_book(d / name, **kw)
    return build


PIVOT = {"type": "pivot_table", "sheet_idx0": "RNSheet1", "sheet_idx1": "ENSheet1",
         "pivot_props": ["col_fields", "filter", "row_fields", "data_fields"]}
case("compare_table", "pivot-pass", R, E, rules=[PIVOT], build=both(pivot("r.xlsx"), pivot("e.xlsx")))
case("compare_table", "pivot-row-field", R, E, rules=[PIVOT],
     build=both(pivot("r.xlsx", row_field=1), pivot("e.xlsx")))
case("compare_table", "pivot-subtotal", R, E, rules=[PIVOT],
     build=both(pivot("r.xlsx", subtotal="count"), pivot("e.xlsx")))
case("compare_table", "pivot-filter", R, E, rules=[PIVOT],
     build=both(pivot("r.xlsx", page_field=1), pivot("e.xlsx", page_field=1)))
case("compare_table", "pivot-filter-missing", R, E, rules=[PIVOT],
     build=both(pivot("r.xlsx"), pivot("e.xlsx", page_field=1)))
case("compare_table", "pivot-none", R, E, rules=[PIVOT], build=both(xlsx("r.xlsx", DATA), pivot("e.xlsx")))
case("compare_table", "pivot-props-all", R, E,
     rules=[dict(PIVOT, pivot_props=["name", "show_total", "show_empty_row", "show_empty_col", "show_headers",
                                     "location", "selection", "ordered", "data_fields_name", "data_fields"])],
     build=both(pivot("r.xlsx"), pivot("e.xlsx")))
