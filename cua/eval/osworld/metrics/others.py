"""OSWorld's remaining file metrics: EPUB books, MP3 tags, PDF page counts, LibreOffice locale."""

from __future__ import annotations

import fnmatch
import operator
import os
import zipfile

from cua.eval.osworld.metrics.general import diff_text_file
from cua.eval.osworld.metrics.rules import match_value_to_rule


def _epub_parts(filename: str) -> list[str]:
    """toc.ncx without navPoints, content.opf without identifiers, every .html re-serialised: written
    to <file>.dir/ (as OSWorld does) and returned sorted."""
    import lxml.html

    out = []
    base = filename + ".dir"
    os.makedirs(base, exist_ok=True)
    try:
        with zipfile.ZipFile(filename) as z:
            names = z.namelist()
            for member, drop in (("toc.ncx", "navPoint"), ("content.opf", "dc:identifier")):
                if member in names:
                    lines = z.read(member).decode().splitlines()
                    with open(os.path.join(base, member), "w") as f:
                        f.writelines(line + "\n" for line in lines if drop not in line)
                    out.append(os.path.join(base, member))
            for name in names:
                if name.endswith(".html"):
                    raw = "".join(ch for ch in z.read(name).decode() if ch not in "\n\r")
                    html = lxml.html.fromstring(raw.encode())
                    with open(os.path.join(base, name), "w") as f:
                        f.write(lxml.html.tostring(html, pretty_print=True, encoding="unicode"))
                    out.append(os.path.join(base, name))
        return sorted(out)
    except zipfile.BadZipFile:
        return []


def compare_epub(result: str, expected: str) -> float:
    if result is None:
        return 0.0
    got, want = _epub_parts(result), _epub_parts(expected)
    metric = sum(diff_text_file(a, b) for a, b in zip(got, want))
    return metric / len(got) if got else metric


def check_mp3_meta(result: str, meta: dict):
    if result is None:
        return 0.0
    from mutagen.easyid3 import EasyID3

    tags = EasyID3(result)
    ok = True
    for key, rule in meta.items():
        value = tags.get(key, "")
        if isinstance(value, list):
            value = ",".join(value)
        ok = ok and match_value_to_rule(value, rule)
    return float(ok)


def check_pdf_pages(pdf_file: str, rules: dict) -> float:
    if pdf_file is None:
        return 0.0
    from pypdf import PdfReader

    return float(getattr(operator, rules["relation"])(len(PdfReader(pdf_file).pages), rules["ref_value"]))


def check_libre_locale(config_file: str, rules: dict) -> float:
    import lxml.etree

    root = lxml.etree.parse(config_file).getroot()
    oor = "{http://openoffice.org/2001/registry}"

    def values(prop_name):
        return [v for item in root.iter("item") if (item.get(f"{oor}path") or "").endswith("L10N")
                for prop in item if prop.tag == "prop" and prop.get(f"{oor}name") == prop_name
                for v in prop if v.tag == "value"]

    setup = values("ooSetupSystemLocale")
    locale = setup[0].text if setup else values("ooLocale")[0].text
    return float(any(fnmatch.fnmatchcase(locale, p) for p in rules["locale_set"]))
