"""Recording in a browser: kiosk Chromium on a sandbox desktop, DOM elements at clicks, password masking,
and replay of the recording on the headless browser env by DOM signature."""

from __future__ import annotations

import json
import urllib.parse

import pytest

from recorder.capture import Recorder
from recorder.demo import load_demo
from recorder.probes import open_target
from tests.recorder_fixtures import xdo

PAGE = (
    "<html><head><title>login</title></head><body style='margin:0;font:16px sans-serif'>"
    "<input id=u placeholder=user style='width:200px;height:30px'>"
    "<input id=p type=password placeholder=pw style='width:200px;height:30px'>"
    "<button style='width:80px;height:30px' "
    "onclick=\"document.title='hi '+document.getElementById('u').value\">Go</button></body></html>"
)
URL = "data:text/html," + urllib.parse.quote(PAGE)
SECRET = "hunter2"


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    out = tmp_path_factory.mktemp("br") / "login"
    target = open_target("browser:" + URL)
    try:
        rec = Recorder(
            out,
            target.display,
            env_spec="browser:" + URL,
            task="log in as alice",
            probe=target.probe,
            x_env=target.x_env,
        ).start()
        try:
            assert target.probe.ready.is_set(), (
                target.probe.error
            )  # start() waited for the first DOM snapshot
            xdo(target.display, "mousemove", "100", "15", "click", "1")
            xdo(target.display, "type", "--delay", "30", "alice")
            xdo(target.display, "mousemove", "300", "15", "click", "1")
            xdo(target.display, "type", "--delay", "30", SECRET)
            xdo(target.display, "mousemove", "440", "15", "click", "1")
        finally:
            rec.stop()
    finally:
        target.close()
    return out


def test_browser_recording_has_dom_elements_and_masks_the_password(recording):
    d = load_demo(recording)
    acts = [s.action.to_json() for s in d.steps]
    assert acts == [
        {"kind": "click", "x": 100, "y": 15, "button": "left", "clicks": 1},
        {"kind": "type", "text": "alice"},
        {"kind": "click", "x": 300, "y": 15, "button": "left", "clicks": 1},
        {"kind": "type", "text": "*" * len(SECRET)},
        {"kind": "click", "x": 440, "y": 15, "button": "left", "clicks": 1},
    ]
    roles = [(s.element or {}).get("role") for s in d.steps]
    assert roles[0] == "entry" and roles[2] == "password text" and roles[4] == "push button"
    assert d.steps[4].element["signature"].endswith("push button:Go") and d.steps[3].masked
    blob = (
        (recording / "events.sqlite").read_bytes() + (recording / "events.sqlite-wal").read_bytes()
        if (recording / "events.sqlite-wal").exists()
        else (recording / "events.sqlite").read_bytes()
    )
    assert SECRET.encode() not in blob
    assert SECRET not in json.dumps([s.action.to_json() for s in d.steps])


def test_browser_recording_replays_on_the_headless_browser_env(recording):
    from cua.env import make_env
    from recorder.replay import replay_path

    with make_env("browser:" + URL, size=(1280, 800)) as env:
        rep = replay_path(recording, env)
        assert rep.ok, [s.error for s in rep.steps]
        assert [s.method for s in rep.steps if s.action.startswith("click")] == ["signature"] * 3
        assert all(s.element_found for s in rep.steps if s.action.startswith("click"))
        assert env.evaluate("document.title") == "hi alice"
