"""OSWorld's site-specific Chrome getters on a real sandbox Chromium, against loopback pages.

Each page reproduces the DOM the getter reads, built from the selectors of OSWorld's reference code and
of the nine OSWorld tasks that use these getters (their xpaths, classes and inputs, filled with the
values their expected rules want). The live-site URLs the reference hard-codes (recreation.gov, a
Google search) are pointed at loopback copies of those pages; the reference's fixed pauses are set to 0.
"""

from __future__ import annotations

import html
import http.server
import json
import re
import threading
from pathlib import Path

import pytest

from cua.eval.osworld import site_scrapers
from cua.eval.osworld.cdp import omnibox_text
from cua.eval.osworld.check import check_task
from cua.eval.osworld.episode import DESKTOP_ENV
from cua.eval.osworld.getters import GETTERS
from cua.eval.osworld.metrics import METRICS
from cua.eval.osworld.runtime import Runtime
from cua.eval.osworld.spec import Step, load_path
from cua.eval.osworld.steps import run_steps

OSWORLD = Path(__file__).resolve().parents[2] / "tasks" / "osworld"
PORTED = ("active_tab_html_parse", "gotoRecreationPage_and_get_html_content", "info_from_website",
          "macys_product_url_parse", "url_path_parse", "number_of_search_results", "chrome_saved_address",
          "extensions_installed_from_shop")
TASKS = ["chrome/1704f00f-79e6-43a7-961b-cedd3724d5fd", "chrome/47543840-672a-467d-80df-8f7c3b9788c9",
         "chrome/6c4c23a1-42a4-43cc-9db1-2f86ff3738cc", "chrome/9f3f70fc-5afc-4958-a7b7-3bb4fcb01805",
         "chrome/b4f95342-463e-4179-8c3f-193cd7241fb2", "chrome/b7895e80-f4d1-4648-bee0-4eb45a6f1fa8",
         "chrome/da46d875-6b82-4681-9284-653b0c7ae241", "chrome/fc6d8143-9452-4171-9459-7f515143419a",
         "multi_apps/5990457f-2adb-467b-a4af-5c857c92d762"]
HTML_PARSE_CATEGORIES = {"class": ("class_multiObject", "class_multiObject_child", "class_multiObject_only_child",
                                   "class_multiObject_search_exist", "class_singleObject"),
                         "xpath": ("xpathObject",), "input": ("inputObject",), "label": ("labelObject",),
                         "class&url": ("class_multiObject", "class_multiObject_li", "url_include_expected",
                                       "url_include_expected_multichoice")}


def task(name: str):
    return load_path(OSWORLD / "examples" / f"{name}.json")[0]


def scraper_configs(t) -> list[tuple[str, dict, dict | None]]:
    """(metric, result getter config, expected getter config) of each metric whose getters are ported here."""
    return [(f, r, e) for f, r, e, _ in t.evaluator.metrics()
            if (r or {}).get("type") in PORTED or (e or {}).get("type") in PORTED]


# -- the nine tasks' configs (no browser) -------------------------------------------------------------
def test_the_nine_tasks_use_these_getters_with_configs_they_read():
    for name in TASKS:
        t = task(name)
        uses = scraper_configs(t)
        assert uses, name
        for _, *confs in uses:
            for c in filter(None, confs):
                kind = c["type"]
                if kind not in PORTED:
                    continue
                assert GETTERS[kind].__module__ in ("cua.eval.osworld.active_tab", "cua.eval.osworld.site_scrapers")
                if kind == "active_tab_html_parse":
                    known = HTML_PARSE_CATEGORIES[c["category"]]
                    assert set(c) - {"type", "goto_prefix", "category"} <= set(known), (name, c)
                    assert all(isinstance(c[k], dict) for k in set(c) & set(known) if k != "url_include_expected")
                elif kind == "info_from_website":
                    assert c["url"].startswith("https://") and len(c["backups"]) == len(c["infos"])
                    assert {i["action"] for i in c["infos"]} <= {"inner_text", "attribute", "click_and_inner_text",
                                                                 "click_and_attribute"}
                elif kind == "gotoRecreationPage_and_get_html_content":
                    assert c["selector"] == "class" and int(c["order"]) >= 0 and c["class"]
        # they read live websites: needs-network, run only --online
        assert check_task(t, None, have=lambda app: "/usr/bin/" + app).kind == "needs-network", name


