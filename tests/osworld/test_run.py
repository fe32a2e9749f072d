"""OSWorld tasks run on a real sandbox desktop: set-up, post-config, getters, OSWorld's own metrics.

One sandbox (Xvfb + openbox + the empty desktop) serves every episode here, as a worker's does. The
download task's file comes from a loopback HTTP mirror through the asset cache (`cua osworld assets
--fetch`); a missing asset is `skipped`; OSWorld's own os-domain tasks score 0 when nothing is done.
"""

from __future__ import annotations

import functools
import http.server
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from cua.eval.osworld.assets import asset_name
from cua.eval.osworld.episode import DESKTOP_ENV
from cua.eval.osworld.evaluate import score
from cua.eval.osworld.runtime import Runtime
from cua.eval.osworld.spec import load_path, parse_task
from cua.eval.report import summarize
from cua.eval.runner import EvalConfig, close_worker_envs, run_eval
from cua.eval.task import Task, task_from_dict

ROOT = Path(__file__).resolve().parents[2]
OSWORLD = ROOT / "tasks" / "osworld"
# OSWorld os-domain tasks whose set-up runs here (no download, no GNOME settings, no root); the last is infeasible
NOOP_IDS = ["94d95f96-9699-4208-98ba-3c3119edf9c2", "b3d4a89c-53f2-4d6b-8b6a-541fb5d205fa"]


@pytest.fixture(scope="module")
def mirror(tmp_path_factory):
    """A loopback HTTP server holding the files an OSWorld task downloads (its asset mirror)."""
    root = tmp_path_factory.mktemp("mirror")
    (root / "notes.txt").write_text("quarterly numbers: 42\n")
    for name in ("a", "b", "c"):
        (root / f"{name}.html").write_text(f"<title>page {name}</title><h1>{name}</h1>")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None  # type: ignore[attr-defined]
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def download_task(url: str) -> dict:
    """A task in OSWorld's format: download to /home/user/Desktop, then check it with OSWorld's getters."""
    return {
        "id": "download-notes", "snapshot": "os", "instruction": "Open notes.txt on the Desktop.",
        "config": [{"type": "download", "parameters": {"files": [
            {"url": url, "path": "/home/user/Desktop/notes.txt"}]}},
            {"type": "execute", "parameters": {"command": "wc -c < /home/user/Desktop/notes.txt > /home/user/size.txt",
                                               "shell": True}}],
        "related_apps": ["os"],
        "evaluator": {
            "postconfig": [{"type": "command", "parameters": {"command": ["mkdir", "-p", "/home/user/out"]}}],
            "func": ["check_include_exclude", "exact_match"], "conj": "and",
            "result": [{"type": "vm_command_line", "command": "cat /home/user/Desktop/notes.txt", "shell": True},
                       {"type": "vm_command_line", "command": ["cat", "/home/user/size.txt"]}],
            "expected": [{"type": "rule", "rules": {"include": ["quarterly numbers: 42"], "exclude": ["error"]}},
                         {"type": "rule", "rules": {"expected": "22\n"}}]},
    }


def chrome_task(mirror: str) -> dict:
    """OSWorld's Chrome set-up (google-chrome on port 1337 behind socat, tabs opened and closed over CDP)
    and its getters (open tabs, the active tab's URL), scored by OSWorld's metrics."""
    a, b, c = (f"{mirror}/{n}.html" for n in "abc")
    return {
        "id": "chrome-tabs", "snapshot": "chrome", "instruction": "Keep the tabs a and c open.",
        "config": [{"type": "launch", "parameters": {"command": ["google-chrome", "--remote-debugging-port=1337"]}},
                   {"type": "launch", "parameters": {"command": ["socat", "tcp-listen:9222,fork", "tcp:localhost:1337"]}},
                   {"type": "chrome_open_tabs", "parameters": {"urls_to_open": [a, b, c]}},
                   {"type": "chrome_close_tabs", "parameters": {"urls_to_close": [b]}},
                   {"type": "activate_window", "parameters": {"window_name": "Google Chrome"}}],
        "related_apps": ["chrome"],
        "evaluator": {"func": ["is_expected_tabs", "is_expected_active_tab"], "conj": "and",
                      "result": [{"type": "open_tabs_info"},
                                 {"type": "active_url_from_accessTree", "goto_prefix": "http://"}],
                      "expected": [{"type": "rule", "rules": {"type": "url", "urls": [a, c]}},
                                   {"type": "rule", "rules": {"type": "url", "url": c}}]},
    }


