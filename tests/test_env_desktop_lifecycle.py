"""Sandbox life cycle and bad input: no orphan processes, parallel sandboxes, dead displays, clear errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cua.actions import action_from_dict
from cua.env import EnvError, make_env
from cua.env.desktop import DesktopEnv, SandboxEnv
from cua.perception import a11y
from cua.env.sandbox import Sandbox, pids_with_marker

pytestmark = pytest.mark.timeout(300)
ROOT = Path(__file__).resolve().parents[1]


def ps_pids() -> set[int]:
    out = subprocess.run(["ps", "-eo", "pid="], capture_output=True, text=True, check=True).stdout
    return {int(p) for p in out.split()}


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_close_leaves_no_process_and_no_temp_dir():
    sb = Sandbox("mousepad")
    pids = sb.pids()
    names = {Path(f"/proc/{p}/exe").resolve().name for p in pids if alive(p)}
    assert {"Xvfb", "openbox", "dbus-daemon", "mousepad"} <= names, names
    root = Path(sb.root)
    assert root.is_dir() and sb.display.startswith(":")
    assert sb.env["DISPLAY"] == sb.display and sb.env["HOME"].startswith(str(root))
    sb.close()
    left = [p for p in pids if p in ps_pids() and alive(p)]
    assert not left, f"processes left after close: {left}"
    assert not pids_with_marker(sb.marker) and not root.exists()
    sb.close()  # idempotent


def test_two_sandboxes_at_once_are_separate():
    with SandboxEnv("mousepad", sources="a11y") as a, SandboxEnv("mousepad", sources="a11y") as b:
        assert a.display != b.display and a.sandbox.root != b.sandbox.root
        a.act(action_from_dict({"kind": "type", "text": "only in A"}))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            va = [e.value for e in a.observe().elements if e.role == "text"]
            if va == ["only in A"]:
                break
        assert va == ["only in A"]
        assert [e.value for e in b.observe().elements if e.role == "text"] == [""]
        sig_a = {e.signature for e in a.observe().elements if e.role == "menu"}
        sig_b = {e.signature for e in b.observe().elements if e.role == "menu"}
        assert sig_a == sig_b and len(sig_a) >= 6
        markers = [a.sandbox.marker, b.sandbox.marker]
    assert not any(pids_with_marker(m) for m in markers)


def test_unknown_app_binary_is_a_clear_error():
    t = time.monotonic()
    with pytest.raises(EnvError, match="not found on PATH.*apt-get install"):
        make_env("sandbox:no-such-app-xyz --flag")
    assert time.monotonic() - t < 5


def test_missing_xvfb_names_the_package(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EnvError, match="apt-get install xvfb"):
        Sandbox("mousepad")


def test_app_that_never_maps_a_window_times_out_without_orphans():
    before = {p for p in ps_pids() if _cmdline(p) == "sleep 987"}
    with pytest.raises(EnvError, match=r"'sleep 987' did not map a window within 3s"):
        SandboxEnv("sleep 987", timeout=3)
    left = {p for p in ps_pids() if _cmdline(p) == "sleep 987" and alive(p)} - before
    assert not left
    assert not [d for d in Path("/tmp").glob("cua-sandbox-*") if _owner_is_dead_sleep(d)]


def test_app_that_exits_at_once_reports_its_output():
    with pytest.raises(EnvError, match="exited with code 3 before showing a window"):
        SandboxEnv(["sh", "-c", "echo broken config >&2; exit 3"], timeout=10)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def _owner_is_dead_sleep(d: Path) -> bool:
    log = d / "app.log"
    return log.exists() and "sleep" in log.read_text(errors="replace")


def test_display_killed_mid_run_gives_env_error_and_close_cleans_up():
    env = SandboxEnv("mousepad", sources="a11y")
    marker = env.sandbox.marker
    try:
        env.observe()
        xvfb = env.sandbox._procs[0]
        os.killpg(xvfb.pid, signal.SIGKILL)
        xvfb.wait(timeout=10)
        t = time.monotonic()
        with pytest.raises(EnvError, match=rf"display {env.display} died"):
            env.observe()
        with pytest.raises(EnvError, match="died"):
            env.act(action_from_dict({"kind": "click", "x": 10, "y": 10}))
        assert time.monotonic() - t < 10
    finally:
        env.close()
    deadline = time.monotonic() + 10
    while pids_with_marker(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pids_with_marker(marker)


def test_desktop_env_on_a_dead_display_and_without_display(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    with pytest.raises(EnvError, match=r"\$DISPLAY is not set"):
        make_env("desktop")
    with pytest.raises(EnvError, match="cannot open X display ':4321'"):
        DesktopEnv(display=":4321")


def test_desktop_env_drives_an_existing_display():
    with Sandbox("mousepad") as sb, DesktopEnv(display=sb.display, env_vars=sb.env, sources="a11y") as env:
        obs = env.observe()
        assert {"File", "Edit", "Search"} <= {e.name for e in obs.elements if e.role == "menu"}
        assert obs.env == "desktop" and obs.size == (1280, 800)
        r = env.act(action_from_dict({"kind": "click", "target": {"text": "File"}}))
        assert r.ok, r.error


def test_a11y_reader_without_atspi_python_is_bounded(monkeypatch):
    monkeypatch.setattr(a11y, "SYSTEM_PYTHON", "/nonexistent/python3")
    snap = a11y.A11yReader({"DISPLAY": ":1"}).snapshot()
    assert snap.partial and "python3-pyatspi" in snap.error and snap.elements == []


def test_a11y_helper_restarts_after_it_dies():
    with Sandbox("mousepad") as sb, a11y.A11yReader(sb.env) as reader:
        first = reader.snapshot()
        assert not first.partial and any(e.name == "File" for e in first.elements)
        reader._proc.kill()
        again = reader.snapshot()
        assert any(e.name == "File" for e in again.elements)
        cut = reader.snapshot(max_nodes=3)
        assert cut.partial and len(cut.elements) <= 3


def test_cli_observe_writes_png_and_menus_json(tmp_path):
    out = tmp_path / "d"
    proc = subprocess.run([sys.executable, "-m", "cua.cli", "observe", "--env", "sandbox:mousepad", "--out", str(out)],
                          capture_output=True, text=True, timeout=240, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    from PIL import Image

    assert Image.open(out / "observation.png").size == (1280, 800)
    data = json.loads((out / "observation.json").read_text())
    menus = {e["name"]: e for e in data["elements"] if e["role"] == "menu"}
    for name in ("File", "Edit", "Search"):
        assert menus[name]["source"] == "a11y" and menus[name]["bbox"][2] > 0 and menus[name]["bbox"][3] > 0
    assert "Mousepad" in data["window_title"]


def test_cli_act_clicks_search_through_grounding(tmp_path):
    out = tmp_path / "after"
    proc = subprocess.run([sys.executable, "-m", "cua.cli", "act", "--env", "sandbox:mousepad", 'click(text="Search")',
                           "--out", str(out)], capture_output=True, text=True, timeout=240, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["ok"] and result["changed"] and result["point"][1] < 60
    data = json.loads((out / "observation.json").read_text())
    assert "Find" in [e["name"] for e in data["elements"] if e["role"] == "menu item"]


def test_a_killed_owner_leaves_no_orphans():
    code = ("import sys, time; from cua.env.sandbox import Sandbox; sb = Sandbox('mousepad'); "
            "print(sb.marker, sb.root, flush=True); time.sleep(600)")
    owner = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        marker, root = owner.stdout.readline().split()
        assert pids_with_marker(marker)
        owner.kill()  # no close(), no finalizers: the guard process must clean up
        owner.wait(timeout=10)
        deadline = time.monotonic() + 20
        while (pids_with_marker(marker) or Path(root).exists()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not pids_with_marker(marker) and not Path(root).exists()
    finally:
        if owner.poll() is None:
            owner.kill()
        owner.stdout.close()


def test_desktop_env_reports_its_display_dying():
    with Sandbox("mousepad") as sb:
        env = DesktopEnv(display=sb.display, env_vars=sb.env, sources="a11y")
        try:
            env.observe()
            os.killpg(sb._procs[0].pid, signal.SIGKILL)
            sb._procs[0].wait(timeout=10)
            t = time.monotonic()
            with pytest.raises(EnvError, match=rf"display {sb.display} is gone"):
                env.observe()
            assert time.monotonic() - t < 10
        finally:
            env.close()


def test_the_sandbox_directory_is_shown_under_one_stable_name():
    """A file dialog's place and a saved file's title show the sandbox's random directory; a skill named
    after it ("File › Save As › /tmp/cua-sandbox-5moh8z6v/home") matched no other sandbox, and a rerun could
    not reach the states it leads to. They show "/tmp/cua-sandbox" instead; nothing else changes."""
    from cua.env.desktop import stable_paths
    from cua.perception.elements import Observation, UIElement, make_signature

    root = "/tmp/cua-sandbox-5moh8z6v"
    place = UIElement(id="e0", role="list item", name=f"{root}/home", path=["dialog:Save as..."],
                      bbox=(10, 10, 80, 20), source="a11y")
    other = UIElement(id="e1", role="push button", name="Save", path=["dialog:Save as..."], bbox=(100, 10, 40, 20),
                      source="a11y")
    obs = Observation(elements=[place, other], window_title=f"{root}/home/Untitled - FeatherPad")
    out = stable_paths(obs, root)
    assert out.window_title == "/tmp/cua-sandbox/home/Untitled - FeatherPad"
    assert out.elements[0].name == "/tmp/cua-sandbox/home"
    assert out.elements[0].signature == make_signature("list item", "/tmp/cua-sandbox/home", ["dialog:Save as..."])
    assert out.elements[1] is other
    plain = Observation(elements=[other], window_title="Untitled")
    assert stable_paths(plain, root) is plain
