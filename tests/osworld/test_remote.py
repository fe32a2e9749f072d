"""OSWorld tasks on a guest (`cua eval --env remote:URL`): a real `cua serve --allow-exec` sets each task up and
scores it where its desktop is; the host sends only the task and the asset files of its own cache.

Plus the refusals: a guest without --allow-exec (named in the error), and asset names that are not cache names.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from cua.env.base import EnvError
from cua.env.remote import RemoteEnv
from cua.eval.osworld.assets import asset_name
from cua.eval.osworld.errors import StepError
from cua.eval.osworld.remote import RemoteOSWorldEpisode
from cua.eval.runner import EvalConfig, close_worker_envs, run_eval
from cua.eval.task import task_from_dict
from tests.guest_fixtures import CUA, TOKEN, free_port, stop_process
from vm.guest.app import GuestConfig, create_app
from vm.guest.server import serve_in_thread, server_config

ROOT = Path(__file__).resolve().parents[2]
NOOP = ROOT / "tasks/osworld/examples/os/94d95f96-9699-4208-98ba-3c3119edf9c2.json"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def notes_task(tid: str, url: str) -> dict:
    """OSWorld's format: download to /home/user/Desktop, check the file with OSWorld's getters on the guest."""
    return {"id": tid, "snapshot": "os", "instruction": "Look at /home/user/Desktop/notes.txt.",
            "config": [{"type": "download", "parameters": {"files": [{"url": url, "path": "/home/user/Desktop/notes.txt"}]}}],
            "related_apps": ["os"],
            "evaluator": {"func": "check_include_exclude",
                          "result": {"type": "vm_command_line", "command": "cat /home/user/Desktop/notes.txt",
                                     "shell": True},
                          "expected": {"type": "rule", "rules": {"include": ["quarterly numbers: 42"], "exclude": []}}}}


@pytest.fixture(scope="module")
def guest(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("osw-guest")
    port, log = free_port(), tmp / "guest.log"
    env = {**os.environ, "CUA_TOKEN": TOKEN}
    with open(log, "wb") as fh:
        proc = subprocess.Popen([CUA, "serve", "--port", str(port), "--allow-exec", "--sources", "a11y",
                                 "--env", f"sandbox:{sys.executable} -m cua.eval.osworld.desktop",
                                 "--osworld-assets", str(tmp / "guest-assets")],
                                env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, log.read_text()[-2000:]
            try:
                if httpx.get(url + "/health", headers=AUTH, timeout=2, trust_env=False).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.2)
        yield url, tmp
    finally:
        stop_process(proc)


def test_osworld_tasks_run_on_the_guest(guest, tmp_path, monkeypatch):
    url, tmp = guest
    monkeypatch.setenv("CUA_TOKEN", TOKEN)
    cache = tmp_path / "cache"  # the host's asset cache; the guest has no network access to the URL
    cache.mkdir()
    present, missing = "http://assets.invalid/notes.txt", "http://assets.invalid/gone.txt"
    (cache / asset_name(present)).write_text("quarterly numbers: 42\n")
    tasks = [task_from_dict(notes_task("notes", present), str(tmp_path / "os/notes.json")),
             task_from_dict(notes_task("gone", missing), str(tmp_path / "os/gone.json")),
             task_from_dict(json.loads(NOOP.read_text()), str(NOOP))]
    try:
        results = {r.task_id: r for r in run_eval(tasks, EvalConfig(env=f"remote:{url}", out=str(tmp_path / "out"),
                                                                     max_steps=0, assets=str(cache)))}
    finally:
        close_worker_envs()
    assert (results["notes"].outcome, results["notes"].score, results["notes"].error) == ("success", 1.0, None), \
        results["notes"]
    assert results["notes"].details == ["check_include_exclude = 1"]
    assert (tmp / "guest-assets" / asset_name(present)).read_text() == "quarterly numbers: 42\n"  # sent by the host
    assert results["gone"].outcome == "skipped" and results["gone"].error.startswith(f"asset missing: {missing}")
    noop = results["94d95f96-9699-4208-98ba-3c3119edf9c2"]
    assert (noop.outcome, noop.score, noop.error) == ("failure", 0.0, None), noop


def _no_env():
    raise EnvError("no desktop in this test")


@pytest.mark.parametrize("allow_exec", [False, True])
def test_guest_refusals(allow_exec, tmp_path):
    cfg = GuestConfig(token=TOKEN, env_factory=_no_env, allow_exec=allow_exec, osworld_assets=tmp_path / "a")
    port = free_port()
    with serve_in_thread(server_config(create_app(cfg), "127.0.0.1", port)):
        url = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=url, headers=AUTH, trust_env=False, timeout=10) as c:
            bad = c.put("/osworld/assets/.profile", content=b"x")
            if not allow_exec:
                assert bad.status_code == 403 and "--allow-exec" in bad.json()["detail"]
                with RemoteEnv(url, token=TOKEN) as env, pytest.raises(StepError, match="--allow-exec"):
                    RemoteOSWorldEpisode(json.loads(NOOP.read_text()), env, None).setup()
            else:
                assert bad.status_code == 400 and "cache file name" in bad.json()["detail"]
                assert c.put("/osworld/assets/a%2F..%2Fb", content=b"x").status_code in (400, 404)
                assert c.put("/osworld/assets/ok.txt", content=b"x" * 3).json() == {"name": "ok.txt", "bytes": 3}
                assert (tmp_path / "a" / "ok.txt").read_bytes() == b"xxx"
                assert not list((tmp_path / "a").glob(".upload-*"))
