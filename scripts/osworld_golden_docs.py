"""Golden cases: Writer metrics (.docx via python-docx, .odt via odfpy, LibreOffice settings)."""

from __future__ import annotations

from pathlib import Path

from osworld_golden_cases import case, text


def docx(name: str, paragraphs=(), *, tables=(), runs=None, section_footer=None, images=(), tabs=None,
         page_break=False, spacing=None, align_first=None):
    """A builder for one .docx. paragraphs: texts; runs: list of paragraphs, each a list of
    (text, {font attrs}); tables: lists of rows; tabs: per paragraph [(pos_inches, 'LEFT'|...)]."""
    def build(d: Path) -> None:
        from docx import Document
        from docx.enum.text import WD_PARAGRAPH_ALIGNMENT, WD_TAB_ALIGNMENT
        from docx.shared import Inches, Pt, RGBColor

        doc = Document()
        for i, t in enumerate(paragraphs):
            p = doc.add_paragraph(t)
            if spacing is not None:
                p.paragraph_format.line_spacing = spacing[i]
            if tabs is not None:
                for pos, al in tabs[i]:
                    p.paragraph_format.tab_stops.add_tab_stop(Inches(pos), getattr(WD_TAB_ALIGNMENT, al))
            if i == 0 and align_first:
                p.paragraph_format.alignment = getattr(WD_PARAGRAPH_ALIGNMENT, align_first)
        for para in runs or []:
            p = doc.add_paragraph()
            for t, attrs in para:
                r = p.add_run(t)
                for k, v in attrs.items():
                    if k == "size":
                        r.font.size = Pt(v)
                    elif k == "color":
                        r.font.color.rgb = RGBColor(*v)
                    else:
                        setattr(r.font, k, v)
            if page_break:
                p.add_run().add_break(__import__("docx.enum.text", fromlist=["WD_BREAK"]).WD_BREAK.PAGE)
        for rows in tables:
            tb = doc.add_table(rows=len(rows), cols=len(rows[0]))
            for i, row in enumerate(rows):
                for j, v in enumerate(row):
                    cell = tb.cell(i, j)
                    if isinstance(v, tuple):
                        cell.paragraphs[0].add_run(v[0]).font.color.rgb = RGBColor(*v[1])
                    else:
                        cell.text = v
        for img in images:
            from PIL import Image

            path = d / f"_{name}_{len(img)}.png"
            Image.new("RGB", (8, 8), img).save(path)
            doc.add_picture(str(path))
            path.unlink()
        if section_footer is not None:
            doc.sections[0].footer.paragraphs[0].text = section_footer
        doc.save(d / name)
    return build


def both(*builders):
    def build(d: Path) -> None:
        for b in builders:
            b(d)
    return build


def odt(name: str, spans):
    """An .odt whose paragraph holds spans [(text, background or None)]."""
    def build(d: Path) -> None:
        from odf.opendocument import OpenDocumentText
        from odf.style import Style, TextProperties
        from odf.text import P, Span

        doc = OpenDocumentText()
        p = P()
        for i, (t, bg) in enumerate(spans):
            if bg:
                st = Style(name=f"T{i}", family="text")
                st.addElement(TextProperties(backgroundcolor=bg))
                doc.automaticstyles.addElement(st)
                p.addElement(Span(stylename=st, text=t))
            else:
                p.addText(t)
        doc.text.addElement(p)
        doc.save(str(d / name))
    return build


A = docx("a.docx", ["Hello  world", "Second"])
B_SAME = docx("b.docx", ["Hello world", "Second"])
B_DIFF = docx("b.docx", ["Hello world", "Other"])
B_CASE = docx("b.docx", ["hello world", "second"])
B_ORDER = docx("b.docx", ["Second", "Hello  world"])
B_EMPTYLINE = docx("b.docx", ["Hello  world", "", "Second"])

case("compare_docx_files", "pass-blanks", "@/a.docx", "@/b.docx", build=both(A, B_SAME))
case("compare_docx_files", "fail", "@/a.docx", "@/b.docx", build=both(A, B_DIFF))
case("compare_docx_files", "strict-blanks", "@/a.docx", "@/b.docx", ignore_blanks=False, build=both(A, B_SAME))
case("compare_docx_files", "ignore-case", "@/a.docx", "@/b.docx", ignore_case=True, build=both(A, B_CASE))
case("compare_docx_files", "order", "@/a.docx", "@/b.docx", ignore_order=True, ignore_blanks=False,
     build=both(A, B_ORDER))
case("compare_docx_files", "content-only", "@/a.docx", "@/b.docx", content_only=True, build=both(A, B_DIFF))
case("compare_docx_files", "fuzzy-paragraphs", "@/a.docx", "@/b.docx", fuzzy_match=True, ignore_blanks=False,
     build=both(A, B_DIFF))
