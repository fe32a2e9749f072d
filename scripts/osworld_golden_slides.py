"""Golden cases: Impress metrics (.pptx via python-pptx, Impress settings)."""

from __future__ import annotations

from pathlib import Path

from osworld_golden_cases import case, text
from osworld_golden_docs import both

A_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"


def pptx(name: str, slides, *, portrait=False, notes=None, backgrounds=None, master_number_color=None):
    """slides: list of lists of shapes; a shape is a dict: kind text|picture|table, box (inches l,t,w,h),
    paragraphs [(text, {font attrs}, {para attrs})], rows (table), color (picture RGB)."""
    def build(d: Path) -> None:
        from pptx import Presentation
        from pptx.dml.color import RGBColor
        from pptx.enum.text import PP_ALIGN
        from pptx.util import Inches, Pt

        prs = Presentation()
        if portrait:
            prs.slide_width, prs.slide_height = Inches(7.5), Inches(10)
        for si, shapes in enumerate(slides):
            slide = prs.slides.add_slide(prs.slide_layouts[6])
            if backgrounds and backgrounds[si]:
                fill = slide.background.fill
                fill.solid()
                fill.fore_color.rgb = RGBColor(*backgrounds[si])
            if notes:
                slide.notes_slide.notes_text_frame.text = notes[si]
            for sh in shapes:
                left, top, w, h = (Inches(v) for v in sh.get("box", (1, 1, 4, 1)))
                if sh["kind"] == "text":
                    tb = slide.shapes.add_textbox(left, top, w, h)
                    tf = tb.text_frame
                    for pi, (ptext, font, para) in enumerate(sh["paragraphs"]):
                        p = tf.paragraphs[0] if pi == 0 else tf.add_paragraph()
                        r = p.add_run()
                        r.text = ptext
                        for k, v in font.items():
                            if k == "size":
                                r.font.size = Pt(v)
                            elif k == "color":
                                r.font.color.rgb = RGBColor(*v)
                            elif k == "strike":
                                r.font._element.set("strike", v)
                            else:
                                setattr(r.font, k, v)
                        if "align" in para:
                            p.alignment = getattr(PP_ALIGN, para["align"])
                        if "level" in para:
                            p.level = para["level"]
                elif sh["kind"] == "picture":
                    from PIL import Image

                    img = d / f"_{name}.png"
                    Image.new("RGB", (16, 12), sh.get("color", (200, 0, 0))).save(img)
                    slide.shapes.add_picture(str(img), left, top, w, h)
                    img.unlink()
                elif sh["kind"] == "table":
                    rows = sh["rows"]
                    tbl = slide.shapes.add_table(len(rows), len(rows[0]), left, top, w, h).table
                    for i, row in enumerate(rows):
                        for j, v in enumerate(row):
                            tbl.cell(i, j).text = v
                    if "bold_cell" in sh:
                        tbl.cell(*sh["bold_cell"]).text_frame.paragraphs[0].runs[0].font.bold = True
        prs.save(d / name)
    return build


def tb(*paras, box=(1, 1, 4, 1)):
    return {"kind": "text", "box": box, "paragraphs": [p if isinstance(p, tuple) else (p, {}, {}) for p in paras]}


BASE = [[tb("Title"), tb(("Body", {"bold": True, "size": 18}, {}), box=(1, 2.5, 6, 3))]]
P_BASE = pptx("a.pptx", BASE)
case("compare_pptx_files", "pass", "@/a.pptx", "@/b.pptx", build=both(P_BASE, pptx("b.pptx", BASE)))
case("compare_pptx_files", "text", "@/a.pptx", "@/b.pptx",
     build=both(P_BASE, pptx("b.pptx", [[tb("Title"), tb(("Bodies", {"bold": True, "size": 18}, {}),
                                                          box=(1, 2.5, 6, 3))]])))
case("compare_pptx_files", "slide-count", "@/a.pptx", "@/b.pptx", build=both(P_BASE, pptx("b.pptx", BASE * 2)))
case("compare_pptx_files", "slide-count-off", "@/a.pptx", "@/b.pptx", examine_number_of_slides=False,
     build=both(P_BASE, pptx("b.pptx", BASE * 2)))
