"""Golden cases: Chrome, VS Code, Thunderbird, OS and other file metrics."""

from __future__ import annotations

import json
from pathlib import Path

from osworld_golden_cases import case, text
from osworld_golden_docs import both

# ---- chrome -------------------------------------------------------------------------------------
case("is_expected_active_tab", "pass", {"url": "https://www.google.com/"}, {"type": "url", "url": "google.com"})
case("is_expected_active_tab", "suffix", {"url": "https://airbnb.com.sg/rooms"}, {"type": "url",
     "url": "https://www.airbnb.com/rooms"})
case("is_expected_active_tab", "fail", {"url": "https://maps.google.com/"}, {"type": "url", "url": "google.com"})
case("is_expected_active_tab", "string", "http://example.org/a?b=1", {"type": "url", "url": "example.org/a?b=1"})
case("is_expected_active_tab", "empty", {}, {"type": "url", "url": "x"})
case("is_expected_active_tab", "other-type", {"url": "x"}, {"type": "title", "url": "x"})
case("is_expected_active_tab_approximate", "pass", {"url": "https://a.com/p?q=1"}, {"type": "url", "url": "https://a.com/p"})
case("is_expected_active_tab_approximate", "fail", {"url": "https://a.com/q"}, {"type": "url", "url": "https://a.com/p"})
case("is_expected_active_tab_approximate", "empty", None, {"type": "url", "url": "https://a.com/p"})
case("is_expected_url_pattern_match", "pass", {"url": "https://x.com/search?q=cats&lang=en"},
     {"expected": ["q=cats", "lang=en"]})
case("is_expected_url_pattern_match", "fail", "https://x.com/search?q=dogs", {"expected": ["q=cats"]})
case("is_expected_url_pattern_match", "no-url", {"title": "x"}, {"expected": ["x"]})
case("is_expected_url_pattern_match", "empty", "", {"expected": ["x"]})
case("is_expected_installed_extensions", "pass", ["a", "b", "c"], {"expected": ["a", "b"]})
case("is_expected_installed_extensions", "fail", ["a"], {"expected": ["a", "b"]})
case("is_expected_installed_extensions", "none", [], {"expected": []})
TABS = [{"url": "https://www.a.com/"}, {"url": "http://b.org/x"}]
case("is_expected_tabs", "pass", TABS, {"type": "url", "urls": ["b.org/x", "a.com"]})
case("is_expected_tabs", "fail", TABS, {"type": "url", "urls": ["a.com"]})
case("is_expected_tabs", "empty", [], {"type": "url", "urls": []})
case("is_expected_tabs", "other-type", TABS, {"type": "title", "urls": []})
BM = {"bookmark_bar": {"children": [
    {"type": "folder", "name": "Liked Authors", "children": [{"type": "url", "url": "u1"}, {"type": "url", "url": "u2"}]},
    {"type": "url", "url": "https://x.org", "name": "x"}]}}