def timezone_task(tid: str, zone_line: str) -> dict:
    """OSWorld's UTC task (os/b6781586) with `timedatectl status` stood in by its output: a zone line."""
    out = f"Local time: x\nUniversal time: x\nRTC time: x\n{zone_line}\n"
    return {"id": tid, "snapshot": "os", "instruction": "Set my time zone to UTC+0.", "config": [],
            "related_apps": ["os"],
            "evaluator": {"func": "is_utc_0", "result": {"type": "vm_command_line", "command": ["printf", out]}}}


def postconfig_download_task(url: str) -> dict:
    """The shape of OSWorld's os/5ced85fc: nothing to download at set-up, the checker script downloaded after."""
    return {"id": "postconfig-missing", "snapshot": "os", "instruction": "Write output.txt.", "config": [],
            "related_apps": ["os"],
            "evaluator": {"postconfig": [{"type": "download", "parameters": {"files": [{"url": url, "path": "eval.sh"}]}}],
                          "func": "check_include_exclude", "result": {"type": "vm_command_line", "command": "bash eval.sh",
                                                                     "shell": True},
                          "expected": {"type": "rule", "rules": {"include": ["Success"], "exclude": []}}}}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cua.cli", *args], capture_output=True, text=True, timeout=240,
                          cwd=ROOT)


@pytest.fixture(scope="module")
def episodes(mirror, tmp_path_factory):
    """Fill the asset cache from the mirror with the CLI, then one in-process eval of every task here."""
    tmp = tmp_path_factory.mktemp("osw")
    task_file = tmp / "os" / "download-notes.json"
    task_file.parent.mkdir()
    task_file.write_text(json.dumps(download_task(f"{mirror}/notes.txt")))
    missing = download_task(f"{mirror}/not-there.txt")
    missing["id"] = "download-missing"
    (tmp / "os" / "download-missing.json").write_text(json.dumps(missing))
    listed = cli("osworld", "assets", str(task_file), "--assets", str(tmp / "cache"))
    fetched = cli("osworld", "assets", str(task_file), "--assets", str(tmp / "cache"), "--fetch")
    tasks = [task_from_dict(json.loads(task_file.read_text()), str(task_file)),
             task_from_dict(missing, str(tmp / "os" / "download-missing.json")),
             task_from_dict(chrome_task(mirror), str(tmp / "chrome" / "chrome-tabs.json")),
             task_from_dict(postconfig_download_task(f"{mirror}/eval.sh"), str(tmp / "os" / "postconfig-missing.json")),
             task_from_dict(timezone_task("utc-already", "Time zone: Etc/UTC (UTC, +0000)"), str(tmp / "os" / "u1.json")),
             task_from_dict(timezone_task("utc-not", "Time zone: Asia/Tokyo (JST, +0900)"), str(tmp / "os" / "u2.json"))]
    tasks += [Task.model_validate({**t.model_dump(), "source": t.source}) for t in
              [task_from_dict(json.loads((OSWORLD / "examples" / "os" / f"{i}.json").read_text()),
                              str(OSWORLD / "examples" / "os" / f"{i}.json")) for i in NOOP_IDS]]
    out = tmp / "out"
    try:
        results = {r.task_id: r for r in run_eval(tasks, EvalConfig(out=str(out), max_steps=0,
                                                                     assets=str(tmp / "cache")))}
    finally:
        close_worker_envs()
    return {"listed": listed, "fetched": fetched, "results": results, "out": out, "cache": tmp / "cache",
            "mirror": mirror}


def test_assets_list_then_fetch_from_the_mirror(episodes):
    url = f"{episodes['mirror']}/notes.txt"
    assert episodes["listed"].returncode == 0 and f"missing\t{episodes['cache'] / asset_name(url)}\t{url}" \
        in episodes["listed"].stdout
    assert episodes["fetched"].returncode == 0 and "present\t" in episodes["fetched"].stdout
    assert (episodes["cache"] / asset_name(url)).read_text() == "quarterly numbers: 42\n"


def test_download_task_runs_end_to_end(episodes):
    r = episodes["results"]["download-notes"]
    assert (r.outcome, r.score, r.error) == ("success", 1.0, None), r
    assert r.details == ["check_include_exclude = 1", "exact_match = 1"]
    assert (episodes["out"] / "osworld" / "os" / "download-notes" / "result.txt").read_text() == "1.0\n"


