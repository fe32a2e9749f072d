"""Item 10 of issue 19: HTTPS with certificate verification, the plain-HTTP warning, POST /cancel."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

from cua.env.base import EnvError
from cua.env.remote import RemoteEnv
from tests.guest_fixtures import free_port
from vm.guest.app import GuestConfig, create_app
from vm.guest.server import serve_in_thread, server_config

TOKEN = "security-tls-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _no_env():
    raise AssertionError("not needed")


@pytest.fixture(scope="module")
def cert(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem"), "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    return d / "cert.pem", d / "key.pem"


def test_https_guest_is_verified_by_the_client(cert, monkeypatch):
    monkeypatch.delenv("CUA_CA", raising=False)
    app = create_app(GuestConfig(token=TOKEN, env_factory=_no_env))
    port = free_port()
    with serve_in_thread(server_config(app, "127.0.0.1", port, tls_cert=cert[0], tls_key=cert[1])):
        url = f"https://127.0.0.1:{port}"
        with pytest.raises(EnvError, match="not trusted"):
            RemoteEnv(url, token=TOKEN)  # a self-signed certificate is refused by default
        env = RemoteEnv(url, token=TOKEN, ca=cert[0])
        assert env.health()["ok"] is True
        env.close()
        monkeypatch.setenv("CUA_CA", str(cert[0]))
        assert RemoteEnv(url, token=TOKEN).health()["ok"] is True
        with pytest.raises(httpx.HTTPError):  # no plain-text HTTP on the TLS port: the token never travels bare
            httpx.get(f"http://127.0.0.1:{port}/health", headers=AUTH, timeout=5, trust_env=False)
        # the command line: `--ca FILE` on a command that takes --env; without it the error says to pass it
        from typer.testing import CliRunner

        from cua.cli import app as cli

        monkeypatch.delenv("CUA_CA")
        monkeypatch.setenv("CUA_TOKEN", TOKEN)
        r = CliRunner().invoke(cli, ["act", "--env", f"remote:{url}", "done()"])
        assert r.exit_code == 1 and "not trusted" in r.output and "--ca cert.pem" in r.output, r.output
        r = CliRunner().invoke(cli, ["act", "--env", f"remote:{url}", "--ca", str(cert[0]), "done()"])
        assert "not trusted" not in r.output and "answered 503" in r.output, r.output  # reached this env-less guest


def test_non_loopback_bind_without_tls_warns(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from cua.cli import app as cli

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv("CUA_TOKEN", TOKEN)
    r = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0", "--port", str(free_port()), "--env", "desktop"])  # noqa: S104
    assert r.exit_code == 1  # no display here: it stops before listening, after the warnings
    assert "no TLS" in r.output and "SSH tunnel" in r.output, r.output
    r = CliRunner().invoke(cli, ["serve", "--tls-cert", str(tmp_path / "missing.pem")])
    assert r.exit_code == 2 and "--tls-key" in r.output, r.output


def _cancel_while(c: httpx.Client, action: dict) -> dict:
    """POST `action` on a thread, POST /cancel until it reports the action in progress; the act's answer."""
    result: dict = {}

    def act() -> None:
        r = c.post("/act", json=action)
        result.update(status=r.status_code, detail=r.json().get("detail", ""))

    th = threading.Thread(target=act)
    th.start()
    deadline, cancelled = time.monotonic() + 30, False
    while not cancelled and time.monotonic() < deadline:  # until the action is really in progress
        time.sleep(0.2)
        cancelled = c.post("/cancel").json()["cancelled"]
    th.join(60)
    assert cancelled and result["status"] == 409 and "cancel" in result["detail"], result
    return result


def _saved(c: httpx.Client, doc: Path) -> str:
    """Save mousepad's document (ctrl+s) and read it from disk: the whole text, where the accessibility
    tree's text value stops at 4,000 characters."""
    before = doc.stat().st_mtime_ns
    assert c.post("/act", json={"kind": "hotkey", "keys": ["ctrl", "s"]}).json()["ok"] is True
    deadline = time.monotonic() + 20
    while doc.stat().st_mtime_ns == before and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.3)  # the write itself
    return doc.read_text()


def test_cancel_stops_a_long_type_and_the_guest_keeps_serving(tmp_path):
    """A real guest typing 99,000 characters into mousepad: /cancel stops the keys at the X input layer (the
    saved document holds only a prefix), a 20 s wait is cut short too, and the guest acts normally
    afterwards."""
    from cua.env.desktop import SandboxEnv

    doc = tmp_path / "doc.txt"
    doc.write_text("")
    app = create_app(GuestConfig(token=TOKEN, env_factory=lambda: SandboxEnv(["mousepad", str(doc)],
                                                                              size=(640, 480), sources="a11y")))
    text = "".join(f"line {i:05d}\n" for i in range(9_000))
    port = free_port()
    with serve_in_thread(server_config(app, "127.0.0.1", port)), \
            httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=AUTH, timeout=60, trust_env=False) as c:
        assert c.post("/act", json={"kind": "wait", "seconds": 0}).status_code == 200  # env started
        _cancel_while(c, {"kind": "type", "text": text})
        assert c.post("/act", json={"kind": "wait", "seconds": 1}).status_code == 200  # what was sent lands
        typed = _saved(c, doc)
        assert typed and text.startswith(typed) and len(typed) < len(text), len(typed)  # a prefix, not the whole
        _cancel_while(c, {"kind": "wait", "seconds": 20})
        for action in ({"kind": "hotkey", "keys": ["ctrl", "end"]}, {"kind": "type", "text": "after cancel"}):
            assert c.post("/act", json=action).json()["ok"] is True  # the next actions run in full
        assert _saved(c, doc) == typed + "after cancel"
        assert c.get("/health").status_code == 200
        assert c.post("/cancel").json() == {"cancelled": False}  # nothing in progress now


def test_a_cancelled_drag_releases_the_button():
    """Cancel between two motion steps of a drag on a real X server: the drag stops and no button stays held."""
    from Xlib import X

    from cua.env.xinput import ActionCancelled, XInput
    from tests.recorder_fixtures import xvfb

    with xvfb((320, 240)) as display:
        x = XInput(display)
        real_move, moves = x.move, []

        def move(px: int, py: int) -> None:
            moves.append((px, py))
            real_move(px, py)
            if len(moves) == 3:
                x.cancel()  # as POST /cancel would, from another thread

        x.move = move
        with pytest.raises(ActionCancelled):
            x.drag((10, 10), (200, 200))
        pointer = x.d.screen().root.query_pointer()
        assert len(moves) == 3 and not pointer.mask & X.Button1Mask
        x.clear_cancel()
        x.drag((10, 10), (200, 200))  # re-armed: the next drag runs in full
        assert len(moves) == 3 + 9 and (pointer.root_x, pointer.root_y) != (200, 200)
        assert x.pointer() == (200, 200)
        x.close()