case("is_expected_bookmarks", "folders", BM, {"type": "bookmark_bar_folders_names", "names": ["Liked Authors"]})
case("is_expected_bookmarks", "urls-fail", BM, {"type": "bookmark_bar_websites_urls", "urls": ["https://y.org"]})
case("is_expected_bookmarks", "liked", BM, {"type": "liked_authors_websites_urls", "urls": [["u0", "u1"], "u2"]})
case("is_expected_bookmarks", "liked-fail", BM, {"type": "liked_authors_websites_urls", "urls": ["u1"]})
case("is_expected_bookmarks", "empty", {}, {"type": "bookmark_bar_folders_names", "names": []})
case("is_expected_bookmarks", "bad-type", BM, {"type": "nope"})
case("is_expected_search_query", "pass", {"url": "https://s.com/?q=hello+world"}, {"expect": {"pattern": r"q=hello"}})
case("is_expected_search_query", "fail", {"url": "https://s.com/?q=bye"}, {"expect": {"pattern": r"q=hello"}})
case("is_expected_search_query", "empty", None, {"expect": {"pattern": "x"}})
COOK = [["n", ".google.com"], ["n", "www.example.org"]]
case("is_cookie_deleted", "pass", COOK, {"type": "domains", "domains": ["amazon.com"]})
case("is_cookie_deleted", "fail", COOK, {"type": "domains", "domains": ["example.org"]})
case("is_cookie_deleted", "empty", [], {"type": "domains", "domains": ["x.com"]})
case("is_cookie_deleted", "bad-type", [], {"type": "names"})
SC = {"/home/u/Desktop/a.desktop": "[Desktop Entry]\nName=Gmail\nExec=chromium --app=https://mail.google.com\n"}
case("is_shortcut_on_desktop", "name", SC, {"type": "name", "name": "Gmail"})
case("is_shortcut_on_desktop", "name-fail", SC, {"type": "name", "name": "Mail"})
case("is_shortcut_on_desktop", "exec", SC, {"type": "exec", "exec": "chromium --app=https://mail.google.com"})
case("is_shortcut_on_desktop", "url", SC, {"type": "url"})
HIST = [["https://www.youtube.com/watch", "t", 1], ["https://news.ycombinator.com", "t", 2]]
case("check_history_deleted", "pass", HIST, {"type": "keywords", "keywords": ["amazon"]})
case("check_history_deleted", "fail", HIST, {"type": "keywords", "keywords": ["youtube"]})
case("check_history_deleted", "empty", [], {"type": "keywords", "keywords": ["youtube"]})
case("check_history_deleted", "bad-type", [], {"type": "urls"})
case("check_enabled_experiments", "pass", ["read-later@1", "x@2"], {"type": "names", "names": ["read-later", "x"]})
case("check_enabled_experiments", "order", ["x@2", "read-later@1"], {"type": "names", "names": ["read-later", "x"]})
case("check_enabled_experiments", "empty", [], {"type": "names", "names": []})
case("check_enabled_experiments", "bad-type", [], {"type": "ids"})
case("check_font_size", "value", {"default_font_size": 20}, {"type": "value", "value": 20})
case("check_font_size", "range", {"default_font_size": 20}, {"type": "range", "min": 16, "max": 20})
case("check_font_size", "range-pass", {"default_font_size": 18}, {"type": "range", "min": 16, "max": 20})
case("check_font_size", "bad-type", {"default_font_size": 18}, {"type": "other"})
case("is_added_to_steam_cart", "pass", {"content": "Your cart: Dota 2, Portal"}, {"items": ["Dota 2", "Portal"]})
case("is_added_to_steam_cart", "fail", {"content": "Your cart: Dota 2"}, {"items": ["Dota 2", "Portal"]})
case("is_added_to_steam_cart", "no-items", {"content": ""}, {"items": []})

H1 = '<html><body><p class="a" sdnum="1">Hi <b>there</b></p></body></html>'
case("compare_htmls", "pass", "@/a.html", "@/b.html", build=text(a__html=H1, b__html=H1))
case("compare_htmls", "text", "@/a.html", "@/b.html", build=text(a__html=H1, b__html=H1.replace("there", "you")))
case("compare_htmls", "sdnum", "@/a.html", "@/b.html", ignore_sdnum=True,
     build=text(a__html=H1, b__html=H1.replace('sdnum="1"', 'sdnum="2"')))
case("compare_htmls", "sdnum-strict", "@/a.html", "@/b.html",
     build=text(a__html=H1, b__html=H1.replace('sdnum="1"', 'sdnum="2"')))
case("compare_htmls", "missing", "@/a.html", "@/nope.html", build=text(a__html=H1))


def pdf(name: str, pages, image=None):
    """A PDF with one text line per page (reportlab-free: written by hand) and optionally one image."""
    def build(d: Path) -> None:
        from PIL import Image

        if image is not None:
            Image.new("RGB", (32, 32), image).save(d / f"_{name}.pdf", "PDF")
            from pypdf import PdfReader, PdfWriter

            w = PdfWriter()
            w.append(PdfReader(d / f"_{name}.pdf"))
            for _ in pages[1:]:
                w.add_blank_page(200, 200)
            w.write(d / name)
            (d / f"_{name}.pdf").unlink()
            return
        (d / name).write_bytes(_text_pdf(pages))
    return build


