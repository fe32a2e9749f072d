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
