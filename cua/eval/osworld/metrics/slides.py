"""OSWorld's Impress metrics: .pptx comparison (python-pptx) and Impress settings."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
import zipfile

A_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"
P_NS = "http://schemas.openxmlformats.org/presentationml/2006/main"
NS = {"a": A_NS, "p": P_NS}
OOR = "http://openoffice.org/2001/registry"
PICTURE, TABLE, FREEFORM = 13, 19, 5


def _prs(path):
    from pptx import Presentation

    return Presentation(path)


def _text_shapes(slide) -> list:
    """Every shape with text, groups searched recursively, in document order."""
    def walk(shape):
        found = [shape] if hasattr(shape, "text") and hasattr(shape, "text_frame") else []
        if hasattr(shape, "shapes"):
            for sub in shape.shapes:
                found.extend(walk(sub))
        return found

    return [s for shape in slide.shapes for s in walk(shape)]


def _background_rgb(slide):
    fill = slide.background.fill
    if fill.type == 1:
        return fill.fore_color.rgb
    if fill.type == 5:
        master = slide.slide_layout.slide_master.background.fill
        return master.fore_color.rgb if master.type == 1 else None
    return None


def _bullets(xml: str) -> list[tuple]:
    root = ET.fromstring(xml)
    out = []
    for p in root.findall(".//a:p", NS):
        ppr = p.find("a:pPr", NS)
        if ppr is not None:
            lvl = ppr.get("lvl")
            bu = ppr.find("a:buChar", NS)
            char = bu.get("char") if bu is not None else "No Bullet"
        else:
            lvl, char = "No Level", "No Bullet"
        text = "".join(t.text for t in p.findall(".//a:t", NS))
        if text.strip():
            out.append((lvl, char, text))
    return out


def _bullets_match(b1, b2) -> bool:
    if len(b1) != len(b2):
        return False
    for (l1, c1, t1), (l2, c2, t2) in zip(b1, b2):
        if t1 != t2 or c1 != c2 or ("0" if l1 is None else l1) != ("0" if l2 is None else l2):
            return False
    return True


def _falsy_same(a, b) -> bool:
    """None and False both mean 'off' for bold/italic."""
    return a in (None, False) and b in (None, False)


def _underline_differs(u1, u2) -> bool:
    if u1 == u2:
        return False
    if u1 is not None and u2 is not None:
        return True
    return (u1 is None and u2 is True) or (u1 is True and u2 is None)


class _Opts:
    def __init__(self, options: dict):
        get = options.get
        self.tol = get("approximately_tolerance", 0.005)
        for key, default in (
            ("number_of_slides", True), ("shape", True), ("text", True), ("indent", True), ("font_name", True),
            ("font_size", True), ("font_bold", True), ("font_italic", True), ("color_rgb", True),
            ("font_underline", True), ("strike_through", True), ("alignment", True),
            ("title_bottom_position", False), ("table_bottom_position", False), ("right_position", False),
            ("top_position", False), ("shape_for_shift_size", False), ("image_size", False),
            ("modify_height", False), ("bullets", True), ("background_color", True), ("note", True),
        ):
            setattr(self, key, get(f"examine_{key}", default))

    def close(self, v1, v2) -> bool:
        if v1 == v2:
            return True
        if v1 == 0 or v2 == 0:
            return False
        return abs(v1 - v2) / max(abs(v1), abs(v2)) <= self.tol

    def same_box(self, s1, s2) -> bool:
        return all(self.close(getattr(s1, a), getattr(s2, a)) for a in ("left", "top", "width", "height"))


def _geometry_ok(o: _Opts, slide_no: int, s1, s2) -> bool:
    """The position/size checks, in the reference's order; False means the verdict is 0."""
    text1, text2 = hasattr(s1, "text"), hasattr(s2, "text")
    if o.title_bottom_position:
        if text1 and text2 and s1.text == s2.text:
            if s1.text == "Product Comparison" and (s1.top <= s2.top or s1.top < 3600000):
                return False
        elif not o.same_box(s1, s2):
            return False
    if o.table_bottom_position:
        if slide_no == 3 and s1.shape_type == TABLE and s2.shape_type == TABLE:
            if s1.top <= s2.top or s1.top < 3600000:
                return False
        elif not o.same_box(s1, s2):
            return False
    if o.right_position and slide_no == 2 and not text1 and not text2:
        if s1.left <= s2.left or s1.left < 4320000:
            return False
    if o.top_position and slide_no == 2 and s1.shape_type == PICTURE and s2.shape_type == PICTURE:
        if s1.top >= s2.top or s1.top > 1980000:
            return False
    if o.shape_for_shift_size and not o.same_box(s1, s2):
        if not (text1 and text2 and s1.text == s2.text and s1.text == "Elaborate on what you want to discuss."):
            return False
    if o.shape and not o.same_box(s1, s2):
        return False
    if o.image_size:
        if s1.shape_type == PICTURE and s2.shape_type == PICTURE:
            if not o.close(s1.width, s2.width) or not o.close(s1.height, s2.height):
                return False
        elif not o.same_box(s1, s2):
            return False
    if o.modify_height:
        if (not text1 and not text2) or (s1.shape_type == FREEFORM and s2.shape_type == FREEFORM):
            if not o.close(s1.height, s2.height):
                return False
        elif not o.same_box(s1, s2):
            return False
    return True


