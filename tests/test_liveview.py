"""The live view (x11vnc + websockify + noVNC) of a sandbox mousepad, seen and driven from Chromium."""

from __future__ import annotations

import time

import httpx
import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import sync_playwright

from cua.env.chromium import CHROMIUM_ARGS, find_chromium
from cua.env.desktop import SandboxEnv
from cua.liveview import LiveView

TOKEN = "live-view-test-token-" + "y" * 24


@pytest.fixture(scope="module")
def env():
    with SandboxEnv("mousepad", sources="a11y") as e:
        yield e


def _file_menu(env):
    obs = env.observe()
    return next(e for e in obs.elements if e.role == "menu" and e.name == "File"), obs.size


def _menu_open(env, timeout: float = 6.0) -> bool:
    """Whether mousepad's File menu popped up (its items are in the AT-SPI tree), within `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(e.role == "menu item" and e.name.startswith("New") for e in env.observe().elements):
            return True
        time.sleep(0.3)
    return False


def _open_page(pw, view: LiveView, token: str = TOKEN):
    browser = pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
    page = browser.new_context(http_credentials={"username": "cua", "password": token},
                               viewport={"width": 1600, "height": 900}).new_page()
    page.goto(view.url)
    frame = page.frame_locator("#screen")
    canvas = frame.locator("canvas")
    canvas.wait_for(timeout=20000)
    return browser, page, canvas


def _wait_nonblank(canvas, timeout: float = 20.0) -> np.ndarray:
    deadline = time.monotonic() + timeout
    while True:
        arr = np.asarray(Image.open(__import__("io").BytesIO(canvas.screenshot())).convert("L"), dtype=float)
        if arr.std() > 10 or time.monotonic() > deadline:
            return arr
        time.sleep(0.5)


def _click_through(canvas, screen: tuple[int, int], x: float, y: float) -> None:
    box = canvas.bounding_box()
    canvas.click(position={"x": x * box["width"] / screen[0], "y": y * box["height"] / screen[1]})


def test_page_needs_the_token(env):
    with LiveView(env, TOKEN) as view:
        assert httpx.get(view.url, timeout=5).status_code == 401
        assert httpx.get(view.url, auth=("cua", "wrong"), timeout=5).status_code == 401
        ok = httpx.get(view.url, auth=("cua", TOKEN), timeout=5)
        assert ok.status_code == 200 and "vnc_lite.html" in ok.text
        assert 'id="done" hidden' in ok.text  # no "done" button outside a handoff


def test_view_only_shows_the_desktop_and_refuses_input(env):
    env.reset()
    item, size = _file_menu(env)
    with LiveView(env, TOKEN, title="mousepad") as view, sync_playwright() as pw:
        view.update(step=3, doing="click File", outcome="running")
        browser, page, canvas = _open_page(pw, view)
        try:
            assert _wait_nonblank(canvas).std() > 10, "the noVNC canvas stayed blank"
            page.wait_for_function("document.getElementById('doing').textContent === 'click File'", timeout=5000)
            _click_through(canvas, size, item.bbox[0] + item.bbox[2] / 2, item.bbox[1] + item.bbox[3] / 2)
            assert not _menu_open(env, timeout=3.0), "a view-only live view let a click reach the app"
        finally:
            browser.close()


def test_takeover_click_reaches_the_app(env):
    env.reset()
    item, size = _file_menu(env)
    with LiveView(env, TOKEN, takeover=True, done_button=True) as view, sync_playwright() as pw:
        browser, page, canvas = _open_page(pw, view)
        try:
            _wait_nonblank(canvas)
            _click_through(canvas, size, item.bbox[0] + item.bbox[2] / 2, item.bbox[1] + item.bbox[3] / 2)
            assert _menu_open(env), "a click through the takeover page did not open mousepad's File menu"
            assert not view.done.is_set()
            page.click("#done")  # the page's "done" button hands control back (relayed by websockify, with the nonce)
            assert view.done.wait(10), "clicking 'done' on the page did not reach the live view"
        finally:
            browser.close()


def test_run_live_prints_the_view_and_cleans_up(tmp_path):
    import os
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "cua.cli", "run", "print the document on paper", "--env",
                        "sandbox:mousepad", "--live", "--out", str(tmp_path / "run")],
                       env={**os.environ, "CUA_TOKEN": TOKEN}, capture_output=True, text=True, timeout=180)
    err = " ".join(r.stderr.split())
    assert "live view: http://127.0.0.1:" in err and "outside known skills" in err, err[-2000:]
    assert subprocess.run(["pgrep", "-f", f"auth-source cua:{TOKEN}"], capture_output=True).returncode == 1