def test_the_address_bar_text_that_goto_prefix_completes():
    """OSWorld reads the URL from Chrome's address bar, which hides http(s)://, www. and a lone /."""
    assert omnibox_text("https://www.drugs.com/npc/") == "drugs.com/npc/"
    assert omnibox_text("https://www.google.com/") == "google.com"
    assert omnibox_text("http://127.0.0.1:8000/a.html?q=1") == "127.0.0.1:8000/a.html?q=1"
    assert omnibox_text("https://scholar.google.com/citations?hl=en") == "scholar.google.com/citations?hl=en"
    assert omnibox_text("chrome://password-manager/passwords") == "chrome://password-manager/passwords"


# -- pages ---------------------------------------------------------------------------------------------
def dom_page(xpaths: dict[str, str], inputs: dict[str, str], classes: dict[str, list[str]]) -> str:
    """A page where each absolute xpath (`/html/body/div[2]/ul/li[2]`) holds its text, each input xpath
    an <input> with that value, and after them one element per class and position holding its text."""
    root: dict = {"tag": "html", "kids": []}
    for xpath, (text, is_input) in {**{k: (v, False) for k, v in xpaths.items()},
                                    **{k: (v, True) for k, v in inputs.items()}}.items():
        steps = xpath.strip("/").split("/")
        assert steps[0] == "html", xpath
        node = root
        for step in steps[1:]:
            tag, n = re.fullmatch(r"([a-z0-9]+)(?:\[(\d+)\])?", step).groups()
            same = [k for k in node["kids"] if k["tag"] == tag]
            while len(same) < int(n or 1):
                same.append({"tag": tag, "kids": []})
                node["kids"].append(same[-1])
            node = same[int(n or 1) - 1]
        node["value" if is_input else "text"] = text
    body = next((k for k in root["kids"] if k["tag"] == "body"), None)
    if body is None:
        body = {"tag": "body", "kids": []}
        root["kids"].append(body)
    for cls, texts in classes.items():
        body["kids"] += [{"tag": "div", "kids": [], "text": t, "class": cls} for t in texts]

    def render(n: dict) -> str:
        attrs = "".join(f' {a}="{html.escape(n[a])}"' for a in ("class", "value") if a in n)
        if n["tag"] == "input":
            return f"<input{attrs}>"
        return f"<{n['tag']}{attrs}>{html.escape(n.get('text', ''))}{''.join(map(render, n['kids']))}</{n['tag']}>"

    return "<!doctype html>" + render(root)


def page_for(wanted: list[tuple[dict, dict[str, str]]]) -> str:
    """One page from which each active_tab_html_parse config reads its `want` ({key: text})."""
    xpaths, inputs, classes = {}, {}, {}
    for c, want in wanted:
        for xpath, key in c.get("xpathObject", {}).items():
            xpaths[xpath] = want[key]
        for xpath, key in c.get("inputObject", {}).items():
            inputs[xpath] = want[key]
        for cls, by_order in c.get("class_multiObject", {}).items():
            assert cls not in classes, cls
            texts = classes[cls] = []
            for order, key in sorted(by_order.items()):
                texts += [f"filler {len(texts)}"] * (int(order) + 1 - len(texts))
                texts[int(order)] = want[key]
        for cls, key in c.get("class_singleObject", {}).items():
            assert cls not in classes, cls
            classes[cls] = [want[key]]
    leaves = list(xpaths) + list(inputs)
    assert not any(a != b and b.startswith(a + "/") for a in leaves for b in leaves)  # no leaf inside another
    return dom_page(xpaths, inputs, classes)


