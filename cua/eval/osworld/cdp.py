"""The episode's Chromium over its remote-debugging port (CDP): connect, and the active tab's URL.

Shared by the Chrome steps and getters (chrome.py, active_tab.py, site_scrapers.py). The
`google-chrome` shim (runtime.py) starts Chromium with its debugging port on `rt.chrome_port`.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from urllib.parse import urlsplit

from cua.eval.osworld.runtime import Runtime

CHROME = ["google-chrome", "--remote-debugging-port=1337"]  # as OSWorld starts it; the shim maps the port
LAUNCH_WAIT = 20.0  # s for a Chromium a getter started to open its port (OSWorld: a fixed 5 s, then it tries)


def wait_cdp(rt: Runtime, timeout: float) -> bool:
    """True once Chromium answers on the episode's debugging port (polled, bounded)."""
    import httpx

    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{rt.chrome_port}/json/version", timeout=1).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


@contextmanager
def _attached(rt: Runtime):
    """Playwright attached to the Chromium answering on the episode's debugging port; detached on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.connect_over_cdp(f"http://127.0.0.1:{rt.chrome_port}")
        try:
            yield browser
        finally:
            browser.close()  # disconnects; Chromium keeps running


@contextmanager
def connect(rt: Runtime, timeout: float = 20):
    """A Playwright Browser over CDP, or None when no Chromium answers (as OSWorld's getters return [])."""
    if not wait_cdp(rt, timeout):
        yield None
        return
    with _attached(rt) as browser:
        yield browser


@contextmanager
def browser_over_cdp(rt: Runtime, command: list[str] = CHROME):
    """Playwright connected to the episode's Chromium; when none answers (the agent closed it) one is
    started with `command`, as OSWorld's getters do. Raises when it still does not answer."""
    if not wait_cdp(rt, 1):
        rt.launch(list(command))
        if not wait_cdp(rt, LAUNCH_WAIT):
            raise ConnectionError(f"Chromium did not open its debugging port {rt.chrome_port} within "
                                  f"{LAUNCH_WAIT:.0f} s of being started")
    with _attached(rt) as browser:
        yield browser


def pages(browser) -> list:
    return [pg for ctx in browser.contexts for pg in ctx.pages]


def omnibox_text(url: str) -> str:
    """The URL as Chrome's address bar shows it when not being edited (the text OSWorld reads from the
    accessibility tree): for http(s), without the scheme, a leading `www.`, and a lone `/` path; other
    schemes (chrome://, file://) in full."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or "://" not in url:
        return url
    bare = url.split("://", 1)[1]
    if parts.hostname and parts.hostname.startswith("www.") and bare.startswith("www."):
        bare = bare[4:]
    host = bare.split("/", 1)[0]
    return host if bare == f"{host}/" else bare


def active_url(rt: Runtime, config: dict) -> str | None:
    """The visible tab's URL as OSWorld reads it from the address bar (`omnibox_text`), prefixed with
    `goto_prefix` (default https://); None when no Chromium answers."""
    url = _last_active_page_url(rt)
    if url is None:
        with connect(rt, 5) as browser:
            if browser is None:
                return None
            found = pages(browser)
            visible = [pg for pg in found if _visible(pg)]
            page = (visible or found or [None])[-1]
            if page is None:
                return None
            url = page.url
    return f"{config.get('goto_prefix', 'https://')}{omnibox_text(url)}"


def _last_active_page_url(rt: Runtime) -> str | None:
    """The URL of the most recently activated tab: Chromium's DevTools `/json/list` sorts its targets by
    last activity, newest first (CDP's own page list has no such order, and every tab of an unfocused
    window on Xvfb reports itself visible)."""
    import httpx

    try:
        targets = httpx.get(f"http://127.0.0.1:{rt.chrome_port}/json/list", timeout=5).json()
    except (httpx.HTTPError, ValueError):
        return None
    found = [t["url"] for t in targets if t.get("type") == "page" and not t.get("url", "").startswith("devtools:")]
    return found[0] if found else None


def _visible(page) -> bool:
    try:
        return page.evaluate("document.visibilityState") == "visible"
    except Exception:  # noqa: BLE001 - a crashed or closing tab is not the active one
        return False