case("compare_docx_files", "empty-lines", "@/a.docx", "@/b.docx", delete_empty_lines=True, ignore_blanks=False,
     build=both(A, B_EMPTYLINE))
case("compare_docx_files", "missing", "@/a.docx", "@/nope.docx", build=A)
case("compare_docx_files", "none", None, "@/a.docx", build=A)
case("compare_docx_files", "mixed-types", "@/a.docx", "@/b.odt", build=both(A, odt("b.odt", [("x", None)])))
case("compare_docx_files", "odt", "@/a.odt", "@/b.odt",
     build=both(odt("a.odt", [("Hi ", None), ("there", "#ffff00")]), odt("b.odt", [("Hi there", None)])))
case("compare_docx_files", "empty-docs", "@/a.docx", "@/b.docx", fuzzy_match=True, ignore_blanks=False,
     build=both(docx("a.docx"), docx("b.docx")))

case("compare_docx_files_and_ignore_new_lines", "pass", "@/a.docx", "@/b.docx", build=both(A, B_EMPTYLINE))
case("compare_docx_files_and_ignore_new_lines", "fail", "@/a.docx", "@/b.docx", build=both(A, B_DIFF))
case("compare_docx_files_and_ignore_new_lines", "strict", "@/a.docx", "@/b.docx", ignore_blanks=False,
     build=both(A, B_EMPTYLINE))
case("compare_docx_files_and_ignore_new_lines", "not-docx", "@/a.txt", "@/b.txt",
     build=text(a__txt="x", b__txt="x"))

T1 = docx("a.docx", tables=[[["a", "b"], ["c", " d "]]])
case("compare_docx_tables", "pass", "@/a.docx", "@/b.docx",
     build=both(T1, docx("b.docx", tables=[[["a", "b"], ["c", "d"]]])))
case("compare_docx_tables", "fail", "@/a.docx", "@/b.docx",
     build=both(T1, docx("b.docx", tables=[[["a", "b"], ["c", "e"]]])))
case("compare_docx_tables", "shape", "@/a.docx", "@/b.docx", build=both(T1, docx("b.docx", tables=[[["a", "b"]]])))
case("compare_docx_tables", "no-tables", "@/a.docx", "@/b.docx", build=both(A, B_DIFF))