RECREATION = {
    "/rec/": """<input id="hero-search-input"><button class="nav-search-button" onclick="
        document.getElementById('results').innerHTML = '<a class=&quot;search-result-highlight--success&quot; '
          + 'href=&quot;/rec/camp.html&quot; target=&quot;_blank&quot;>'
          + document.getElementById('hero-search-input').value + ' Albion Basin</a>'">Search</button>
        <div id="results"></div>""",
    "/rec/camp.html": """<button class="next-available" onclick="show(true)">Next available</button>
        <table><tr id="head"></tr></table><script>
        function show(next) {document.getElementById('head').innerHTML = (next ? ['Site', 'Loop', 'Sat 20', 'Sun 21']
          : ['Site', 'Loop', 'Mon 1', 'Tue 2']).map(d => '<th class="camp-sortable-column-header">' + d + '</th>').join('')}
        show(location.search == '?next');</script>""",
}
SCHOLAR = {
    "/scholar/citations": """<div id="gsc_prf_in">Ada Lovelace</div><table id="gsc_rsb_st"><tbody>
        <tr><td>Citations</td><td>1843</td></tr><tr><td>h-index</td><td>12</td></tr>
        <tr><td>i10-index</td><td>7</td></tr></tbody></table>
        <table><tbody id="gsc_a_b"><tr><td class="gsc_a_t"><a href="/scholar/paper">Notes on the Engine</a></td></tr>
        </tbody></table>""",
    "/scholar/paper": """<div id="gsc_oci_title_gg"><div><a href="https://example.org/notes.pdf">[PDF]</a></div></div>""",
}


@pytest.fixture(scope="module")
def site():
    """A loopback HTTP server: PAGES by path (the query ignored), any /shop/... path a listing page."""
    pages: dict[str, str] = {**RECREATION, **SCHOLAR}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            path = self.path.split("?", 1)[0]
            body = pages.get(path, "<title>listing</title>" if path.startswith("/shop/") else None)
            self.send_response(404 if body is None else 200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.end_headers()
            self.wfile.write((body or "not found").encode())

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield pages, f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="module")
def rt(tmp_path_factory):
    """One sandbox desktop with Chromium started as OSWorld's tasks start it (google-chrome on port 1337)."""
    from cua.env import make_env

    with make_env(DESKTOP_ENV) as env:
        runtime = Runtime(env, tmp_path_factory.mktemp("assets"))
        try:
            run_steps(runtime, [Step(type="launch", parameters={
                "command": ["google-chrome", "--remote-debugging-port=1337"]})], "config")
            yield runtime
        finally:
            runtime.close()


def show(rt: Runtime, url: str) -> None:
    """Make `url` the active tab, with OSWorld's own set-up step."""
    run_steps(rt, [Step(type="chrome_open_tabs", parameters={"urls_to_open": [url]})], "config")


def serve(site, path: str, body: str) -> str:
    pages, base = site
    pages[path] = body
    return base + path


