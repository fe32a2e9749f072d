"""`cua record --env remote:URL`: a real `cua serve` guest (sandbox mousepad, no --root) records by default,
the command copies the finished session back as a tar, and the copy is a normal local recording.

Plus the failures: recording off, an unreachable guest, an unknown session, and a hostile guest whose archive
tries to write outside the folder (refused before anything is unpacked).
"""

from __future__ import annotations

import http.server
import io
import json
import os
import signal
import sqlite3
import stat
import subprocess
import tarfile
import threading
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from cua.cli import app as cli
from cua.env.base import EnvError
from cua.env.remote import RemoteEnv
from cua.env.session_archive import unpack
from tests.guest_fixtures import CUA, TOKEN, free_port, stop_process
from tests.process_fixtures import read_until
from tests.recorder_fixtures import xvfb
from vm.guest.app import GuestConfig, create_app
from vm.guest.recording import GuestRecorder
from vm.guest.server import serve_in_thread, server_config

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _no_env():
    raise EnvError("no desktop in this test")


@pytest.fixture
def bare_guest(tmp_path):
    """An in-process guest whose recordings live in tmp/recs (no desktop: only the recording routes are used)."""
    cfg = GuestConfig(token=TOKEN, env_factory=_no_env, recorder=GuestRecorder(tmp_path / "recs"))
    port = free_port()
    with serve_in_thread(server_config(create_app(cfg), "127.0.0.1", port)):
        yield f"http://127.0.0.1:{port}", tmp_path / "recs", cfg


def _wait_healthy(guest: subprocess.Popen, url: str, log: Path) -> str:
    deadline = time.monotonic() + 120
    while True:
        assert guest.poll() is None, log.read_text()[-2000:]
        try:
            if httpx.get(url + "/health", headers=AUTH, timeout=2, trust_env=False).status_code == 200:
                return url
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, log.read_text()[-2000:]
        time.sleep(0.2)


