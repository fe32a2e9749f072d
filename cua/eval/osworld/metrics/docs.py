"""OSWorld's Writer metrics: .docx (python-docx) and .odt (odfpy) documents, LibreOffice settings."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def _doc(path):
    from docx import Document

    return Document(path)


def _docs(a, b):
    """Both documents, or None when either path is empty or fails to open (the reference scores that 0)."""
    if not a or not b:
        return None
    try:
        return _doc(a), _doc(b)
    except Exception:
        return None


def _ratio(a, b) -> float:
    from rapidfuzz import fuzz

    return fuzz.ratio(a, b)


def find_default_font(config_file_path, rules):
    """registrymodifications.xcu names rules["font_name"] as Writer's standard default font."""
    if not config_file_path:
        return 0
    found = None
    ns = {"oor": "http://openoffice.org/2001/registry"}
    try:
        root = ET.parse(config_file_path).getroot()
        for item in root.findall('.//item[@oor:path="/org.openoffice.Office.Writer/DefaultFont"]', ns):
            for prop in item.findall('.//prop[@oor:name="Standard"]', ns):
                for value in prop.findall("value", ns):
                    found = value.text
    except Exception:
        pass
    return 1 if found == rules["font_name"] else 0


def contains_page_break(docx_file, rules):
    if not docx_file:
        return 0
    try:
        doc = _doc(docx_file)
    except Exception:
        return 0
    try:
        expected = rules["page_break_count"]
    except Exception:
        expected = None
    count = 0
    for p in doc.paragraphs:
        for run in p.runs:
            for br in run.element.findall(".//w:br", {"w": W_NS}):
                if br.attrib.get(f"{{{W_NS}}}type") == "page":
                    count += 1
    if expected is not None and count != expected:
        return 0
    return 1 if count > 0 else 0


def _odt_paragraphs(document) -> list[str]:
    from odf.text import P

    texts = []
    for p in document.getElementsByType(P):
        parts = []
        for node in p.childNodes:
            if node.nodeType == node.TEXT_NODE:
                parts.append(node.data)
            elif node.nodeType == node.ELEMENT_NODE and node.tagName == "text:span":
                parts.extend(c.data for c in node.childNodes if c.nodeType == c.TEXT_NODE)
        texts.append("".join(parts))
    return texts


def _squash(paragraphs) -> str:
    return re.sub(r"\s+", " ", "\n".join(paragraphs)).strip()


def compare_docx_files(file1, file2, **options):
    """Paragraph texts equal (whitespace-folded by default); fuzzy/content_only give a ratio instead."""
    ignore_blanks = options.get("ignore_blanks", True)
    ignore_case = options.get("ignore_case", False)
    ignore_order = options.get("ignore_order", False)
    content_only = options.get("content_only", False)
    fuzzy = options.get("fuzzy_match", False)
    drop_empty = options.get("delete_empty_lines", False)
    if not file1 or not file2:
        return 0
    if file1.endswith(".docx") and file2.endswith(".docx"):
        pair = _docs(file1, file2)
        if pair is None:
            return 0
        p1, p2 = ([p.text for p in d.paragraphs] for d in pair)
    elif file1.endswith(".odt") and file2.endswith(".odt"):
        from odf.opendocument import load

        try:
            d1, d2 = load(file1), load(file2)
        except Exception:
            return 0
        p1, p2 = _odt_paragraphs(d1), _odt_paragraphs(d2)
    else:
        return 0
    if ignore_order:
        p1, p2 = sorted(p1), sorted(p2)
    if drop_empty:
        p1, p2 = [p for p in p1 if p.strip()], [p for p in p2 if p.strip()]
    if content_only or ignore_blanks:
        t1, t2 = _squash(p1), _squash(p2)
        if ignore_case:
            t1, t2 = t1.lower(), t2.lower()
        if content_only or fuzzy:
            return _ratio(t1, t2) / 100.0
        return 1 if t1 == t2 else 0
    if len(p1) != len(p2):
        return 0
    if fuzzy:
        if not p1:
            return 1.0
        total = sum(
            _ratio(a.lower(), b.lower()) / 100.0 if ignore_case else _ratio(a, b) / 100.0 for a, b in zip(p1, p2)
        )
        return total / len(p1)
    for a, b in zip(p1, p2):
        if ignore_case:
            a, b = a.lower(), b.lower()
        if a != b:
            return 0
    return 1


def compare_docx_tables(docx_file1, docx_file2):
    pair = _docs(docx_file1, docx_file2)
    if pair is None:
        return 0
    t1s, t2s = pair[0].tables, pair[1].tables
    if len(t1s) != len(t2s):
        return 0
    for t1, t2 in zip(t1s, t2s):
        if len(t1.rows) != len(t2.rows) or len(t1.columns) != len(t2.columns):
            return 0
        for i in range(len(t1.rows)):
            for j in range(len(t1.columns)):
                if t1.cell(i, j).text.strip() != t2.cell(i, j).text.strip():
                    return 0
    return 1


