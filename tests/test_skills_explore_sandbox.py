"""GUI-DFS on real mousepad (Xvfb + AT-SPI): verified skills incl. a dialog opener; `cua skills` on a fresh sandbox."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cua.env import make_env
from skills.explorer import Budget, Explorer
from skills.graph import UIGraph
from skills.library import SkillLibrary
from skills.profile import load_profile

ROOT = Path(__file__).resolve().parents[1]
# Only the Search menu (the rest denied) keeps this test short; dialogs are recorded, not entered.
PROFILE = """deny = ["^(File|Edit|View|Document|Help)$", "^quit", "^print"]
no_descend = []
sample_text = "hello"
max_depth = 2
"""


@pytest.fixture(scope="module")
def explored(tmp_path_factory):
    d = tmp_path_factory.mktemp("mousepad")
    (d / "search.toml").write_text(PROFILE)
    db = d / "lib.db"
    env = make_env("sandbox:mousepad", sources="a11y")
    lib, graph = SkillLibrary(db), UIGraph(db)
    try:
        ex = Explorer(env, lib, graph, load_profile("mousepad", d / "search.toml"),
                      Budget(max_actions=300, minutes=6, max_depth=2), app="mousepad", verify_runs=2)
        stats = ex.run()
        pids = env.sandbox.pids()
    finally:
        graph.close()
        lib.close()
        env.close()
    assert pids and not env.sandbox.pids(), "the sandbox left processes behind"
    return db, stats


def test_mousepad_exploration_makes_verified_skills(explored):
    db, stats = explored
    with SkillLibrary(db) as lib:
        verified = {s.name: s for s in lib.list(status="verified")}
        assert "Search" in verified
        dialog = verified.get("Search › Find and Replace...")
        assert dialog is not None, sorted(verified)
        assert dialog.verified_runs >= 2 and dialog.provenance == "explored"
        assert any(p.endswith("dialog:Find and Replace") for p in dialog.postcondition.present)
        assert "Find and Replace dialog" in dialog.description
        assert dialog.postcondition.describe().startswith("opens the dialog 'Find and Replace'")
        # what exploration saw besides the control's name: its tooltip, its shortcut, the dialog's text
        assert dialog.extra.get("tooltip") == "Search for and replace text"
        assert dialog.extra.get("accelerator") == "Ctrl+R"
        assert {"Search for", "Replace with"} <= set(dialog.extra["shows"])
        assert sum(n.startswith("Search › ") for n in verified) >= 3
        # on an empty document "Find Next" changes nothing that can be seen: kept, not verified
        assert lib.get("Search › Find Next").status == "unverified"
        assert lib.search("open the find and replace dialog")[0][0].name == "Search › Find and Replace..."
    g = UIGraph(db)
    denied = [t for t in g.transitions() if t["effect"] == "denied"]
    assert {t["signature"].rsplit(":", 1)[-1] for t in denied} >= {"File", "Edit", "Help"}
    assert g.counts()["states"] >= 4
    g.close()
    assert stats.total_actions <= 300 and stats.total_actions > stats.explore_actions


def _cua(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cua.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_cua_skills_run_replays_on_a_fresh_sandbox(explored):
    db, _ = explored
    res = _cua("skills", "run", "Find and Replace", "--env", "sandbox:mousepad", "--skills", str(db))
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out == {"skill": "Search › Find and Replace...", "ok": True, "error": None, "steps": 2}


def test_cua_skills_list_search_show_verify(explored):
    db, _ = explored
    res = _cua("skills", "list", "--skills", str(db), "--json")
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    assert res.returncode == 0 and {"Search", "Search › Find and Replace..."} <= {r["name"] for r in rows}
    res = _cua("skills", "search", "open the find and replace dialog", "--skills", str(db))
    assert res.returncode == 0 and "Search › Find and Replace..." in res.stdout.splitlines()[0]
    res = _cua("skills", "show", "Find and Replace", "--skills", str(db))
    assert json.loads(res.stdout)["name"] == "Search › Find and Replace..."
    res = _cua("skills", "verify", "--env", "sandbox:mousepad", "--skills", str(db), "--name", "Search › Find and Replace...")
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads(res.stdout.strip().splitlines()[-1]) == {"checked": 1, "drifted": []}
    with SkillLibrary(db) as lib:  # an app change: the dialog no longer has the element the skill expects
        s = lib.get("Search › Find and Replace...")
        drift = s.postcondition.model_copy(update={"present": [*s.postcondition.present, "dialog:Gone/push button:X"]})
        lib.add(s.model_copy(update={"name": "Drifted", "postcondition": drift}))
    res = _cua("skills", "verify", "--env", "sandbox:mousepad", "--skills", str(db), "--name", "Drifted")
    assert res.returncode == 1 and json.loads(res.stdout.strip().splitlines()[-1])["drifted"] == ["Drifted"]
    with SkillLibrary(db) as lib:
        assert lib.get("Drifted").status == "failed" and lib.get("Drifted").failed_runs == 1
    res = _cua("skills", "run", "no such skill at all", "--skills", str(tmp := db.parent / "missing.db"))
    assert res.returncode == 1 and "no skill library" in res.stderr and not tmp.exists()
