"""OSWorld's Chrome steps and getters, on Debian's Chromium through its remote-debugging port (CDP).

The `google-chrome` shim (runtime.py) starts Chromium with the profile at `~/.config/google-chrome`,
so the profile files the getters read (Preferences, Local State, Bookmarks, History, Cookies) are
where OSWorld's paths say. Where OSWorld reads the active tab's URL from the address bar in the
accessibility tree, this asks Chromium over CDP for the most recently active tab and writes its URL
as the address bar shows it (cdp.py; no a11y walk).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from cua.eval.osworld import assets
from cua.eval.osworld.cdp import active_url, connect, pages, wait_cdp  # noqa: F401 - wait_cdp: steps.py's
from cua.eval.osworld.registry import getter
from cua.eval.osworld.runtime import Runtime
from cua.eval.osworld.site_scrapers import SITE_SCRAPERS  # noqa: F401 - check.py's

PROFILE = "~/.config/google-chrome"


# -- steps ----------------------------------------------------------------------------------------
def open_tabs(rt: Runtime, urls_to_open: list[str]) -> None:
    with connect(rt, 30) as browser:
        if browser is None:
            raise RuntimeError("Chromium did not open its debugging port within 30 s")
        ctx = browser.contexts[0]
        for i, url in enumerate(urls_to_open):
            page = ctx.new_page()
            try:
                page.goto(url, timeout=60000)
            except Exception:  # noqa: BLE001 - OSWorld goes on when a page does not load in time
                pass
            if i == 0 and len(ctx.pages) > 1:
                ctx.pages[0].close()


def _same_url(a: str, b: str) -> bool:
    pa, pb = urlparse(a), urlparse(b)
    return (pa.netloc.removeprefix("www."), pa.path.rstrip("/")) == (pb.netloc.removeprefix("www."), pb.path.rstrip("/"))


def close_tabs(rt: Runtime, urls_to_close: list[str]) -> None:
    with connect(rt, 30) as browser:
        if browser is None:
            raise RuntimeError("Chromium did not open its debugging port within 30 s")
        for url in urls_to_close:
            for page in browser.contexts[0].pages:
                if _same_url(page.url, url):
                    page.close()
                    break


def update_browse_history(rt: Runtime, history: list[dict]) -> None:
    src = assets.resolve(rt.assets, assets.HISTORY_DB_URL)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "History"
        shutil.copyfile(src, db)
        con = sqlite3.connect(db)
        for item in history:
            when = datetime.now() - timedelta(seconds=item["visit_time_from_now_in_seconds"])
            stamp = int((when - datetime(1601, 1, 1)).total_seconds() * 1_000_000)
            cur = con.execute("INSERT INTO urls (url, title, visit_count, typed_count, last_visit_time, hidden) "
                              "VALUES (?, ?, 1, 0, ?, 0)", (item["url"], item["title"], stamp))
            con.execute("INSERT INTO visits (url, visit_time, from_visit, transition, segment_id, visit_duration) "
                        "VALUES (?, ?, 0, 805306368, 0, 0)", (cur.lastrowid, stamp))
        con.commit()
        con.close()
        rt.write_file(f"{PROFILE}/Default/History", db.read_bytes())


# -- profile-file getters ---------------------------------------------------------------------------
def _json_file(rt: Runtime, rel: str) -> dict | None:
    raw = rt.read_file(f"{PROFILE}/{rel}")
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


def _prefs(rt: Runtime) -> dict | None:
    return _json_file(rt, "Default/Preferences")


@getter("default_search_engine")
def default_search_engine(rt: Runtime, config: dict) -> Any:
    d = _prefs(rt)
    return "Google" if d is None else d.get("default_search_provider_data", {}).get("template_url_data", {}).get(
        "short_name", "Google")


def _sqlite_rows(rt: Runtime, rel: str, dest: str, query: str) -> list | None:
    raw = rt.read_file(f"{PROFILE}/{rel}")
    if raw is None:
        return None
    path = rt.cache_dir / dest
    path.write_bytes(raw)
    try:
        con = sqlite3.connect(path)
        try:
            return con.execute(query).fetchall()
        finally:
            con.close()
    except sqlite3.Error:
        return None


@getter("cookie_data")
def cookie_data(rt: Runtime, config: dict) -> Any:
    return _sqlite_rows(rt, "Default/Cookies", config["dest"], "SELECT * FROM cookies")


@getter("history")
def history(rt: Runtime, config: dict) -> Any:
    return _sqlite_rows(rt, "Default/History", config["dest"], "SELECT url, title, last_visit_time FROM urls")


@getter("enabled_experiments")
def enabled_experiments(rt: Runtime, config: dict) -> Any:
    d = _json_file(rt, "Local State")
    return [] if d is None else d.get("browser", {}).get("enabled_labs_experiments", [])


@getter("profile_name")
def profile_name(rt: Runtime, config: dict) -> Any:
    d = _prefs(rt)
    return None if d is None else d.get("profile", {}).get("name", None)


@getter("chrome_language")
def chrome_language(rt: Runtime, config: dict) -> Any:
    d = _json_file(rt, "Local State")
    return "en-US" if d is None else d.get("intl", {}).get("app_locale", "en-US")


@getter("chrome_font_size")
def chrome_font_size(rt: Runtime, config: dict) -> Any:
    d = _prefs(rt)
    if d is None:
        return {"default_fixed_font_size": 13, "default_font_size": 16}
    return d.get("webkit", {}).get("webprefs", {"default_fixed_font_size": 13, "default_font_size": 16,
                                                 "minimum_font_size": 13})


@getter("bookmarks")
def bookmarks(rt: Runtime, config: dict) -> Any:
    d = _json_file(rt, "Default/Bookmarks")
    return [] if d is None else d.get("roots", {})


@getter("enable_do_not_track")
def enable_do_not_track(rt: Runtime, config: dict) -> Any:
    d = _prefs(rt)
    return "true" if d and d.get("enable_do_not_track", {}) else "false"


@getter("enable_enhanced_safety_browsing")
def enable_enhanced_safety_browsing(rt: Runtime, config: dict) -> Any:
    d = _prefs(rt)
    return "Google" if d is None else ("true" if d.get("safebrowsing", {}).get("enhanced", {}) else "false")


@getter("enable_safe_browsing")
def enable_safe_browsing(rt: Runtime, config: dict) -> Any:
    d = _prefs(rt)
    return "Google" if d is None else ("true" if d.get("safebrowsing", {}).get("enabled", {}) else "false")


@getter("new_startup_page")
def new_startup_page(rt: Runtime, config: dict) -> Any:
    d = _prefs(rt)
    if d is None:
        return "Google"
    if "session" not in d:
        return "true"
    return "true" if d.get("session", {}).get("restore_on_startup", {}) == 5 else "false"


def _extensions(rt: Runtime, field: str) -> Any:
    d = _prefs(rt)
    try:
        settings = d.get("extensions", {}).get("settings", {})  # type: ignore[union-attr]
        return [s["path"] if field == "path" else s["manifest"]["name"] for s in settings.values()]
    except (AttributeError, KeyError, TypeError):
        return "Google"


@getter("find_unpacked_extension_path")
def find_unpacked_extension_path(rt: Runtime, config: dict) -> Any:
    return _extensions(rt, "path")


@getter("find_installed_extension_name")
def find_installed_extension_name(rt: Runtime, config: dict) -> Any:
    return _extensions(rt, "name")


@getter("data_delete_automacally")
def data_delete_automacally(rt: Runtime, config: dict) -> Any:
    """OSWorld: "true" when the profile has any `default_content_setting_values` (the Chrome it was written
    for had none until the user changed a site setting). Chromium 156 writes its own bookkeeping there
    (`has_migrated_local_network_access`) on every first run, which made a no-op pass on the VM; a dict of
    only such `has_migrated_*` flags reads as absent, so the verdict is the one OSWorld's Chrome would give."""
    d = _prefs(rt)
    try:
        values = d["profile"].get("default_content_setting_values", None)  # type: ignore[index]
    except (KeyError, TypeError):
        return "Google"
    if isinstance(values, dict) and values and all(k.startswith("has_migrated_") for k in values):
        values = None
    return "true" if values is not None else "false"