def compare_docx_images(docx_file1, docx_file2):
    """Same number of embedded images, pixel-identical in relationship order."""
    pair = _docs(docx_file1, docx_file2)
    if pair is None:
        return 0
    from io import BytesIO

    from PIL import Image

    def images(doc):
        return [rel.target_part.blob for rel in doc.part.rels.values() if "image" in rel.reltype]

    i1, i2 = images(pair[0]), images(pair[1])
    if len(i1) != len(i2):
        return 0
    for a, b in zip(i1, i2):
        if Image.open(BytesIO(a)).tobytes() != Image.open(BytesIO(b)).tobytes():
            return 0
    return 1


def compare_image_text(image_path, rule):
    """OCR of the image contains rule["text"]. The reference uses easyocr; we use rapidocr (see
    docs/osworld_metrics.md): the same decision where both engines read the text."""
    if not image_path or not os.path.exists(image_path):
        return 0
    try:
        from PIL import Image

        with Image.open(image_path) as im:
            im.load()
            image = im.convert("RGB")
        from cua.perception.ocr import ocr

        text = " ".join(e.name for e in ocr(image))
    except Exception:
        return 0
    if rule["type"] != "text":
        return 0
    return 1 if rule["text"] in text else 0


def compare_line_spacing(docx_file1, docx_file2):
    if not docx_file1 or not docx_file2:
        return 0
    if not compare_docx_files(docx_file1, docx_file2):
        return 0
    pair = _docs(docx_file1, docx_file2)
    if pair is None:
        return 0
    if len(pair[0].paragraphs) != len(pair[1].paragraphs):
        return 0
    for a, b in zip(pair[0].paragraphs, pair[1].paragraphs):
        if a.paragraph_format.line_spacing != b.paragraph_format.line_spacing:
            return 0
    return 1


def compare_font_names(docx_file, rules):
    if not docx_file:
        return 0
    try:
        doc = _doc(docx_file)
    except Exception:
        return 0
    want = rules["font_name"]
    return 0 if any(r.font.name != want for p in doc.paragraphs for r in p.runs) else 1


def _zip_runs(pair):
    for p1, p2 in zip(pair[0].paragraphs, pair[1].paragraphs):
        yield from zip(p1.runs, p2.runs)


def compare_subscript_contains(docx_file1, docx_file2):
    pair = _docs(docx_file1, docx_file2)
    if pair is None:
        return 0
    return 1 if any(r1.font.subscript and r2.font.subscript for r1, r2 in _zip_runs(pair)) else 0


def has_page_numbers_in_footers(docx_file):
    if not docx_file:
        return 0
    try:
        doc = _doc(docx_file)
    except Exception:
        return 0
    for section in doc.sections:
        footer = section.footer
        if footer is None:
            return 0
        text = footer.paragraphs[0].text if footer.paragraphs else ""
        if not any(ch.isdigit() for ch in text):
            return 0
    return 1


def is_first_line_centered(docx_file):
    if not docx_file:
        return 0
    try:
        doc = _doc(docx_file)
    except Exception:
        return 0
    from docx.enum.text import WD_PARAGRAPH_ALIGNMENT

    return 1 if doc.paragraphs[0].paragraph_format.alignment == WD_PARAGRAPH_ALIGNMENT.CENTER else 0


def check_file_exists(directory, filename):
    if not directory or not filename:
        return 0
    return 1 if os.path.isfile(os.path.join(directory, filename)) else 0


def check_tabstops(docx_file1, docx_file2, **kwargs) -> float:
    """1 minus the mean tab-stop displacement (as a share of the text width) of the non-empty paragraphs."""
    pair = _docs(docx_file1, docx_file2)
    if pair is None:
        return 0.0
    from docx.enum.text import WD_TAB_ALIGNMENT

    para1 = [p for p in pair[0].paragraphs if p.text.strip()]
    para2 = [p for p in pair[1].paragraphs if p.text.strip()]
    if len(para1) != len(para2):
        return 0.0
    if kwargs.get("word_number_split_by_tabstop") is not None:
        number = kwargs["word_number_split_by_tabstop"]
        index = kwargs.get("index", 0)
        for p in para1:
            splits = p.text.split("\t")
            if len(splits) == 0:
                return 0.0
            if len([w for w in re.split(r"\s", splits[index]) if w.strip()]) != number:
                return 0.0
    section = pair[1].sections[0]
    width = section.page_width - section.left_margin - section.right_margin

    def kept(tabs):
        return [t for t in tabs if not (t.alignment == WD_TAB_ALIGNMENT.CLEAR
                                        or (t.alignment == WD_TAB_ALIGNMENT.LEFT and t.position == 0))]

    minus = 0.0
    for p1, p2 in zip(para1, para2):
        t1, t2 = kept(p1.paragraph_format.tab_stops), kept(p2.paragraph_format.tab_stops)
        if len(t1) != len(t2):
            return 0.0
        diff = 0.0
        for a, b in zip(t1, t2):
            if a.alignment != b.alignment:
                return 0.0
            diff += abs(a.position - b.position)
        minus += diff / width
    return 1 - (minus / len(para1))


