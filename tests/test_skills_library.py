"""State keys, the UI graph store and the skill library (no desktop needed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cua.perception.elements import Observation, UIElement
from skills.graph import UIGraph, distinguishing, state_key
from skills.library import SkillImportError, SkillLibrary
from skills.skill import Condition, Skill, SkillStep

ROOT = Path(__file__).resolve().parents[1]


def el(role: str, name: str, bbox=(10, 10, 50, 20), states=(), path=("frame:App",)) -> UIElement:
    return UIElement(id="e0", role=role, name=name, bbox=bbox, source="a11y", states=list(states), path=list(path))


def obs(*els: UIElement, title: str = "App") -> Observation:
    return Observation(elements=list(els), window_title=title, size=(800, 600))


def test_state_key_exact_and_abstract_levels():
    a = obs(el("menu", "File"), el("push button", "OK"))
    b = obs(el("push button", "OK"), el("menu", "File"))  # order does not matter
    assert state_key(a) == state_key(b) and hash(state_key(a)) == hash(state_key(b))
    renamed = obs(el("menu", "Edit"), el("push button", "OK"))
    assert state_key(renamed) != state_key(a)
    assert state_key(renamed).abstract == state_key(a).abstract  # same structure
    checked = obs(el("menu", "File"), el("push button", "OK", states=["checked"]))
    assert state_key(checked) != state_key(a)
    focused = obs(el("menu", "File"), el("push button", "OK", states=["focused"]))
    assert state_key(focused) == state_key(a)  # focus flicker is not a new state


def test_state_key_counts_visibility_and_ignores_free_text():
    base = obs(el("menu", "File"))
    hidden_dialog = obs(el("menu", "File"), el("dialog", "Find", bbox=(0, 0, 0, 0)))
    offscreen = obs(el("menu", "File"), el("dialog", "Find", bbox=(900, 700, 50, 50)))
    shown = obs(el("menu", "File"), el("dialog", "Find"))
    assert state_key(hidden_dialog) == state_key(base) == state_key(offscreen)
    assert state_key(shown) != state_key(base)
    clock1 = obs(el("menu", "File"), el("label", "12:00:01"))
    clock2 = obs(el("menu", "File"), el("label", "12:00:02"))
    assert state_key(clock1) == state_key(clock2)  # a self-changing label is one state


def test_state_key_with_a_tree_ignores_pixels_and_the_active_windows_title():
    """galculator's Preferences dialog was keyed once with the closing Edit menu still OCR'd on the frame and
    the main window's title (the dialog not yet active), then without: one state, two keys, never reached
    again. Where a tree is present only its elements count; without one, OCR and the title still do."""
    def pixels(text: str, src: str = "ocr") -> UIElement:
        return UIElement(id="e9", role="text", name=text, bbox=(300, 40, 80, 14), source=src, path=[])
    dialog = (el("dialog", "galculator Preferences"), el("page tab", "Display", states=["selected"]))
    opening = obs(*dialog, pixels("Cut Display Value"), pixels("Ctrl+x"), title="galculator")
    settled = obs(*dialog, title="galculator Preferences")
    assert state_key(opening) == state_key(settled)
    other_tab = obs(dialog[0], el("page tab", "Display"), title="galculator Preferences")
    assert state_key(other_tab) != state_key(settled)  # what the tree says still tells states apart
    untitled = obs(pixels("File", "vision"), title="a.txt")  # no tree: pixels and the title are all there is
    assert state_key(untitled) != state_key(obs(pixels("File", "vision"), title="b.txt"))
    assert state_key(untitled) != state_key(obs(pixels("File", "vision"), pixels("Edit"), title="a.txt"))


def test_distinguishing_signatures():
    old = obs(el("menu", "File"))
    new = obs(el("menu", "File"), el("dialog", "Find", path=[]), el("push button", "Close", path=["dialog:Find"]))
    present, absent = distinguishing(new, old)
    assert present[0] in {"dialog:Find", "dialog:Find/push button:Close"} and len(present) == 2
    assert absent == []


def test_graph_store_persists_and_resumes(tmp_path):
    g = UIGraph(tmp_path / "g.db")
    o0, o1 = obs(el("menu", "File")), obs(el("menu", "File"), el("menu item", "New", path=["menu:File"]))
    k0, k1 = state_key(o0), state_key(o1)
    assert g.add_state(k0, o0, 0, [], [])
    assert not g.add_state(k0, o0, 0, [], [])
    g.add_state(k1, o1, 1, [{"kind": "click", "target": {"signature": "frame:App/menu:File"}}], ["File"])
    g.add_transition(k0, "frame:App/menu:File", {"kind": "click"}, k1, "new_state", 0.1)
    g.add_transition(k1, "menu:File/menu item:New", {"kind": "click"}, None, "no_change")
    g.mark_done(k0)
    with pytest.raises(ValueError, match="unknown effect"):
        g.add_transition(k0, "x", {}, None, "exploded")
    g.close()
    g2 = UIGraph(tmp_path / "g.db")
    assert g2.counts()["states"] == 2 and g2.counts()["no_change"] == 1
    assert [s["key"] for s in g2.open_states()] == [k1.exact]
    assert g2.state(k1)["path_names"] == ["File"]
    assert g2.tried(k0) == {"frame:App/menu:File"}
    assert len(g2.ineffective()) == 1
    g2.close()


def make_skill(name: str, description: str = "", **kw) -> Skill:
    step = SkillStep(action={"kind": "click", "target": {"signature": f"menu item:{name}", "text": name}})
    return Skill(name=name, app="mousepad", description=description, steps=[step], provenance="explored", **kw)


def test_library_crud_versions_and_counts(tmp_path):
    with SkillLibrary(tmp_path / "lib.db") as lib:
        s = lib.add(make_skill("Search › Find", "Open the Find bar"))
        assert s.version == 1
        s2 = lib.add(make_skill("Search › Find", "Open the Find bar, v2"))
        assert s2.version == 2 and lib.get("Search › Find").description.endswith("v2")
        assert [v.version for v in lib.versions("Search › Find")] == [1, 2]
        assert lib.get("nope") is None and len(lib) == 1
        lib.record_run("Search › Find", True)
        lib.record_run("Search › Find", True)
        got = lib.get("Search › Find")
        assert (got.verified_runs, got.status) == (2, "verified")
        lib.record_run("Search › Find", False)
        assert lib.get("Search › Find").status == "failed"
        assert [x.name for x in lib.list(status="failed")] == ["Search › Find"]
        assert lib.list(app="gedit") == []
        with pytest.raises(KeyError, match="no skill named"):
            lib.record_run("missing", True)


def test_library_bm25_search_matches_natural_language(tmp_path):
    with SkillLibrary(tmp_path / "lib.db") as lib:
        lib.add(make_skill("Search › Find and Replace…", "Open the Find and Replace dialog from the Search menu",
                           when_to_use="to replace text, search and replace", status="verified"))
        lib.add(make_skill("File › New", "Create a new document from the File menu", status="verified"))
        lib.add(make_skill("View › Word Wrap", "Toggle word wrap in the View menu"))
        hits = lib.search("open the find and replace dialog")
        assert hits[0][0].name == "Search › Find and Replace…" and hits[0][1] > 0
        assert lib.search("toggle wrapping")[0][0].name == "View › Word Wrap"
        assert all(s.status == "verified" for s, _ in lib.search("menu", k=10, status="verified"))
        assert lib.search("zzzz qqqq") == []


def test_library_export_import_and_malformed_imports(tmp_path):
    src = SkillLibrary(tmp_path / "a.db")
    src.add(make_skill("Edit › Undo", "Undo", postcondition=Condition(present=["x"])))
    src.add(make_skill("Edit › Redo", "Redo"))
    assert src.export_json(tmp_path / "out.json") == 2
    dst = SkillLibrary(tmp_path / "b.db")
    assert len(dst.import_json(tmp_path / "out.json")) == 2
    assert dst.get("Edit › Undo").postcondition.present == ["x"]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(SkillImportError, match="not JSON"):
        dst.import_json(bad)
    bad.write_text(json.dumps({"skills": [{"name": "x"}, {"name": "y", "app": "a", "steps": "nope"}]}))
    with pytest.raises(SkillImportError, match=r"skills\[0\].*app.*Field required"):
        dst.import_json(bad)
    bad.write_text(json.dumps(42))
    with pytest.raises(SkillImportError, match="expected an object"):
        dst.import_json(bad)
    with pytest.raises(SkillImportError, match="no such file"):
        dst.import_json(tmp_path / "missing.json")
    assert len(dst) == 2  # nothing of the bad files got in
    src.close()
    dst.close()


WRITER = """
import sys
from skills.library import SkillLibrary
from skills.skill import Skill
lib = SkillLibrary(sys.argv[1])
for i in range(60):
    lib.add(Skill(name=f"{sys.argv[2]}-{i % 20}", app="app", description="x" * 200))
    lib.record_run(f"{sys.argv[2]}-{i % 20}", i % 3 != 0)
lib.close()
"""


def test_library_two_processes_writing_at_once(tmp_path):
    db = tmp_path / "shared.db"
    SkillLibrary(db).close()
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(db), tag], cwd=ROOT) for tag in ("p", "q")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    with SkillLibrary(db) as lib:
        assert lib.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert len(lib) == 40
        for tag in ("p", "q"):
            assert [v.version for v in lib.versions(f"{tag}-0")] == [1, 2, 3]
        total = sum(s.verified_runs + s.failed_runs for s in lib.list())
        assert total == 40  # the latest version of each name got exactly one run