case("compare_docx_images", "pass", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", images=[(255, 0, 0)]), docx("b.docx", images=[(255, 0, 0)])))
case("compare_docx_images", "fail", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", images=[(255, 0, 0)]), docx("b.docx", images=[(0, 0, 255)])))
case("compare_docx_images", "count", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", images=[(255, 0, 0)]), docx("b.docx")))
case("compare_docx_images", "none", None, "@/b.docx", build=docx("b.docx"))

SP = ["One", "Two"]
case("compare_line_spacing", "pass", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", SP, spacing=[1.5, 2.0]), docx("b.docx", SP, spacing=[1.5, 2.0])))
case("compare_line_spacing", "fail", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", SP, spacing=[1.0, 2.0]), docx("b.docx", SP, spacing=[1.5, 2.0])))
case("compare_line_spacing", "text-differs", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", ["x"]), docx("b.docx", ["y"])))

case("compare_font_names", "pass", "@/a.docx", {"font_name": "Arial"},
     build=docx("a.docx", runs=[[("a", {"name": "Arial"}), ("b", {"name": "Arial"})]]))
case("compare_font_names", "fail", "@/a.docx", {"font_name": "Arial"},
     build=docx("a.docx", runs=[[("a", {"name": "Arial"}), ("b", {"name": "Times"})]]))
case("compare_font_names", "no-runs", "@/a.docx", {"font_name": "Arial"}, build=docx("a.docx"))
case("compare_font_names", "missing", "@/nope.docx", {"font_name": "Arial"})

SUB = [[("H", {}), ("2", {"subscript": True}), ("O", {})]]
case("compare_subscript_contains", "pass", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", runs=SUB), docx("b.docx", runs=SUB)))
case("compare_subscript_contains", "fail", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", runs=[[("H", {}), ("2", {}), ("O", {})]]), docx("b.docx", runs=SUB)))
case("compare_subscript_contains", "none", None, "@/b.docx", build=docx("b.docx"))

case("has_page_numbers_in_footers", "pass", "@/a.docx", build=docx("a.docx", ["x"], section_footer="Page 1"))
case("has_page_numbers_in_footers", "fail", "@/a.docx", build=docx("a.docx", ["x"], section_footer="Page"))
case("has_page_numbers_in_footers", "no-footer", "@/a.docx", build=docx("a.docx", ["x"]))
case("has_page_numbers_in_footers", "none", None)

case("is_first_line_centered", "pass", "@/a.docx", build=docx("a.docx", ["T", "b"], align_first="CENTER"))
case("is_first_line_centered", "fail", "@/a.docx", build=docx("a.docx", ["T", "b"], align_first="RIGHT"))
case("is_first_line_centered", "default", "@/a.docx", build=docx("a.docx", ["T"]))
case("is_first_line_centered", "empty-doc", "@/a.docx", build=docx("a.docx"))

TABP = ["Name\tValue one", "Other\tTwo words"]
case("check_tabstops", "pass", "@/a.docx", "@/b.docx", word_number_split_by_tabstop=1, index=0,
     build=both(docx("a.docx", TABP, tabs=[[(3, "RIGHT")], [(3, "RIGHT")]]),
                docx("b.docx", TABP, tabs=[[(3, "RIGHT")], [(3, "RIGHT")]])))
case("check_tabstops", "shifted", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", TABP, tabs=[[(2, "RIGHT")], [(3, "RIGHT")]]),
                docx("b.docx", TABP, tabs=[[(3, "RIGHT")], [(3, "RIGHT")]])))
case("check_tabstops", "alignment", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", TABP, tabs=[[(3, "LEFT")], [(3, "RIGHT")]]),
                docx("b.docx", TABP, tabs=[[(3, "RIGHT")], [(3, "RIGHT")]])))
case("check_tabstops", "word-count", "@/a.docx", "@/b.docx", word_number_split_by_tabstop=2, index=1,
     build=both(docx("a.docx", TABP, tabs=[[], []]), docx("b.docx", TABP, tabs=[[], []])))
case("check_tabstops", "missing", "@/a.docx", "@/nope.docx", build=docx("a.docx", ["x"]))

case("compare_contains_image", "pass", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", images=[(1, 2, 3)]), docx("b.docx", images=[(9, 9, 9)])))
case("compare_contains_image", "fail", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", runs=[[("x", {})]]), docx("b.docx", images=[(9, 9, 9)])))
case("compare_contains_image", "text-only", "@/a.docx", "@/b.docx", build=both(A, B_DIFF))

RED, BLUE = (255, 0, 0), (0, 0, 255)
COLORED = docx("a.docx", tables=[[[("apple", RED), ("tree", BLUE)]]])
case("evaluate_colored_words_in_tables", "pass", "@/a.docx", "@/b.docx",
     build=both(COLORED, docx("b.docx", tables=[[["apple", "tree"]]])))
case("evaluate_colored_words_in_tables", "fail", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", tables=[[[("apple", BLUE), ("tree", BLUE)]]]), docx("b.docx", tables=[[["x"]]])))
case("evaluate_colored_words_in_tables", "near-red", "@/a.docx", "@/b.docx", threshold=10,
     build=both(docx("a.docx", tables=[[[("egg", (250, 5, 5)), ("b", (0, 0, 250))]]]),
                docx("b.docx", tables=[[["x"]]])))
case("evaluate_colored_words_in_tables", "none", None, "@/b.docx", build=docx("b.docx"))

case("check_highlighted_words", "pass", "@/a.odt", "@/b.odt",
     build=both(odt("a.odt", [("Hi there", None)]), odt("b.odt", [("Hi there", None)])))
case("check_highlighted_words", "still-highlighted", "@/a.odt", "@/b.odt",
     build=both(odt("a.odt", [("Hi ", None), ("there", "#ffff00")]), odt("b.odt", [("Hi there", None)])))
case("check_highlighted_words", "other-color", "@/a.odt", "@/b.odt",
     build=both(odt("a.odt", [("Hi ", None), ("there", "#00ff00")]), odt("b.odt", [("Hi there", None)])))
case("check_highlighted_words", "text-differs", "@/a.odt", "@/b.odt",
     build=both(odt("a.odt", [("Hi", None)]), odt("b.odt", [("Ho", None)])))

STRUCK = [[("a", {"strike": True}), ("b", {"strike": True})]]
case("evaluate_strike_through_last_paragraph", "pass", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", ["x"], runs=STRUCK), docx("b.docx", ["x"], runs=[[("ab", {})]])))
case("evaluate_strike_through_last_paragraph", "fail", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", ["x"], runs=[[("a", {"strike": True}), ("b", {})]]),
                docx("b.docx", ["x"], runs=[[("ab", {})]])))
case("evaluate_strike_through_last_paragraph", "text-differs", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", ["x"], runs=STRUCK), docx("b.docx", ["y"])))

case("check_italic_font_size_14", "pass", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", runs=[[("a", {"italic": True, "size": 14}), ("b", {})]]),
                docx("b.docx", runs=[[("ab", {})]])))
case("check_italic_font_size_14", "fail", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", runs=[[("a", {"italic": True, "size": 12}), ("b", {})]]),
                docx("b.docx", runs=[[("ab", {})]])))
case("check_italic_font_size_14", "no-size", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", runs=[[("a", {"italic": True})]]), docx("b.docx", runs=[[("a", {})]])))

case("compare_docx_lines", "pass", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", ["x", "", " y "]), docx("b.docx", ["y", "x", "x"])))
case("compare_docx_lines", "fail", "@/a.docx", "@/b.docx", build=both(docx("a.docx", ["x"]), docx("b.docx", ["y"])))
case("compare_docx_lines", "missing", "@/a.docx", "@/nope.docx", build=docx("a.docx", ["x"]))

REF_A = ["Intro", "References", "Smith, J. 2020. A title.", "", "Doe, A. 2019. Other."]
case("compare_references", "pass", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", REF_A), docx("b.docx", REF_A)))
case("compare_references", "partial", "@/a.docx", "@/b.docx", reference_base_result=0.3,
     build=both(docx("a.docx", REF_A), docx("b.docx", ["References", "Smith J 2020 A title", "Doe A. Other"])))
case("compare_references", "no-heading", "@/a.docx", "@/b.docx", build=both(A, B_DIFF))
case("compare_references", "one-heading", "@/a.docx", "@/b.docx", build=both(docx("a.docx", REF_A), A))
case("compare_references", "count", "@/a.docx", "@/b.docx",
     build=both(docx("a.docx", REF_A), docx("b.docx", ["References", "x"])))

case("contains_page_break", "pass", "@/a.docx", {}, build=docx("a.docx", runs=[[("x", {})]], page_break=True))
case("contains_page_break", "fail", "@/a.docx", {}, build=docx("a.docx", runs=[[("x", {})]]))
case("contains_page_break", "count", "@/a.docx", {"page_break_count": 2},
     build=docx("a.docx", runs=[[("x", {})]], page_break=True))
case("contains_page_break", "missing", "@/nope.docx", {})

XCU = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema">
<item oor:path="/org.openoffice.Office.Writer/DefaultFont"><prop oor:name="Standard" oor:op="fuse"><value>{}</value></prop></item>
</oor:items>"""
case("find_default_font", "pass", "@/r.xcu", {"font_name": "Times New Roman"},
     build=text(r__xcu=XCU.format("Times New Roman")))
case("find_default_font", "fail", "@/r.xcu", {"font_name": "Times New Roman"}, build=text(r__xcu=XCU.format("Arial")))
case("find_default_font", "bad-xml", "@/r.xcu", {"font_name": None}, build=text(r__xcu="<oops"))
case("find_default_font", "none", None, {"font_name": "Arial"})

case("fuzzy_place_math", "pass", "@/a.docx", {"expected": ["1", "2", "3"]}, build=docx("a.docx", ["1 2", "3"]))
case("fuzzy_place_math", "two-words", "@/a.docx", {"expected": ["1", "2"]}, build=docx("a.docx", ["1 2"]))
case("fuzzy_place_math", "fuzzy", "@/a.docx", {"expected": ["x+1", "y"]}, build=docx("a.docx", ["x+2 y z"]))
case("fuzzy_place_math", "none", None, {"expected": []})

case("compare_image_text", "missing", "@/nope.png", {"type": "text", "text": "ls"})
case("compare_image_text", "none", None, {"type": "text", "text": "ls"})
case("compare_image_text", "not-image", "@/x.png", {"type": "text", "text": "ls"}, build=text(x__png="not an image"))

# A document as LibreOffice Writer saves it (.docx and .odt) and its python-docx original (fixtures)
FIXTURES = Path(__file__).parent / "osworld_golden_fixtures"


def fixture(**names):
    def build(d: Path) -> None:
        for dest, src in names.items():
            (d / dest.replace("__", ".")).write_bytes((FIXTURES / src).read_bytes())
    return build


case("compare_docx_files", "lo-vs-original", "@/a.docx", "@/b.docx",
     build=fixture(a__docx="doc_lo.docx", b__docx="doc_python_docx.docx"))
case("compare_docx_files", "lo-odt-same", "@/a.odt", "@/b.odt", build=fixture(a__odt="doc_lo.odt", b__odt="doc_lo.odt"))
case("compare_docx_files", "lo-strict", "@/a.docx", "@/b.docx", ignore_blanks=False,
     build=fixture(a__docx="doc_lo.docx", b__docx="doc_python_docx.docx"))
case("compare_docx_tables", "lo", "@/a.docx", "@/b.docx", build=fixture(a__docx="doc_lo.docx", b__docx="doc_python_docx.docx"))
case("check_highlighted_words", "lo-odt", "@/a.odt", "@/b.odt", build=fixture(a__odt="doc_lo.odt", b__odt="doc_lo.odt"))