def _table_ok(o: _Opts, t1, t2) -> bool:
    if len(t1.rows) != len(t2.rows) or len(t1.columns) != len(t2.columns):
        return False
    for i in range(len(t1.rows)):
        for j in range(len(t1.columns)):
            c1, c2 = t1.cell(i, j), t2.cell(i, j)
            if len(c1.text_frame.paragraphs) != len(c2.text_frame.paragraphs):
                return False
            for p1, p2 in zip(c1.text_frame.paragraphs, c2.text_frame.paragraphs):
                if len(p1.runs) != len(p2.runs):
                    return False
                for r1, r2 in zip(p1.runs, p2.runs):
                    f1, f2 = r1.font, r2.font
                    if hasattr(f1.color, "rgb") and hasattr(f2.color, "rgb"):
                        if f1.color.rgb != f2.color.rgb and o.color_rgb:
                            return False
                    if f1.bold != f2.bold and not _falsy_same(f1.bold, f2.bold):
                        return False
                    if f1.italic != f2.italic and not _falsy_same(f1.italic, f2.italic):
                        return False
                    if _underline_differs(f1.underline, f2.underline):
                        return False
    return True


def _alignment(p):
    from pptx.enum.text import PP_ALIGN

    return PP_ALIGN.LEFT if p.alignment is None else p.alignment


def _run_ok(o: _Opts, r1, r2) -> bool:
    f1, f2 = r1.font, r2.font
    if f1.name != f2.name and o.font_name:
        return False
    if f1.size != f2.size and o.font_size:
        return False
    if f1.bold != f2.bold and o.font_bold and not _falsy_same(f1.bold, f2.bold):
        return False
    if f1.italic != f2.italic and o.font_italic and not _falsy_same(f1.italic, f2.italic):
        return False
    if hasattr(f1.color, "rgb") and hasattr(f2.color, "rgb"):
        if f1.color.rgb != f2.color.rgb and o.color_rgb:
            return False
    if f1.underline != f2.underline and o.font_underline and _underline_differs(f1.underline, f2.underline):
        return False
    if f1._element.attrib.get("strike", "noStrike") != f2._element.attrib.get("strike", "noStrike") \
            and o.strike_through:
        return False
    if o.bullets:
        try:
            if not _bullets_match(_bullets(r1.part.blob.decode("utf-8")), _bullets(r2.part.blob.decode("utf-8"))):
                return False
        except Exception:
            pass
    return True