def compare_contains_image(docx_file1, docx_file2):
    pair = _docs(docx_file1, docx_file2)
    if pair is None:
        return 0
    for r1, r2 in _zip_runs(pair):
        if ("graphicData" in r1._element.xml) != ("graphicData" in r2._element.xml):
            return 0
    return 1


def _delta_e(rgb1, rgb2) -> float:
    from skimage.color import deltaE_ciede2000, rgb2lab

    lab1 = rgb2lab([c / 255.0 for c in rgb1[:3]])
    lab2 = rgb2lab([c / 255.0 for c in rgb2[:3]])
    return deltaE_ciede2000(lab1, lab2)


def evaluate_colored_words_in_tables(file_path1, file_path2, **kwargs):
    """Table words starting with a vowel are red, the others blue (CIEDE2000 within threshold)."""
    if not file_path1 or not file_path2:
        return 0
    if not compare_docx_files(file_path1, file_path2):
        return 0
    try:
        doc = _doc(file_path1)
    except Exception:
        return 0
    threshold = kwargs.get("threshold", 3.5)
    for table in doc.tables:
        for row in table.rows:
            for cell in row.cells:
                for p in cell.paragraphs:
                    for run in p.runs:
                        word = run.text
                        if not word:
                            continue
                        target = (255, 0, 0) if word[0].lower() in "aeiou" else (0, 0, 255)
                        if _delta_e(run.font.color.rgb, target) > threshold:
                            return 0
    return 1


def check_highlighted_words(file_path1, file_path2):
    """An .odt with no span whose automatic style has a yellow (#ffff00) background."""
    if not file_path1 or not file_path2:
        return 0
    if not compare_docx_files(file_path1, file_path2):
        return 0
    from odf.opendocument import load
    from odf.text import Span

    doc = load(file_path1)
    for span in doc.getElementsByType(Span):
        style = span.getAttribute("stylename")
        if not style:
            continue
        for auto in doc.automaticstyles.childNodes:
            if auto.getAttribute("name") == style:
                if any(prop.getAttribute("backgroundcolor") == "#ffff00" for prop in auto.childNodes):
                    return 0
    return 1


def evaluate_strike_through_last_paragraph(file_path1, file_path2):
    if not file_path1 or not file_path2:
        return 0
    if not compare_docx_files(file_path1, file_path2):
        return 0
    try:
        doc = _doc(file_path1)
    except Exception:
        return 0
    return 0 if any(not r.font.strike for r in doc.paragraphs[-1].runs) else 1


def check_italic_font_size_14(path1, path2):
    if not path1 or not path2:
        return 0
    if not compare_docx_files(path1, path2):
        return 0
    try:
        doc = _doc(path1)
    except Exception:
        return 0
    for p in doc.paragraphs:
        for run in p.runs:
            if run.italic and (run.font.size is None or run.font.size.pt != 14):
                return 0
    return 1


def compare_docx_lines(file1, file2):
    pair = _docs(file1, file2)
    if pair is None:
        return 0
    lines = [{p.text.strip() for p in d.paragraphs if p.text.strip()} for d in pair]
    return 1 if lines[0] == lines[1] else 0


def compare_docx_files_and_ignore_new_lines(file1, file2, **options):
    ignore_blanks = options.get("ignore_blanks", True)
    if not file1 or not file2:
        return 0
    if not (file1.endswith(".docx") and file2.endswith(".docx")):
        return 0
    pair = _docs(file1, file2)
    if pair is None:
        return 0
    p1, p2 = ([p.text for p in d.paragraphs if p.text != ""] for d in pair)
    if ignore_blanks:
        return 1 if _squash(p1) == _squash(p2) else 0
    return 1 if p1 == p2 else 0


def compare_references(file1, file2, **options):
    """Paragraphs after the 'References' heading: mean fuzzy ratio, rescaled above reference_base_result."""
    if not file1 or not file2:
        return 0
    indicator = options.get("reference_indicator", "References")
    base = options.get("reference_base_result", 0.5)
    if not (file1.endswith(".docx") and file2.endswith(".docx")):
        return 0
    pair = _docs(file1, file2)
    if pair is None:
        return 0
    p1, p2 = ([p.text for p in d.paragraphs] for d in pair)
    i1 = p1.index(indicator) if indicator in p1 else -1
    i2 = p2.index(indicator) if indicator in p2 else -1
    if i1 == -1 and i2 == -1:
        return 1
    if i1 == -1 or i2 == -1:
        return 0
    r1 = [p for p in p1[i1 + 1:] if p.strip()]
    r2 = [p for p in p2[i2 + 1:] if p.strip()]
    if len(r1) != len(r2):
        return 0
    score = sum(_ratio(a, b) / 100.0 for a, b in zip(r1, r2)) / len(r1)
    if score >= base + 0.01:
        return (score - base) / (1 - base)
    return 0