MOVED = [[tb("Title", box=(1.002, 1, 4, 1)), tb(("Body", {"bold": True, "size": 18}, {}), box=(1, 2.5, 6, 3))]]
FAR = [[tb("Title", box=(2, 1, 4, 1)), tb(("Body", {"bold": True, "size": 18}, {}), box=(1, 2.5, 6, 3))]]
case("compare_pptx_files", "within-tolerance", "@/a.pptx", "@/b.pptx", build=both(P_BASE, pptx("b.pptx", MOVED)))
case("compare_pptx_files", "moved", "@/a.pptx", "@/b.pptx", build=both(P_BASE, pptx("b.pptx", FAR)))
case("compare_pptx_files", "moved-shape-off", "@/a.pptx", "@/b.pptx", examine_shape=False,
     build=both(P_BASE, pptx("b.pptx", FAR)))
NOTBOLD = [[tb("Title"), tb(("Body", {"bold": False, "size": 18}, {}), box=(1, 2.5, 6, 3))]]
case("compare_pptx_files", "bold", "@/a.pptx", "@/b.pptx", build=both(P_BASE, pptx("b.pptx", NOTBOLD)))
case("compare_pptx_files", "bold-off", "@/a.pptx", "@/b.pptx", examine_font_bold=False,
     build=both(P_BASE, pptx("b.pptx", NOTBOLD)))
case("compare_pptx_files", "none-vs-false", "@/a.pptx", "@/b.pptx",
     build=both(pptx("a.pptx", [[tb(("x", {"italic": False}, {}))]]), pptx("b.pptx", [[tb(("x", {}, {}))]])))
case("compare_pptx_files", "size", "@/a.pptx", "@/b.pptx",
     build=both(pptx("a.pptx", [[tb(("x", {"size": 12}, {}))]]), pptx("b.pptx", [[tb(("x", {"size": 14}, {}))]])))
case("compare_pptx_files", "color", "@/a.pptx", "@/b.pptx",
     build=both(pptx("a.pptx", [[tb(("x", {"color": (255, 0, 0)}, {}))]]),
                pptx("b.pptx", [[tb(("x", {"color": (0, 0, 255)}, {}))]])))
case("compare_pptx_files", "color-unset", "@/a.pptx", "@/b.pptx",
     build=both(pptx("a.pptx", [[tb(("x", {"color": (255, 0, 0)}, {}))]]), pptx("b.pptx", [[tb(("x", {}, {}))]])))
case("compare_pptx_files", "underline", "@/a.pptx", "@/b.pptx",
     build=both(pptx("a.pptx", [[tb(("x", {"underline": True}, {}))]]), pptx("b.pptx", [[tb(("x", {}, {}))]])))
case("compare_pptx_files", "strike", "@/a.pptx", "@/b.pptx",
     build=both(pptx("a.pptx", [[tb(("x", {"strike": "sngStrike"}, {}))]]), pptx("b.pptx", [[tb(("x", {}, {}))]])))
case("compare_pptx_files", "align-left-default", "@/a.pptx", "@/b.pptx",
     build=both(pptx("a.pptx", [[tb(("x", {}, {"align": "LEFT"}))]]), pptx("b.pptx", [[tb(("x", {}, {}))]])))
case("compare_pptx_files", "align-center", "@/a.pptx", "@/b.pptx",
     build=both(pptx("a.pptx", [[tb(("x", {}, {"align": "CENTER"}))]]), pptx("b.pptx", [[tb(("x", {}, {}))]])))
case("compare_pptx_files", "indent", "@/a.pptx", "@/b.pptx",
     build=both(pptx("a.pptx", [[tb("a", ("x", {}, {"level": 1}))]]), pptx("b.pptx", [[tb("a", ("x", {}, {}))]])))
case("compare_pptx_files", "font-name", "@/a.pptx", "@/b.pptx",
     build=both(pptx("a.pptx", [[tb(("x", {"name": "Arial"}, {}))]]), pptx("b.pptx", [[tb(("x", {}, {}))]])))