def _text_ok(o: _Opts, s1, s2) -> bool:
    if s1.text.strip() != s2.text.strip() and o.text:
        return False
    ps1, ps2 = s1.text_frame.paragraphs, s2.text_frame.paragraphs
    if len(ps1) != len(ps2):
        return False
    for p1, p2 in zip(ps1, ps2):
        if o.alignment and _alignment(p1) != _alignment(p2):
            return False
        if p1.text != p2.text and o.text:
            return False
        if p1.level != p2.level and o.indent:
            return False
        if len(p1.runs) != len(p2.runs):
            return False
        if not all(_run_ok(o, r1, r2) for r1, r2 in zip(p1.runs, p2.runs)):
            return False
    return True


def compare_pptx_files(file1_path, file2_path, **options):
    """Slides, shapes (geometry within a relative tolerance), text, runs' fonts, tables, bullets, notes and
    backgrounds equal, each check switchable by an examine_* option (OSWorld's defaults)."""
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    prs1, prs2 = _prs(file1_path), _prs(file2_path)
    o = _Opts(options)
    if len(prs1.slides) != len(prs2.slides) and o.number_of_slides:
        return 0
    for slide_no, (sl1, sl2) in enumerate(zip(prs1.slides, prs2.slides), start=1):
        if _background_rgb(sl1) != _background_rgb(sl2) and o.background_color:
            return 0
        n1, n2 = sl1.notes_slide, sl2.notes_slide
        notes1 = n1.notes_text_frame.text if n1 else None
        notes2 = n2.notes_text_frame.text if n2 else None
        if notes1.strip() != notes2.strip() and o.note:
            return 0
        ts1, ts2 = _text_shapes(sl1), _text_shapes(sl2)
        if len(sl1.shapes) != len(sl2.shapes):
            return 0
        for s1, s2 in zip(sl1.shapes, sl2.shapes):
            if not _geometry_ok(o, slide_no, s1, s2):
                return 0
            if s1.shape_type == MSO_SHAPE_TYPE.TABLE and not _table_ok(o, s1.table, s2.table):
                return 0
            if hasattr(s1, "text") and hasattr(s2, "text") and not _text_ok(o, s1, s2):
                return 0
        if o.alignment and len(ts1) == len(ts2):
            for t1, t2 in zip(ts1, ts2):
                if t1.text.strip() != t2.text.strip() and o.text:
                    return 0
                if len(t1.text_frame.paragraphs) != len(t2.text_frame.paragraphs):
                    return 0
                for p1, p2 in zip(t1.text_frame.paragraphs, t2.text_frame.paragraphs):
                    if _alignment(p1) != _alignment(p2):
                        return 0
        elif len(ts1) != len(ts2):
            return 0
    return 1


def check_presenter_console_disable(config_file_path):
    try:
        root = ET.parse(config_file_path).getroot()
        for prop in root.findall(
            ".//item[@oor:path='/org.openoffice.Office.Impress/Misc/Start']/prop[@oor:name='EnablePresenterScreen']",
            {"oor": OOR},
        ):
            return 1.0 if prop.find("value").text.lower() == "false" else 0.0
        return 0.0
    except Exception:
        return 0.0


def check_image_stretch_and_center(modified_ppt, original_ppt):
    """The original slide 1's first picture fills the slide (within 0.5 inch) and is centred."""
    from pptx.util import Inches

    original, modified = _prs(original_ppt), _prs(modified_ppt)
    pics = [s for s in original.slides[0].shapes if s.shape_type == PICTURE]
    new_pics = [s for s in modified.slides[0].shapes if s.shape_type == PICTURE]
    if not pics:
        return 0.0
    match = None
    for p in new_pics:
        if pics[0].image.blob == p.image.blob:
            match = p
    if match is None:
        return 0.0
    w, h = original.slide_width, original.slide_height
    half = Inches(0.5)
    if (abs(match.width - w) > half or abs(match.height - h) > half
            or abs(match.left - (w - match.width) / 2) > half or abs(match.top - (h - match.height) / 2) > half):
        return 0.0
    return 1.0


