"""GUI-DFS on an editor's empty document, default profile: most Edit commands do nothing (or are disabled)
until there is text. The explorer types two lines into the document (a verified skill), then opens a value
context, the same screen with that text typed and selected, where the commands that did nothing, the
disabled ones and the menus are tried again: To Uppercase, Cut and Undo become skills verified by what
they do to the text (Increase Indent and Strip Trailing Spaces by what they do to its whitespace); Undo
enables Redo, which is tried on the screen Undo left; and what the base run verified already is not
redone."""

from __future__ import annotations

import pytest

from cua.perception.elements import Observation, UIElement
from skills.candidates import Candidate, candidates
from skills.profile import Profile, load_profile
from tests.skills_fixtures import exploration


def test_an_unnamed_document_and_an_unnamed_field_get_different_names():
    """featherpad shows both (its find bar's field and the document): one name for both made the second
    typed skill collide with the first, and the context typed into the field."""
    doc = UIElement(id="d", role="text", name="", bbox=(0, 100, 1280, 600), source="a11y",
                    states=["editable", "multi-line", "showing"])
    field = doc.model_copy(update={"id": "f", "bbox": (4, 749, 1112, 21), "states": ["editable", "showing"]})
    assert Candidate(doc, "type", "x").label == "type document"
    assert Candidate(doc, "right_click").label == "right-click document"
    assert Candidate(field, "type", "x").label == "type text"


def test_an_unnamed_icon_button_is_tried_under_its_tooltip():
    """featherpad's find bar: check boxes and buttons with no accessible name, only a tooltip with the
    shortcut in it. They are controls like any other, named by what the tooltip says."""
    box = UIElement(id="c", role="check box", name="", bbox=(1200, 748, 24, 23), source="a11y",
                    states=["enabled", "showing", "visible"], attrs={"description": "Match Case (F5)"})
    bare = box.model_copy(update={"id": "b", "bbox": (1140, 748, 24, 23), "attrs": {}})
    found = candidates(Observation(elements=[box, bare], size=(1280, 800)), load_profile("default"))
    assert [(c.label, c.el.id) for c in found] == [("Match Case", "c")]  # no name and no tooltip: nothing to call it


@pytest.fixture(scope="module")
def explored(tmp_path_factory):
    base = load_profile("default")  # plus three denials that keep the run short (big dialog, two submenus)
    profile = Profile(deny=[*base.deny, "^preferences", "^paste special", "^move"], sample_text=base.sample_text)
    with exploration(tmp_path_factory.mktemp("ctx") / "lib.db", "sandbox:mousepad", "mousepad", profile=profile,
                     only="^(Edit|type document)?$", max_actions=100000, minutes=5) as run:  # Edit, the document
        yield run.lib, run.graph, run.stats


def test_typing_into_the_document_is_a_verified_skill(explored):
    lib, _, _ = explored
    typed = lib.get("type document")
    assert typed is not None and typed.status == "verified", [s.name for s in lib.list()]
    assert "hello World zoo abc def" in typed.postcondition.describe()


def test_text_commands_are_verified_by_their_effect_on_the_text(explored):
    lib, _, stats = explored
    upper = lib.get("type document › Edit › Convert › To Uppercase")
    assert upper is not None, [s.name for s in lib.list()]
    assert upper.status == "verified" and upper.verified_runs >= 2, upper.extra.get("status_reason")
    assert upper.postcondition.describe().endswith("to HELLO WORLD ZOO ABC DEF")
    kinds = [a.get("kind") for a in (s.action for s in upper.steps)]
    assert kinds[:4] == ["click", "hotkey", "type", "hotkey"], kinds  # the context's typing, replayed
    cut = lib.get("type document › Edit › Cut")
    assert cut is not None and cut.status == "verified", stats.notes[-10:]
    assert cut.postcondition.describe().endswith("to (empty)")
    # commands that change only whitespace (the typed text has a tab, leading and trailing spaces)
    for name in ("type document › Edit › Increase Indent", "type document › Edit › Convert › Strip Trailing Spaces"):
        skill = lib.get(name)
        assert skill is not None and skill.status == "verified", (name, skill and skill.extra.get("status_reason"))
        assert skill.postcondition.describe().endswith("changes its spacing (tabs, spaces or line breaks)")
    # Undo enabled Redo (seen in the reopened menu): the screen after Undo is a context of its own
    redo = lib.get("type document › Edit › Undo › Edit › Redo")
    assert redo is not None and redo.status == "verified", [s.name for s in lib.list() if "Redo" in s.name]
    # without text the same command showed nothing, and the library still says so
    assert lib.get("Edit › Convert › To Uppercase").status == "unverified"


def test_the_context_does_not_redo_what_is_verified(explored):
    lib, graph, _ = explored
    assert lib.get("Edit › Convert").status == "verified"
    assert lib.get("type document › Edit › Convert") is None  # a menu opened in the context is no new skill
    ctx = [k for (k,) in graph.db.execute("SELECT key FROM states") if "~" in k]
    assert ctx, "no value context was opened"


