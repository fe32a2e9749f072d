"""The live view of a remote guest: `cua serve` on a sandbox in a subprocess, its WebSocket /vnc behind the
token, relayed by the host's live view to noVNC in Chromium; a takeover click reaches the guest's app."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest
from playwright.sync_api import sync_playwright
from test_liveview import _click_through, _open_page, _wait_nonblank

from cua.env.remote import RemoteEnv
from cua.liveview import LiveView

TOKEN = "remote-view-test-token-" + "r" * 24


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def guest():
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "cua.cli", "serve", "--env", "sandbox:mousepad", "--port", str(port),
                             "--sources", "a11y"], env={**os.environ, "CUA_TOKEN": TOKEN},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(url + "/health", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=2).is_success:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, f"cua serve did not start: {proc.stderr.read()}"
            time.sleep(0.3)
        env = RemoteEnv(url, token=TOKEN)
        yield env
        env.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_guest_vnc_route_needs_the_token(guest):
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    ws_url = guest.url.replace("http://", "ws://") + "/vnc"
    with pytest.raises(InvalidStatus) as refused:
        connect(ws_url, additional_headers={"Authorization": "Bearer wrong-token-" + "x" * 20,
                                            "X-Cua-Vnc-Password": "abcdefgh"}, open_timeout=10)
    assert refused.value.response.status_code == 403
    with connect(ws_url, additional_headers={"Authorization": f"Bearer {TOKEN}", "X-Cua-Vnc-Password": "abcdefgh"},
                 open_timeout=30) as ws:
        assert ws.recv(timeout=20).startswith(b"RFB 003.")  # the guest's x11vnc greets


def test_remote_view_renders_and_takeover_click_reaches_the_guest_app(guest):
    guest.reset()
    obs = guest.observe()
    item = next(e for e in obs.elements if e.role == "menu" and e.name == "File")
    with LiveView(guest, "host-side-token-" + "h" * 24, takeover=True, title="guest") as view, \
            sync_playwright() as pw:
        browser, page, canvas = _open_page(pw, view, token=view.token)
        try:
            assert _wait_nonblank(canvas).std() > 10, "the guest's desktop stayed blank in the page"
            assert TOKEN not in page.content()  # the guest's token stays in the host process
            _click_through(canvas, obs.size, item.bbox[0] + item.bbox[2] / 2, item.bbox[1] + item.bbox[3] / 2)
            deadline = time.monotonic() + 8
            while not any(e.role == "menu item" and e.name.startswith("New") for e in guest.observe().elements):
                assert time.monotonic() < deadline, "a click through the remote live view did not open the File menu"
                time.sleep(0.3)
        finally:
            browser.close()


def test_remote_view_only_drops_input(guest):
    guest.reset()
    obs = guest.observe()
    item = next(e for e in obs.elements if e.role == "menu" and e.name == "File")
    with LiveView(guest, "host-side-token-" + "v" * 24) as view, sync_playwright() as pw:
        browser, page, canvas = _open_page(pw, view, token=view.token)
        try:
            assert _wait_nonblank(canvas).std() > 10
            _click_through(canvas, obs.size, item.bbox[0] + item.bbox[2] / 2, item.bbox[1] + item.bbox[3] / 2)
            time.sleep(3)
            assert not any(e.role == "menu item" and e.name.startswith("New") for e in guest.observe().elements), \
                "a view-only remote live view let a click reach the guest's app"
        finally:
            browser.close()