case("compare_pptx_files", "notes", "@/a.pptx", "@/b.pptx",
     build=both(pptx("a.pptx", [[tb("x")]], notes=["say hi"]), pptx("b.pptx", [[tb("x")]], notes=["say bye"])))
case("compare_pptx_files", "background", "@/a.pptx", "@/b.pptx",
     build=both(pptx("a.pptx", [[tb("x")]], backgrounds=[(0, 0, 255)]), pptx("b.pptx", [[tb("x")]])))
case("compare_pptx_files", "shape-count", "@/a.pptx", "@/b.pptx",
     build=both(pptx("a.pptx", [[tb("x"), tb("y", box=(1, 3, 4, 1))]]), pptx("b.pptx", [[tb("x")]])))
PIC = {"kind": "picture", "box": (5, 1, 2, 1.5)}
case("compare_pptx_files", "image-size", "@/a.pptx", "@/b.pptx", examine_image_size=True, examine_shape=False,
     build=both(pptx("a.pptx", [[tb("x"), PIC]]), pptx("b.pptx", [[tb("x"), dict(PIC, box=(5, 1, 3, 2))]])))
case("compare_pptx_files", "image-moved-ok", "@/a.pptx", "@/b.pptx", examine_image_size=True, examine_shape=False,
     build=both(pptx("a.pptx", [[tb("x"), PIC]]), pptx("b.pptx", [[tb("x"), dict(PIC, box=(1, 4, 2, 1.5))]])))
case("compare_pptx_files", "modify-height", "@/a.pptx", "@/b.pptx", examine_modify_height=True, examine_shape=False,
     build=both(pptx("a.pptx", [[tb("x"), PIC]]), pptx("b.pptx", [[tb("x"), dict(PIC, box=(5, 1, 2, 3))]])))
case("compare_pptx_files", "top-position", "@/a.pptx", "@/b.pptx", examine_top_position=True, examine_shape=False,
     build=both(pptx("a.pptx", [[tb("x")], [PIC]]), pptx("b.pptx", [[tb("x")], [dict(PIC, box=(5, 2, 2, 1.5))]])))
case("compare_pptx_files", "right-position", "@/a.pptx", "@/b.pptx", examine_right_position=True,
     examine_shape=False,
     build=both(pptx("a.pptx", [[tb("x")], [dict(PIC, box=(6, 1, 2, 1.5))]]), pptx("b.pptx", [[tb("x")], [PIC]])))
TABLE = {"kind": "table", "box": (1, 4.5, 6, 1.5), "rows": [["a", "b"], ["c", "d"]]}
case("compare_pptx_files", "table", "@/a.pptx", "@/b.pptx",
     build=both(pptx("a.pptx", [[TABLE]]), pptx("b.pptx", [[TABLE]])))
case("compare_pptx_files", "table-bold", "@/a.pptx", "@/b.pptx",
     build=both(pptx("a.pptx", [[dict(TABLE, bold_cell=(0, 0))]]), pptx("b.pptx", [[TABLE]])))
case("compare_pptx_files", "table-bottom", "@/a.pptx", "@/b.pptx", examine_table_bottom_position=True,
     examine_shape=False,
     build=both(pptx("a.pptx", [[tb("x")], [tb("y")], [dict(TABLE, box=(1, 5, 6, 1.5))]]),
                pptx("b.pptx", [[tb("x")], [tb("y")], [dict(TABLE, box=(1, 1, 6, 1.5))]])))
case("compare_pptx_files", "title-bottom", "@/a.pptx", "@/b.pptx", examine_title_bottom_position=True,
     examine_shape=False,
     build=both(pptx("a.pptx", [[tb("Product Comparison", box=(1, 5, 6, 1))]]),
                pptx("b.pptx", [[tb("Product Comparison", box=(1, 1, 6, 1))]])))
case("compare_pptx_files", "shift-size", "@/a.pptx", "@/b.pptx", examine_shape_for_shift_size=True,
     examine_shape=False,
     build=both(pptx("a.pptx", [[tb("Elaborate on what you want to discuss.", box=(1, 2, 5, 2))]]),
                pptx("b.pptx", [[tb("Elaborate on what you want to discuss.", box=(1, 1, 4, 1))]])))
