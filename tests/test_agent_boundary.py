"""Choosing among retrieved skills with no model: the task's values and the control it names decide."""

from cua.agent.boundary import decide
from skills.skill import Skill, SkillParam

UNIT = Skill(name="Search › Find and Replace...", app="mousepad", status="verified",
             description="Open the Find and Replace dialog")
FIND = Skill(name="Search › Find and Replace... › Search for: {text} › Find", app="mousepad", status="verified",
             description="Open Find and Replace, type the given text into 'Search for' and press 'Find'",
             parameters=[SkillParam(name="text")])
REPLACE = FIND.model_copy(update={"name": "Search › Find and Replace... › Search for: {text} › Replace",
                                  "description": "Open Find and Replace, type the given text and press 'Replace'"})


def test_values_in_the_task_pick_a_skill_that_takes_them():
    d = decide("Find the word 'hello' with the Find and Replace dialog", [(UNIT, 9.0), (REPLACE, 8.0), (FIND, 7.0)],
               has_model=False)
    assert (d.kind, d.skill.name, d.args) == ("skill", FIND.name, {"text": "hello"})


def test_without_values_the_retrieval_order_stands():
    d = decide("Open the Find and Replace dialog", [(UNIT, 9.0), (FIND, 8.0)], has_model=False)
    assert (d.kind, d.skill.name) == ("skill", UNIT.name)
    d = decide("Replace 'x' using the Find and Replace dialog", [(FIND, 9.0), (REPLACE, 8.0)], has_model=False)
    assert d.skill.name == REPLACE.name


def test_skill_view_perceives_for_a_sub_skill_postcondition():
    """A composite (sub-skill, then keyboard steps): the sub-skill's postcondition wait must see the new
    screen, not the observation cached for the keyboard step that follows."""
    from cua.agent.executor import _SkillView
    from cua.perception.elements import Observation

    class Lib:
        def get(self, name):
            return UNIT_WITH_STEPS if name == UNIT_WITH_STEPS.name else None

    class Env:
        looks = 0

        def observe(self):
            Env.looks += 1
            return Observation(window_title=f"look {Env.looks}")

        def act(self, action):
            return action

    click = {"kind": "click", "target": {"text": "Search", "signature": "menu:Search"}}
    UNIT_WITH_STEPS = Skill.model_validate({**UNIT.model_dump(), "steps": [{"action": click}, {"action": click}]})
    composite = Skill.model_validate({**FIND.model_dump(), "steps": [
        {"action": {}, "skill": UNIT.name}, {"action": {"kind": "type", "text": "{text}"}}]})
    view = _SkillView(Env(), composite, library=Lib())
    assert view.need == [True, True, False]
    view.observe(), view.act("a"), view.observe(), view.act("b")
    after = view.observe()          # run_skill's look after the sub-skill's last action: may be cached
    again = view.observe()          # the postcondition wait looks again: must be a fresh observation
    assert again is not after and again.window_title == f"look {Env.looks}"


def test_a_written_skill_is_found_by_its_description(tmp_path):
    """A skill with no menu path (written or recorded) is named by its description: a request worded like it,
    with the app's name and a number word in it, runs it under the default boundary; an unrelated one does not."""
    from cua.agent.boundary import decide_request
    from skills.library import SkillLibrary
    from skills.skill import SkillStep

    with SkillLibrary(tmp_path / "s.db") as lib:
        lib.add(Skill(name="write_five_lines", app="mousepad", status="verified", verified_runs=1,
                      description="Write five numbered lines in the mousepad document",
                      steps=[SkillStep(action={"kind": "type", "text": "1\n2\n3\n4\n5\n"})]))
        assert decide_request("write five numbered lines in mousepad", lib, has_model=False).kind == "skill"
        assert decide_request("print the document twice", lib, has_model=False).kind == "outside"
        # an explored field's "type <field>" step types the explorer's sample: never what a request means
        lib.add(Skill(name="Edit › Preferences... › Sans Bold › type text", app="mousepad", status="verified",
                      verified_runs=2, extra={"ui_path": ["Edit", "Preferences...", "Sans Bold", "type text"]},
                      steps=[SkillStep(action={"kind": "click", "target": {"text": "Sans Bold"}}),
                             SkillStep(action={"kind": "type", "text": "Hello"})]))
        d = decide_request("let me type expressions as text", lib, has_model=False, bound={
            "threshold": 0.3, "margin": 0.0, "w": 0.6})
        assert not (d.kind == "skill" and d.skill.name.endswith("type text")), d.explain
