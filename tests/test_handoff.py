"""`cua run --handoff` end to end: the run stops outside known skills, a "person" does the task through
the takeover live view's VNC connection (a VNC viewer on a second Xvfb desktop, connected through the
page's websockify with the page's basic auth and VNC password, driven with xdotool, finding what to click
by reading the viewer's screen), the demonstration becomes a verified skill, and the next run of the
same task succeeds with no human and no model."""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import subprocess
import sys
import time
from contextlib import contextmanager

import httpx
import mss
from PIL import Image

from cua.env.sandbox import Sandbox
from cua.liveview import VncRelay
from cua.perception.ocr import ocr
from skills.library import SkillLibrary
from tests.process_fixtures import read_until

TOKEN = "handoff-test-token-" + "z" * 24
TASK = "open the find and replace dialog"


def _read_until(proc: subprocess.Popen, pattern: str, timeout: float = 120.0) -> re.Match:
    return read_until(proc, proc.stderr, pattern, timeout)


@contextmanager
def _vnc_viewer(url: str, workdir):
    """A VNC viewer (xtightvncviewer, maximized) on its own Xvfb desktop, connected to the live view at `url`
    the way the page connects: websockify's `?token=vnc` route with basic auth, the VNC password from the page."""
    auth = ("cua", TOKEN)
    password = re.search(r"password=([^\"&]+)", httpx.get(url, auth=auth, timeout=10).text).group(1)
    pw_file = workdir / "vncpass"
    pw_file.write_text(password + "\n")
    pw_file.chmod(0o600)
    basic = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
    ws_url = url.replace("http://", "ws://").replace("/index.html", "/websockify?token=vnc")
    with VncRelay(ws_url, {"Authorization": f"Basic {basic}"}) as relay:
        viewer = (f"exec xtightvncviewer -autopass -encodings 'raw copyrect' 127.0.0.1::{relay.port}"
                  f" < {shlex.quote(str(pw_file))}")
        with Sandbox(["sh", "-c", viewer], size=(1280, 800)) as person:
            yield person


def _xdotool(person: Sandbox, *args: str) -> None:
    subprocess.run(["xdotool", *args], env=person.env, check=True, timeout=10)


def _click_text(person: Sandbox, text: str, timeout: float = 30.0) -> None:
    """Click (xdotool, in the viewer) the first place the viewer's screen shows `text`, read by OCR."""
    deadline = time.monotonic() + timeout
    while True:
        with getattr(mss, "MSS", mss.mss)(display=person.display) as grab:
            raw = grab.grab(grab.monitors[0])
        shot = Image.frombytes("RGB", raw.size, raw.bgra, "raw", "BGRX")
        hits = [e for e in ocr(shot, words=True) if e.name.strip().lower().startswith(text.lower())]
        if hits:
            x, y, w, h = hits[0].bbox
            _xdotool(person, "mousemove", str(x + w // 2), str(y + h // 2), "click", "1")
            return
        assert time.monotonic() < deadline, f"{text!r} never appeared in the VNC viewer"
        time.sleep(0.5)


def test_handoff_teaches_a_skill_the_next_run_uses(tmp_path):
    db = tmp_path / "lib.db"
    SkillLibrary(db).close()
    env = {**os.environ, "CUA_TOKEN": TOKEN}
    proc = subprocess.Popen([sys.executable, "-m", "cua.cli", "run", TASK, "--env", "sandbox:mousepad", "--skills",
                             str(db), "--handoff", "--out", str(tmp_path / "run1")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = _read_until(proc, r"live view: (http://127\.0\.0\.1:\d+/index\.html)").group(1)
        _read_until(proc, r"press ctrl\+alt\+q")
        with _vnc_viewer(url, tmp_path) as person:
            _click_text(person, "Search")
            _click_text(person, "Find and Replace")
            time.sleep(1.5)  # the dialog is on screen before the person hands back
            _xdotool(person, "key", "ctrl+alt+q")
            out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-3000:]
    assert json.loads(out.strip().splitlines()[-1])["outcome"] == "success"
    with SkillLibrary(db) as lib:
        learned = [s for s in lib.list() if s.provenance == "demonstrated"]
    assert len(learned) == 1 and learned[0].status == "verified", [(s.name, s.status, s.extra) for s in learned]
    assert any(e.kind == "window_opened" for e in learned[0].postcondition.effects)

    again = subprocess.run([sys.executable, "-m", "cua.cli", "run", TASK, "--env", "sandbox:mousepad", "--skills",
                            str(db), "--model", "none", "--out", str(tmp_path / "run2")],
                           env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(again.stdout.strip().splitlines()[-1])["outcome"] == "success"
