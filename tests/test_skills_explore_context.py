"""GUI-DFS on an editor's empty document, default profile: most Edit commands do nothing (or are disabled)
until there is text. The explorer types two lines into the document (a verified skill), then opens a value
context, the same screen with that text typed and selected, where the commands that did nothing, the
disabled ones and the menus are tried again: To Uppercase, Cut and Undo become skills verified by what
they do to the text, and what the base run verified already is not redone."""

from __future__ import annotations

import pytest

from cua.env import make_env
from cua.perception.elements import UIElement
from skills.candidates import Candidate
from skills.explorer import Budget, Explorer
from skills.graph import UIGraph
from skills.library import SkillLibrary
from skills.profile import Profile, load_profile


def test_an_unnamed_document_and_an_unnamed_field_get_different_names():
    """featherpad shows both (its find bar's field and the document): one name for both made the second
    typed skill collide with the first, and the context typed into the field."""
    doc = UIElement(id="d", role="text", name="", bbox=(0, 100, 1280, 600), source="a11y",
                    states=["editable", "multi-line", "showing"])
    field = doc.model_copy(update={"id": "f", "bbox": (4, 749, 1112, 21), "states": ["editable", "showing"]})
    assert Candidate(doc, "type", "x").label == "type document"
    assert Candidate(doc, "right_click").label == "right-click document"
    assert Candidate(field, "type", "x").label == "type text"


@pytest.fixture(scope="module")
def explored(tmp_path_factory):
    db = tmp_path_factory.mktemp("ctx") / "lib.db"
    base = load_profile("default")  # plus three denials that keep the run short (big dialog, two submenus)
    profile = Profile(deny=[*base.deny, "^preferences", "^paste special", "^move"], sample_text=base.sample_text)
    env = make_env("sandbox:mousepad", sources="a11y")
    lib, graph = SkillLibrary(db), UIGraph(db)
    try:  # --only: the Edit menu and the (unnamed) document
        ex = Explorer(env, lib, graph, profile, Budget(max_actions=100000, minutes=5, max_depth=4),
                      app="mousepad", only="^(Edit|type document)?$")
        yield lib, graph, ex.run()
    finally:
        graph.close()
        lib.close()
        env.close()


def test_typing_into_the_document_is_a_verified_skill(explored):
    lib, _, _ = explored
    typed = lib.get("type document")
    assert typed is not None and typed.status == "verified", [s.name for s in lib.list()]
    assert "hello World abc def" in typed.postcondition.describe()


def test_text_commands_are_verified_by_their_effect_on_the_text(explored):
    lib, _, stats = explored
    upper = lib.get("type document › Edit › Convert › To Uppercase")
    assert upper is not None, [s.name for s in lib.list()]
    assert upper.status == "verified" and upper.verified_runs >= 2, upper.extra.get("status_reason")
    assert upper.postcondition.describe().endswith("to HELLO WORLD ABC DEF")
    kinds = [a.get("kind") for a in (s.action for s in upper.steps)]
    assert kinds[:4] == ["click", "hotkey", "type", "hotkey"], kinds  # the context's typing, replayed
    cut = lib.get("type document › Edit › Cut")
    assert cut is not None and cut.status == "verified", stats.notes[-10:]
    assert cut.postcondition.describe().endswith("to (empty)")
    # without text the same command showed nothing, and the library still says so
    assert lib.get("Edit › Convert › To Uppercase").status == "unverified"


def test_the_context_does_not_redo_what_is_verified(explored):
    lib, graph, _ = explored
    assert lib.get("Edit › Convert").status == "verified"
    assert lib.get("type document › Edit › Convert") is None  # a menu opened in the context is no new skill
    ctx = [k for (k,) in graph.db.execute("SELECT key FROM states") if "~" in k]
    assert ctx, "no value context was opened"