# -- active_tab_html_parse -------------------------------------------------------------------------------
def test_html_parse_reads_what_each_task_expects_and_empty_strings_when_missing(rt, site):
    """Every active_tab_html_parse config of the tasks, on a page holding what its expected rule wants
    (score 1), then on a page without those elements (the reference's "" per key; score 0). Two pages
    hold them all: tasks 6c4c23a1 and fc6d8143 read the same classes."""
    cases = [(name, func, {**r, "goto_prefix": "http://"}, GETTERS[e["type"]](rt, e))  # loopback: http, no www.
             for name in TASKS for func, r, e in scraper_configs(task(name))
             if r["type"] == "active_tab_html_parse" and e["type"] in ("rule", "rule_relativeTime")]
    assert len(cases) == 9
    for group in ([c for c in cases if "6c4c23a1" not in c[0]], [c for c in cases if "6c4c23a1" in c[0]]):
        show(rt, serve(site, f"/tasks/{len(site[0])}", page_for([(conf, want["expected"]) for _, _, conf, want in group])))
        for name, func, conf, want in group:
            got = GETTERS["active_tab_html_parse"](rt, conf)
            assert got == want["expected"] and METRICS[func](got, want) == 1.0, (name, got)
    show(rt, serve(site, "/empty", "<p>nothing here</p>"))
    for category in ("class", "xpath", "input"):  # the fallback, once per category
        name, func, conf, want = next(c for c in cases if c[2]["category"] == category)
        got = GETTERS["active_tab_html_parse"](rt, conf)
        assert got == dict.fromkeys(want["expected"], "") and METRICS[func](got, want) == 0.0, (name, got)


def test_html_parse_other_class_forms_labels_urls_and_no_matching_tab(rt, site):
    url = serve(site, "/forms", """<div class="route">SEA<div class="sep"></div>NYC</div><div class="route">X</div>
        <div class="card"><h3> Nike </h3></div><div class="card"><p>no heading</p></div><div class="card"><h3>Puma</h3></div>
        <span class="brand">Nike</span><span class="brand">Adidas</span><label>Passengers: 2</label>
        <ul class="cats"><li class="catAllProducts"><span>Shoes</span></li><li class="catAllProducts"><span>Hats</span></li></ul>""")
    show(rt, url)
    get = GETTERS["active_tab_html_parse"]
    assert get(rt, {"goto_prefix": "http://", "category": "class",
                    "class_multiObject_child": {"route": {"0": "from", "1": "to", "2": "via"}},
                    "class_multiObject_only_child": {"card": {"1": "second"}},
                    "class_multiObject_search_exist": {"brand": ["Nike", "Puma", "is_other_exist"]}}) == {
        "from": "SEA", "to": "NYC", "via": "", "second": "Puma", "Nike": True, "Puma": False, "is_other_exist": True}
    assert get(rt, {"goto_prefix": "http://", "category": "label", "labelObject": {"Passengers": "who"}}) == {
        "who": "Passengers: 2"}
    assert get(rt, {"goto_prefix": "http://", "category": "class&url", "class_multiObject_li": {"cats": ["shoes"]},
                    "url_include_expected": ["FORMS", "cart"], "url_include_expected_multichoice": {"127.0": "Local"}}) \
        == {"shoes": True, "is_other_exist": True, "forms": True, "cart": False, "local": True}
    # the address bar's URL completed with https:// names no open tab: {} (as the reference)
    assert get(rt, {"category": "class", "class_singleObject": {"route": "r"}}) == {}


def test_macys_url_parse_reads_the_active_tabs_path(rt, site):
    _, base = site
    conf = {"type": "macys_product_url_parse", "goto_prefix": "http://",
            "parse_keys": ["Men_regular_size_t", "Price_discount_range", "Sleeve_length"]}
    show(rt, base + "/shop/mens-clothing/mens-shirts/Men_regular_size_t,Price_discount_range,Sleeve_length/"
                    "L,50_PERCENT_%20off%20%26%20more,Short%20Sleeve?id=1")
    assert GETTERS["macys_product_url_parse"](rt, conf) == {
        "mens_clothing": True, "shirts": True, "short_sleeve": True, "Men_regular_size_t": "L",
        "Price_discount_range": "50_PERCENT_ off & more", "Sleeve_length": "Short Sleeve"}
    show(rt, base + "/shop/kids/dresses")  # no filter lists in the path
    assert GETTERS["url_path_parse"](rt, conf) == {
        "mens_clothing": None, "shirts": None, "short_sleeve": None, "Men_regular_size_t": None,
        "Price_discount_range": "not_50_PERCENT_ off & more"}