def test_remote_record_copies_a_normal_recording_back(tmp_path):
    data = tmp_path / "xdg-data"
    env = {**os.environ, "CUA_TOKEN": TOKEN, "XDG_DATA_HOME": str(data)}
    port = free_port()
    log = tmp_path / "guest.log"
    with open(log, "wb") as fh:  # no --root and no --recordings: it records into $XDG_DATA_HOME/cua/recordings
        guest = subprocess.Popen([CUA, "serve", "--port", str(port), "--env", "sandbox:mousepad", "--sources", "a11y"],
                                 env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    url, out = f"http://127.0.0.1:{port}", tmp_path / "demo"
    rec = None
    try:
        _wait_healthy(guest, url, log)
        assert "recordings=" + str(data / "cua" / "recordings") in "".join(log.read_text().split())  # rich wraps
        err = open(tmp_path / "record.err", "w")  # noqa: SIM115 - closed below, after the process ends
        rec = subprocess.Popen([CUA, "record", "--env", f"remote:{url}", "--out", str(out), "--task", "type hello",
                                "--no-mask-unknown", "--fps", "4"], env=env, stdout=subprocess.PIPE,
                               stderr=err, text=True, start_new_session=True)
        read_until(rec, rec.stdout, "GUEST_URL=", 120)
        with httpx.Client(base_url=url, headers=AUTH, timeout=60, trust_env=False) as c:
            assert c.get("/recording").json()["recording"] is True
            for action in ({"kind": "click", "x": 400, "y": 300}, {"kind": "type", "text": "hello"}):
                assert c.post("/act", json=action).json()["ok"] is True
            deadline = time.monotonic() + 30  # the guest's events writer commits every 0.25 s
            while c.get("/recording").json().get("events", 0) < 6 and time.monotonic() < deadline:
                time.sleep(0.25)
        rec.send_signal(signal.SIGINT)  # Ctrl-C: stop on the guest, copy back
        stdout, _ = rec.communicate(timeout=120)
    finally:
        if rec is not None and rec.poll() is None:
            stop_process(rec)
        stop_process(guest)
        if rec is not None:
            err.close()
    stderr = (tmp_path / "record.err").read_text()
    assert rec.returncode == 0, stderr[-3000:]
    result = json.loads(stdout.strip().splitlines()[-1])
    assert result["out"] == str(out) and result["frames"] >= 1
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is True and manifest["task"] == "type hello" and manifest["env"] == "sandbox:mousepad"
    assert (out / "video.mp4").stat().st_size > 0 and list((out / "keyframes").glob("*.png"))
    db = sqlite3.connect(out / "events.sqlite")
    try:
        kinds = [k for (k,) in db.execute("SELECT kind FROM events ORDER BY seq")]
        typed = "".join(c or "" for (c,) in db.execute("SELECT char FROM events WHERE kind='key_down' ORDER BY seq"))
    finally:
        db.close()
    assert "press" in kinds and typed == "hello", (kinds, typed)
    for p in [out, *out.rglob("*")]:  # private like a local recording
        assert stat.S_IMODE(p.stat().st_mode) == (0o700 if p.is_dir() else 0o600), p
    assert (data / "cua" / "recordings" / result["session"] / "manifest.json").exists()  # the guest's copy
    r = CliRunner().invoke(cli, ["export", str(out), "--format", "trajectory", "--out", str(tmp_path / "traj")])
    assert r.exit_code == 0, r.output
    steps = [json.loads(ln) for ln in (tmp_path / "traj" / "steps.jsonl").read_text().splitlines()]
    assert any(s["action"].get("kind") == "type" and s["action"].get("text") == "hello" for s in steps), steps


def test_clear_errors_unreachable_unknown(tmp_path, bare_guest):
    url, _recs, _cfg = bare_guest
    runner, env = CliRunner(), {"CUA_TOKEN": TOKEN}
    r = runner.invoke(cli, ["record", "--env", f"remote:http://127.0.0.1:{free_port()}", "--out", str(tmp_path / "a")],
                      env=env)
    assert r.exit_code == 1 and "unreachable" in r.output, r.output
    with RemoteEnv(url, token=TOKEN) as remote:
        with pytest.raises(EnvError, match="no recording named rec-20990101-000000"):
            remote.fetch_recording("rec-20990101-000000", tmp_path / "b")
        with pytest.raises(EnvError, match="not a session name"):
            remote.fetch_recording("../recs", tmp_path / "b")
        assert not (tmp_path / "b").exists()
    for raw in ("..%2Fx", "%2e%2e", ".hidden"):  # the guest refuses them itself, too
        status = httpx.get(f"{url}/recording/{raw}/archive", headers=AUTH, timeout=10, trust_env=False).status_code
        assert status in (400, 404), (raw, status)


def test_no_recordings_turns_recording_off(tmp_path):
    port = free_port()
    with xvfb((640, 480)) as display, open(tmp_path / "guest.log", "wb") as log:
        guest = subprocess.Popen([CUA, "serve", "--port", str(port), "--env", "desktop", "--no-recordings"],
                                 env={**os.environ, "CUA_TOKEN": TOKEN, "DISPLAY": display}, stdout=log,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        try:
            url = _wait_healthy(guest, f"http://127.0.0.1:{port}", tmp_path / "guest.log")
            r = CliRunner().invoke(cli, ["record", "--env", f"remote:{url}", "--out", str(tmp_path / "c")],
                                   env={"CUA_TOKEN": TOKEN})
        finally:
            stop_process(guest)
    assert r.exit_code == 1 and "recording is off" in r.output and "--no-recordings" in r.output, r.output
    assert not (tmp_path / "c").exists()


def test_the_guest_archive_leaves_links_out(tmp_path, bare_guest):
    url, recs, _cfg = bare_guest
    session = recs / "rec-20260101-000000"
    (session / "keyframes").mkdir(parents=True)
    (session / "manifest.json").write_text('{"complete": true}')
    (session / "keyframes" / "000001.png").write_bytes(b"x" * 70000)
    (tmp_path / "secret.txt").write_text("TOPSECRET")
    (session / "leak.txt").symlink_to(tmp_path / "secret.txt")
    with RemoteEnv(url, token=TOKEN) as remote:
        got = remote.fetch_recording(session.name, tmp_path / "copy")
    assert sorted(str(p.relative_to(got)) for p in got.rglob("*")) == ["keyframes", "keyframes/000001.png",
                                                                        "manifest.json"]
    assert (got / "keyframes" / "000001.png").read_bytes() == b"x" * 70000


def _tar(member: tarfile.TarInfo, data: bytes = b"") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        ok = tarfile.TarInfo("manifest.json")
        ok.size = 2
        tar.addfile(ok, io.BytesIO(b"{}"))
        member.size = len(data) if member.isreg() else 0
        tar.addfile(member, io.BytesIO(data) if member.isreg() else None)
    return buf.getvalue()


def _member(name: str, kind: bytes = tarfile.REGTYPE, target: str = "") -> tarfile.TarInfo:
    m = tarfile.TarInfo(name)
    m.type, m.linkname = kind, target
    return m


@pytest.mark.parametrize("member", [_member("../x"), _member("/tmp/abs-x"), _member("a/../../x"),
                                    _member("link", tarfile.SYMTYPE, "/etc/passwd"),
                                    _member("hard", tarfile.LNKTYPE, "manifest.json")],
                         ids=["dotdot", "absolute", "nested-dotdot", "symlink", "hardlink"])
def test_a_hostile_guest_archive_is_refused(tmp_path, member):
    """A guest that answers the archive route with a crafted tar: the client unpacks nothing."""
    body = _tar(member, b"pwned")

    class Hostile(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the http.server hook name
            code = 200 if self.path.endswith("/archive") or self.path == "/health" else 404
            payload = body if self.path.endswith("/archive") else b'{"ok": true}'
            self.send_response(code)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    work = tmp_path / "work"
    work.mkdir()
    try:
        with RemoteEnv(f"http://127.0.0.1:{server.server_address[1]}", token=TOKEN) as remote:
            with pytest.raises(EnvError, match="unsafe path|link or special"):
                remote.fetch_recording("rec-1", work / "out")
    finally:
        server.shutdown()
        server.server_close()
    assert sorted(os.listdir(work)) == [] and not Path("/tmp/abs-x").exists() and not (tmp_path / "x").exists()
    with pytest.raises(EnvError):  # and the unpacker alone, on the same bytes
        archive = tmp_path / "a.tar"
        archive.write_bytes(body)
        unpack(archive, work / "out2")
    assert sorted(os.listdir(work)) == []
