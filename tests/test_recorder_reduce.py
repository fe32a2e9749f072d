"""Reduction, storage and privacy on synthetic event streams (no display needed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from typing import ClassVar

import numpy as np
import pytest
from PIL import Image

from recorder.privacy import blur_regions, is_password, machine_mac, scrub_identity, scrub_text
from recorder.reduce import reduce_events
from recorder.store import Session, SessionWriter


class Stream:
    """Builds raw event rows the way capture.py stores them."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.t = 0.0

    def add(self, kind: str, dt: float = 0.05, **kw) -> Stream:
        self.t += dt
        self.rows.append(
            {"seq": len(self.rows) + 1, "t": round(self.t, 4), "kind": kind, "frame": len(self.rows), **kw}
        )
        return self

    def key(self, key=None, char=None, dt=0.05):
        return self.add("key_down", dt, key=key, char=char).add("key_up", 0.01, key=key, char=char)

    def text(self, s: str):
        for c in s:
            self.key(key="space" if c == " " else None, char=c)
        return self

    def click(self, x, y, button="left", dt=0.3, n=1):
        for i in range(n):
            self.add("press", dt if i == 0 else 0.08, x=x, y=y, button=button).add(
                "release", 0.03, x=x, y=y, button=button
            )
        return self


def calls(rows):
    return [a.action.to_json() for a in reduce_events(rows)]


def test_text_with_backspace_hotkeys_and_keys():
    s = Stream().text("helxy").key(key="backspace").key(key="backspace").text("lo world")
    s.add("key_down", key="ctrl").key(char="s").add("key_up", key="ctrl")
    s.key(key="enter")
    s.add("key_down", key="shift").key(key="tab").add("key_up", key="shift")
    s.add("key_down", key="shift").key(char="H").add("key_up", key="shift").key(char="i")
    assert calls(s.rows) == [
        {"kind": "type", "text": "hello world"},
        {"kind": "hotkey", "keys": ["ctrl", "s"]},
        {"kind": "key", "key": "enter"},
        {"kind": "hotkey", "keys": ["shift", "tab"]},
        {"kind": "type", "text": "Hi"},
    ]


def test_clicks_double_triple_right_drag_scroll_and_links():
    s = Stream().add("move", x=5, y=5).add("move", x=90, y=40).click(100, 40)
    s.click(200, 50, n=2).click(300, 60, n=3).click(10, 10, button="right")
    s.add("press", 0.5, x=50, y=50, button="left").add("move", x=60, y=52).add("move", x=120, y=90)
    s.add("release", x=120, y=90, button="left")
    for _ in range(3):
        s.add("scroll", 0.05, x=400, y=300, dx=0, dy=1)
    s.add("scroll", 0.05, x=400, y=300, dx=0, dy=-1)
    s.add("move", 0.5, x=700, y=500).add("move", 0.05, x=710, y=505)
    out = reduce_events(s.rows)
    assert [a.action.to_json() for a in out] == [
        {"kind": "click", "x": 100, "y": 40, "button": "left", "clicks": 1},
        {"kind": "double_click", "x": 200, "y": 50},
        {"kind": "click", "x": 300, "y": 60, "button": "left", "clicks": 3},
        {"kind": "right_click", "x": 10, "y": 10},
        {"kind": "drag", "x": 50, "y": 50, "to_x": 120, "to_y": 90},
        {"kind": "scroll", "x": 400, "y": 300, "dx": 0, "dy": 2},
        {"kind": "move", "x": 710, "y": 505},
    ]
    # the first click absorbs the moves before it and links its press + release; frame = press frame
    assert out[0].events == [1, 2, 3, 4] and out[0].frame == 2
    assert out[2].clicks == 3 and len(out[2].events) == 6