case("compare_pptx_files", "missing", "@/a.pptx", "@/nope.pptx", build=P_BASE)

# ---- other Impress metrics -----------------------------------------------------------------------
IMG = {"kind": "picture"}
case("check_image_stretch_and_center", "pass", "@/m.pptx", "@/o.pptx",
     build=both(pptx("o.pptx", [[dict(IMG, box=(1, 1, 2, 2))]]), pptx("m.pptx", [[dict(IMG, box=(0, 0, 10, 7.5))]])))
case("check_image_stretch_and_center", "not-stretched", "@/m.pptx", "@/o.pptx",
     build=both(pptx("o.pptx", [[dict(IMG, box=(1, 1, 2, 2))]]), pptx("m.pptx", [[dict(IMG, box=(1, 1, 2, 2))]])))
case("check_image_stretch_and_center", "no-image", "@/m.pptx", "@/o.pptx",
     build=both(pptx("o.pptx", [[tb("x")]]), pptx("m.pptx", [[tb("x")]])))
case("check_image_stretch_and_center", "other-image", "@/m.pptx", "@/o.pptx",
     build=both(pptx("o.pptx", [[dict(IMG, box=(1, 1, 2, 2))]]),
                pptx("m.pptx", [[dict(IMG, box=(0, 0, 10, 7.5), color=(0, 9, 0))]])))

case("check_slide_orientation_Portrait", "pass", "@/a.pptx", build=pptx("a.pptx", [[tb("x")]], portrait=True))
case("check_slide_orientation_Portrait", "fail", "@/a.pptx", build=pptx("a.pptx", [[tb("x")]]))
case("check_slide_orientation_Portrait", "missing", "@/nope.pptx")

case("evaluate_presentation_fill_to_rgb_distance", "exact", "@/a.pptx", {"rgb": [0, 0, 255]},
     build=pptx("a.pptx", [[tb("x")], [tb("y")]], backgrounds=[(0, 0, 255), (0, 0, 255)]))
case("evaluate_presentation_fill_to_rgb_distance", "partial", "@/a.pptx", {"rgb": [0, 0, 255]},
     build=pptx("a.pptx", [[tb("x")], [tb("y")]], backgrounds=[(0, 0, 200), None]))
case("evaluate_presentation_fill_to_rgb_distance", "original", "@/a.pptx",
     {"rgb": [0, 0, 255], "original_rgb": [0, 0, 200]},
     build=pptx("a.pptx", [[tb("x")]], backgrounds=[(0, 0, 200)]))

XCU = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry">{}</oor:items>"""
PRES = ('<item oor:path="/org.openoffice.Office.Impress/Misc/Start"><prop oor:name="EnablePresenterScreen" '
        'oor:op="fuse"><value>{}</value></prop></item>')
case("check_presenter_console_disable", "pass", "@/r.xcu", build=text(r__xcu=XCU.format(PRES.format("false"))))
case("check_presenter_console_disable", "fail", "@/r.xcu", build=text(r__xcu=XCU.format(PRES.format("true"))))
case("check_presenter_console_disable", "absent", "@/r.xcu", build=text(r__xcu=XCU.format("")))
case("check_presenter_console_disable", "missing", "@/nope.xcu")

SAVE = ('<item oor:path="/org.openoffice.Office.Common/Save/Document"><prop oor:name="AutoSaveTimeIntervall" '
        'oor:op="fuse"><value>{}</value></prop></item>')
case("check_auto_saving_time", "pass", "@/r.xcu", {"minutes": 3}, build=text(r__xcu=XCU.format(SAVE.format(3))))
case("check_auto_saving_time", "fail", "@/r.xcu", {"minutes": 3}, build=text(r__xcu=XCU.format(SAVE.format(10))))
case("check_auto_saving_time", "absent", "@/r.xcu", {"minutes": 3}, build=text(r__xcu=XCU.format("")))
case("check_auto_saving_time", "missing", "@/nope.xcu", {"minutes": 3})
case("check_auto_saving_time", "bad-xml", "@/r.xcu", {"minutes": 3}, build=text(r__xcu="<x"))