def check_slide_orientation_Portrait(pptx_path):
    prs = _prs(pptx_path)
    return 1 if prs.slide_width < prs.slide_height else 0


def evaluate_presentation_fill_to_rgb_distance(pptx_file, rules):
    """1 minus the mean normalised RGB distance of each slide's solid background to rules["rgb"]; a slide
    still at original_rgb, or without a solid fill, counts as distance 1."""
    rgb = rules["rgb"]
    original = rules.get("original_rgb") if isinstance(rules, dict) else None

    def color_of(color):
        try:
            return color.rgb if hasattr(color, "rgb") else None
        except Exception:
            return None

    def distance(slide) -> float:
        fill = slide.background.fill
        if fill.type == 1:
            got = color_of(fill.fore_color)
        elif fill.type == 5:
            master = slide.slide_layout.slide_master.background.fill
            if master.type != 1:
                return 1
            got = color_of(master.fore_color)
        else:
            return 1
        if got is None:
            return 1
        r1, g1, b1 = got
        if original is not None and (r1, g1, b1) == tuple(original[:3]):
            return 1
        r2, g2, b2 = rgb
        return math.sqrt((r1 - r2) ** 2 + (g1 - g2) ** 2 + (b1 - b2) ** 2) / math.sqrt(3 * 255 ** 2)

    prs = _prs(pptx_file)
    return 1 - sum(distance(s) for s in prs.slides) / len(prs.slides)


def check_left_panel(accessibility_tree):
    root = ET.fromstring(accessibility_tree)
    return 1.0 if any(f.attrib.get("name") == "Slides View" for f in root.iter("document-frame")) else 0.0


def check_transition(pptx_file, rules):
    with zipfile.ZipFile(pptx_file) as z:
        name = f"ppt/slides/slide{rules['slide_idx'] + 1}.xml"
        try:
            z.getinfo(name)
        except KeyError:
            return 0.0
        with z.open(name) as f:
            root = ET.parse(f).getroot()
    transition = root.find(".//p:transition", NS)
    if transition is None:
        return 0.0
    return 1.0 if transition.find(f".//p:{rules['transition_type']}", NS) is not None else 0.0


def _channels(val: str) -> tuple[int, int, int]:
    # OSWorld slices as if the value were '#RRGGBB'; srgbClr values have no '#', so it reads
    # characters 1-6 (a reference quirk we keep: docs/osworld_metrics.md).
    return int(val[1:3], 16), int(val[3:5], 16), int(val[5:7], 16)


def check_page_number_colors(pptx_file, rules):
    color = rules["color"]
    with zipfile.ZipFile(pptx_file) as z, z.open("ppt/slideMasters/slideMaster1.xml") as f:
        root = ET.parse(f).getroot()
    val = root.findall(".//a:solidFill//a:srgbClr", NS)[-2].get("val")
    if val is None:
        return 0
    r, g, b = _channels(val)
    t = 50
    tests = {
        "red": r > g + t and r > b + t,
        "blue": b > g + t and b > r + t,
        "green": g > r + t and g > b + t,
        "black": r < t and g < t and b < t,
    }
    if color in tests and not tests[color]:
        return 0
    return 1


def check_auto_saving_time(pptx_file, rules):
    """registrymodifications.xcu sets AutoSaveTimeIntervall to rules["minutes"]; None if unreadable."""
    try:
        root = ET.parse(pptx_file).getroot()
    except (ET.ParseError, FileNotFoundError):
        return None
    found = None
    for item in root.findall(".//item"):
        if item.get(f"{{{OOR}}}path") == "/org.openoffice.Office.Common/Save/Document":
            for prop in item.findall(".//prop"):
                if prop.get(f"{{{OOR}}}name") == "AutoSaveTimeIntervall":
                    found = prop.find(".//value").text
                    break
    if found is None:
        return 0
    return 1 if int(found) == rules["minutes"] else 0
