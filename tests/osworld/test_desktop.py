"""OSWorld's empty desktop maps its window even when the window manager drops the first map request.

On a slow TCG guest openbox was still starting when the desktop asked to be mapped; the request was lost,
the window stayed unmapped and the guest's sandbox waited for it until its timeout. Here a stand-in window
manager on a real Xvfb takes substructure redirection and ignores the first MapRequest.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from Xlib import X, display

from tests.recorder_fixtures import xvfb as bare_xvfb


@pytest.fixture
def xvfb():
    with bare_xvfb((640, 480)) as display:
        yield display


def test_the_desktop_asks_again_when_its_map_request_is_dropped(xvfb):
    wm = display.Display(xvfb)
    root = wm.screen().root
    root.change_attributes(event_mask=X.SubstructureRedirectMask)  # we are the window manager now
    wm.sync()
    app = subprocess.Popen([sys.executable, "-m", "cua.eval.osworld.desktop"], env={**os.environ, "DISPLAY": xvfb})
    requests, deadline = [], time.monotonic() + 30
    try:
        while time.monotonic() < deadline and len(requests) < 2:
            while wm.pending_events():
                ev = wm.next_event()
                if ev.type == X.MapRequest:
                    requests.append(ev.window)
                    if len(requests) == 2:  # drop the first, honour the second
                        ev.window.map()
                        wm.sync()
            time.sleep(0.02)
        assert len(requests) == 2, f"the desktop asked {len(requests)} time(s) in 30 s"
        assert requests[0].id == requests[1].id
        deadline = time.monotonic() + 10
        while requests[1].get_attributes().map_state != X.IsViewable and time.monotonic() < deadline:
            time.sleep(0.05)
        assert requests[1].get_attributes().map_state == X.IsViewable
        assert requests[1].get_wm_name() == "Desktop" and app.poll() is None
    finally:
        app.kill()
        app.wait()
        wm.close()