def test_pause_and_lone_modifiers_do_not_leak():
    s = (
        Stream()
        .text("ab")
        .add("key_down", key="ctrl")
        .add("key_up", key="ctrl")
        .add("pause")
        .add("resume")
        .text("c")
    )
    assert calls(s.rows) == [{"kind": "type", "text": "ab"}, {"kind": "type", "text": "c"}]


def test_reduction_keeps_element_and_window():
    el = {"role": "push button", "name": "OK", "signature": "frame:Dlg/push button:OK", "bbox": [1, 2, 3, 4]}
    s = Stream().add(
        "press", x=2, y=3, button="left", data={"element": el, "window": {"title": "Dlg", "app": "x"}}
    )
    s.add("release", x=2, y=3, button="left")
    (a,) = reduce_events(s.rows)
    assert a.element["signature"] == "frame:Dlg/push button:OK" and a.window["title"] == "Dlg"


def test_privacy_helpers():
    assert is_password({"role": "password text"}) and is_password(
        {"role": "entry", "attrs": {"type": "password"}}
    )
    assert not is_password({"role": "text"})
    assert (
        scrub_text("mail bob.smith@example.com card 4111 1111 1111 1111 id 42")
        == "mail <email> card <number> id 42"
    )
    import getpass
    import socket

    dirty = f"/home/{getpass.getuser()}/x on {socket.gethostname()} mac {machine_mac()}"
    clean = scrub_identity({"title": dirty})["title"]
    for tok in (getpass.getuser(), socket.gethostname(), machine_mac()):
        if len(tok) >= 3:
            assert tok not in clean
    img = Image.fromarray((np.indices((60, 60)).sum(0) % 2 * 255).astype("uint8")).convert("RGB")
    before = np.asarray(img).std()
    blur_regions(img, [(10, 10, 30, 30)])
    a = np.asarray(img)
    assert a[12:38, 12:38].std() < before / 4 and a[45:, 45:].std() > before / 2


def test_store_roundtrip_and_complete_flag(tmp_path):
    w = SessionWriter(tmp_path / "s", {"task": "t", "env": "desktop", "screen_size": [64, 48]})
    w.frame(0, 0.0)
    w.keyframe(0, Image.new("RGB", (64, 48), "red"))
    for i in range(50):
        w.event({"t": i * 0.01, "kind": "key_down", "key": None, "char": "a", "frame": 0, "data": {"n": i}})
    assert not Session(tmp_path / "s").complete
    w.close(duration=1.0)
    s = Session(tmp_path / "s")
    assert s.complete and s.manifest["stats"]["events"] == 50
    ev = s.events()
    assert [e["data"]["n"] for e in ev] == list(range(50)) and ev[0]["char"] == "a"
    assert s.frame_image(0).getpixel((1, 1)) == (255, 0, 0)
    assert s.frames()[0]["keyframe"] == "keyframes/000000.png"
    with pytest.raises(Exception, match="already holds a recording"):
        SessionWriter(tmp_path / "s", {})


