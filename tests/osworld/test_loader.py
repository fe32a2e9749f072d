"""OSWorld's 369 vendored task files: every one loads, and `cua tasks check` gives each a status with its reason."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from cua.eval.osworld.assets import HISTORY_DB_URL, asset_name, task_urls
from cua.eval.osworld.check import check_task
from cua.eval.osworld.getters import GETTERS
from cua.eval.osworld.spec import OSWorldError, load_path, parse_task
from cua.eval.osworld.steps import STEPS
from cua.eval.task import osworld_index_tasks, resolve_tasks

ROOT = Path(__file__).resolve().parents[2]
OSWORLD = ROOT / "tasks" / "osworld"
STATUSES = {"ok", "needs-network", "needs-app", "needs-google", "needs-root", "unsupported"}


@pytest.fixture(scope="module")
def tasks():
    return load_path(OSWORLD)


def test_all_369_load_with_their_domains(tasks):
    index = json.loads((OSWORLD / "test_all.json").read_text())
    assert len(tasks) == sum(map(len, index.values())) == 369
    assert Counter(t.domain for t in tasks) == {d: len(ids) for d, ids in index.items()}
    assert len(load_path(OSWORLD, ["os", "vlc"])) == len(index["os"]) + len(index["vlc"])
    # and as cua Tasks, through the runner's loader, keeping their own JSON
    cua_tasks = resolve_tasks([str(OSWORLD)])
    assert len(cua_tasks) == 369 and all(t.osworld and t.checker_tree() == {"type": "osworld"} for t in cua_tasks)
    assert len(osworld_index_tasks(OSWORLD / "test_all.json", ["os"])) == len(index["os"])


def test_every_step_and_getter_the_tasks_use_is_registered(tasks):
    steps = {s.type for t in tasks for _, s in t.steps()}
    getters = {str(g.get("type")) for t in tasks for g in t.getters()}
    assert len(steps) >= 13 and steps <= set(STEPS), steps - set(STEPS)
    assert len(getters) >= 45 and getters <= set(GETTERS), getters - set(GETTERS)


def test_check_gives_every_task_a_status_and_a_true_reason(tasks):
    checks = [check_task(t, None, have=lambda _: None) for t in tasks]  # no app installed at all
    assert {c.kind for c in checks} <= STATUSES
    assert not [c for c in checks if c.kind == "unsupported" and "metric" not in c.status]  # steps/getters: none
    by_id = {c.task_id: c for c in checks}
    # googledrive / login set-up -> needs-google; VS Code tasks -> needs-app code; downloads -> needs-network
    google = [t for t in tasks if any(s.type in ("googledrive", "login") for _, s in t.steps())]
    assert google and all(by_id[t.id].kind in ("needs-google", "unsupported") for t in google)
    vscode = [t for t in tasks if t.domain == "vs_code"]
    assert all(by_id[t.id].status in ("needs-app code", "needs-google") or by_id[t.id].kind == "unsupported"
               for t in vscode)
    # with every app present, a task that downloads and has no cache needs the network, and says which URL
    full = {t.id: check_task(t, None, have=lambda a: f"/usr/bin/{a}") for t in tasks}
    downloads = [t for t in tasks if task_urls(t) and full[t.id].kind == "needs-network"]
    assert downloads and all("asset cache" in full[t.id].reason or "live" in full[t.id].reason
                             or "opens" in full[t.id].reason or "installs" in full[t.id].reason for t in downloads)


def test_check_with_a_full_asset_cache_turns_downloads_ok(tasks, tmp_path):
    waiting = [t for t in tasks if "asset cache" in check_task(t, None, have=lambda a: a).reason]
    assert len(waiting) >= 5
    for t in waiting:
        for url in task_urls(t):
            (tmp_path / asset_name(url)).write_bytes(b"x")
    after = [check_task(t, tmp_path, have=lambda a: a) for t in waiting]
    assert not [c for c in after if "asset cache" in c.reason]
    assert sum(c.kind == "ok" for c in after) >= 5


def test_asset_names_are_stable_and_per_url():
    a = asset_name("https://example.org/files/report.xlsx?download=1")
    assert a == asset_name("https://example.org/files/report.xlsx?download=1") and a.endswith("_report.xlsx")
    assert a != asset_name("https://example.org/files/report.xlsx?download=2")
    assert asset_name(HISTORY_DB_URL).endswith("_history_empty.sqlite")


@pytest.mark.parametrize("data, words", [
    ({"id": "a", "instruction": "x", "evaluator": {"func": "exact_match", "conj": "xor"}}, "conj must be"),
    ({"id": "a", "evaluator": {"func": "exact_match"}}, "instruction"),
    ([1, 2], "JSON object"),
])
def test_malformed_tasks_are_named(data, words):
    with pytest.raises(OSWorldError, match=words):
        parse_task(data, "bad.json")


def test_cli_tasks_check_json_lines():
    r = subprocess.run([sys.executable, "-m", "cua.cli", "tasks", "check", str(OSWORLD), "--domains", "os", "--json"],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(rows) == 24 and all(set(row) == {"task_id", "domain", "status", "reason"} for row in rows)
    assert {row["status"].split(" ")[0].split(":")[0] for row in rows} <= STATUSES
    assert "24 tasks:" in r.stderr
