"""Recording real X input: xdotool in another process drives an Xvfb display while we record."""

from __future__ import annotations

import getpass
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from recorder.capture import Recorder, parse_hotkey
from recorder.demo import load_demo
from recorder.export import export_any
from recorder.privacy import machine_mac
from recorder.reduce import reduce_events
from recorder.store import RecordingError, Session
from tests.recorder_fixtures import xdo, xvfb


@pytest.fixture(scope="module")
def display():
    with xvfb() as d:
        yield d


SCRIPT = [
    ("mousemove", "200", "150", "click", "1"),
    ("type", "--delay", "15", "hello world"),
    ("key", "ctrl+a"),
    ("key", "Return"),
    ("type", "--delay", "15", "Abc"),
    ("key", "BackSpace"),
    ("mousemove", "300", "200", "click", "--repeat", "2", "--delay", "60", "1"),
    ("click", "3"),
    ("mousedown", "1"),
    ("mousemove", "340", "230"),
    ("mousemove", "400", "300"),
    ("mouseup", "1"),
    ("click", "--repeat", "3", "--delay", "30", "5"),
]
EXPECTED = [
    {"kind": "click", "x": 200, "y": 150, "button": "left", "clicks": 1},
    {"kind": "type", "text": "hello world"},
    {"kind": "hotkey", "keys": ["ctrl", "a"]},
    {"kind": "key", "key": "enter"},
    {"kind": "type", "text": "Ab"},
    {"kind": "double_click", "x": 300, "y": 200},
    {"kind": "right_click", "x": 300, "y": 200},
    {"kind": "drag", "x": 300, "y": 200, "to_x": 400, "to_y": 300},
    {"kind": "scroll", "x": 400, "y": 300, "dx": 0, "dy": 3},
]


def test_xdotool_script_is_recorded_exactly(display, tmp_path):
    # a bare display has no accessible elements: input fidelity is checked with masking of unknown fields off
    rec = Recorder(tmp_path / "s", display, task="script", env_spec="desktop", fps=5, mask_unknown=False).start()
    try:
        for cmd in SCRIPT:
            xdo(display, *cmd)
        xdo(display, "key", "ctrl+alt+q")  # the stop hotkey: not part of the recording
        rec.wait(20)
        assert rec.stopped.is_set()
    finally:
        stats = rec.stop()
    s = Session(tmp_path / "s")
    assert s.complete and s.manifest["stats"]["events"] == stats["events"]
    events = s.events()
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)
    ts = [e["t"] for e in events]
    assert ts == sorted(ts)  # one monotonic clock
    reduced = reduce_events(events)
    assert [a.action.to_json() for a in reduced] == EXPECTED
    for a in reduced:  # every action links its raw events and a stored pre-action frame
        assert a.events and a.frame is not None
        assert s.frame_image(a.frame).size == (1280, 800)
    assert all(e["kind"] != "key_down" or e["char"] != "q" for e in events[-6:])
    blob = (tmp_path / "s" / "manifest.json").read_text() + json.dumps(events)
    for ident in (socket.gethostname(), getpass.getuser(), machine_mac()):
        if len(ident) >= 3:
            assert ident not in blob


def test_pause_resume_drops_input(display, tmp_path):
    rec = Recorder(tmp_path / "p", display, fps=2, mask_unknown=False).start()
    try:
        xdo(display, "type", "--delay", "15", "ab")
        xdo(display, "key", "ctrl+alt+p")
        xdo(display, "type", "--delay", "15", "secret")
        xdo(display, "key", "ctrl+alt+p")
        xdo(display, "type", "--delay", "15", "cd")
        xdo(display, "key", "ctrl+alt+q")
        rec.wait(20)
    finally:
        rec.stop()
    acts = [a.action.to_json() for a in reduce_events(Session(tmp_path / "p").events())]
    assert acts == [{"kind": "type", "text": "ab"}, {"kind": "type", "text": "cd"}]


def test_refuses_to_start_without_a_display(tmp_path):
    with pytest.raises(RecordingError, match="cannot open X display"):
        Recorder(tmp_path / "x", ":987").start()
    assert not (tmp_path / "x" / "manifest.json").exists()
    with pytest.raises(RecordingError, match="fps"):
        Recorder(tmp_path / "y", ":0", fps=0)