def test_store_survives_sigkill(tmp_path):
    """A writer process killed with SIGKILL leaves every event committed >= 1 s earlier readable."""
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {os.getcwd()!r})
        from recorder.store import SessionWriter
        w = SessionWriter({str(tmp_path / "k")!r}, {{"task": "kill"}})
        i = 0
        while True:
            w.event({{"t": time.monotonic(), "kind": "key_down", "char": "x", "data": {{"i": i}}}})
            if i == 200:
                print("ready", flush=True)
            i += 1
            time.sleep(0.002)
    """)
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        import time

        time.sleep(1.5)  # let the writer commit a while before the kill (not a timing assertion)
        p.kill()
        p.wait(10)
    finally:
        if p.poll() is None:
            p.kill()
    s = Session(tmp_path / "k")
    assert not s.complete
    ev = s.events()
    assert len(ev) > 200
    assert [e["data"]["i"] for e in ev] == list(range(len(ev)))  # a prefix, in order, nothing torn
    assert json.loads((tmp_path / "k" / "manifest.json").read_text())["complete"] is False


class _PasswordProbe:
    """Stands in for AT-SPI answers only: a login form whose focused field is a password field."""

    field: ClassVar[dict] = {
        "role": "password text",
        "name": "Password",
        "bbox": [100, 200, 300, 30],
        "signature": "password text:Password",
    }

    def element_at(self, x, y):
        return self.field

    def focused(self):
        return self.field


def test_password_field_input_is_masked_and_blurred(tmp_path):
    from types import SimpleNamespace as NS

    from recorder.capture import Recorder
    from recorder.events import EventState

    rec = Recorder(tmp_path / "m", ":999", probe=_PasswordProbe())
    rec.writer = SessionWriter(tmp_path / "m", {})
    st = EventState(rec)
    st.handle(0, 0.1, "press", {"x": 150, "y": 210, "button": "left"})
    st.handle(0, 0.15, "release", {"x": 150, "y": 210, "button": "left"})
    for i, c in enumerate("hunter2"):
        st.handle(0, 0.2 + i * 0.05, "key_down", {"key": NS(char=c)})
        st.handle(0, 0.22 + i * 0.05, "key_up", {"key": NS(char=c)})
    st.close()
    assert rec.sensitive == [(100, 200, 300, 30)]  # the frame thread blurs this box while it has focus
    rec.writer.close()
    events = Session(tmp_path / "m").events()
    keys = [e for e in events if e["kind"].startswith("key")]
    assert keys and all(e["char"] == "*" and e["masked"] == 1 for e in keys)
    assert "hunter2" not in json.dumps(events)
    acts = reduce_events(events)
    assert acts[-1].action.to_json() == {"kind": "type", "text": "*******"} and acts[-1].masked


def test_agent_trajectory_element_ids_become_points_with_elements(tmp_path):
    from cua.trajectory import TrajectoryMeta, TrajectoryWriter
    from recorder.demo import load_demo

    w = TrajectoryWriter(tmp_path / "t", TrajectoryMeta(task="ok it", env="sandbox:mousepad"))
    els = [{"id": "e3", "role": "push button", "name": "OK", "bbox": [10, 10, 20, 10], "source": "a11y"}]
    w.add(
        action={"kind": "click", "element_id": "e3"},
        result={"action": {}, "point": [21, 16]},
        extra={"elements": els},
    )
    w.add(action={"kind": "type", "text": "x"}, result={"action": {}})
    w.add(action={"kind": "done", "message": "ok"})
    w.finish("success")
    d = load_demo(tmp_path / "t")
    assert [s.action.to_json() for s in d.steps] == [
        {"kind": "click", "x": 21, "y": 16, "button": "left", "clicks": 1},
        {"kind": "type", "text": "x"},
    ]
    assert d.steps[0].element["name"] == "OK" and d.kind == "trajectory" and d.complete


def test_uitars_strings_parse_back_to_the_same_actions():
    from cua.actions import (
        Click,
        DoubleClick,
        Drag,
        Hotkey,
        Key,
        Move,
        RightClick,
        Scroll,
        Type,
        parse_action,
    )
    from recorder.export import uitars_action

    same = [
        Click(x=1, y=2),
        Click(x=1, y=2, clicks=3),
        Click(x=1, y=2, button="middle"),
        DoubleClick(x=3, y=4),
        RightClick(x=5, y=6),
        Move(x=7, y=8),
        Drag(x=1, y=2, to_x=3, to_y=4),
        Type(text="it's\nok"),
        Hotkey(keys=["ctrl", "shift", "s"]),
    ]
    for a in same:
        assert parse_action(uitars_action(a), "uitars").to_json() == a.to_json(), uitars_action(a)
    assert parse_action(uitars_action(Key(key="enter")), "uitars").to_json() == {
        "kind": "hotkey",
        "keys": ["enter"],
    }
    s = parse_action(
        uitars_action(Scroll(x=5, y=6, dy=3)), "uitars"
    )  # UI-TARS scrolls carry a direction only
    assert (s.x, s.y, s.dy > 0, s.dx) == (5, 6, True, 0)


def test_dataset_split_by_episode(tmp_path):
    from recorder.demo import load_demo
    from recorder.export import export_dataset

    for n in range(4):
        w = SessionWriter(
            tmp_path / f"r{n}", {"task": f"task {n}", "env": "desktop", "screen_size": [64, 48]}
        )
        w.frame(0, 0.0)
        w.keyframe(0, Image.new("RGB", (64, 48), "white"))
        for i in range(2):
            w.event({"t": i * 0.1, "kind": "press", "x": 5 + i * 20, "y": 5, "button": "left", "frame": 0})
            w.event(
                {
                    "t": i * 0.1 + 0.01,
                    "kind": "release",
                    "x": 5 + i * 20,
                    "y": 5,
                    "button": "left",
                    "frame": 0,
                }
            )
        w.close()
    demos = [load_demo(tmp_path / f"r{n}") for n in range(4)]
    counts = export_dataset(demos, tmp_path / "ds", "openai-chat", val_fraction=0.25, seed=1)
    assert counts == {"train": 6, "val": 2, "skipped_no_frame": 0}
    val = [json.loads(x) for x in (tmp_path / "ds" / "val.jsonl").read_text().splitlines()]
    assert len({r["id"].split("_")[0] for r in val}) == 1  # both steps of one episode, none split apart
    assert "by episode" in (tmp_path / "ds" / "README.md").read_text()


def test_click_thresholds_come_from_the_desktop_settings(tmp_path):
    from recorder.reduce import gtk_thresholds

    (tmp_path / "gtk-3.0").mkdir()
    (tmp_path / "gtk-3.0" / "settings.ini").write_text("[Settings]\ngtk-double-click-time=200\n")
    th = gtk_thresholds(str(tmp_path))
    assert th == {"double_click_s": 0.2, "double_click_px": 5, "drag_px": 8}
    s = (
        Stream()
        .click(10, 10)
        .add("press", 0.3, x=10, y=10, button="left")
        .add("release", 0.01, x=10, y=10, button="left")
    )
    assert [a.action.kind for a in reduce_events(s.rows)] == ["double_click"]  # GTK default: 400 ms
    assert [a.action.kind for a in reduce_events(s.rows, th)] == ["click", "click"]


def test_probe_looks_again_once_the_app_has_reacted():
    """A dialog that shows after the click's own snapshot is in the snapshot the next click uses."""
    import time

    from cua.perception.elements import UIElement
    from recorder.capture import ui_changed
    from recorder.probes import SnapshotProbe

    doc = UIElement(id="a1", role="text", name="", bbox=(0, 0, 400, 400), source="a11y")
    box = UIElement(
        id="a2", role="check box", name="Show line numbers", bbox=(100, 100, 20, 20), source="a11y"
    )

    class _Probe(SnapshotProbe):
        ui: ClassVar[list] = [doc]

        def _take(self):
            return list(self.ui)

    p = _Probe()
    p.start(time.monotonic)
    try:
        assert p.wait_ready(10)
        t = time.monotonic()
        p.note_input(t, "press", None, False)  # opens the dialog: its snapshot starts at once
        with p.cond:
            p.cond.wait_for(lambda: p.snaps[-1][0] >= t, 10)
        _Probe.ui = [doc, box]  # the dialog shows a moment after that snapshot
        p.note_frame(time.monotonic(), (0, 0, 400, 400))
        while time.monotonic() < t + 1.0:  # the frame thread sees a still screen
            time.sleep(0.1)
            p.note_frame(time.monotonic(), None)
        p.note_input(time.monotonic(), "press", None, False)
        assert p.element_at(110, 110)["role"] == "check box"
    finally:
        p.stop()
    frame = np.zeros((80, 120, 4), np.uint8)
    caret = frame.copy()
    caret[10:27, 50:52] = 255
    dialog = frame.copy()
    dialog[10:70, 10:110] = 255
    assert not ui_changed(frame, caret) and ui_changed(frame, dialog) and ui_changed(None, frame)


