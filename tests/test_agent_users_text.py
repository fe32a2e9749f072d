"""A command the explorer verified on its own typed text ("type document › Edit › Sort Lines") runs on
the user's text: without the typing, the whole text selected first unless the request is about the
selection, and a success only when the text changed (cua.agent.skill_calls.on_users_text)."""

from cua.agent.boundary import _types_sample
from cua.agent.skill_calls import changed_text, on_users_text
from cua.perception.elements import Observation, UIElement
from skills.effects import Effect
from skills.skill import Condition, Skill, SkillStep
from skills.units import typed_context

DOC = "application:FeatherPad/frame:/text:"
SLOT = "application:FeatherPad/frame:|text#0"


def _sort_lines() -> Skill:
    acts = [{"kind": "click", "target": {"signature": DOC, "role": "text"}}, {"kind": "hotkey", "keys": ["ctrl", "a"]},
            {"kind": "type", "text": "hello World\nzoo  \n\t        abc def"}, {"kind": "hotkey", "keys": ["ctrl", "a"]},
            {"kind": "click", "target": {"text": "Edit", "role": "menu item"}},
            {"kind": "click", "target": {"text": "Sort Lines", "role": "menu item"}}]
    effects = [Effect(kind="text", slot=SLOT, name="document", before="hello World\nzoo  \n\t        abc def",
                      after="\t        abc def\nhello World\nzoo  "), Effect(kind="title", after="*Untitled")]
    return Skill(name="type document › Edit › Sort Lines", app="featherpad", status="verified",
                 steps=[SkillStep(action=a) for a in acts], postcondition=Condition(effects=effects),
                 extra={"ui_path": ["type document", "Edit", "Sort Lines"]})


def _doc(text: str) -> Observation:
    return Observation(elements=[UIElement(id="d", role="text", name="", bbox=(0, 100, 800, 500), source="a11y",
                                           states=["editable", "multi-line", "showing"], value=text,
                                           path=["application:FeatherPad", "frame:"])], size=(800, 600))


def test_the_typing_is_left_out_and_the_text_must_change():
    skill = _sort_lines()
    assert typed_context(skill) == 4 and not _types_sample(skill)  # a candidate for requests that type nothing
    whole = on_users_text(skill, "put these lines into alphabetical order")
    assert [s.action["kind"] for s in whole.steps] == ["hotkey", "click", "click"]  # select all, Edit, Sort Lines
    assert whole.postcondition.effects == [] and whole.postcondition.state_key is None  # not the sample's result
    part = on_users_text(skill, "sort the lines I've highlighted")
    assert [s.action.get("target", {}).get("text") for s in part.steps] == ["Edit", "Sort Lines"]
    assert changed_text(skill, _doc("pear\napple"), _doc("apple\npear"), any_of=True) == ""
    assert changed_text(skill, _doc("apple\npear"), _doc("apple\npear"), any_of=True) == "document did not change"


def test_other_skills_are_left_alone():
    typed = _sort_lines().model_copy(update={"name": "type document", "extra": {"ui_path": ["type document"]}})
    assert typed_context(typed) == 0 and on_users_text(typed, "type something") is None
    field = typed.model_copy(update={"name": "Search › type text", "extra": {"ui_path": ["Search", "type text"]}})
    assert on_users_text(field, "search") is None and _types_sample(field)