def test_sigkill_mid_session_leaves_a_readable_recording(display, tmp_path):
    out = tmp_path / "killed"
    code = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {os.getcwd()!r})
        from recorder.capture import Recorder, parse_hotkey
        Recorder({str(out)!r}, {display!r}, task="killed", env_spec="desktop", fps=5,
                 mask_unknown=False).start()
        print("started", flush=True)
        time.sleep(600)
    """)
    p = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert p.stdout.readline().strip() == "started"
        xdo(display, "mousemove", "50", "60", "click", "1")
        xdo(display, "type", "--delay", "15", "kill me")
        deadline = time.monotonic() + 30
        n = 0
        while time.monotonic() < deadline:  # wait until the writer has committed the typed text
            n = sum(1 for e in Session(out).events() if e["kind"] == "key_down")
            if n >= 7:
                break
            time.sleep(0.2)
        assert n >= 7
        while time.monotonic() < deadline and (out / "video.mp4").stat().st_size < 4000:
            time.sleep(0.2)  # at least one finished video fragment (one GOP = 1 s at 5 fps)
        xdo(display, "type", "--delay", "15", "xx")  # in flight when the kill lands
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(10)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(10)
    s = Session(out)
    assert not s.complete
    acts = [a.action.to_json() for a in reduce_events(s.events())]
    assert acts[0] == {"kind": "click", "x": 50, "y": 60, "button": "left", "clicks": 1}
    assert acts[1]["kind"] == "type" and acts[1]["text"].startswith("kill me")
    demo = load_demo(out)
    assert demo.steps[0].frame() is not None
    assert len(list(s.iter_video())) >= 1  # the fragmented MP4 decodes up to the kill
    counts = export_any([out], "openai-chat", tmp_path / "ds")
    assert counts["train"] + counts["val"] == len(demo.steps)
    traj = export_any([out], "trajectory", tmp_path / "traj")["trajectories"][0]
    assert json.loads((Path(traj) / "meta.json").read_text())["outcome"] == "incomplete"
    from cua.env.desktop import DesktopEnv
    from recorder.replay import replay_path

    with DesktopEnv(display=display, sources="a11y") as env:  # replay works on the killed recording too
        rep = replay_path(out, env)
    assert rep.ok and [s.action.split("(")[0] for s in rep.steps] == [a["kind"] for a in acts]


def test_recorder_for_an_env_records_its_display(display, tmp_path):
    from cua.env.desktop import DesktopEnv

    with DesktopEnv(display=display) as env:
        rec = Recorder.for_env(env, tmp_path / "e", fps=2).start()
        try:
            xdo(display, "mousemove", "33", "44", "click", "1")
        finally:
            rec.stop()
        s = Session(tmp_path / "e")
        assert s.manifest["env"] == env.spec() and s.manifest["screen_size"] == [1280, 800]
        acts = [a.action.to_json() for a in reduce_events(s.events())]
        assert acts == [{"kind": "click", "x": 33, "y": 44, "button": "left", "clicks": 1}]


def test_typed_newline_is_recorded_as_enter(display, tmp_path):
    """xdotool types "\\n" as the Linefeed keysym, which pynput reports with no name and no character."""
    rec = Recorder(tmp_path / "n", display, fps=2, mask_unknown=False).start()
    try:
        xdo(display, "type", "--delay", "30", "a\nb")
        xdo(display, "key", "ctrl+alt+q")
        rec.wait(20)
    finally:
        rec.stop()
    acts = [a.action.to_json() for a in reduce_events(Session(tmp_path / "n").events())]
    assert acts == [
        {"kind": "type", "text": "a"},
        {"kind": "key", "key": "enter"},
        {"kind": "type", "text": "b"},
    ]


@pytest.mark.parametrize("spec", ["zz+q", "[Filtered]", "+"])
def test_a_bad_hotkey_is_a_recording_error_naming_it(spec):
    """The guest's /recording/start answers 409 with this message (any other exception would be a 503)."""
    with pytest.raises(RecordingError, match="hotkey"):
        parse_hotkey(spec)