# -- particular websites -----------------------------------------------------------------------------------
def test_recreation_gov_flow_gives_the_expected_of_task_b4f95342(rt, site, monkeypatch):
    """Search "Diamond", open the highlighted result (a popup), press next-available, read the third header;
    the task's own result getter on the agent's tab (the camp page after next-available) then scores 1."""
    _, base = site
    monkeypatch.setattr(site_scrapers, "RECREATION_URLS", (base + "/rec/",))
    monkeypatch.setattr(site_scrapers, "RECREATION_PAUSES", dict.fromkeys(site_scrapers.RECREATION_PAUSES, 0.0))
    t = task("chrome/b4f95342-463e-4179-8c3f-193cd7241fb2")
    func, rconf, econf = scraper_configs(t)[0]
    expected = GETTERS[econf["type"]](rt, econf)
    assert expected == {"expected": {"camp-sortable-column-header": "Sat 20"}}
    show(rt, base + "/rec/camp.html?next")
    result = GETTERS[rconf["type"]](rt, {**rconf, "goto_prefix": "http://"})
    assert result == {"camp-sortable-column-header": "Sat 20"} and METRICS[func](result, expected) == 1.0
    assert GETTERS[econf["type"]](rt, {**econf, "order": "9"}) == {
        "expected": {"camp-sortable-column-header": "__EVALUATION_FAILED__"}}


def test_info_from_website_reads_clicks_and_falls_back_to_backups(rt, site):
    _, base = site
    conf = task("multi_apps/5990457f-2adb-467b-a4af-5c857c92d762").evaluator.expected
    url = base + "/scholar/citations?user=WLN3QrAAAAAJ&hl=en"
    assert GETTERS["info_from_website"](rt, {**conf, "url": url}) == [
        "Ada Lovelace", "1843", "12", "7", "Notes on the Engine", "https://example.org/notes.pdf"]
    # the site does not answer (as when an element is missing, after the reference's 10 s wait): the backups
    assert GETTERS["info_from_website"](rt, {**conf, "url": "http://127.0.0.1:9/scholar"}) == conf["backups"]


def test_search_results_counted_and_zero_without_any(rt, site, monkeypatch):
    monkeypatch.setattr(site_scrapers, "SEARCH_RESULTS_URL", serve(site, "/search", "".join(
        f'<div class="search-result">hit {i}</div>' for i in range(3)) + '<div class="ad">ad</div>'))
    assert GETTERS["number_of_search_results"](rt, {"type": "number_of_search_results"}) == 3
    monkeypatch.setattr(site_scrapers, "SEARCH_RESULTS_URL", serve(site, "/search-none", "<p>No results</p>"))
    assert GETTERS["number_of_search_results"](rt, {"type": "number_of_search_results"}) == 0


def test_chrome_saved_address_is_the_settings_page(rt):
    content = GETTERS["chrome_saved_address"](rt, {"type": "chrome_saved_address"})
    assert isinstance(content, str) and "<settings-ui" in content, content[:300]


def test_extensions_installed_lists_manifests_and_needs_the_folder(rt):
    root = rt.path("~/.config/google-chrome/Default/Extensions")
    for ext, version, text in [("aaa", "1.0_0", json.dumps({"name": "Dark Reader", "version": "1.0"})),
                               ("bbb", "2.1_0", json.dumps({"name": "uBlock", "version": "2.1"})),
                               ("ccc", "0.1_0", "{not json")]:
        (root / ext / version).mkdir(parents=True)
        (root / ext / version / "manifest.json").write_text(text)
    get = GETTERS["extensions_installed_from_shop"]
    assert get(rt, {}) == [{"name": "Dark Reader", "version": "1.0"}, {"name": "uBlock", "version": "2.1"}]
    import shutil

    shutil.rmtree(root)
    with pytest.raises(FileNotFoundError):  # the evaluator scores that result 0, as OSWorld
        get(rt, {})