def _text_pdf(pages) -> bytes:
    objs = ["<< /Type /Catalog /Pages 2 0 R >>", None, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for line in pages:
        stream = f"BT /F1 12 Tf 20 100 Td ({line}) Tj ET"
        objs.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Contents {len(objs)} 0 R "
                    "/Resources << /Font << /F1 3 0 R >> >> >>")
        kids.append(f"{len(objs)} 0 R")
    objs[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    out, offsets = b"%PDF-1.4\n", []
    for i, o in enumerate(objs, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n{o}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


case("compare_pdfs", "pass", "@/a.pdf", "@/b.pdf", build=both(pdf("a.pdf", ["Hello world"]), pdf("b.pdf", ["Hello world"])))
case("compare_pdfs", "different", "@/a.pdf", "@/b.pdf",
     build=both(pdf("a.pdf", ["Hello world"]), pdf("b.pdf", ["Goodbye moon"])))
case("compare_pdfs", "missing", "@/a.pdf", "@/nope.pdf", build=pdf("a.pdf", ["x"]))
case("compare_pdfs", "lists", ["@/a.pdf", "@/c.pdf"], ["@/b.pdf", "@/d.pdf"],
     build=both(pdf("a.pdf", ["one"]), pdf("b.pdf", ["one"]), pdf("c.pdf", ["two"]), pdf("d.pdf", ["three"])))
case("check_pdf_pages", "pass", "@/a.pdf", {"relation": "eq", "ref_value": 2}, build=pdf("a.pdf", ["a", "b"]))
case("check_pdf_pages", "fail", "@/a.pdf", {"relation": "gt", "ref_value": 2}, build=pdf("a.pdf", ["a", "b"]))
case("check_pdf_pages", "none", None, {"relation": "eq", "ref_value": 2})
case("compare_pdf_images", "pass", "@/a.pdf", "@/b.pdf",
     build=both(pdf("a.pdf", ["x"], image=(200, 0, 0)), pdf("b.pdf", ["x"], image=(200, 0, 0))))
case("compare_pdf_images", "no-images", "@/a.pdf", "@/b.pdf", build=both(pdf("a.pdf", ["x"]), pdf("b.pdf", ["y"])))
case("compare_pdf_images", "count", "@/a.pdf", "@/b.pdf",
     build=both(pdf("a.pdf", ["x"], image=(200, 0, 0)), pdf("b.pdf", ["y"])))
case("compare_pdf_images", "missing", "@/a.pdf", "@/nope.pdf", build=pdf("a.pdf", ["x"]))


def archive(name: str, files: dict):
    def build(d: Path) -> None:
        import zipfile

        with zipfile.ZipFile(d / name, "w") as z:
            for n, content in sorted(files.items()):
                z.writestr(n, content)
    return build


case("compare_archive", "pass", "@/p.zip", "@/g.zip", file_type="text",
     build=both(archive("p.zip", {"a.txt": "x", "b.txt": "y"}), archive("g.zip", {"a.txt": "x", "b.txt": "y"})))
case("compare_archive", "half", "@/p.zip", "@/g.zip",
     build=both(archive("p.zip", {"a.txt": "x", "b.txt": "y"}), archive("g.zip", {"a.txt": "x", "b.txt": "z"})))
case("compare_archive", "names", "@/p.zip", "@/g.zip",
     build=both(archive("p.zip", {"a.txt": "x"}), archive("g.zip", {"c.txt": "x"})))
case("compare_archive", "subdir-csv", "@/p.zip", "@/g.zip", file_type="csv", file_path="d",
     build=both(archive("p.zip", {"d/a.csv": "1,2\n"}), archive("g.zip", {"d/a.csv": "1,2\n"})))
case("compare_archive", "none", None, "@/g.zip", build=archive("g.zip", {"a.txt": "x"}))

# ---- vscode ---------------------------------------------------------------------------------------
KB = '// comment\n[{"key": "ctrl+j", "command": "workbench.action.togglePanel"}]'
case("check_json_keybindings", "pass", "@/k.json", {"expected": {"key": "ctrl+j", "command": "workbench.action.togglePanel"}},
     build=text(k__json=KB))
case("check_json_keybindings", "fail", "@/k.json", {"expected": {"key": "ctrl+k", "command": "x"}}, build=text(k__json=KB))
case("check_json_keybindings", "not-list", "@/k.json", {"expected": {}}, build=text(k__json='{"a": 1}'))
case("check_json_keybindings", "missing", "@/nope.json", {"expected": {}})
case("check_json_settings", "pass", "@/s.json", {"expected": {"editor.fontSize": 14}}, build=text(s__json='{"editor.fontSize": 14, "x": 1}'))
case("check_json_settings", "fail", "@/s.json", {"expected": {"editor.fontSize": 14}}, build=text(s__json='{"editor.fontSize": 12}'))
case("check_json_settings", "bad-json", "@/s.json", {"expected": {}}, build=text(s__json="{oops"))
case("check_json_settings", "none", None, {"expected": {}})
case("compare_text_file", "pass", "@/a.txt", "@/b.txt", build=text(a__txt="x y", b__txt="x y"))
case("compare_text_file", "blanks", "@/a.txt", "@/b.txt", ignore_blanks=True, build=text(a__txt="x\t y\n", b__txt="x y"))
case("compare_text_file", "case", "@/a.txt", "@/b.txt", ignore_case=True, build=text(a__txt="X", b__txt="x"))
case("compare_text_file", "fail", "@/a.txt", "@/b.txt", build=text(a__txt="x\n", b__txt="x"))
case("compare_text_file", "none", None, "@/b.txt", build=text(b__txt="x"))
case("compare_zip_files", "pass", "@/a.zip", "@/b.zip",
     build=both(archive("a.zip", {"x.txt": "1"}), archive("b.zip", {"x.txt": "1"})))
case("compare_zip_files", "content", "@/a.zip", "@/b.zip",
     build=both(archive("a.zip", {"x.txt": "1"}), archive("b.zip", {"x.txt": "2"})))
case("compare_zip_files", "names", "@/a.zip", "@/b.zip",
     build=both(archive("a.zip", {"x.txt": "1"}), archive("b.zip", {"y.txt": "1"})))
case("compare_zip_files", "pdf", "@/a.zip", "@/b.zip",
     build=both(archive("a.zip", {"d.pdf": _text_pdf(["Quarterly report"])}),
                archive("b.zip", {"d.pdf": _text_pdf(["Quarterly report"]).replace(b"%PDF-1.4", b"%PDF-1.5")})))
case("compare_zip_files", "none", None, "@/b.zip", build=archive("b.zip", {}))
case("compare_config", "pass", "@/c.txt", {"expected": "a=1\n"}, build=text(c__txt="a=1\n"))
case("compare_config", "fail", "@/c.txt", {"expected": "a=1"}, build=text(c__txt="a=1\n"))
case("compare_config", "none", None, {"expected": ""})
case("compare_answer", "pass", "42", {"expected": "42"})
case("compare_answer", "fail", "41", {"expected": "42"})
case("compare_answer", "empty", "", {"expected": ""})
case("is_extension_installed", "contain", "ms-python.python\nfoo.bar", {"type": "contain", "expected": "ms-python.python"})
case("is_extension_installed", "not-contain", "foo.bar", {"type": "not_contain", "expected": "ms-python.python"})
case("is_extension_installed", "contain-fail", "foo.bar", {"type": "contain", "expected": "ms-python.python"})
case("is_extension_installed", "bad-type", "x", {"type": "regex", "expected": "x"})
case("compare_result_files", "number-in", "@/s.txt", "@/t.txt", build=text(s__txt="The answer is 3.5", t__txt="3.5"))
case("compare_result_files", "number-close", "@/s.txt", "@/t.txt", build=text(s__txt="3.50001", t__txt="3.5000"))
case("compare_result_files", "text", "@/s.txt", "@/t.txt", build=text(s__txt=" abc \n", t__txt="abc"))
case("compare_result_files", "fail", "@/s.txt", "@/t.txt", build=text(s__txt="abc", t__txt="abd"))
case("compare_result_files", "none", None, "@/t.txt", build=text(t__txt="1"))
SUITE = "import os\n\ndef test():\n    return os.path.exists('marker.txt')\n\ndef half():\n    return 0.5\n\ndef big():\n    return 7\n"
case("check_python_file_by_test_suite", "pass", None, "@/t.py", build=text(t__py=SUITE, marker__txt="x"))
case("check_python_file_by_test_suite", "fail", None, "@/t.py", build=text(t__py=SUITE))
case("check_python_file_by_test_suite", "number", None, "@/t.py", test_function_name="half", build=text(t__py=SUITE))
case("check_python_file_by_test_suite", "clamped", None, "@/t.py", test_function_name="big", build=text(t__py=SUITE))
case("check_python_file_by_test_suite", "no-function", None, "@/t.py", test_function_name="nope", build=text(t__py=SUITE))
case("check_python_file_by_test_suite", "syntax-error", None, "@/t.py", build=text(t__py="def test(:\n"))
case("check_python_file_by_test_suite", "missing", None, "@/nope.py")
case("check_html_background_image", "pass", "@/i.html", {"value": "bg.png"},
     build=text(i__html="<style>body { background-image: url('bg.png'); }</style>"))
case("check_html_background_image", "fail", "@/i.html", {"value": "bg.png"}, build=text(i__html="<style></style>"))
case("check_html_background_image", "none", None, {"value": "bg.png"})

# ---- thunderbird ------------------------------------------------------------------------------------
PREFS = 'user_pref("mail.spellcheck.inline", false);\nuser_pref("mail.identity.id1.fullName", "A \\"B\\"");\n'
case("check_thunderbird_prefs", "pass", "@/prefs.js", {"expect": {"mail.spellcheck.inline": {"method": "eq", "ref": False}}},
     build=text(prefs__js=PREFS))
case("check_thunderbird_prefs", "fail", "@/prefs.js", {"expect": {"mail.spellcheck.inline": {"method": "eq", "ref": True}}},
     build=text(prefs__js=PREFS))
case("check_thunderbird_prefs", "absent", "@/prefs.js", {"expect": {"nope": {"method": "eq", "ref": 1}}},
     build=text(prefs__js=PREFS))
case("check_thunderbird_prefs", "unexpect", "@/prefs.js",
     {"unexpect": {"mail.identity.id1.fullName": {"method": "re", "ref": "B"}}}, build=text(prefs__js=PREFS))
case("check_thunderbird_prefs", "none", None, {})
FILTERS = ('version="9"\nlogging="no"\nname="Spam"\nenabled="yes"\ntype="17"\naction="Move to folder"\n'
           'actionValue="mailbox://nobody@Local%20Folders/Junk"\ncondition="AND (subject,contains,discount)"\n')
case("check_thunderbird_filter", "pass", "@/f.dat",
     {"expect": [{"name": "Spam", "enabled": "yes", "condition": ["AND (subject,contains,discount)"]}]},
     build=text(f__dat=FILTERS))
case("check_thunderbird_filter", "fail", "@/f.dat", {"expect": [{"name": "Ham"}]}, build=text(f__dat=FILTERS))
case("check_thunderbird_filter", "unexpect", "@/f.dat", {"unexpect": [{"type": "17"}]}, build=text(f__dat=FILTERS))
case("check_thunderbird_filter", "empty-file", "@/f.dat", {"expect": [{"name": "Spam"}]}, build=text(f__dat=""))
case("check_thunderbird_filter", "none", None, {})
MBOX_A = "FROM - Mon\nX-Mozilla-Status: 0001\nSubject: a\n\nbody\nFROM - Tue\nX-Mozilla-Status: 0008\nSubject: b\n"
MBOX_B = "FROM - Wed\nX-Mozilla-Status: 0001\nSubject: zzz\n"
case("check_thunderbird_folder", "differ-quirk", "@/a", "@/b", build=text(a=MBOX_A, b=MBOX_B))
case("check_thunderbird_folder", "same", "@/a", "@/b", build=text(a=MBOX_A, b=MBOX_A))
case("check_thunderbird_folder", "none", None, "@/b", build=text(b=MBOX_B))
case("check_thunderbird_folder", "lists", ["@/a", "@/a"], ["@/a", "@/b"], remove_deleted=False, remove_duplicate=False,
     build=text(a=MBOX_A, b=MBOX_B))
case("check_thunderbird_folder", "missing", "@/nope", "@/b", build=text(b=MBOX_B))

# ---- os -----------------------------------------------------------------------------------------------
case("check_gnome_favorite_apps", "pass", "['thunderbird.desktop', 'vim.desktop']",
     {"expected": ["vim.desktop", "thunderbird.desktop"]})
case("check_gnome_favorite_apps", "fail", "['thunderbird.desktop']", {"expected": ["vim.desktop"]})
case("check_gnome_favorite_apps", "length", "['a.desktop', 'a.desktop']", {"expected": ["a.desktop"]})
case("check_gnome_favorite_apps", "empty", "@as []", {"expected": []})
TD = ("               Local time: Thu 2024-01-25 12:56:06 UTC\n           Universal time: Thu 2024-01-25 12:56:06 UTC\n"
      "                 RTC time: Thu 2024-01-25 12:56:05\n                Time zone: Etc/UTC (UTC, {})\n")
case("is_utc_0", "pass", TD.format("+0000)"))
case("is_utc_0", "fail", TD.format("+0100)"))
case("is_utc_0", "short", "Local time: x")
case("check_text_enlarged", "pass", "1.25")
case("check_text_enlarged", "fail", "1.0")
case("check_text_enlarged", "bad", "big")
DIR = {"name": "d", "children": [{"name": "a.jpg"}, {"name": "b.jpg"}]}
case("check_moved_jpgs", "pass", DIR, {"expected": ["b.jpg", "a.jpg"]})
case("check_moved_jpgs", "fail", DIR, {"expected": ["a.jpg", "c.jpg"]})
case("check_moved_jpgs", "count", DIR, {"expected": ["a.jpg"]})
case("is_in_vm_clickboard", "pass", {"expected": "hello"}, "say hello\n")
case("is_in_vm_clickboard", "list", {"expected": ["a", "b"]}, "a b")
case("is_in_vm_clickboard", "fail", {"expected": ["a", "c"]}, "a b")

# ---- others ----------------------------------------------------------------------------------------


def epub(name: str, chapter: str, ident: str):
    def build(d: Path) -> None:
        import zipfile

        with zipfile.ZipFile(d / name, "w") as z:
            z.writestr("content.opf", f"<package>\n<dc:identifier>{ident}</dc:identifier>\n<title>Book</title>\n</package>")
            z.writestr("toc.ncx", "<ncx>\n<navPoint id='1'/>\n<docTitle>Book</docTitle>\n</ncx>")
            z.writestr("ch1.html", f"<html><body>\n<p>{chapter}</p></body></html>")
    return build


case("compare_epub", "pass", "@/a.epub", "@/b.epub",
     build=both(epub("a.epub", "Once upon a time", "id-1"), epub("b.epub", "Once upon a time", "id-2")))
case("compare_epub", "differ", "@/a.epub", "@/b.epub",
     build=both(epub("a.epub", "Once upon a time", "id-1"), epub("b.epub", "The end", "id-1")))
case("compare_epub", "bad-zip", "@/a.epub", "@/b.epub", build=both(text(a__epub="nope"), epub("b.epub", "x", "y")))
case("compare_epub", "none", None, "@/b.epub", build=epub("b.epub", "x", "y"))


def mp3(name: str, **tags):
    def build(d: Path) -> None:
        from mutagen.easyid3 import EasyID3
        from mutagen.id3 import ID3

        ID3().save(d / name)
        t = EasyID3(d / name)
        for k, v in tags.items():
            t[k] = v
        t.save()
    return build


case("check_mp3_meta", "pass", "@/a.mp3", {"title": {"method": "eq", "ref": "Song"}, "artist": {"method": "eq", "ref": "A"}},
     build=mp3("a.mp3", title="Song", artist="A"))
case("check_mp3_meta", "fail", "@/a.mp3", {"title": {"method": "eq", "ref": "Other"}}, build=mp3("a.mp3", title="Song"))
case("check_mp3_meta", "absent-tag", "@/a.mp3", {"album": {"method": "eq", "ref": ""}}, build=mp3("a.mp3", title="Song"))
case("check_mp3_meta", "none", None, {})

LOC = ('<oor:items xmlns:oor="http://openoffice.org/2001/registry"><item oor:path="/org.openoffice.Setup/L10N">'
       '<prop oor:name="{}" oor:op="fuse"><value>{}</value></prop></item></oor:items>')
case("check_libre_locale", "pass", "@/r.xcu", {"locale_set": ["de-*"]}, build=text(r__xcu=LOC.format("ooSetupSystemLocale", "de-DE")))
case("check_libre_locale", "fallback", "@/r.xcu", {"locale_set": ["en-US"]}, build=text(r__xcu=LOC.format("ooLocale", "en-US")))
case("check_libre_locale", "fail", "@/r.xcu", {"locale_set": ["fr-*"]}, build=text(r__xcu=LOC.format("ooLocale", "en-US")))

_ = json

# PDFs that LibreOffice wrote (a .docx report and the same with one more line), kept as fixtures
FIXTURES = Path(__file__).parent / "osworld_golden_fixtures"


def fixture(*names):
    def build(d: Path) -> None:
        for n in names:
            (d / n).write_bytes((FIXTURES / n).read_bytes())
    return build


case("compare_pdfs", "libreoffice", "@/report_a.pdf", "@/report_b.pdf", build=fixture("report_a.pdf", "report_b.pdf"))
case("compare_pdfs", "libreoffice-same", "@/report_a.pdf", "@/report_a.pdf", build=fixture("report_a.pdf"))
case("check_pdf_pages", "libreoffice", "@/report_b.pdf", {"relation": "ge", "ref_value": 1}, build=fixture("report_b.pdf"))
