"""OSWorld's Chrome getters that read particular websites, Chrome's own pages and its extensions folder.

Ports of desktop-env 1.0.2's `get_info_from_website`, `get_gotoRecreationPage_and_get_html_content`,
`get_number_of_search_results`, `get_chrome_saved_address` and `get_extensions_installed_from_shop`
(the active-tab ones are in active_tab.py), with the reference's selectors, timeouts, pauses, retries
and fallback values. They drive the episode's Chromium over CDP (cdp.browser_over_cdp: where none
answers one is started through the `google-chrome` shim, as the reference asks its VM server to).
Differences from the reference: docs/osworld.md.
"""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Any

from cua.eval.osworld.cdp import CHROME, browser_over_cdp
from cua.eval.osworld.registry import getter
from cua.eval.osworld.runtime import Runtime

log = logging.getLogger(__name__)
# Getters whose tasks read live websites: such a task is `needs-network` (check.py) and runs only --online.
SITE_SCRAPERS = ("active_tab_html_parse", "gotoRecreationPage_and_get_html_content", "info_from_website",
                 "number_of_search_results")
FAILED = "__EVALUATION_FAILED__"


@getter("info_from_website")
def info_from_website(rt: Runtime, config: dict) -> Any:
    """Texts/attributes read from `url` in a new tab (`infos`: inner_text, attribute, click_and_inner_text,
    click_and_attribute); on any failure the config's `backups` (None when absent)."""
    try:
        with browser_over_cdp(rt) as browser:
            page = browser.contexts[0].new_page()
            page.goto(config["url"])
            page.wait_for_load_state("load")
            infos = []
            for info in config.get("infos", []):
                if page.url != config["url"]:
                    page.goto(config["url"])
                    page.wait_for_load_state("load")
                action = info.get("action", "inner_text")
                if action == "inner_text":
                    infos.append(page.wait_for_selector(info["selector"], state="attached", timeout=10000).inner_text())
                elif action == "attribute":
                    el = page.wait_for_selector(info["selector"], state="attached", timeout=10000)
                    infos.append(el.get_attribute(info["attribute"]))
                elif action in ("click_and_inner_text", "click_and_attribute"):
                    selectors = info["selector"]
                    for i, sel in enumerate(selectors):
                        if i != len(selectors) - 1:
                            page.wait_for_selector(sel, state="attached", timeout=10000).click()
                            page.wait_for_load_state("load")
                        elif action == "click_and_inner_text":
                            infos.append(page.wait_for_selector(sel, state="attached", timeout=10000).inner_text())
                        else:  # the reference waits with Playwright's default (30 s) here
                            infos.append(page.wait_for_selector(sel, state="attached").get_attribute(info["attribute"]))
                else:
                    raise NotImplementedError(f"The action {action} is not supported yet.")
        return infos
    except Exception as e:  # noqa: BLE001 - the reference falls back to the task's backups on any error
        log.info("info_from_website: %s: %s; using the task's backups", config.get("url"), e)
        return config.get("backups", None)


RECREATION_URLS = ("https://www.recreation.gov/", "http://www.recreation.gov/", "https://recreation.gov/")
# the reference's fixed pauses (s): after the search, after opening the result, on the result page, between tries
RECREATION_PAUSES = {"after_search": 10.0, "after_popup": 30.0, "on_result": 2.0, "retry": 5.0}
RECREATION_CHROME = [*CHROME, "--no-sandbox", "--disable-web-security", "--disable-features=VizDisplayCompositor",
                     "--disable-dev-shm-usage", "--user-agent=Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 "
                     "(KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"]