def test_a_web_pages_document_is_right_clicked_and_a_short_list_is_tried_in_full():
    """A textarea is the page's document (its context menu is a custom one); lists of up to six items are
    tried whole, longer ones by an even spread that includes both ends; a drop-down's options are chosen."""
    from cua.perception.elements import Observation
    from skills.candidates import candidates, steps_for

    doc = UIElement(id="d", role="entry", name="Document", bbox=(8, 100, 520, 160), source="dom",
                    states=["editable", "enabled", "multi-line"])
    line = UIElement(id="l", role="entry", name="Author", bbox=(8, 300, 200, 20), source="dom",
                     states=["editable", "enabled"])
    items = [UIElement(id=f"i{n}", role="list item", name=f"f{n}.txt", bbox=(8, 340 + 20 * n, 100, 18),
                       source="dom", states=["enabled"], path=["list box:Files"]) for n in range(11)]
    obs = Observation(elements=[doc, line, *items], size=(1280, 800))
    cands = candidates(obs, Profile())
    assert [c.el.name for c in cands if c.kind == "right_click"] == ["Document"]
    size = UIElement(id="s", role="combo box", name="Font size", value="12", bbox=(300, 40, 40, 20), source="dom",
                     states=["enabled"], attrs={"options": ["10", "12", "14"]})
    chosen = [c for c in candidates(Observation(elements=[size], size=(1280, 800)), Profile())]
    assert [(c.kind, c.text, c.labels) for c in chosen] == [("choose", o, ["Font size", o]) for o in ("10", "12", "14")]
    assert [a["kind"] for a in steps_for(chosen[2])] == ["click", "type", "key"]
    assert [c.el.name for c in cands if c.kind == "click"] == ["f0.txt", "f2.txt", "f4.txt", "f6.txt", "f8.txt",
                                                                "f10.txt"]
    short = Observation(elements=items[:6], size=(1280, 800))
    assert len(candidates(short, Profile())) == 6
    assert not [c for c in candidates(obs, Profile(), depth=1) if c.kind == "right_click"]


def test_a_chosen_radio_has_a_sibling_to_choose_first_and_a_dialogs_close_is_not_denied():
    from cua.perception.elements import Observation
    from skills.explorer import _closes_dialog, _first_choice

    def radio(name, x, states, parent="div:#prefs", role="radio button"):
        return UIElement(id=name, role=role, name=name, bbox=(x, 10, 40, 20), source="dom", states=states,
                         path=[parent])

    light, dark = radio("Light", 10, ["checked", "enabled"]), radio("Dark", 60, ["enabled"])
    obs = Observation(elements=[light, radio("Big", 110, ["enabled"], "div:#other"), dark], size=(800, 600))
    assert _first_choice(Candidate(light, "click"), obs).el is dark
    assert _first_choice(Candidate(dark, "click"), obs) is None  # not chosen: its click shows its effect
    assert _first_choice(Candidate(radio("Light", 10, ["checked", "enabled"], role="check box"), "click"), obs) is None
    size = UIElement(id="s", role="combo box", name="Font size", value="12", bbox=(10, 40, 40, 20), source="dom",
                     states=["enabled"], attrs={"options": ["10", "12", "14"]})
    assert _first_choice(Candidate(size, "choose", "12"), obs).text == "10"
    assert _first_choice(Candidate(size, "choose", "14"), obs) is None
    dialog = UIElement(id="d", role="dialog", name="About", bbox=(100, 100, 300, 200), source="dom")
    close = UIElement(id="x", role="push button", name="Close", bbox=(300, 250, 60, 24), source="dom")
    assert _closes_dialog(close, Observation(elements=[dialog, close], size=(800, 600)))
    assert not _closes_dialog(close, Observation(elements=[close], size=(800, 600)))  # the window's own Close
    assert Profile(deny=["^close$"]).denied("Close")


def test_a_follow_up_skills_negative_control_moves_its_own_click_and_keeps_the_next():
    """An operator key shows its effect in what the next key does: its negative control is the same run
    with the operator's click moved to a neutral spot, the key after it kept."""
    from skills.skill import Skill, SkillStep
    from skills.verify import negative_control

    step = lambda k: SkillStep(action={"kind": "click", "target": {"text": k}})  # noqa: E731
    times = Skill(name="7 › *", app="calc", steps=[step("7"), step("*"), step("7")],
                  extra={"own_steps": 1, "follow": 1})
    control = negative_control(times, 1, (5, 5))
    assert [s.action.get("target", {}).get("text") or (s.action["x"], s.action["y"]) for s in control.steps] == \
        ["7", (5, 5), "7"]
    plain = negative_control(times.model_copy(update={"extra": {"own_steps": 1}}), 1, (5, 5))
    assert [s.action.get("target", {}).get("text") for s in plain.steps] == ["7", "*", None]
