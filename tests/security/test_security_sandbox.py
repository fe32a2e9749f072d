"""Item 7 of issue 19, against a real sandbox (Xvfb + D-Bus + AT-SPI + openbox + mousepad).

No process of the sandbox sees the caller's keys; its X display refuses a client without the cookie and
accepts the project's own clients (child processes and in-process Xlib/mss).
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from cua.env.sandbox import Sandbox

SECRETS = {"OPENAI_API_KEY": "sk-test-secret-openai", "ANTHROPIC_API_KEY": "sk-ant-test-secret",
           "CUA_TOKEN": "guest-token-secret-0123456789", "AWS_SECRET_ACCESS_KEY": "aws-test-secret"}


@pytest.fixture(scope="module")
def sandbox():
    mp = pytest.MonkeyPatch()
    for k, v in SECRETS.items():
        mp.setenv(k, v)
    mp.setenv("CUA_TEST_PASSED_ON", "passed-on-value")
    try:
        with Sandbox("mousepad", size=(800, 600), pass_env=["CUA_TEST_PASSED_ON"]) as sb:
            yield sb
    finally:
        mp.undo()


def _snapshot(pids: list[int]) -> dict[int, tuple[str, dict[str, str]]]:
    """Name and environment of each pid still alive (a short-lived helper may exit between listing and reading)."""
    seen = {}
    for pid in pids:
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
            raw = Path(f"/proc/{pid}/environ").read_bytes()
        except (FileNotFoundError, ProcessLookupError):
            continue
        seen[pid] = name, dict(item.split("=", 1) for item in raw.decode(errors="replace").split("\0") if "=" in item)
    return seen


def test_no_sandbox_process_inherits_the_callers_keys(sandbox):
    procs = _snapshot(sandbox.pids())
    names = {name for name, _ in procs.values()}
    assert {"Xvfb", "dbus-daemon", "openbox", "mousepad"} <= names, names
    for pid, (_, env) in procs.items():
        leaked = {k for k in SECRETS if k in env} | {k for k, v in env.items() if v in SECRETS.values()}
        assert not leaked, (pid, leaked)
        assert env.get("CUA_TEST_PASSED_ON") == "passed-on-value"  # --pass-env NAME passes that one
    assert not set(SECRETS) & set(sandbox.env)


def test_display_needs_the_cookie(sandbox):
    base = {"PATH": os.environ["PATH"], "DISPLAY": sandbox.display, "HOME": str(sandbox.home)}
    refused = subprocess.run(["xdpyinfo"], env={**base, "XAUTHORITY": "/nonexistent"}, capture_output=True,
                             timeout=30)
    assert refused.returncode != 0  # another local user's process cannot read the screen or inject input
    shot = subprocess.run(["xwd", "-root", "-silent"], env={**base, "XAUTHORITY": "/nonexistent"},
                          capture_output=True, timeout=30) if os.path.exists("/usr/bin/xwd") else refused
    assert shot.returncode != 0 and not shot.stdout
    ok = subprocess.run(["xdpyinfo"], env=sandbox.env, capture_output=True, timeout=30, text=True)
    assert ok.returncode == 0 and "800x600" in ok.stdout
    cookie_file = Path(sandbox.env["XAUTHORITY"])
    assert stat.S_IMODE(cookie_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(Path(sandbox.root).stat().st_mode) == 0o700


def test_in_process_clients_use_the_cookie(sandbox):
    import mss
    from Xlib import display

    d = display.Display(sandbox.display)  # python-xlib reads $XAUTHORITY (the process's private file)
    try:
        assert d.screen().width_in_pixels == 800
    finally:
        d.close()
    with mss.MSS(display=sandbox.display) as sct:  # libX11
        assert sct.grab(sct.monitors[0]).size == (800, 600)
    assert stat.S_IMODE(Path(os.environ["XAUTHORITY"]).stat().st_mode) == 0o600


def test_the_browser_env_does_not_inherit_the_callers_keys(monkeypatch):
    from cua.env.browser import BrowserEnv
    from cua.env.chromium import chromium_pids

    for k, v in SECRETS.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("CUA_TEST_PASSED_ON", "passed-on-value")
    with BrowserEnv("data:text/html,<p>hi</p>", size=(400, 300), sources="dom",
                    pass_env=("CUA_TEST_PASSED_ON",)) as env:
        pids = chromium_pids(env.tag)
        assert pids  # the browser and its renderers, GPU and utility processes
        environs = [env for _, env in _snapshot(pids).values()]  # (the zygotes write their title over their environ)
        for environ in environs:
            assert not {k for k in SECRETS if k in environ} | {k for k, v in environ.items() if v in SECRETS.values()}
        assert any(e.get("CUA_TEST_PASSED_ON") == "passed-on-value" for e in environs)  # pass_env passes one
        assert any("hi" in (e.name or "") for e in env.observe().elements)  # the page still works


def test_eval_set_up_processes_get_the_sandbox_environment_not_the_callers(sandbox):
    """cua eval starts a task's set-up commands (and OSWorld's execute/command steps) on the sandbox's
    display with env_process_vars: the sandbox's allow-listed environment, never the caller's keys."""
    from types import SimpleNamespace

    from cua.eval.runner import env_process_vars

    child = env_process_vars(SimpleNamespace(sandbox=sandbox))
    assert child is not None and child["DISPLAY"] == sandbox.display
    out = subprocess.run(["env", "-0"], env=child, capture_output=True, timeout=10).stdout.decode()
    env = dict(item.split("=", 1) for item in out.split("\0") if "=" in item)
    leaked = {k for k in SECRETS if k in env} | {k for k, v in env.items() if v in SECRETS.values()}
    assert not leaked, leaked
    assert env.get("CUA_TEST_PASSED_ON") == "passed-on-value"
