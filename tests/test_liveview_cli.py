"""`--live` on the other commands: `cua record --live` serves a takeover view whose panel shows the recording
and whose "done" route (websockify `?token=done`, behind the page's basic auth, with the page's nonce) ends it."""

from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
import time

import httpx
import pytest
from websockets.sync.client import connect
from tests.process_fixtures import read_until

TOKEN = "live-cli-test-token-" + "c" * 24


def _read_until(proc: subprocess.Popen, pattern: str, timeout: float = 90.0) -> re.Match:
    return read_until(proc, proc.stdout, pattern, timeout)


def _done(url: str, nonce: str) -> None:
    basic = base64.b64encode(f"cua:{TOKEN}".encode()).decode()
    ws_url = url.replace("http://", "ws://").replace("/index.html", "/websockify?token=done")
    with connect(ws_url, additional_headers={"Authorization": f"Basic {basic}"}, open_timeout=10) as ws:
        ws.send(nonce.encode())
        time.sleep(0.5)


def test_record_live_panel_and_done_button(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "cua.cli", "record", "--env", "sandbox:mousepad", "--out",
                             str(tmp_path / "demo"), "--live", "--duration", "120"],
                            env={**os.environ, "CUA_TOKEN": TOKEN}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        seen = _read_until(proc, r"live view: (http://127\.0\.0\.1:\d+/index\.html).*?(takeover|view only)")
        url = seen.group(1)
        assert seen.group(2) == "takeover"
        page = httpx.get(url, auth=("cua", TOKEN), timeout=10).text
        nonce = re.search(r"encode\('([^']+)'\)", page).group(1)
        assert 'id="done" hidden' not in page
        status_url = url.replace("index.html", "status.json")
        deadline = time.monotonic() + 30
        while httpx.get(status_url, auth=("cua", TOKEN), timeout=5).json().get("outcome") != "recording":
            assert time.monotonic() < deadline, "the panel never showed the recording"
            time.sleep(0.5)
        with pytest.raises(Exception):  # noqa: B017 - the handshake is refused without the page's credentials
            connect(url.replace("http://", "ws://").replace("/index.html", "/websockify?token=done"),
                    open_timeout=10)
        _done(url, "not-the-nonce")
        time.sleep(2)
        assert proc.poll() is None, "a wrong nonce ended the recording"
        _done(url, nonce)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out[-2000:]
    assert "saved" in out and (tmp_path / "demo").is_dir()
    assert subprocess.run(["pgrep", "-f", f"auth-source cua:{TOKEN}"], capture_output=True).returncode == 1


def test_eval_live_needs_one_env():
    r = subprocess.run([sys.executable, "-m", "cua.cli", "eval", "tasks/mousepad/clear-document.yaml", "--live",
                        "--out", "unused-eval-out"], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "CUA_TOKEN": TOKEN})
    assert r.returncode == 2 and "--live shows one desktop" in " ".join((r.stdout + r.stderr).split()), r.stderr


def test_handoff_on_a_confirmation_no_one_here_may_give(tmp_path):
    """A destructive action (ctrl+q) with no terminal and no --yes is handed to a person; here the person
    hands back at once through the page's "done" route, so nothing is learned and the run says so."""
    from skills.library import SkillLibrary

    db = tmp_path / "lib.db"
    SkillLibrary(db).close()
    script = tmp_path / "replies.jsonl"
    script.write_text('"hotkey(\'ctrl\', \'q\')"\n')
    proc = subprocess.Popen([sys.executable, "-m", "cua.cli", "run", "quit the editor", "--env", "sandbox:mousepad",
                             "--model", f"scripted:{script}", "--sources", "a11y", "--skills", str(db), "--handoff", "--out",
                             str(tmp_path / "run")], env={**os.environ, "CUA_TOKEN": TOKEN},
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = _read_until(proc, r"live view: (http://127\.0\.0\.1:\d+/index\.html)").group(1)
        why = _read_until(proc, r"the agent may not do this alone: (hotkey ctrl\+q)")
        assert why.group(1) == "hotkey ctrl+q"
        page = httpx.get(url, auth=("cua", TOKEN), timeout=10).text
        _done(url, re.search(r"encode\('([^']+)'\)", page).group(1))
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1 and "could not become a skill" in " ".join(out.split()), out[-2000:]
    with SkillLibrary(db) as lib:
        assert not lib.list()