def test_probe_sees_a_late_menu_a_quick_person_clicks_at_once():
    """A menu that a loaded app shows 0.9 s after the click that opened it, clicked 0.1 s after it
    showed (before the screen is still again): the click's element is the menu item, not what the
    menu covers (CI: a handoff skill recorded the text view under "Find and Replace...")."""
    import time

    from cua.perception.elements import UIElement
    from recorder.probes import SnapshotProbe

    doc = UIElement(id="a1", role="text", name="", bbox=(0, 0, 400, 400), source="a11y")
    item = UIElement(id="a2", role="menu item", name="Find and Replace...", bbox=(80, 119, 272, 25), source="a11y")
    shown = threading.Event()

    class _Probe(SnapshotProbe):
        def _take(self):
            return [doc, item] if shown.is_set() else [doc]

    p = _Probe()
    p.start(time.monotonic)
    try:
        assert p.wait_ready(10)
        t = time.monotonic()
        p.note_input(t, "press", None, False)  # opens the menu
        while time.monotonic() < t + 0.9:  # the frame thread sees a still screen meanwhile
            time.sleep(0.1)
            p.note_frame(time.monotonic(), None)
        shown.set()
        p.note_frame(time.monotonic(), (80, 44, 272, 180))  # the menu shows
        time.sleep(0.1)
        p.note_frame(time.monotonic(), None)
        p.note_input(time.monotonic(), "press", None, False)
        assert p.element_at(150, 130)["name"] == "Find and Replace..."
    finally:
        p.stop()