def test_chrome_set_up_and_getters_over_cdp(episodes):
    r = episodes["results"]["chrome-tabs"]
    assert (r.outcome, r.score, r.error) == ("success", 1.0, None), r
    assert r.details == ["is_expected_tabs = 1", "is_expected_active_tab = 1"] and r.domain == "chrome"


def test_missing_asset_is_skipped_with_its_url(episodes):
    r = episodes["results"]["download-missing"]
    assert r.outcome == "skipped" and r.error.startswith(f"asset missing: {episodes['mirror']}/not-there.txt")
    assert not (episodes["out"] / "osworld" / "os" / "download-missing").exists()
    s = summarize(list(episodes["results"].values()))
    skipped = sum(r.outcome == "skipped" for r in episodes["results"].values())
    assert skipped == 3 and s["skipped"] == skipped and s["tasks"] == len(episodes["results"]) - skipped


def test_a_missing_post_config_asset_skips_the_task_before_set_up(episodes):
    r = episodes["results"]["postconfig-missing"]
    assert r.outcome == "skipped" and r.error.startswith(f"asset missing: {episodes['mirror']}/eval.sh"), r
    assert "setup" not in r.seconds  # skipped before set-up: on a guest it used to fail at scoring (a 503)


def test_a_task_a_no_op_passes_here_is_skipped_not_scored(episodes):
    done, todo = episodes["results"]["utc-already"], episodes["results"]["utc-not"]
    assert done.outcome == "skipped" and "already UTC+0" in done.error and done.score is None, done
    assert (todo.outcome, todo.score, todo.error) == ("failure", 0.0, None), todo


def test_osworld_os_tasks_score_zero_when_nothing_is_done(episodes):
    for tid in NOOP_IDS:
        r = episodes["results"][tid]
        assert (r.outcome, r.score, r.error) == ("failure", 0.0, None), r
        assert r.agent_outcome == "not run (--max-steps 0)"
        assert (episodes["out"] / "osworld" / "os" / tid / "result.txt").read_text() == "0.0\n"


def history_db(path: Path) -> None:
    """The two tables of Chrome's History database that OSWorld's empty history asset holds."""
    import sqlite3

    con = sqlite3.connect(path)
    con.execute("CREATE TABLE urls (id INTEGER PRIMARY KEY, url TEXT, title TEXT, visit_count INTEGER, "
                "typed_count INTEGER, last_visit_time INTEGER, hidden INTEGER)")
    con.execute("CREATE TABLE visits (id INTEGER PRIMARY KEY, url INTEGER, visit_time INTEGER, from_visit INTEGER, "
                "transition INTEGER, segment_id INTEGER, visit_duration INTEGER)")
    con.commit()
    con.close()


def test_scoring_and_mappings_on_a_sandbox(tmp_path):
    from cua.env import make_env
    from cua.eval.osworld.assets import HISTORY_DB_URL
    from cua.eval.osworld.getters import GETTERS
    from cua.eval.osworld.spec import Step
    from cua.eval.osworld.steps import run_steps

    task = next(t for t in load_path(OSWORLD, ["os"]) if t.id == NOOP_IDS[1])
    feasible = parse_task(download_task("file:///dev/null"), "x/os/t.json")
    history_db(tmp_path / asset_name(HISTORY_DB_URL))
    with make_env(DESKTOP_ENV) as env:
        rt = Runtime(env, tmp_path)
        try:
            assert score(task, rt, declared_infeasible=True) == 1.0
            assert score(task, rt, declared_infeasible=False) == 0.0
            assert score(feasible, rt, declared_infeasible=True) == 0.0
            # OSWorld's paths and names map onto the sandbox: /home/user is its HOME, python has pyautogui
            assert rt.map("/home/user/Desktop/a.txt") == f"{env.sandbox.home}/Desktop/a.txt"
            r = rt.run(["python", "-c", "import pyautogui, os; print(pyautogui.size(), os.environ['HOME'])"])
            assert r["returncode"] == 0 and str(env.sandbox.home) in r["output"], r
            # update_browse_history writes Chrome's History where OSWorld's getters read it
            run_steps(rt, [Step(type="update_browse_history", parameters={"history": [
                {"url": "https://www.example.org/", "title": "Example", "visit_time_from_now_in_seconds": 3600}]})],
                "config")
            rows = GETTERS["history"](rt, {"type": "history", "dest": "history.sqlite"})
            assert [(u, t) for u, t, _ in rows] == [("https://www.example.org/", "Example")]
            assert (env.sandbox.home / ".config/google-chrome/Default/History").is_file()
        finally:
            rt.close()
