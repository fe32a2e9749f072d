"""BrowserEnv on real Chromium: DOM elements, actions, navigation, bad pages, process cleanup."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from browser_fixtures import page_server, pid_alive, silent_server

from cua.actions import (
    Back,
    Click,
    Drag,
    Goto,
    Hotkey,
    Key,
    MouseDown,
    MouseUp,
    Scroll,
    Target,
    Type,
    parse_action,
)
from cua.env import EnvError, make_env
from cua.env.browser import BrowserEnv, chromium_pids
from cua.perception.dom import collect_dom

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with page_server(tmp_path_factory.mktemp("site")) as base:
        yield base


@pytest.fixture(scope="module")
def env(site):
    e = make_env(f"browser:{site}index.html", sources="dom")
    try:
        yield e
    finally:
        e.close()


@pytest.fixture()
def obs(env, site):
    assert env.act(Goto(url=f"{site}index.html")).ok
    return env.observe()


def by_name(obs, name):
    hits = [e for e in obs.elements if e.name == name]
    assert hits, f"no element named {name!r} in {[e.name for e in obs.elements]}"
    return hits[0]


def test_observation_has_screenshot_url_title_and_timings(obs, site):
    assert obs.image().size == (1280, 800)
    assert obs.url == f"{site}index.html"
    assert obs.window_title == "Test page"
    assert {"screenshot", "dom", "total"} <= set(obs.timings)
    assert [e.id for e in obs.elements] == [f"e{i}" for i in range(len(obs.elements))]
    assert all(e.source == "dom" for e in obs.elements)


def test_dom_elements_have_roles_boxes_names_and_states(obs):
    go = by_name(obs, "Press me")
    assert go.role == "push button" and go.bbox == (100, 100, 120, 40)
    agree = next(e for e in obs.elements if e.role == "check box")
    assert agree.name == "I agree" and agree.has_state("checked")
    nope = by_name(obs, "Disabled one")
    assert nope.has_state("disabled") and not nope.has_state("enabled")
    name = by_name(obs, "Your name")
    assert name.role == "entry" and name.has_state("editable")
    assert by_name(obs, "Next page").role == "link"
    assert any(e.role == "label" and e.name == "I agree" for e in obs.elements)


def test_invisible_offscreen_and_covered_elements_are_left_out(obs):
    names = {e.name for e in obs.elements}
    assert not names & {"Hidden display", "Hidden visibility", "Hidden opacity", "Far below", "Covered"}


def test_shadow_dom_and_iframe_elements_have_page_boxes(env, obs):
    sb = by_name(obs, "Shadow button")
    assert sb.bbox == (130, 320, 90, 30) and sb.attrs.get("shadow")
    boxes = {e.bbox: e for e in obs.elements if e.name == "Frame button"}
    # same-origin iframe at (600, 300) with a 5 px border; the button sits at (40, 50) inside it
    fb = boxes[(645, 355, 110, 30)]
    assert fb.attrs.get("frame") and any(p.startswith("frame:") for p in fb.path)
    # a cross-origin iframe (localhost vs 127.0.0.1) at (600, 500), no border: walked by its own evaluate
    xb = boxes[(640, 550, 110, 30)]
    assert xb.attrs.get("frame") == "#xframe" and xb.role == "push button"
    assert env.act(Click(element_id=xb.id)).ok
    xframe = next(f for f in env.page.frames if "localhost" in f.url)
    assert xframe.evaluate("document.getElementById('ib').textContent") == "Frame clicked"


def test_click_point_element_and_target_make_the_page_react(env, obs):
    r = env.act(Click(x=160, y=120))
    assert r.ok and r.changed and r.point == (160, 120)
    assert env.evaluate("document.getElementById('go').textContent") == "Clicked"
    after = env.observe()
    assert by_name(after, "Clicked").bbox == (100, 100, 120, 40)
    r = env.act(Click(target=Target(text="Frame button", nth=0)))  # two frames show one each
    assert r.ok and r.point == (700, 370)
    assert env.page.frame_locator("#frame").locator("#ib").text_content() == "Frame clicked"


def test_settle_waits_for_a_pending_request(env, obs):
    r = env.act(Click(element_id=by_name(obs, "Load").id))
    assert r.ok and r.settled and r.changed
    assert env.evaluate("document.getElementById('load').textContent") == "loaded"


def test_typing_keys_and_hotkeys_reach_the_focused_input(env, obs):
    assert env.act(Click(element_id=by_name(obs, "Your name").id)).ok
    assert env.act(Type(text="hello world")).ok
    assert env.act(Key(key="backspace")).ok
    assert env.evaluate("document.getElementById('name').value") == "hello worl"
    assert env.act(Hotkey(keys=["ctrl", "a"])).ok
    assert env.act(Type(text="new")).ok
    assert env.evaluate("document.getElementById('name').value") == "new"
    focused = by_name(env.observe(), "Your name")
    assert focused.has_state("focused") and focused.value == "new"


def test_cancel_stops_typing_part_way_and_the_next_action_runs_in_full(env, obs):
    """What POST /cancel does on a guest serving a browser: a cancel from another thread stops a long type."""
    assert env.act(Click(element_id=by_name(obs, "Your name").id)).ok
    assert env.act(Hotkey(keys=["ctrl", "a"])).ok and env.act(Key(key="backspace")).ok
    text = "x" * 480
    timer = threading.Timer(0.3, env.cancel)  # 480 key events in chunks of 16 take far longer than this
    timer.start()
    try:
        r = env.act(Type(text=text))
    finally:
        timer.join()
    assert not r.ok and "cancelled part-way" in r.error
    typed = len(env.evaluate("document.getElementById('name').value"))
    assert typed < len(text)
    env.clear_cancel()
    assert env.act(Type(text="ok")).ok
    assert len(env.evaluate("document.getElementById('name').value")) == typed + 2


def test_goto_link_and_back(env, obs, site):
    r = env.act(Click(element_id=by_name(obs, "Next page").id))
    assert r.ok and r.changed
    o2 = env.observe()
    assert o2.url == f"{site}page2.html" and by_name(o2, "Second page").role == "heading"
    assert env.act(Back()).ok
    assert env.observe().url == f"{site}index.html"


def test_a_new_tab_becomes_the_observed_page_until_it_closes(env, obs, site):
    assert env.act(Click(element_id=by_name(obs, "New tab").id)).ok
    assert env.observe().url == f"{site}page2.html"
    env.page.close()
    assert env.observe().url == f"{site}index.html"


def test_off_screen_point_and_unknown_element_fail_clearly(env, obs):
    r = env.act(Click(x=5000, y=10))
    assert not r.ok and "off screen" in r.error
    r = env.act(Click(element_id="e999"))
    assert not r.ok and "e999" in r.error


def test_a_transient_capture_failure_is_retried_and_a_lasting_one_named(env, obs, monkeypatch):
    real = env.page.screenshot
    calls = []

    def flaky(**kw):  # Chromium's answer while a page has no painted frame yet (seen under load)
        calls.append(kw)
        if len(calls) == 1 or fail_always:
            raise RuntimeError("Protocol error (Page.captureScreenshot): Unable to capture screenshot")
        return real(**kw)

    fail_always = False
    monkeypatch.setattr(env.page, "screenshot", flaky)
    assert env.observe().image().size == env.size and len(calls) == 2
    fail_always = True
    with pytest.raises(EnvError, match="screenshot of .*index.html failed: .*Unable to capture"):
        env.observe()
    assert len(calls) == 5  # three tries, then the error


def test_huge_page_returns_partial_within_the_cap(env, site):
    assert env.act(Goto(url=f"{site}big.html")).ok
    full = collect_dom(env.page)
    assert full.partial and full.reason in {"nodes", "time", "elements"}
    small = collect_dom(env.page, max_nodes=2000)
    assert small.partial and small.reason == "nodes" and 0 < len(small.elements) < 2000
    timed = collect_dom(env.page, max_ms=1)
    assert timed.partial
    o = env.observe()
    assert env.last_dom_partial and len(o.elements) > 10


def test_page_that_never_loads_gives_a_bounded_clear_error(env):
    with silent_server() as url:
        t0 = time.monotonic()
        r = env.act(Goto(url=url))
        assert not r.ok and url in r.error
        with pytest.raises(EnvError, match="did not load within 2 s"):
            BrowserEnv(url, load_timeout=2).close()
        assert time.monotonic() - t0 < 60  # bounded (generous: a hang would hit pytest's timeout)


def test_close_leaves_no_chromium_and_rejects_use(site):
    e = BrowserEnv(f"{site}page2.html")
    pids = chromium_pids(e.tag)
    assert len(pids) >= 2
    e.close()
    assert not [p for p in pids if pid_alive(p)]
    with pytest.raises(EnvError, match="closed"):
        e.observe()


def test_missing_chromium_names_the_fix(tmp_path):
    with pytest.raises(EnvError, match="apt-get install chromium"):
        BrowserEnv(chromium=str(tmp_path / "no-such-chromium"))


def test_cli_act_clicks_the_button(site, tmp_path):
    out = tmp_path / "after"
    cmd = [sys.executable, "-m", "cua.cli", "act", "--env", f"browser:{site}index.html",
           "click(x=160, y=120)", "--out", str(out)]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["ok"] and result["point"] == [160, 120]
    names = [e["name"] for e in json.loads((out / "observation.json").read_text())["elements"]]
    assert "Clicked" in names and "Press me" not in names


def test_parse_action_call_strings_run_in_the_browser(env, obs):
    r = env.act(parse_action('click(text="Press me")'))
    assert r.ok and env.evaluate("document.getElementById('go').textContent") == "Clicked"


def test_scroll_moves_the_page_and_keys_map_to_browser_names(env, site):
    assert env.act(Goto(url=f"{site}big.html")).ok
    env.evaluate("() => { window.keys = []; addEventListener('keydown', e => keys.push(e.key)); }")
    r = env.act(Scroll(x=300, y=300, dy=3))
    assert r.ok and r.changed and env.evaluate("scrollY") == 300
    for k in ("enter", "esc", "up", "space", "f2"):
        assert env.act(Key(key=k)).ok
    assert env.evaluate("keys") == ["Enter", "Escape", "ArrowUp", " ", "F2"]


def test_reset_gives_a_fresh_context(env, site):
    env.evaluate("localStorage.setItem('k', 'v')")
    assert env.evaluate("localStorage.getItem('k')") == "v"
    o = env.reset()
    assert o.url == f"{site}index.html"
    assert env.evaluate("localStorage.getItem('k')") is None


def test_use_from_another_thread_is_refused(env):
    errors = []
    t = threading.Thread(target=lambda: errors.append(_try_observe(env)))
    t.start()
    t.join(30)
    assert errors and "thread" in errors[0]


def _try_observe(env) -> str:
    try:
        env.observe()
    except EnvError as e:
        return str(e)
    return "no error"


EVENTS_PAGE = (
    "data:text/html,<body style='margin:0;height:700px'><script>window.ev = [];"
    "for (const t of ['mousedown', 'mouseup', 'dblclick', 'contextmenu'])"
    " addEventListener(t, e => { ev.push([t, e.button, e.clientX, e.clientY]); e.preventDefault(); });"
    "</script></body>"
)


def test_pointer_actions_send_the_right_mouse_events(env):
    assert env.act(Goto(url=EVENTS_PAGE)).ok
    env.observe()

    def events(action):
        env.evaluate("() => { window.ev = []; }")
        assert env.act(action).ok
        return env.evaluate("ev")

    assert sorted(events(parse_action("right_click(x=50, y=60)"))) == [  # contextmenu order is per-OS
        ["contextmenu", 2, 50, 60], ["mousedown", 2, 50, 60], ["mouseup", 2, 50, 60]]
    assert ["dblclick", 0, 70, 80] in events(parse_action("double_click(x=70, y=80)"))
    assert events(Drag(x=10, y=20, to_x=300, to_y=200)) == [["mousedown", 0, 10, 20], ["mouseup", 0, 300, 200]]
    assert events(MouseDown(x=5, y=6)) == [["mousedown", 0, 5, 6]]
    assert events(MouseUp(x=7, y=8)) == [["mouseup", 0, 7, 8]]


@pytest.mark.parametrize(("spec", "options", "message"), [
    ("browser:127.0.0.1:8000/x", {}, "needs a scheme"),
    ("browser:about:blank", {"size": (10, 10)}, "out of range"),
    ("browser:about:blank", {"sources": "dom,sonar"}, "sonar"),
    ("browser:about:blank", {"colour": "red"}, "unknown option"),
])
def test_bad_options_are_refused_before_chromium_starts(spec, options, message):
    with pytest.raises(EnvError, match=message):
        make_env(spec, **options)


def test_live_regions_keep_a_stable_name_and_carry_their_text_as_value(env):
    page = ("data:text/html,<p>Clock: <span id=c role=timer>0</span></p><p>Hello <b>big</b> world</p>"
            "<script>let n = 0; setInterval(() => { c.textContent = String(++n); }, 50);</script>")
    assert env.act(Goto(url=page)).ok
    timers = [e for e in env.observe().elements if e.role == "timer"]
    assert len(timers) == 1 and timers[0].name == "" and timers[0].value.isdigit()
    names = {e.name for e in env.observe().elements}
    assert "Clock:" in names and "Hello big world" in names and "big" in names


def test_a_killed_chromium_gives_a_clear_error_and_reset_restarts_it(site):
    e = BrowserEnv(f"{site}page2.html", sources="dom")
    try:
        os.kill(chromium_pids(e.tag)[0], signal.SIGKILL)
        with pytest.raises(EnvError, match="Chromium has exited"):
            e.observe()
        o = e.reset()
        assert any(el.name == "Second page" for el in o.elements)
    finally:
        e.close()
    assert not chromium_pids(e.tag)