case("check_left_panel", "pass", '<r><document-frame name="Slides View"/></r>')
case("check_left_panel", "fail", '<r><document-frame name="Outline"/></r>')
case("check_left_panel", "bad-xml", "<r>")


def _transition(kind):
    def build(d: Path) -> None:
        import zipfile

        pptx("t.pptx", [[tb("x")], [tb("y")]])(d)
        src = d / "t.pptx"
        with zipfile.ZipFile(src) as z:
            items = {n: z.read(n) for n in z.namelist()}
        xml = items["ppt/slides/slide1.xml"].decode()
        if kind:
            xml = xml.replace("</p:sld>", f"<p:transition><p:{kind}/></p:transition></p:sld>")
        items["ppt/slides/slide1.xml"] = xml.encode()
        with zipfile.ZipFile(d / "a.pptx", "w") as z:
            for n, b in items.items():
                z.writestr(n, b)
        src.unlink()
    return build


case("check_transition", "pass", "@/a.pptx", {"slide_idx": 0, "transition_type": "dissolve"},
     build=_transition("dissolve"))
case("check_transition", "other", "@/a.pptx", {"slide_idx": 0, "transition_type": "dissolve"},
     build=_transition("fade"))
case("check_transition", "none", "@/a.pptx", {"slide_idx": 0, "transition_type": "dissolve"}, build=_transition(None))
case("check_transition", "no-slide", "@/a.pptx", {"slide_idx": 5, "transition_type": "dissolve"},
     build=_transition(None))


def _master_colors(*vals):
    def build(d: Path) -> None:
        import zipfile

        pptx("t.pptx", [[tb("x")]])(d)
        src = d / "t.pptx"
        with zipfile.ZipFile(src) as z:
            items = {n: z.read(n) for n in z.namelist()}
        xml = items["ppt/slideMasters/slideMaster1.xml"].decode()
        fills = "".join(f'<a:solidFill><a:srgbClr val="{v}"/></a:solidFill>' for v in vals)
        # append the fills inside the last text style so that they are the master's last srgbClr values
        xml = xml.replace("</p:otherStyle>", f'<a:lvl9pPr><a:defRPr>{fills}</a:defRPr></a:lvl9pPr></p:otherStyle>')
        items["ppt/slideMasters/slideMaster1.xml"] = xml.encode()
        with zipfile.ZipFile(d / "a.pptx", "w") as z:
            for n, b in items.items():
                z.writestr(n, b)
        src.unlink()
    return build


case("check_page_number_colors", "red-quirk", "@/a.pptx", {"color": "red"}, build=_master_colors("FF0000", "000000"))
case("check_page_number_colors", "red-read", "@/a.pptx", {"color": "red"}, build=_master_colors("0F0000", "000000"))
case("check_page_number_colors", "blue", "@/a.pptx", {"color": "blue"}, build=_master_colors("00000F", "000000"))
case("check_page_number_colors", "black", "@/a.pptx", {"color": "black"}, build=_master_colors("000000", "FFFFFF"))
case("check_page_number_colors", "other-color", "@/a.pptx", {"color": "purple"},
     build=_master_colors("000000", "FFFFFF"))

# A deck as LibreOffice Impress saves it, and its python-pptx original, kept as fixtures
FIXTURES = Path(__file__).parent / "osworld_golden_fixtures"


def fixture(**names):
    def build(d: Path) -> None:
        for dest, src in names.items():
            (d / dest.replace("__", ".")).write_bytes((FIXTURES / src).read_bytes())
    return build


case("compare_pptx_files", "lo-same", "@/a.pptx", "@/b.pptx", build=fixture(a__pptx="deck_lo.pptx", b__pptx="deck_lo.pptx"))
case("compare_pptx_files", "lo-vs-original", "@/a.pptx", "@/b.pptx",
     build=fixture(a__pptx="deck_lo.pptx", b__pptx="deck_pptx.pptx"))
case("compare_pptx_files", "lo-vs-original-text-only", "@/a.pptx", "@/b.pptx", examine_shape=False,
     examine_font_name=False, examine_font_size=False, examine_color_rgb=False, examine_bullets=False,
     examine_background_color=False, build=fixture(a__pptx="deck_lo.pptx", b__pptx="deck_pptx.pptx"))