RECREATION_HEADERS = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,image/webp,image/apng,*/*;q=0.8",
                      "Accept-Language": "en-US,en;q=0.9", "Accept-Encoding": "gzip, deflate, br", "DNT": "1",
                      "Connection": "keep-alive", "Upgrade-Insecure-Requests": "1"}
NEXT_AVAILABLE = ("button.next-available", "button[class*='next-available']", "button[class*='next']",
                  ".next-available", "[data-testid*='next']")


def _recreation_result_page(browser):
    """recreation.gov: search "Diamond", open the first highlighted result (a new tab), press its
    next-available button when there is one; returns that tab."""
    page = browser.new_page()
    page.set_default_timeout(60000)
    page.set_extra_http_headers(RECREATION_HEADERS)
    loaded = False
    for url in RECREATION_URLS:
        for wait_until in ("domcontentloaded", "load", "networkidle"):
            try:
                page.goto(url, wait_until=wait_until, timeout=60000)
                loaded = True
                break
            except Exception:  # noqa: BLE001 - the reference tries the next strategy, then the next URL
                continue
        if loaded:
            break
    if not loaded:
        raise ConnectionError("Failed to navigate to any recreation.gov URL variant")
    try:
        page.wait_for_load_state("networkidle", timeout=30000)
    except Exception:  # noqa: BLE001
        pass
    page.wait_for_selector("input#hero-search-input", state="visible", timeout=60000)
    page.fill("input#hero-search-input", "Diamond")
    page.wait_for_selector("button.nav-search-button", state="visible", timeout=60000)
    page.click("button.nav-search-button")
    time.sleep(RECREATION_PAUSES["after_search"])
    page.wait_for_selector(".search-result-highlight--success", state="visible", timeout=60000)
    with page.expect_popup() as popup:
        page.click(".search-result-highlight--success")
    time.sleep(RECREATION_PAUSES["after_popup"])
    result = popup.value
    result.set_default_timeout(60000)
    result.wait_for_load_state("networkidle", timeout=60000)
    time.sleep(RECREATION_PAUSES["on_result"])
    for sel in NEXT_AVAILABLE:
        try:
            result.wait_for_selector(sel, state="visible", timeout=30000)
            result.click(sel, timeout=30000)
            break
        except Exception:  # noqa: BLE001 - the reference goes on without the button
            continue
    return result


def _recreation_text(page, config: dict) -> dict:
    expected: dict[str, Any] = {}
    try:
        if config["selector"] == "class":
            cls = config["class"]
            try:
                if "order" in config:
                    found = page.query_selector_all("." + cls)
                    el = found[int(config["order"])] if len(found) > int(config["order"]) else None
                else:
                    el = page.query_selector("." + cls)
                text = el.text_content() if el else None
                expected[cls] = (text.strip() if text else text) if el else FAILED
            except Exception:  # noqa: BLE001
                expected[cls] = FAILED
    except Exception:  # noqa: BLE001 - a config without `selector`/`class`
        expected = {"extraction_error": FAILED}
    return {"expected": expected}


@getter("gotoRecreationPage_and_get_html_content")
def goto_recreation_page(rt: Runtime, config: dict) -> Any:
    """{"expected": {class: text of its `order`-th element}} on the campground page recreation.gov shows
    for "Diamond" (the expected value of task b4f95342); __EVALUATION_FAILED__ where that fails."""
    tries, error = 3, None
    for attempt in range(tries):
        if attempt:
            time.sleep(RECREATION_PAUSES["retry"])
        try:
            with browser_over_cdp(rt, RECREATION_CHROME) as browser:
                return _recreation_text(_recreation_result_page(browser), config)
        except Exception as e:  # noqa: BLE001 - the reference retries, then reports the failure in the value
            log.info("gotoRecreationPage_and_get_html_content, try %d: %s", attempt + 1, e)
            error = e
    return {"expected": {"error": FAILED, "error_message": f"Failed after {tries} attempts: {error}"}}


SEARCH_RESULTS_URL, SEARCH_RESULT = "https://google.com/search?q=query", ".search-result"


def _new_page_then(rt: Runtime, url: str, timeout_ms: int, read, fallback: Any, own_profile: bool = False) -> Any:
    """`read(page)` of `url` in a new tab once network-idle; two tries 3 s apart, then `fallback`. The tab
    is in a new (isolated) context as the reference opens it, or `own_profile`: the profile's own context."""
    for attempt in range(2):
        try:
            with browser_over_cdp(rt) as browser:
                page = browser.contexts[0].new_page() if own_profile else browser.new_page()
                try:
                    page.set_default_timeout(timeout_ms)
                    page.goto(url, wait_until="networkidle", timeout=timeout_ms)
                    page.wait_for_load_state("networkidle", timeout=timeout_ms)
                    return read(page)
                finally:
                    if own_profile:  # the reference's isolated context (and its tab) goes with browser.close()
                        page.close()
        except Exception as e:  # noqa: BLE001 - as the reference: retry once, then the fallback value
            log.info("%s: %s", url, e)
            if attempt == 0:
                time.sleep(3)
    return fallback


@getter("number_of_search_results")
def number_of_search_results(rt: Runtime, config: dict) -> Any:
    return _new_page_then(rt, SEARCH_RESULTS_URL, 45000, lambda p: len(p.query_selector_all(SEARCH_RESULT)), 0)


@getter("chrome_saved_address")
def chrome_saved_address(rt: Runtime, config: dict) -> Any:
    """The HTML of chrome://settings/addresses ("" when it cannot be read), opened in the profile's own
    context: Chromium's settings pages do not open in an isolated one (Playwright refuses; Chromium may crash)."""
    return _new_page_then(rt, "chrome://settings/addresses", 30000, lambda p: p.content(), "", own_profile=True)


@getter("extensions_installed_from_shop")
def extensions_installed_from_shop(rt: Runtime, config: dict) -> Any:
    """The manifest.json of every installed extension version (Extensions/<id>/<version>/); a missing
    Extensions folder raises FileNotFoundError (the result scores 0), an unreadable manifest is left out."""
    root = rt.path("~/.config/google-chrome/Default/Extensions")
    manifests = []
    for ext in sorted(os.listdir(root)):
        if not (root / ext).is_dir():
            continue
        for version in sorted(os.listdir(root / ext)):
            manifest = root / ext / version / "manifest.json"
            if manifest.is_file():
                try:
                    manifests.append(json.loads(manifest.read_text()))
                except ValueError:
                    log.info("unreadable extension manifest %s", manifest)
    return manifests