# -- live-browser getters -----------------------------------------------------------------------------
@getter("active_url_from_accessTree")
def active_url_from_access_tree(rt: Runtime, config: dict) -> Any:
    return active_url(rt, config)


@getter("active_tab_url_parse")
def active_tab_url_parse(rt: Runtime, config: dict) -> Any:
    url = active_url(rt, config)
    if url is None:
        return None
    query = parse_qs(urlparse(url).query)
    out = {k: query.get(k, [""])[0] for k in config["parse_keys"]}
    for old, new in (config.get("replace") or {}).items():
        out[new] = out.pop(old)
    if config.get("split_list", False):
        out = {k: v.split(",") for k, v in out.items()}
    return out


@getter("url_dashPart")
def url_dash_part(rt: Runtime, config: dict) -> Any:
    url = active_url(rt, config)
    if url is None:
        return None
    try:
        idx = int(config["partIndex"])
    except (ValueError, TypeError):
        return None
    parts = url.split("/")
    if idx >= len(parts):
        return None
    part = parts[idx].split("?")[0] if config.get("needDeleteId", False) else parts[idx]
    kind = config["returnType"]
    return part if kind == "string" else {config["key"]: part} if kind == "json" else None


def _load(browser, url: str, timeout_ms: int) -> dict:
    page = browser.new_page()
    page.set_default_timeout(timeout_ms)
    try:
        page.goto(url, wait_until="networkidle", timeout=timeout_ms)
        return {"title": page.title(), "url": page.url, "content": page.content()}
    except Exception:  # noqa: BLE001 - OSWorld reports a page that did not settle as 'Load timeout'
        return {"title": "Load timeout", "url": page.url, "content": page.content()}


@getter("active_tab_info")
def active_tab_info(rt: Runtime, config: dict) -> Any:
    url = active_url(rt, config)
    if url is None:
        return None
    with connect(rt, 5) as browser:
        return None if browser is None else _load(browser, url, 60000)


@getter("page_info")
def page_info(rt: Runtime, config: dict) -> Any:
    with connect(rt, 10) as browser:
        if browser is None:
            return {"title": "Connection failed", "url": config["url"], "content": ""}
        return _load(browser, config["url"], 60000)


@getter("open_tabs_info")
def open_tabs_info(rt: Runtime, config: dict) -> Any:
    with connect(rt, 10) as browser:
        if browser is None:
            return []
        out = []
        for page in pages(browser):
            try:
                page.wait_for_load_state("networkidle", timeout=30000)
                out.append({"title": page.title(), "url": page.url})
            except Exception:  # noqa: BLE001
                out.append({"title": "Load timeout", "url": page.url})
        return out


@getter("pdf_from_url")
def pdf_from_url(rt: Runtime, config: dict) -> Any:
    """The page at `path` printed to PDF (OSWorld prints it with a fresh headless Chromium; so do we)."""
    from playwright.sync_api import sync_playwright

    dest = rt.cache_dir / config["dest"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium")
        try:
            page = browser.new_page()
            page.goto(config["path"], wait_until="networkidle", timeout=60000)
            page.pdf(path=str(dest))
        finally:
            browser.close()
    return str(dest)

