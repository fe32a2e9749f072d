"""OSWorld's getters that read the active tab: its DOM by site-specific selectors (`active_tab_html_parse`)
and a Macy's listing's filters from its URL path (`macys_product_url_parse`, alias `url_path_parse`).

Ports of desktop-env 1.0.2's functions of those names, with the reference's selectors, waits and
fallback values; the active tab is found as cdp.active_url says. Differences: docs/osworld.md.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import unquote, urlparse

from cua.eval.osworld.cdp import active_url, browser_over_cdp
from cua.eval.osworld.registry import GETTERS, getter
from cua.eval.osworld.runtime import Runtime

log = logging.getLogger(__name__)


def _normalized(url: str) -> str:
    return unquote(url).rstrip("/")


def _target_page(browser, url: str):
    """The first tab whose URL is the address bar's (percent-decoded, no trailing /), each tab first given
    up to 60 s to go network-idle; a tab that does not is passed over (as the reference)."""
    for ctx in browser.contexts:
        for page in ctx.pages:
            try:
                page.wait_for_load_state("networkidle", timeout=60000)
                if not page.is_closed() and _normalized(page.url) == _normalized(url):
                    return page
            except Exception:  # noqa: BLE001 - a tab that is navigating or gone is not the target
                continue
    return None


def _texts(page, selector: str) -> list[str]:
    try:
        return [] if page.is_closed() else [e.text_content().strip() for e in page.query_selector_all(selector) if e]
    except Exception:  # noqa: BLE001 - the reference gives [] on any error
        return []


_DIRECT_TEXT = """(node) => Array.from(node.childNodes).filter(n => n.nodeType === Node.TEXT_NODE)
    .map(n => n.textContent.trim()).filter(Boolean)"""


def _direct_texts(page, selector: str) -> list[str]:
    """The text nodes directly under the FIRST matching element (`<div>SEA<div/>NYC</div>` -> SEA, NYC)."""
    try:
        if page.is_closed():
            return []
        found = [e.evaluate(_DIRECT_TEXT) for e in page.query_selector_all(selector)]
        return found[0] if found else []
    except Exception:  # noqa: BLE001
        return []


def _child_texts(page, selector: str, child: str, inner: bool) -> list[str]:
    try:
        if page.is_closed():
            return []
        subs = [e.query_selector(child) for e in page.query_selector_all(selector)]
        return [(s.inner_text() if inner else s.text_content()).strip() for s in subs if s]
    except Exception:  # noqa: BLE001
        return []


def _pick(out: dict, texts: list[str], by_order: dict) -> None:
    for order, key in by_order.items():
        i = int(order)
        out[key] = texts[i] if len(texts) > i else ""


def _class(page, config: dict, out: dict) -> None:
    for cls, by_order in config.get("class_multiObject", {}).items():
        _pick(out, _texts(page, "." + cls), by_order)
    for cls, by_order in config.get("class_multiObject_child", {}).items():
        _pick(out, _direct_texts(page, "." + cls), by_order)
    for cls, by_order in config.get("class_multiObject_only_child", {}).items():
        _pick(out, _child_texts(page, "." + cls, "h3", inner=False), by_order)
    for cls, names in config.get("class_multiObject_search_exist", {}).items():
        texts = _texts(page, "." + cls)
        for name in names:
            if name != "is_other_exist":
                out[name] = name in texts
        if "is_other_exist" in names:
            if any(t not in names for t in texts):
                out["is_other_exist"] = True
            out.setdefault("is_other_exist", False)
    for cls, key in config.get("class_singleObject", {}).items():
        texts = _texts(page, "." + cls)
        out[key] = texts[0] if texts else ""


def _first_text(locator) -> str:
    text = locator.first.text_content()
    return text.strip() if text else ""


def _by_xpath(page, objects: dict, out: dict, read, retry_bare: bool) -> None:
    """`objects` {xpath: key} -> out[key] = read(locator) of the first match, "" when none or on error
    (`retry_bare`: with no match, the reference tries the xpath once more without Playwright's `xpath=`)."""
    for xpath, key in objects.items():
        try:
            if page.is_closed():
                out[key] = ""
                continue
            found = page.locator(f"xpath={xpath}")
            if found.count() > 0:
                try:
                    out[key] = read(found)
                except Exception:  # noqa: BLE001
                    out[key] = ""
            elif retry_bare:
                bare = page.locator(xpath)
                out[key] = read(bare) if bare.count() > 0 else ""
            else:
                out[key] = ""
        except Exception:  # noqa: BLE001
            out[key] = ""


def _input_value(locator) -> str:
    value = locator.first.input_value()
    return value.strip() if value else ""


def _label(page, objects: dict, out: dict) -> None:
    for label, key in objects.items():
        try:
            out[key] = "" if page.is_closed() else _first_text(page.locator(f"text={label}"))
        except Exception:  # noqa: BLE001 - (Playwright's 30 s default wait for a missing label)
            out[key] = ""


def _class_and_url(page, config: dict, out: dict) -> None:
    def found(texts: list[str], names: list[str]) -> None:
        for name in names:
            if any(name.lower() == t.lower() for t in texts):
                out[name.lower()] = True
        if any(all(t.lower() not in n.lower() for n in names) for t in texts):
            out["is_other_exist"] = True
        out.setdefault("is_other_exist", False)

    for cls, names in config.get("class_multiObject", {}).items():
        found(_texts(page, "." + cls), names)
    for cls, names in config.get("class_multiObject_li", {}).items():
        found(_child_texts(page, "." + cls + " li.catAllProducts", "span", inner=True), names)
    pairs = [(k, k) for k in config.get("url_include_expected", [])]
    pairs += list(config.get("url_include_expected_multichoice", {}).items())
    for needle, key in pairs:
        try:
            hit = not page.is_closed() and needle.lower() in page.url.lower()
        except Exception:  # noqa: BLE001
            hit = False
        out.setdefault(key.lower(), hit)


@getter("active_tab_html_parse")
def active_tab_html_parse(rt: Runtime, config: dict) -> Any:
    """Texts of elements of the active tab, by `category` (class, label, xpath, input, class&url), under
    the keys the config names; "" for an element that is not there. None without a Chromium, {} when no
    tab has the address bar's URL."""
    url = active_url(rt, config)
    if not isinstance(url, str):
        return None
    out: dict[str, Any] = {}
    with browser_over_cdp(rt) as browser:
        page = _target_page(browser, url)
        if page is None:
            log.info("active_tab_html_parse: no tab has the URL %s", url)
            return {}
        category = config["category"]
        if category == "class":
            _class(page, config, out)
        elif category == "label":
            _label(page, config.get("labelObject", {}), out)
        elif category == "xpath":
            _by_xpath(page, config.get("xpathObject", {}), out, _first_text, retry_bare=True)
        elif category == "input":
            _by_xpath(page, config.get("inputObject", {}), out, _input_value, retry_bare=False)
        elif category == "class&url":
            _class_and_url(page, config, out)
    return out


def _macys_path(path: str) -> tuple[dict, bool, bool]:
    """The first pair of comma lists in the path (`Key1,Key2/value1,value2`) as a dict, and whether the
    path is about shirts and short sleeves."""
    parts = path.strip("/").split("/")
    kv: dict[str, Any] = {}
    shirts, short = "shirts" in path, "short-sleeve" in path
    for here, after in zip(parts, parts[1:]):
        if "," in here and "," in after:
            for k, v in zip((k.strip() for k in here.split(",")), (v.strip() for v in after.split(","))):
                if k == "Price_discount_range":
                    kv[k] = [item.strip() for item in v.split("|")] if v else None
                else:
                    kv[k] = v if v else None
                shirts = shirts or (k == "Product_department" and v in ("shirts", "Shirts", "Shirt"))
                short = short or (k == "Sleeve_length" and v in ("short-sleeve", "Short Sleeve"))
            break
    for name in ("Men_regular_size_t", "Price_discount_range"):
        kv.setdefault(name, None)
    return kv, shirts, short


@getter("macys_product_url_parse")
def macys_product_url_parse(rt: Runtime, config: dict) -> Any:
    """Filters of a Macy's listing from the active tab's URL path; None without a Chromium."""
    url = active_url(rt, config)
    if url is None:
        return None
    path = unquote(urlparse(url).path)
    kv, shirts, short = _macys_path(path)
    out: dict[str, Any] = {"mens_clothing": True if "mens-clothing" in path else None,
                           "shirts": True if shirts else None, "short_sleeve": True if short else None}
    half = "50_PERCENT_ off & more"
    for key in config["parse_keys"]:
        if key not in kv:
            continue
        if key == "Price_discount_range":
            v = kv[key]
            only_half = v is not None and half in v and "30_PERCENT_ off & more" not in v \
                and "20_PERCENT_ off & more" not in v
            out[key] = half if only_half else f"not_{half}"
        else:
            out[key] = kv[key]
    return out


GETTERS["url_path_parse"] = macys_product_url_parse  # the reference's older name for it