def test_probe_busy_while_a_menu_opened_gives_no_element_rather_than_the_covered_one():
    """The probe is stuck in a slow look (a loaded app) that began before the menu showed, and the
    click on a menu item closes the menu before the next look: the click's element is unknown (the
    step keeps its coordinates), never the text view the menu covered (the CI handoff failure). A
    click whose spot the screen did not change around takes the first look after it."""
    import time

    from cua.perception.elements import UIElement
    from recorder.probes import SnapshotProbe

    doc = UIElement(id="a1", role="text", name="", bbox=(0, 70, 1280, 700), source="a11y")
    button = UIElement(id="a3", role="push button", name="Save", bbox=(900, 10, 40, 30), source="a11y")
    slow = threading.Event()

    class _Probe(SnapshotProbe):
        def _take(self):
            if slow.is_set():
                slow.clear()
                time.sleep(1.2)  # began before the menu showed; it saw no menu
            return [doc, button]

    p = _Probe()
    p.start(time.monotonic)
    try:
        assert p.wait_ready(10)
        time.sleep(0.2)
        slow.set()
        t = time.monotonic()
        p.note_input(t, "press", None, False)  # opens the menu; this look takes 1.2 s
        time.sleep(0.2)
        p.note_frame(time.monotonic(), (80, 44, 272, 180))  # the menu shows
        time.sleep(0.5)
        p.note_input(time.monotonic(), "press", None, False)  # on "Find and Replace...": the menu closes
        ticker = threading.Thread(target=lambda: [time.sleep(0.2) or p.note_frame(time.monotonic(), (80, 44, 272, 180))
                                                  for _ in range(15)], daemon=True)
        ticker.start()
        assert p.element_at(150, 130) is None
        ticker.join()
        p.note_input(time.monotonic(), "press", None, False)  # nothing changes around the Save button
        stop = time.monotonic() + 2.0
        ticker = threading.Thread(target=lambda: [time.sleep(0.2) or p.note_frame(time.monotonic(), None)
                                                  for _ in range(10) if time.monotonic() < stop], daemon=True)
        ticker.start()
        assert p.element_at(915, 20)["name"] == "Save"
        ticker.join()
    finally:
        p.stop()
